//===- RunMemory.h - Peak memory in ddscript run ----------------*- C++ -*-===//
//
// The memory side of `ddscript run`: the block table a model's memory
// statements change, the device memory the peak is compared with, and the
// measured, replayed and predicted peaks with the verdict (see
// docs/memory.md).
//
//===----------------------------------------------------------------------===//
#ifndef DD_WHATIF_RUNMEMORY_H
#define DD_WHATIF_RUNMEMORY_H

#include "memory/MemoryModel.h"
#include "sim/Simulator.h"
#include "support/Format.h"
#include "trace/Trace.h"
#include "vm/VM.h"

#include <optional>
#include <string>
#include <vector>

namespace dd::whatif {

class RunMemory {
public:
  /// Takes --set device_memory=SIZE out of \p Settings (a model parameter
  /// of that name still gets it). Returns the error for a bad value.
  std::optional<std::string> takeSettings(std::vector<vm::Setting> &Settings,
                                          const bc::Program &P);

  /// Builds the block table of \p G (unchanged, built from \p T) and the
  /// baseline peaks of the reported iterations \p Chosen, and gives the
  /// model the blocks and the device memory through \p Env.
  void prepare(const trace::Trace &T, const graph::Graph &G,
               const sim::SimResult &Base, const std::vector<size_t> &Chosen,
               vm::RunEnv &Env);

  /// The predicted peak: the blocks as the model left them, placed by the
  /// predicted schedule \p Pred.
  void finish(const graph::Graph &G, const sim::SimResult &Pred,
              const vm::ChangeStats &Changes);

  /// The lines `ddscript run` prints, and its JSON fields (none when the
  /// trace has no memory records).
  std::string text() const;
  void json(JsonWriter &W) const;
  /// The block table as the model left it; null without memory records.
  const memory::MemoryModel *model() const { return M ? &*M : nullptr; }
  /// The predicted peak and the device memory it is compared with (0:
  /// unknown); meaningful when model() is set.
  int64_t predictedPeak() const { return Predicted; }
  int64_t capacity() const { return Capacity; }

private:
  std::optional<memory::MemoryModel> M;
  memory::PoolId Pool = 0;
  std::string Why; ///< why there is no memory model
  std::vector<size_t> Chosen;
  std::vector<int64_t> MEnd; ///< measured task ends, for iteration spans
  int64_t Measured = 0, Baseline = 0, Predicted = 0;
  int64_t Capacity = 0; ///< 0: unknown
  std::string CapacityFrom;
  std::optional<int64_t> SetCapacity; ///< --set device_memory
  uint64_t Inverted = 0, Dropped = 0, Clipped = 0;
  vm::ChangeStats Changes;

  int64_t peak(const memory::Profile &Pr, const graph::Graph &G,
               const sim::SimResult &R) const;
};

} // namespace dd::whatif

#endif
