#include "support/Work.h"

#include "support/Format.h"

#include <atomic>

using namespace dd;
using namespace dd::work;

namespace {

constexpr size_t NumCounters = 0
#define DD_WORK(Name, Description) +1
#include "support/Work.def"
    ;

/// One cache line each: threads adding to different counters do not
/// contend.
struct alignas(64) Slot {
  std::atomic<uint64_t> Count{0};
};
Slot Slots[NumCounters];

} // namespace

void work::add(Counter C, uint64_t N) {
  Slots[static_cast<size_t>(C)].Count.fetch_add(N, std::memory_order_relaxed);
}

uint64_t work::get(Counter C) {
  return Slots[static_cast<size_t>(C)].Count.load(std::memory_order_relaxed);
}

const char *work::name(Counter C) {
  switch (C) {
#define DD_WORK(Name, Description)                                             \
  case Counter::Name:                                                          \
    return #Name;
#include "support/Work.def"
  }
  return "";
}

const char *work::description(Counter C) {
  switch (C) {
#define DD_WORK(Name, Description)                                             \
  case Counter::Name:                                                          \
    return Description;
#include "support/Work.def"
  }
  return "";
}

std::string work::toJson() {
  std::string Out;
  JsonWriter W(Out);
  W.beginObject();
  for (size_t I = 0; I < NumCounters; ++I) {
    Counter C = static_cast<Counter>(I);
    W.breakLine(2).field(name(C), get(C));
  }
  W.breakLine().endObject();
  return Out + "\n";
}
