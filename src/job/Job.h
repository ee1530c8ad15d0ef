//===- Job.h - The ranks of a distributed run as one graph ------*- C++ -*-===//
//
// A job is one trace per rank. Each rank's graph is built and calibrated on
// its own (graph::buildGraph); joinRanks then matches the ranks'
// communication kernels into collectives, estimates each rank's clock
// offset from them (the members of one collective finish together), and
// joins the graphs into one: tasks, resources (named "rank N ..."), edges,
// layers and iterations of every rank, and the collectives (see
// Graph::CollectiveBegin). A collective member's duration becomes its
// transfer: from the last member's arrival to its own measured end, so that
// the unchanged job replays every rank; the wait before it is the
// simulation's, and follows from what a model changes. See
// docs/multirank.md.
//
//===----------------------------------------------------------------------===//
#ifndef DD_JOB_JOB_H
#define DD_JOB_JOB_H

#include "graph/Graph.h"
#include "sim/CriticalPath.h"
#include "sim/Simulator.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace dd::job {

/// One rank's graph, as graph::buildGraph made it from the rank's trace.
struct RankGraph {
  int32_t Rank = 0;
  std::string Path;
  graph::Graph G;
};

/// Rank numbers and world sizes a job takes: a rank is kept in 32 bits and
/// keys maps; one far beyond any job (2^31 wrapped negative, 2^32 + 2 became
/// rank 2) is bad input.
constexpr int64_t MaxRank = int64_t(1) << 24;
/// What is wrong with a rank of \p Rank in a world of \p WorldSize (as
/// distributedInfo says them) beyond MaxRank; "" where nothing is.
std::string rankLimitError(int64_t Rank, int64_t WorldSize);

enum class Clock : uint8_t {
  Collectives, ///< offsets estimated from matched collectives' ends
  Trace,       ///< the traces' clocks as they are
};

struct JobRank {
  int32_t Rank = 0;
  std::string Path;
  /// ns added to the rank's trace times to put them on the job's clock.
  int64_t ClockOffset = 0;
  /// The rank's iterations: indices into the job graph's Iterations.
  std::vector<uint32_t> Iterations;
  graph::TaskId FirstTask = 0, EndTask = 0; ///< its tasks
  graph::ResourceId FirstResource = 0;      ///< its resources, from here
};

/// A job iteration: the iterations of one number, one per rank.
struct JobIteration {
  int64_t Number = 0;
  std::string Label;
  std::vector<uint32_t> PerRank; ///< by index into Job::Ranks
};

struct Job {
  graph::Graph G;
  std::vector<JobRank> Ranks;
  std::vector<JobIteration> Iterations;
  Clock ClockMode = Clock::Collectives;
  /// How collectives were matched ("by order on each rank's communication
  /// streams"), and members whose measured end came before the last
  /// member's arrival (clock noise; their transfer is 0).
  std::string Matching;
  size_t ClampedTransfers = 0;
  /// Collectives paired from communication a model inserted (by order on
  /// same-named channels), and what could not be paired (one line each).
  size_t InsertedCollectives = 0;
  std::vector<std::string> Unpaired;
};

/// A job's ranks matched but not yet joined: each rank's graph as built,
/// with its collective members' durations already their transfers, so that
/// a model can change each rank's graph on its own, as it would one trace's,
/// before joinPrepared joins them.
struct PreparedJob {
  std::vector<RankGraph> Ranks; ///< by rank
  std::vector<int64_t> Offset;  ///< ns added to each rank's trace times
  /// Collective C's members are Members[CollectiveBegin[C] ..
  /// CollectiveBegin[C + 1]), in rank order: each a task of the graph of
  /// Ranks[MemberRank[M]]. Every rank given takes part in a collective
  /// matched by order; a process group's take its member ranks.
  std::vector<uint32_t> CollectiveBegin{0};
  std::vector<uint32_t> MemberRank;
  std::vector<graph::TaskId> Members;
  /// Per rank, per collective member: how long it waited for the others as
  /// measured (its measured duration less its transfer).
  std::vector<llvm::DenseMap<graph::TaskId, int64_t>> Wait;
  Clock ClockMode = Clock::Collectives;
  std::string Matching;
  size_t ClampedTransfers = 0;
  size_t numCollectives() const { return CollectiveBegin.size() - 1; }
};

/// Matches the ranks' collectives and estimates their clocks (each graph
/// finalized first). Fails with one line for duplicate ranks or ranks whose
/// collectives cannot be paired (a different count or kind on a stream).
llvm::Expected<PreparedJob> prepareRanks(std::vector<RankGraph> Ranks, Clock C);
/// Joins prepared ranks, each graph as a model may have changed it: a
/// removed member leaves its collective, and communication inserted on
/// channels of one name is paired across ranks by order where every rank
/// inserted as many (Job::Unpaired says where not). Fails with one line for
/// ranks without common iterations.
llvm::Expected<Job> joinPrepared(PreparedJob P);
/// prepareRanks, then joinPrepared.
llvm::Expected<Job> joinRanks(std::vector<RankGraph> Ranks, Clock C);

/// The index in J.Ranks of the rank that task \p T belongs to.
size_t rankIndexOf(const Job &J, graph::TaskId T);

/// The job's measured and simulated span of job iteration \p I: from the
/// earliest rank's begin to the latest rank's end.
struct Span {
  int64_t Begin = 0, End = 0;
  int64_t length() const { return End - Begin; }
};
Span measuredSpan(const Job &J, const JobIteration &I);
Span simulatedSpan(const Job &J, const sim::SimResult &R,
                   const JobIteration &I);
/// The critical path of job iteration \p I in \p R: from the end of the
/// rank's iteration that ends last (the first such rank) back to the job's
/// begin.
sim::CriticalPath criticalPath(const Job &J, const sim::SimResult &R,
                               const JobIteration &I);

/// How late each rank reached the collectives of job iteration \p I in \p R
/// (ns past the collective's median arrival, summed), by index into Ranks.
std::vector<int64_t> lateness(const Job &J, const sim::SimResult &R,
                              const JobIteration &I);
/// A straggler what-if: rank index \p RankIndex's own work (its CPU calls
/// and the gaps between them, its GPU work but communication) scaled by
/// the largest factor up to 1, found by false position (at most 8 steps,
/// to within 1 us of \p TargetLate or 1/256 of the factor), at which it
/// reaches the collectives of \p I no later in total than \p TargetLate (ns
/// past their median arrivals); the job's iteration then. \p Base is the
/// job's simulation as it is (the factor 1). The graph is not changed:
/// what-ifs of several ranks may run at once. Every simulation but the
/// first (the factor 0) stops once the job is past \p I (sim::simulate's
/// Until), and is simulated again whole where it stopped too early for
/// what is read: the result is the whole simulations'.
struct StragglerWhatIf {
  /// The factor its work needed; -1 where the job gains nothing at any
  /// factor (its iteration is the same with the rank's work at zero).
  double Scale = 1;
  int64_t JobTime = 0; ///< the job's iteration with it
  int64_t Late = 0;    ///< its lateness then
};
llvm::Expected<StragglerWhatIf>
asFastAsNeeded(const Job &J, const sim::SimResult &Base, const JobIteration &I,
               size_t RankIndex, int64_t TargetLate);

} // namespace dd::job

#endif
