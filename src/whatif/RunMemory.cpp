//===- RunMemory.cpp - Peak memory in ddscript run ------------------------===//

#include "whatif/RunMemory.h"

#include "support/Units.h"
#include "whatif/Iterations.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

using namespace dd;
using namespace dd::whatif;

namespace {

/// "2.600 GiB": peaks are compared, so three decimals.
std::string peakBytes(int64_t B) {
  double A = std::fabs(static_cast<double>(B)), D = static_cast<double>(B);
  if (A >= 1024.0 * 1024 * 1024)
    return fmt::format("{:.3f} GiB", D / (1024.0 * 1024 * 1024));
  if (A >= 1024.0 * 1024)
    return fmt::format("{:.3f} MiB", D / (1024.0 * 1024));
  return formatBytes(B);
}

/// A size as --set gives it: a number with a size unit ("16GB", "12GiB").
std::optional<int64_t> parseSize(const std::string &Text) {
  auto V = parseQuantity(Text, Dim::bytes());
  if (!V || !(*V < double(graph::MaxTime)))
    return std::nullopt;
  return std::llround(*V);
}

} // namespace

std::optional<std::string>
RunMemory::takeSettings(std::vector<vm::Setting> &Settings,
                        const bc::Program &P) {
  bool ModelParam = false;
  for (const bc::ParamInfo &Pm : P.Params)
    ModelParam |= Pm.Name == "device_memory";
  for (auto It = Settings.begin(); It != Settings.end();) {
    if (It->Name != "device_memory") {
      ++It;
      continue;
    }
    SetCapacity = parseSize(It->Text);
    if (!SetCapacity || *SetCapacity <= 0)
      return "--set device_memory=" + It->Text +
             ": give the device's memory as a size above zero and below 4 "
             "EiB, like 16GB or 80GiB";
    It = ModelParam ? It + 1 : Settings.erase(It);
  }
  return std::nullopt;
}

int64_t RunMemory::peak(const memory::Profile &Pr, const graph::Graph &G,
                        const sim::SimResult &R) const {
  int64_t Best = 0;
  for (size_t I : Chosen) {
    auto [Begin, End] = sim::iterationSpan(G, R, G.Iterations[I]);
    Best = std::max(Best, memory::peakIn(Pr.Curves[Pool], Begin, End).Bytes);
  }
  return Best;
}

void RunMemory::prepare(const trace::Trace &T, const graph::Graph &G,
                        const sim::SimResult &Base,
                        const std::vector<size_t> &Iterations,
                        vm::RunEnv &Env) {
  Chosen = Iterations;
  if (SetCapacity)
    Env.Device.Memory = *SetCapacity;
  auto NoModel = [&](std::string Reason) {
    Why = std::move(Reason);
    Env.NoMemoryReason = Why;
  };
  if (T.Memory.empty())
    return NoModel(T.noMemoryRecordsReason());
  auto Built = memory::MemoryModel::build(T, G);
  if (!Built)
    return NoModel(llvm::toString(Built.takeError()));
  if (!Built->hasDeviceRecords())
    return NoModel("the trace has no GPU memory records in its iterations");
  M = std::move(*Built);
  Pool = vm::reportedPool(*M);

  // Measured: the records' own curve over the measured iterations.
  std::vector<int64_t> MStart, MEnd;
  measuredTimes(G, MStart, MEnd);
  for (size_t I : Chosen) {
    const graph::Iteration &It = G.Iterations[I];
    Measured =
        std::max(Measured, memory::peakIn(M->measured(Pool),
                                          measuredPointTime(G, It.Begin, MEnd),
                                          measuredPointTime(G, It.End, MEnd))
                               .Bytes);
  }
  Baseline = peak(M->profile({Base.Start, Base.End}), G, Base);

  int32_t Device = M->Pools[Pool].DeviceId;
  if (SetCapacity) {
    Capacity = *SetCapacity;
    CapacityFrom = "--set device_memory";
  } else {
    for (const trace::DeviceInfo &D : T.Devices)
      if (D.Id == Device && D.TotalGlobalMem > 0) {
        Capacity = D.TotalGlobalMem;
        CapacityFrom = D.Name;
      }
  }
  Env.Mem = &*M;
  Env.MemPool = Pool;
  Env.BaselinePeak =
      vm::iterationPeak(*M, Pool, G, Base, G.Iterations[Env.ReportIteration]);
  for (const trace::DeviceInfo &D : T.Devices)
    if (D.Id == Device && !SetCapacity) {
      Env.Device.Name = D.Name;
      Env.Device.Memory = D.TotalGlobalMem;
    }
}

