//===- VM.h - Running compiled .dd models against a graph -------*- C++ -*-===//
//
// The VM executes a bc::Program against a dependency graph: ordinary
// instructions run one by one, and the graph primitives (select, scale,
// remove, insert, depend, schedule) run as native set-level operations over
// all tasks. It sees bytecode and the graph only, never the AST.
//
//===----------------------------------------------------------------------===//
#ifndef DD_VM_VM_H
#define DD_VM_VM_H

#include "bytecode/Bytecode.h"
#include "graph/Graph.h"
#include "sim/Simulator.h"
#include "support/Diagnostics.h"

#include "llvm/ADT/DenseMap.h"

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dd::memory {
class MemoryModel;
} // namespace dd::memory

namespace dd::ops {
struct GpuSpec;
}

namespace dd::vm {

class Value;

/// Facts about the traced GPU a model may use.
struct DeviceFacts {
  std::string Name;
  int64_t Memory = 0; ///< bytes
  int32_t Sms = 0;
  double MemBandwidth = 0;  ///< bytes/ns achieved by memory-bound kernels
  double PcieBandwidth = 0; ///< bytes/ns of the trace's host-device copies
};

/// The world a model runs against.
struct RunEnv {
  graph::Graph *G = nullptr;
  std::string TracePath;
  DeviceFacts Device;
  size_t ReportIteration = 0; ///< index into G->Iterations
  /// The traced process's place in a distributed job, -1 when not one.
  int64_t WorldSize = -1, Rank = -1;
  /// A job's ranks (trace.ranks), when the model runs on one rank of a job.
  std::vector<int64_t> JobRanks;
  /// In a job: how long each collective member of this rank's graph waited
  /// for the others as measured (k.wait; its duration is its transfer).
  /// Null otherwise.
  const llvm::DenseMap<graph::TaskId, int64_t> *CommWait = nullptr;
  int64_t BaselineNs = 0;
  /// The trace's memory blocks, tied to the unchanged graph's tasks; the
  /// model's memory statements change them. Null when the trace has no
  /// device memory records ("select block" is then empty).
  memory::MemoryModel *Mem = nullptr;
  /// Why Mem is null, for the messages of memory statements.
  std::string NoMemoryReason =
      "the trace has no [memory] events (record it with "
      "torch.profiler.profile(profile_memory=True))";
  uint32_t MemPool = 0;      ///< the device pool peak() reports
  int64_t BaselinePeak = -1; ///< its replayed peak before any change
  /// The reported iteration's simulated time with the graph as it is and
  /// schedule \p Policy (for the simulate() builtin), or why the graph
  /// cannot be simulated.
  std::function<llvm::Expected<int64_t>(const sim::SchedulePolicy &Policy)>
      Simulate;
};

/// A --set value for a parameter.
struct Setting {
  std::string Name;
  std::string Text; ///< as given: 25Gbps, 2, "nccl", true
};

/// A model's step budget unless --max-steps says otherwise: instructions,
/// per-task calls included. Every caller (run, export, compare,
/// opportunities, the golden and stdlib tests) starts from this one.
constexpr uint64_t DefaultMaxSteps = 50'000'000;

struct RunOptions {
  uint64_t MaxSteps = DefaultMaxSteps;
  /// What print statements may print in all: a model that prints in a loop
  /// stops with an error rather than filling memory. A job's ranks share
  /// one such budget (driver/JobRun.cpp).
  uint64_t MaxOutputBytes = uint64_t(256) << 20;
  std::vector<Setting> Settings;
};

/// What the model changed.
struct ChangeStats {
  uint64_t Selected = 0; ///< distinct tasks any select returned
  uint64_t Scaled = 0;   ///< leaves whose duration changed
  uint64_t Inserted = 0;
  uint64_t Removed = 0; ///< tasks removed (containers count their leaves)
  uint64_t Dependencies = 0;
  uint64_t Scheduled = 0; ///< resources given a schedule
  /// Change of summed task time by phase (ns): faster is negative.
  std::array<int64_t, graph::NumPhases> MovedByPhase{};
  // Memory blocks.
  uint64_t Resized = 0;   ///< blocks whose size a resize set
  uint64_t Freed = 0;     ///< blocks a free statement moved the free of
  uint64_t Offloaded = 0; ///< blocks an offload took off the device
  uint64_t Allocated = 0; ///< blocks an alloc added
  bool changedMemory() const {
    return Resized || Freed || Offloaded || Allocated;
  }
};

struct RunResult {
  bool Ok = true;
  /// A runtime error: its location, and a note per calling frame.
  Diagnostic Error;
  std::string Output; ///< what print statements printed
  ChangeStats Stats;
  sim::SchedulePolicy Policy;
  uint64_t Steps = 0;
};

/// Runs \p P (module by module, imports first) against \p Env.
RunResult run(const bc::Program &P, RunEnv &Env, const RunOptions &O);

/// Checks --set values against \p P's parameters before a run: unknown
/// names, unreadable values, and a value of another kind than a literal
/// default (a duration for a bandwidth). Returns the first problem, at the
/// parameter's declaration when it concerns one.
std::optional<Diagnostic> checkSettings(const bc::Program &P,
                                        const std::vector<Setting> &S);

/// A --set value as a number in base units (ns, bytes, bytes/ns, plain),
/// or nullopt when it is not a number ("true", "ring").
std::optional<double> settingNumber(std::string_view Text);

/// Estimates the memory bandwidth the trace's own memory-bound work reaches
/// (bytes/ns): the median of bytes/duration over copies and sets of at
/// least 1 MiB, else 0.
double estimateMemBandwidth(const graph::Graph &G);

/// Estimates the host-device copy bandwidth (bytes/ns): the median of
/// bytes/duration over the trace's HtoD and DtoH copies of at least 1 MiB
/// and 10 us, else 0.
double estimatePcieBandwidth(const graph::Graph &G);

/// The host-device copy bandwidth a model takes (bytes/ns): \p Measured (the
/// trace's own copies) where known, else the host link of the catalogue's
/// \p Spec, else 0.
double hostBandwidth(double Measured, const ops::GpuSpec *Spec);

/// The device pool a run reports the peak of: the device pool with the most
/// memory records in the replayed window (the lowest id on a tie).
uint32_t reportedPool(const memory::MemoryModel &M);

/// The peak allocated bytes of pool \p Pool of \p M in iteration \p It of
/// the schedule \p R (blocks placed by R's task times, as they are now).
int64_t iterationPeak(const memory::MemoryModel &M, uint32_t Pool,
                      const graph::Graph &G, const sim::SimResult &R,
                      const graph::Iteration &It);

} // namespace dd::vm

#endif