void RunMemory::finish(const graph::Graph &G, const sim::SimResult &Pred,
                       const vm::ChangeStats &C) {
  Changes = C;
  if (!M)
    return;
  memory::Profile Pr = M->profile({Pred.Start, Pred.End}, G);
  Predicted = peak(Pr, G, Pred);
  Inverted = Pr.Inverted;
  Dropped = Pr.Dropped;
  Clipped = Pr.Clipped;
}

std::string RunMemory::text() const {
  if (!M)
    return "memory     no peak predicted: " + Why + "\n";
  std::string S = fmt::format(
      "memory     {} peak{}: measured {}, baseline replay {}, predicted {} "
      "({})\n",
      M->Pools[Pool].label(),
      Chosen.size() > 1 ? fmt::format(" over {} iterations", Chosen.size())
                        : std::string(),
      peakBytes(Measured), peakBytes(Baseline), peakBytes(Predicted),
      formatPercent(Baseline ? double(Predicted - Baseline) / double(Baseline)
                             : 0.0,
                    true));
  if (Capacity <= 0)
    S += "           device memory unknown (the trace has no "
         "deviceProperties): give --set device_memory=SIZE\n";
  else if (Predicted <= Capacity)
    S += fmt::format("           of {} device memory ({}): fits, {} free at "
                     "the peak\n",
                     peakBytes(Capacity), CapacityFrom,
                     peakBytes(Capacity - Predicted));
  else
    S += fmt::format("           of {} device memory ({}): OUT OF MEMORY by "
                     "{}\n",
                     peakBytes(Capacity), CapacityFrom,
                     peakBytes(Predicted - Capacity));
  if (!M->Pools[Pool].HasTotals)
    S += "           (the records carry no Total Allocated: memory allocated "
         "before the trace is not counted)\n";
  if (Changes.changedMemory())
    S += fmt::format("           blocks: {} resized, {} freed early, {} "
                     "offloaded, {} added\n",
                     formatCount(Changes.Resized), formatCount(Changes.Freed),
                     formatCount(Changes.Offloaded),
                     formatCount(Changes.Allocated));
  if (Inverted || Dropped)
    S += fmt::format("           left out of the prediction: {} blocks freed "
                     "before their allocation, {} whose allocating task was "
                     "removed\n",
                     formatCount(Inverted), formatCount(Dropped));
  if (Clipped)
    S += fmt::format("           {} spans off the device (offload, free ... "
                     "until) end at the block's free: it is freed before it "
                     "would come back\n",
                     formatCount(Clipped));
  return S;
}

void RunMemory::json(JsonWriter &W) const {
  if (!M)
    return;
  W.field("memory_device", M->Pools[Pool].label());
  W.field("peak_bytes_measured", Measured);
  W.field("peak_bytes_baseline", Baseline);
  W.field("peak_bytes_predicted", Predicted);
  if (Capacity > 0) {
    W.field("device_memory_bytes", Capacity);
    W.field("fits", Predicted <= Capacity);
  } else {
    W.key("device_memory_bytes").null();
    W.key("fits").null();
  }
  W.key("memory_changes")
      .beginObject()
      .field("resized", Changes.Resized)
      .field("freed", Changes.Freed)
      .field("offloaded", Changes.Offloaded)
      .field("allocated", Changes.Allocated)
      .field("left_out_inverted", Inverted)
      .field("left_out_dropped", Dropped)
      .field("spans_clipped", Clipped)
      .endObject();
}
