#include "job/Job.h"

#include "support/Error.h"
#include "support/Format.h"
#include "support/Work.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

using namespace dd;
using namespace dd::job;
using namespace dd::graph;

namespace {

/// What kind of collective a communication kernel is: "AllReduce",
/// "SendRecv", ... from ncclKernel_AllReduce_RING_LL_Sum_float(...) or
/// ncclDevKernel_AllReduce_Sum_f16_RING_LL(...); the name itself otherwise.
std::string_view collectiveKind(std::string_view Name) {
  for (std::string_view P :
       {"ncclDevKernel_", "ncclKernel_", "rcclKernel_", "rcclDevKernel_"})
    if (Name.substr(0, P.size()) == P) {
      Name.remove_prefix(P.size());
      return Name.substr(0, Name.find_first_of("_("));
    }
  return Name.substr(0, Name.find('('));
}

/// A rank's communication kernels, per communication stream, in time order;
/// the streams in the order of their first kernel.
struct CommStreams {
  std::vector<ResourceId> Stream;
  std::vector<std::vector<TaskId>> Tasks;
};

/// A rank's communication kernels: those whose trace names their process
/// group, per group (by Graph::CommGroups index), and the others per stream.
struct RankComm {
  CommStreams Ungrouped;
  std::map<std::string, std::pair<uint32_t, std::vector<TaskId>>> ByGroup;
};

RankComm rankComm(const Graph &G) {
  std::vector<TaskId> All;
  for (TaskId T = 0; T < G.numTasks(); ++T)
    if (G.Kind[T] == TaskKind::Comm && G.isLeaf(T) && !G.isRemoved(T) &&
        G.Res[T] != NoResource && G.MeasuredStart[T] != NoTime)
      All.push_back(T);
  std::stable_sort(All.begin(), All.end(), [&](TaskId A, TaskId B) {
    return G.MeasuredStart[A] < G.MeasuredStart[B];
  });
  RankComm Out;
  llvm::DenseMap<ResourceId, size_t> Index;
  for (TaskId T : All) {
    if (auto F = G.CommGroupOf.find(T); F != G.CommGroupOf.end()) {
      auto &Slot = Out.ByGroup[G.CommGroups[F->second].Name];
      Slot.first = F->second;
      Slot.second.push_back(T);
      continue;
    }
    CommStreams &S = Out.Ungrouped;
    auto [It, New] = Index.try_emplace(G.Res[T], S.Stream.size());
    if (New) {
      S.Stream.push_back(G.Res[T]);
      S.Tasks.emplace_back();
    }
    S.Tasks[It->second].push_back(T);
  }
  return Out;
}

/// Kinds whose members move the same amount on every rank (an all-to-all's
/// or a send/receive's need not).
bool sameSizeOnEveryRank(std::string_view Kind) {
  for (std::string_view K :
       {"AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce"})
    if (Kind == K)
      return true;
  return false;
}

std::string rankList(llvm::ArrayRef<int32_t> Ranks) {
  return fmt::format("[{}]", fmt::join(Ranks, ", "));
}

int64_t median(std::vector<int64_t> V) {
  if (V.empty())
    return 0;
  std::nth_element(V.begin(), V.begin() + V.size() / 2, V.end());
  return V[V.size() / 2];
}

/// Appends \p From (a rank's graph) to \p To, shifting its times by
/// \p Shift and its first-on-resource gaps so that they count from To's
/// origin. Returns the offset of its task ids.
TaskId append(Graph &To, const Graph &From, int32_t Rank, int64_t Shift) {
  TaskId TaskBase = static_cast<TaskId>(To.numTasks());
  ResourceId ResBase = static_cast<ResourceId>(To.Resources.size());
  LayerId LayerBase = static_cast<LayerId>(To.Layers.size());
  int32_t IterBase = static_cast<int32_t>(To.Iterations.size());
  for (Resource R : From.Resources) {
    R.Name = fmt::format("rank {} {}", Rank, R.Name);
    To.Resources.push_back(std::move(R));
  }
  for (Layer L : From.Layers) {
    if (L.Parent != NoLayer)
      L.Parent += LayerBase;
    To.Layers.push_back(std::move(L));
  }
  auto Task = [&](TaskId T) { return T == NoTask ? NoTask : T + TaskBase; };
  auto Time = [&](int64_t T) { return T == NoTime ? NoTime : T + Shift; };
  size_t N = From.numTasks();
  To.reserveTasks(To.numTasks() + N, /*Prefault=*/false);
  for (TaskId T = 0; T < N; ++T) {
    TaskId X = To.addTask(From.Kind[T], From.name(T),
                          From.Res[T] == NoResource ? NoResource
                                                    : From.Res[T] + ResBase,
                          From.Dur[T]);
    To.MeasuredDur[X] = From.MeasuredDur[T];
    To.MeasuredStart[X] = Time(From.MeasuredStart[T]);
    To.Gap[X] = From.Gap[T];
    To.OrderKey[X] = From.OrderKey[T] + Shift;
    To.Parent[X] = Task(From.Parent[T]);
    To.Launcher[X] = Task(From.Launcher[T]);
    To.LayerOf[X] =
        From.LayerOf[T] == NoLayer ? NoLayer : From.LayerOf[T] + LayerBase;
    To.PhaseOf[X] = From.PhaseOf[T];
    To.IterationOf[X] =
        From.IterationOf[T] < 0 ? -1 : From.IterationOf[T] + IterBase;
    To.Flags[X] = From.Flags[T];
    To.Bytes[X] = From.Bytes[T];
    To.Flops[X] = From.Flops[T];
    To.Moved[X] = From.Moved[T];
    To.Saved[X] = From.Saved[T];
    To.SavedCount[X] = From.SavedCount[T];
    To.Align[X] = From.Align[T];
    To.InputPrecision[X] = From.InputPrecision[T];
    To.Correlation[X] = From.Correlation[T];
    // Event ids index the rank's own trace, which the job does not keep.
    To.Event[X] = ~0u;
    To.FirstLeaf[X] = Task(From.FirstLeaf[T]);
    To.LastLeaf[X] = Task(From.LastLeaf[T]);
    To.Lead[X] = From.Lead[T];
    To.Trail[X] = From.Trail[T];
  }
  // The first leaf on each resource was released at the rank's origin plus
  // its gap; the job's origin is earlier by this much.
  int64_t Earlier = From.Origin + Shift - To.Origin;
  for (const auto &Seq : From.ResourceTasks)
    if (!Seq.empty())
      To.Gap[Seq.front() + TaskBase] += Earlier;
  uint32_t GroupBase = static_cast<uint32_t>(To.CommGroups.size());
  To.CommGroups.insert(To.CommGroups.end(), From.CommGroups.begin(),
                       From.CommGroups.end());
  for (auto [T, Group] : From.CommGroupOf)
    To.CommGroupOf[T + TaskBase] = Group + GroupBase;
  for (Edge E : From.Edges) {
    E.Src += TaskBase;
    E.Dst += TaskBase;
    To.Edges.push_back(E);
  }
  for (Iteration It : From.Iterations) {
    It.MeasuredBegin += Shift;
    It.MeasuredEnd += Shift;
    It.Begin.Task = Task(It.Begin.Task);
    It.End.Task = Task(It.End.Task);
    It.Rank = Rank;
    To.Iterations.push_back(std::move(It));
  }
  return TaskBase;
}

std::string streamName(const Graph &G, ResourceId R) {
  return G.Resources[R].Name;
}

/// Appends a collective of the given (rank index, task) members to \p P.
void addMatched(PreparedJob &P,
                llvm::ArrayRef<std::pair<uint32_t, TaskId>> Members) {
  for (auto [Rank, T] : Members) {
    P.MemberRank.push_back(Rank);
    P.Members.push_back(T);
  }
  P.CollectiveBegin.push_back(static_cast<uint32_t>(P.Members.size()));
}

/// Pairs the kernels that name no process group by their order on each
/// rank's communication streams: every rank takes part in every one.
llvm::Error matchByOrder(const std::vector<RankGraph> &Ranks,
                         const std::vector<RankComm> &Comm, PreparedJob &P) {
  const CommStreams &Ref = Comm.front().Ungrouped;
  for (size_t I = 1; I < Ranks.size(); ++I) {
    const CommStreams &Other = Comm[I].Ungrouped;
    if (Other.Tasks.size() != Ref.Tasks.size())
      return makeError(fmt::format(
          "rank {} has communication kernels on {} streams, rank {} on {}: "
          "ddscript pairs collectives by their order on each stream and "
          "cannot pair these ranks' ({} and {})",
          Ranks[I].Rank, Other.Tasks.size(), Ranks[0].Rank, Ref.Tasks.size(),
          Ranks[I].Path, Ranks[0].Path));
    for (size_t S = 0; S < Ref.Tasks.size(); ++S) {
      const auto &A = Ref.Tasks[S], &B = Other.Tasks[S];
      if (A.size() != B.size())
        return makeError(fmt::format(
            "rank {} has {} communication kernels on {}, rank {} has {} on "
            "{}: ddscript pairs collectives by their order and cannot pair "
            "these",
            Ranks[I].Rank, B.size(), streamName(Ranks[I].G, Other.Stream[S]),
            Ranks[0].Rank, A.size(), streamName(Ranks[0].G, Ref.Stream[S])));
      for (size_t K = 0; K < A.size(); ++K) {
        std::string_view KA = collectiveKind(Ranks[0].G.name(A[K]));
        std::string_view KB = collectiveKind(Ranks[I].G.name(B[K]));
        if (KA != KB)
          return makeError(fmt::format(
              "collective {} on {}: rank {} runs {}, rank {} runs {}: the "
              "ranks' collectives do not pair by order",
              K + 1, streamName(Ranks[I].G, Other.Stream[S]), Ranks[I].Rank, KB,
              Ranks[0].Rank, KA));
      }
    }
  }
  std::vector<std::pair<uint32_t, TaskId>> Members;
  uint64_t PerRank = 0;
  for (size_t S = 0; S < Ref.Tasks.size(); ++S) {
    PerRank += Ref.Tasks[S].size();
    for (size_t K = 0; K < Ref.Tasks[S].size(); ++K) {
      Members.clear();
      for (size_t I = 0; I < Ranks.size(); ++I)
        Members.push_back({uint32_t(I), Comm[I].Ungrouped.Tasks[S][K]});
      addMatched(P, Members);
    }
  }
  // Every rank's kernels, compared above and paired here.
  work::add(work::Counter::JobMatching, 2 * Ranks.size() * PerRank);
  return llvm::Error::success();
}

/// Pairs the kernels that name their process group: per group, the k-th
/// kernel of every member rank given is one collective. Ranks of a group
/// that were not given are counted in \p Absent.
llvm::Error matchByGroup(const std::vector<RankGraph> &Ranks,
                         const std::vector<RankComm> &Comm, PreparedJob &P,
                         size_t &Groups, std::set<int32_t> &Absent) {
  llvm::DenseMap<int32_t, uint32_t> IndexOfRank;
  for (size_t I = 0; I < Ranks.size(); ++I)
    IndexOfRank[Ranks[I].Rank] = static_cast<uint32_t>(I);
  std::set<std::string> Names;
  for (const RankComm &RC : Comm)
    for (const auto &KV : RC.ByGroup)
      Names.insert(KV.first);
  std::vector<std::pair<uint32_t, TaskId>> Members;
  // Every rank looked up per group, and each member's kernels.
  uint64_t Visited = Names.size() * Ranks.size();
  for (const std::string &Name : Names) {
    // The group's ranks as the first rank that runs it records them.
    const Graph::CommGroup *Group = nullptr;
    size_t First = 0;
    for (size_t I = 0; I < Ranks.size(); ++I) {
      auto F = Comm[I].ByGroup.find(Name);
      if (F == Comm[I].ByGroup.end())
        continue;
      const Graph::CommGroup &G = Ranks[I].G.CommGroups[F->second.first];
      if (!Group) {
        Group = &G;
        First = I;
      } else if (G.Ranks != Group->Ranks) {
        return makeError(fmt::format(
            "process group {}: rank {} records its ranks as {}, rank {} as "
            "{}: ddscript cannot pair its collectives",
            Name, Ranks[I].Rank, rankList(G.Ranks), Ranks[First].Rank,
            rankList(Group->Ranks)));
      }
      if (!llvm::is_contained(Group->Ranks, Ranks[I].Rank))
        return makeError(fmt::format(
            "rank {} runs collectives of process group {}, whose ranks are {} "
            "({})",
            Ranks[I].Rank, Name, rankList(Group->Ranks), Ranks[I].Path));
    }
    ++Groups;
    // The members given, in rank order, and their kernels of this group.
    std::vector<std::pair<uint32_t, const std::vector<TaskId> *>> Given;
    static const std::vector<TaskId> None;
    for (int32_t R :
         std::set<int32_t>(Group->Ranks.begin(), Group->Ranks.end())) {
      auto I = IndexOfRank.find(R);
      if (I == IndexOfRank.end()) {
        Absent.insert(R);
        continue;
      }
      auto F = Comm[I->second].ByGroup.find(Name);
      Given.push_back({I->second, F == Comm[I->second].ByGroup.end()
                                      ? &None
                                      : &F->second.second});
    }
    const auto &[RefRank, Ref] = Given.front();
    Visited += Group->Ranks.size() + 2 * Given.size() * Ref->size();
    for (const auto &[I, Tasks] : Given) {
      if (Tasks->size() != Ref->size())
        return makeError(fmt::format(
            "process group {}: rank {} has {} communication kernels, rank {} "
            "has {}: ddscript pairs a group's collectives by their order and "
            "cannot pair these",
            Name, Ranks[I].Rank, Tasks->size(), Ranks[RefRank].Rank,
            Ref->size()));
      for (size_t K = 0; K < Ref->size(); ++K) {
        TaskId A = (*Ref)[K], B = (*Tasks)[K];
        const Graph &GA = Ranks[RefRank].G, &GB = Ranks[I].G;
        std::string_view KA = collectiveKind(GA.name(A));
        std::string_view KB = collectiveKind(GB.name(B));
        if (KA != KB)
          return makeError(fmt::format(
              "collective {} of process group {}: rank {} runs {}, rank {} "
              "runs {}: the ranks' collectives do not pair by order",
              K + 1, Name, Ranks[I].Rank, KB, Ranks[RefRank].Rank, KA));
        if (sameSizeOnEveryRank(KA) && GA.Bytes[A] >= 0 && GB.Bytes[B] >= 0 &&
            GA.Bytes[A] != GB.Bytes[B])
          return makeError(fmt::format(
              "collective {} of process group {} ({}): rank {} moves {} "
              "bytes, rank {} moves {}: the ranks' collectives do not pair by "
              "order",
              K + 1, Name, KA, Ranks[I].Rank, GB.Bytes[B], Ranks[RefRank].Rank,
              GA.Bytes[A]));
      }
    }
    // A collective of one member given waits for no one here: its kernel
    // keeps its measured time.
    if (Given.size() < 2)
      continue;
    for (size_t K = 0; K < Ref->size(); ++K) {
      Members.clear();
      for (const auto &[I, Tasks] : Given)
        Members.push_back({I, (*Tasks)[K]});
      addMatched(P, Members);
    }
  }
  work::add(work::Counter::JobMatching, Visited);
  return llvm::Error::success();
}

/// Matches the ranks' collectives into \p P: per process group where the
/// trace names it, else by order on the communication streams.
llvm::Error matchCollectives(const std::vector<RankGraph> &Ranks,
                             PreparedJob &P) {
  std::vector<RankComm> Comm;
  for (const RankGraph &R : Ranks)
    Comm.push_back(rankComm(R.G));
  size_t Groups = 0;
  std::set<int32_t> Absent;
  if (auto E = matchByGroup(Ranks, Comm, P, Groups, Absent))
    return E;
  size_t Grouped = P.numCollectives();
  if (auto E = matchByOrder(Ranks, Comm, P))
    return E;
  size_t Ordered = P.numCollectives() - Grouped;
  std::vector<std::string> How;
  if (Groups) {
    std::string S = fmt::format("per process group from the NCCL arguments "
                                "({} group{})",
                                Groups, Groups == 1 ? "" : "s");
    if (!Absent.empty())
      S += fmt::format(
          "; ranks {} of their groups were not given: members "
          "wait only for the ranks given, and the rest of a "
          "wait counts as transfer",
          rankList(std::vector<int32_t>(Absent.begin(), Absent.end())));
    How.push_back(std::move(S));
  }
  if (Ordered || !Groups)
    How.push_back("by order on each rank's communication streams");
  P.Matching = fmt::format("{}", fmt::join(How, "; others "));
  return llvm::Error::success();
}

/// Each rank's clock offset (\p P.Offset) from the collectives it shares
/// with a rank whose offset is known, starting at the first rank: the
/// median of how much earlier or later its members ended.
void estimateClocks(const std::vector<RankGraph> &Ranks, PreparedJob &P) {
  P.Offset.assign(Ranks.size(), 0);
  if (P.ClockMode != Clock::Collectives || Ranks.size() < 2)
    return;
  auto End = [&](size_t M) {
    const Graph &G = Ranks[P.MemberRank[M]].G;
    TaskId T = P.Members[M];
    return G.MeasuredStart[T] + G.MeasuredDur[T];
  };
  // Per rank, the collectives it takes part in (CSR).
  std::vector<std::vector<uint32_t>> Of(Ranks.size());
  for (uint32_t C = 0; C < P.numCollectives(); ++C)
    for (uint32_t M = P.CollectiveBegin[C]; M < P.CollectiveBegin[C + 1]; ++M)
      Of[P.MemberRank[M]].push_back(C);
  std::vector<bool> Known(Ranks.size(), false);
  Known[0] = true;
  size_t Left = Ranks.size() - 1;
  std::vector<size_t> Queue{0};
  std::map<uint32_t, std::vector<int64_t>> Diff;
  uint64_t Visited = P.Members.size(); // for Of
  for (size_t Q = 0; Q < Queue.size() && Left; ++Q) {
    size_t J = Queue[Q];
    Diff.clear();
    for (uint32_t C : Of[J]) {
      Visited += 2 * (P.CollectiveBegin[C + 1] - P.CollectiveBegin[C]);
      int64_t EndJ = 0;
      for (uint32_t M = P.CollectiveBegin[C]; M < P.CollectiveBegin[C + 1]; ++M)
        if (P.MemberRank[M] == J)
          EndJ = End(M) + P.Offset[J];
      for (uint32_t M = P.CollectiveBegin[C]; M < P.CollectiveBegin[C + 1]; ++M)
        if (!Known[P.MemberRank[M]])
          Diff[P.MemberRank[M]].push_back(EndJ - End(M));
    }
    for (auto &[I, D] : Diff) {
      P.Offset[I] = median(std::move(D));
      Known[I] = true;
      --Left;
      Queue.push_back(I);
    }
  }
  work::add(work::Counter::JobMatching, Visited);
  if (Left) {
    std::vector<int32_t> Alone;
    for (size_t I = 0; I < Ranks.size(); ++I)
      if (!Known[I])
        Alone.push_back(Ranks[I].Rank);
    P.Matching += fmt::format("; ranks {} share no collective with rank {}: "
                              "their clocks are taken as they are",
                              rankList(Alone), Ranks[0].Rank);
  }
}

/// Each member runs its transfer: from the last arrival to its own end;
/// the time before is its measured wait (\p P.Wait).
void splitWaits(std::vector<RankGraph> &Ranks, PreparedJob &P) {
  P.Wait.resize(Ranks.size());
  for (uint32_t C = 0; C < P.numCollectives(); ++C) {
    uint32_t B = P.CollectiveBegin[C], E = P.CollectiveBegin[C + 1];
    int64_t LastArrival = INT64_MIN;
    for (uint32_t M = B; M < E; ++M) {
      uint32_t I = P.MemberRank[M];
      LastArrival = std::max(
          LastArrival, Ranks[I].G.MeasuredStart[P.Members[M]] + P.Offset[I]);
    }
    for (uint32_t M = B; M < E; ++M) {
      uint32_t I = P.MemberRank[M];
      Graph &G = Ranks[I].G;
      TaskId T = P.Members[M];
      int64_t End = G.MeasuredStart[T] + P.Offset[I] + G.MeasuredDur[T];
      if (End < LastArrival)
        ++P.ClampedTransfers;
      G.Dur[T] = std::max<int64_t>(0, End - LastArrival);
      P.Wait[I][T] = G.MeasuredDur[T] - G.Dur[T];
    }
  }
}

/// Ranks of one job start within seconds of each other on the job's clock;
/// one that starts an hour or more from the others has a clock that is not
/// theirs (a trace rebased to 0, another host's epoch): bad input, said so,
/// rather than a replay of a job that spans years.
llvm::Error checkClocks(const std::vector<RankGraph> &Ranks,
                        const PreparedJob &P) {
  if (Ranks.size() < 2)
    return llvm::Error::success();
  std::vector<int64_t> Starts;
  for (size_t I = 0; I < Ranks.size(); ++I)
    Starts.push_back(Ranks[I].G.Origin + P.Offset[I]);
  std::vector<int64_t> Sorted = Starts;
  std::nth_element(Sorted.begin(), Sorted.begin() + Sorted.size() / 2,
                   Sorted.end());
  int64_t Median = Sorted[Sorted.size() / 2];
  const int64_t Hour = int64_t(3600) * 1'000'000'000;
  for (size_t I = 0; I < Ranks.size(); ++I) {
    int64_t Off = Starts[I] > Median ? Starts[I] - Median : Median - Starts[I];
    if (Off >= Hour)
      return makeError(fmt::format(
          "{}: rank {}'s clock is {} {} the other ranks' (its trace starts "
          "that far from theirs): its times are not on their clock{}",
          Ranks[I].Path, Ranks[I].Rank, formatDuration(Off),
          Starts[I] > Median ? "ahead of" : "behind",
          P.ClockMode == Clock::Trace
              ? "; try --clock collectives, which aligns the ranks by "
                "their collectives"
              : ", and its collectives do not align it"));
  }
  return llvm::Error::success();
}

} // namespace

llvm::Expected<PreparedJob> job::prepareRanks(std::vector<RankGraph> Ranks,
                                              Clock C) {
  if (Ranks.empty())
    return makeError("a job needs at least one rank");
  std::stable_sort(
      Ranks.begin(), Ranks.end(),
      [](const RankGraph &A, const RankGraph &B) { return A.Rank < B.Rank; });
  for (size_t I = 1; I < Ranks.size(); ++I)
    if (Ranks[I].Rank == Ranks[I - 1].Rank)
      return makeError(fmt::format("{} and {} are both rank {}: give one "
                                   "trace per rank",
                                   Ranks[I - 1].Path, Ranks[I].Path,
                                   Ranks[I].Rank));
  for (RankGraph &R : Ranks)
    if (!R.G.finalized()) {
      std::string Error;
      if (!R.G.finalize(&Error))
        return makeError(R.Path + ": " + Error);
    }

  PreparedJob P;
  P.ClockMode = C;
  if (auto E = matchCollectives(Ranks, P))
    return E;
  estimateClocks(Ranks, P);
  if (auto E = checkClocks(Ranks, P))
    return E;
  splitWaits(Ranks, P);
  P.Ranks = std::move(Ranks);
  return P;
}

namespace {

/// Communication a model inserted on rank graph \p G, by the name of its
/// resource (names in order of first use), each in the order inserted.
struct Inserted {
  std::vector<std::string> Names;
  llvm::StringMap<std::vector<TaskId>> Tasks;
};

Inserted insertedComm(const Graph &G, TaskId Base, TaskId End) {
  Inserted Out;
  for (TaskId T = Base; T < End; ++T) {
    if (G.Kind[T] != TaskKind::Comm || !G.isLeaf(T) || G.isRemoved(T) ||
        G.MeasuredStart[T] != NoTime || G.Res[T] == NoResource)
      continue;
    // The joined graph's names are "rank N <name>".
    std::string_view Name = G.Resources[G.Res[T]].Name;
    Name.remove_prefix(std::min(Name.size(), Name.find(' ', 5) + 1));
    auto [It, New] = Out.Tasks.try_emplace(Name);
    if (New)
      Out.Names.emplace_back(Name);
    It->second.push_back(T);
  }
  return Out;
}

/// Pairs inserted communication across the ranks of \p J (task ranges of
/// each rank), by order on channels of one name.
void pairInserted(Job &J) {
  Graph &G = J.G;
  std::vector<Inserted> Per;
  for (const JobRank &R : J.Ranks)
    Per.push_back(insertedComm(G, R.FirstTask, R.EndTask));
  std::vector<std::string> Names;
  llvm::StringSet<> Seen;
  for (const Inserted &I : Per)
    for (const std::string &N : I.Names)
      if (Seen.insert(N).second)
        Names.push_back(N);
  std::vector<TaskId> Members;
  for (const std::string &N : Names) {
    size_t Count = SIZE_MAX;
    bool Same = true;
    for (size_t I = 0; I < Per.size(); ++I) {
      auto F = Per[I].Tasks.find(N);
      size_t C = F == Per[I].Tasks.end() ? 0 : F->second.size();
      if (Count == SIZE_MAX)
        Count = C;
      else if (C != Count) {
        J.Unpaired.push_back(fmt::format(
            "communication inserted on \"{}\": rank {} has {}, rank {} has "
            "{}: not paired across ranks, each rank's runs without waiting "
            "for the others",
            N, J.Ranks[0].Rank, Count, J.Ranks[I].Rank, C));
        Same = false;
        break;
      }
    }
    if (!Same || J.Ranks.size() < 2)
      continue;
    for (size_t K = 0; K < Count; ++K) {
      Members.clear();
      for (const Inserted &I : Per)
        Members.push_back(I.Tasks.find(N)->second[K]);
      G.addCollective(Members);
      ++J.InsertedCollectives;
    }
  }
}

} // namespace

llvm::Expected<Job> job::joinPrepared(PreparedJob P) {
  std::vector<RankGraph> &Ranks = P.Ranks;
  for (RankGraph &R : Ranks)
    if (!R.G.finalized()) {
      std::string Error;
      if (!R.G.finalize(&Error))
        return makeError(R.Path + ": " + Error);
    }
  Job J;
  J.ClockMode = P.ClockMode;
  J.Matching = P.Matching;
  J.ClampedTransfers = P.ClampedTransfers;
  J.G.Origin = INT64_MAX;
  for (size_t I = 0; I < Ranks.size(); ++I)
    J.G.Origin = std::min(J.G.Origin, Ranks[I].G.Origin + P.Offset[I]);
  // Room for every rank's tasks and edges at once: reserving rank by rank
  // copied the columns at every rank (quadratic: 45 s of 46 joining 1,000
  // ranks).
  size_t Tasks = 0, Edges = 0;
  for (const RankGraph &R : Ranks) {
    Tasks += R.G.numTasks();
    Edges += R.G.Edges.size();
  }
  // Not mapped at once: the ranks' graphs, freed one by one as they are
  // appended, make room for it as it fills.
  J.G.reserveTasks(Tasks, /*Prefault=*/false);
  J.G.Edges.reserve(Edges);
  std::vector<TaskId> Base(Ranks.size());
  for (size_t I = 0; I < Ranks.size(); ++I) {
    JobRank JR;
    JR.Rank = Ranks[I].Rank;
    JR.Path = Ranks[I].Path;
    JR.ClockOffset = P.Offset[I];
    uint32_t FirstIter = static_cast<uint32_t>(J.G.Iterations.size());
    JR.FirstResource = static_cast<ResourceId>(J.G.Resources.size());
    Base[I] = append(J.G, Ranks[I].G, Ranks[I].Rank, P.Offset[I]);
    JR.FirstTask = Base[I];
    JR.EndTask = static_cast<TaskId>(J.G.numTasks());
    for (uint32_t It = FirstIter; It < J.G.Iterations.size(); ++It)
      JR.Iterations.push_back(It);
    J.Ranks.push_back(std::move(JR));
    // The rank's graph is no longer needed: free it before the next.
    Ranks[I].G = Graph();
  }

  // The matched collectives, less the members a model removed.
  Graph &G = J.G;
  std::vector<TaskId> Members;
  for (size_t C = 0; C < P.numCollectives(); ++C) {
    Members.clear();
    for (uint32_t M = P.CollectiveBegin[C]; M < P.CollectiveBegin[C + 1]; ++M) {
      TaskId T = P.Members[M] + Base[P.MemberRank[M]];
      if (!G.isRemoved(T))
        Members.push_back(T);
    }
    if (!Members.empty())
      G.addCollective(Members);
  }
  pairInserted(J);

  // --- Iterations common to every rank. ------------------------------------
  std::vector<llvm::DenseMap<int64_t, uint32_t>> ByNumber(J.Ranks.size());
  for (size_t I = 0; I < J.Ranks.size(); ++I)
    for (uint32_t It : J.Ranks[I].Iterations)
      ByNumber[I].try_emplace(G.Iterations[It].Number, It);
  for (uint32_t It : J.Ranks[0].Iterations) {
    JobIteration JI;
    JI.Number = G.Iterations[It].Number;
    JI.Label = G.Iterations[It].Label;
    for (size_t I = 0; I < J.Ranks.size(); ++I) {
      auto F = ByNumber[I].find(JI.Number);
      if (F == ByNumber[I].end())
        break;
      JI.PerRank.push_back(F->second);
    }
    if (JI.PerRank.size() == J.Ranks.size())
      J.Iterations.push_back(std::move(JI));
  }
  if (J.Iterations.empty()) {
    // The rank at which the iterations in common run out: the odd one, not
    // the first and the last (which may share theirs).
    // "2 iterations, ProfilerStep#3 to ProfilerStep#4", "1 iteration,
    // ProfilerStep#10", "no iterations".
    auto Range = [&](const std::vector<uint32_t> &Its) {
      if (Its.empty())
        return std::string("no iterations");
      if (Its.size() == 1)
        return fmt::format("1 iteration, {}", G.Iterations[Its.front()].Label);
      return fmt::format("{} iterations, {} to {}", Its.size(),
                         G.Iterations[Its.front()].Label,
                         G.Iterations[Its.back()].Label);
    };
    std::vector<uint32_t> Common = J.Ranks[0].Iterations;
    for (size_t I = 1; I < J.Ranks.size(); ++I) {
      std::vector<uint32_t> Next;
      for (uint32_t It : Common)
        if (ByNumber[I].count(G.Iterations[It].Number))
          Next.push_back(It);
      if (Next.empty())
        return makeError(fmt::format(
            "the ranks have no iteration in common: {} (rank {}) has {}, "
            "none of them among {} ({})",
            J.Ranks[I].Path, J.Ranks[I].Rank, Range(J.Ranks[I].Iterations),
            I == 1 ? fmt::format("rank {}'s", J.Ranks[0].Rank)
                   : fmt::format("those ranks {} to {} share", J.Ranks[0].Rank,
                                 J.Ranks[I - 1].Rank),
            Range(Common)));
      Common = std::move(Next);
    }
    return makeError(fmt::format("the ranks have no iteration in common "
                                 "(rank {}: {})",
                                 J.Ranks[0].Rank,
                                 Range(J.Ranks[0].Iterations)));
  }

  std::string Error;
  if (!G.finalize(&Error))
    return makeError("the joined graph of the ranks: " + Error);
  return J;
}

llvm::Expected<Job> job::joinRanks(std::vector<RankGraph> Ranks, Clock C) {
  auto P = prepareRanks(std::move(Ranks), C);
  if (!P)
    return P.takeError();
  return joinPrepared(std::move(*P));
}

std::string job::rankLimitError(int64_t Rank, int64_t WorldSize) {
  if (Rank < MaxRank && WorldSize <= MaxRank)
    return "";
  return fmt::format("distributedInfo says rank {} of world size {}: ranks "
                     "and world sizes above {} are not taken (no job has "
                     "that many)",
                     Rank, WorldSize, MaxRank);
}

size_t job::rankIndexOf(const Job &J, TaskId T) {
  auto It = std::upper_bound(
      J.Ranks.begin(), J.Ranks.end(), T,
      [](TaskId T, const JobRank &R) { return T < R.FirstTask; });
  return It == J.Ranks.begin() ? 0 : size_t(It - J.Ranks.begin()) - 1;
}

Span job::measuredSpan(const Job &J, const JobIteration &I) {
  Span S{INT64_MAX, INT64_MIN};
  for (uint32_t It : I.PerRank) {
    S.Begin = std::min(S.Begin, J.G.Iterations[It].MeasuredBegin - J.G.Origin);
    S.End = std::max(S.End, J.G.Iterations[It].MeasuredEnd - J.G.Origin);
  }
  return S;
}

Span job::simulatedSpan(const Job &J, const sim::SimResult &R,
                        const JobIteration &I) {
  Span S{INT64_MAX, INT64_MIN};
  for (uint32_t It : I.PerRank) {
    auto [B, E] = sim::iterationSpan(J.G, R, J.G.Iterations[It]);
    S.Begin = std::min(S.Begin, B);
    S.End = std::max(S.End, E);
  }
  return S;
}

sim::CriticalPath job::criticalPath(const Job &J, const sim::SimResult &R,
                                    const JobIteration &I) {
  uint32_t Last = I.PerRank.front();
  int64_t LastEnd = INT64_MIN;
  for (uint32_t It : I.PerRank) {
    int64_t E = sim::iterationSpan(J.G, R, J.G.Iterations[It]).second;
    if (E > LastEnd) {
      LastEnd = E;
      Last = It;
    }
  }
  return sim::criticalPath(J.G, R, J.G.Iterations[Last].End,
                           simulatedSpan(J, R, I).Begin);
}

namespace {

/// The collectives with a member inside \p I's span on any rank, and per
/// collective the median arrival of its members.
struct Arrivals {
  std::vector<uint32_t> Collectives;
  std::vector<int64_t> Median;
};

Arrivals arrivals(const Job &J, const sim::SimResult &R, int64_t From,
                  int64_t To) {
  Arrivals A;
  const Graph &G = J.G;
  if (R.Arrival.empty())
    return A;
  std::vector<int64_t> V;
  for (uint32_t C = 0; C < G.numCollectives(); ++C) {
    V.clear();
    bool Inside = false;
    for (TaskId M : G.collectiveMembers(C))
      if (R.Arrival[M] != NoTime) {
        V.push_back(R.Arrival[M]);
        Inside |= R.Arrival[M] >= From && R.Arrival[M] < To;
      }
    if (!Inside || V.empty())
      continue;
    std::sort(V.begin(), V.end());
    A.Collectives.push_back(C);
    A.Median.push_back(V[(V.size() - 1) / 2]);
  }
  return A;
}

/// Whether \p R, a simulation that may have stopped early at \p Until,
/// holds all that simulatedSpan and lateness read of job iteration \p I:
/// every rank's boundaries of it, the job's span ending at or before Until
/// (so every arrival inside the span was simulated), and every live member
/// of a collective with an arrival inside it.
bool holdsIteration(const Job &J, const sim::SimResult &R,
                    const JobIteration &I, int64_t Until) {
  if (!R.Stopped)
    return true;
  using PK = Iteration::PointKind;
  auto Simulated = [&](const Iteration::Point &P) {
    switch (P.Kind) {
    case PK::Origin:
      return true;
    case PK::Makespan:
      return false; // the stopped simulation's is not the whole one's
    case PK::TaskStart:
      return R.Start[P.Task] != NoTime;
    case PK::TaskEnd:
      return R.End[P.Task] != NoTime;
    }
    return false;
  };
  for (uint32_t It : I.PerRank) {
    const Iteration &RI = J.G.Iterations[It];
    // Boundaries that cross time the iteration's tasks, all of them.
    if (!Simulated(RI.Begin) || !Simulated(RI.End) ||
        sim::pointTime(J.G, R, RI.End) < sim::pointTime(J.G, R, RI.Begin))
      return false;
  }
  Span S = simulatedSpan(J, R, I);
  if (S.End > Until)
    return false;
  const Graph &G = J.G;
  for (uint32_t C = 0; C < G.numCollectives(); ++C) {
    bool Inside = false, Whole = true;
    for (TaskId M : G.collectiveMembers(C)) {
      if (R.Arrival[M] != NoTime)
        Inside |= R.Arrival[M] >= S.Begin && R.Arrival[M] < S.End;
      else
        Whole &= R.CollectiveOf[M] == ~0u; // not live: never arrives
    }
    if (Inside && !Whole)
      return false;
  }
  return true;
}

/// How far the simulations of a straggler what-if between \p Base (its
/// work as it is) and \p Zero (its work at zero) must go for job iteration
/// \p I. Scaling a rank's work down moves no point later where every
/// resource keeps its program order, so with any factor between the two
/// the job's span ends by Base's end, and a collective with an arrival
/// before that has one in Zero too, each member arriving by its arrival in
/// Base: the latest such arrival, or the span's end. Where that does not
/// hold, holdsIteration tells.
int64_t untilFor(const Job &J, const sim::SimResult &Base,
                 const sim::SimResult &Zero, const JobIteration &I) {
  int64_t Until = simulatedSpan(J, Base, I).End;
  if (Zero.Arrival.empty() || Base.Arrival.empty())
    return Until;
  int64_t End = Until;
  for (uint32_t C = 0; C < J.G.numCollectives(); ++C) {
    auto Members = J.G.collectiveMembers(C);
    if (std::none_of(Members.begin(), Members.end(), [&](TaskId M) {
          return Zero.Arrival[M] != NoTime && Zero.Arrival[M] < End;
        }))
      continue;
    for (TaskId M : Members)
      Until = std::max(Until, Base.Arrival[M]);
  }
  return Until;
}

} // namespace

std::vector<int64_t> job::lateness(const Job &J, const sim::SimResult &R,
                                   const JobIteration &I) {
  std::vector<int64_t> Late(J.Ranks.size(), 0);
  Span S = simulatedSpan(J, R, I);
  Arrivals A = arrivals(J, R, S.Begin, S.End);
  for (size_t K = 0; K < A.Collectives.size(); ++K)
    for (TaskId M : J.G.collectiveMembers(A.Collectives[K]))
      if (R.Arrival[M] != NoTime)
        Late[rankIndexOf(J, M)] +=
            std::max<int64_t>(0, R.Arrival[M] - A.Median[K]);
  return Late;
}

llvm::Expected<StragglerWhatIf> job::asFastAsNeeded(const Job &J,
                                                    const sim::SimResult &Base,
                                                    const JobIteration &I,
                                                    size_t RankIndex,
                                                    int64_t TargetLate) {
  StragglerWhatIf AsIs{1.0, simulatedSpan(J, Base, I).length(),
                       lateness(J, Base, I)[RankIndex]};
  if (AsIs.Late <= TargetLate)
    return AsIs;
  const Graph &G = J.G;
  const JobRank &JR = J.Ranks[RankIndex];
  std::vector<TaskId> Own;
  for (TaskId T = JR.FirstTask; T < JR.EndTask; ++T)
    if (G.isLeaf(T) && !G.isRemoved(T) && G.Kind[T] != TaskKind::Comm)
      Own.push_back(T);
  // The graph is shared (what-ifs of several ranks run on threads): the
  // changed times are this what-if's own.
  std::vector<int64_t> Dur = G.Dur, Gap = G.Gap;
  sim::TimeOverride Times{Dur, Gap};
  // Every simulation but the first may stop early, once the job is past
  // the iteration (Until, below); one that stopped too early for what the
  // what-if reads is simulated again whole.
  int64_t Until = MaxTime;
  auto Simulate = [&](double S) -> llvm::Expected<sim::SimResult> {
    for (TaskId T : Own) {
      Dur[T] = std::llround(double(G.Dur[T]) * S);
      // The first leaf of a resource waits from the job's origin: that is
      // when the rank began, not its work.
      bool First = G.PrevOnRes[T] == NoTask;
      Gap[T] = G.Gap[T] > 0 && !First ? std::llround(double(G.Gap[T]) * S)
                                      : G.Gap[T];
    }
    auto R = sim::simulate(G, nullptr, &Times, Until);
    if (R && !holdsIteration(J, *R, I, Until))
      R = sim::simulate(G, nullptr, &Times);
    return R;
  };
  auto Summary = [&](double S, const sim::SimResult &R) {
    return StragglerWhatIf{S, simulatedSpan(J, R, I).length(),
                           lateness(J, R, I)[RankIndex]};
  };
  auto Eval = [&](double S) -> llvm::Expected<StragglerWhatIf> {
    auto R = Simulate(S);
    if (!R)
      return R.takeError();
    return Summary(S, *R);
  };
  StragglerWhatIf Fastest;
  {
    auto Zero = Simulate(0.0);
    if (!Zero)
      return Zero.takeError();
    Fastest = Summary(0.0, *Zero);
    if (Fastest.Late > TargetLate)
      return Fastest;
    // Scaling the rank's work down moves nothing later, so the job's
    // iteration lies between this one and the replay's at any factor: the
    // same at both ends, the job gains nothing however fast the rank is,
    // and no factor is searched (it would change nothing the job shows).
    if (Fastest.JobTime >= AsIs.JobTime)
      return StragglerWhatIf{-1, AsIs.JobTime, Fastest.Late};
    Until = untilFor(J, Base, *Zero, I);
  } // its times are not kept while the search runs
  // False position (Illinois) on the lateness as the rank's work shrinks:
  // Lo is fast enough, Hi is not. It stops once the lateness is within a
  // microsecond of the target or the bracket is under 1/256 wide, and never
  // takes more than 8 steps. The lateness is far from linear, so it saves
  // bisection's steps only where it nearly is (docs/validation.md).
  double Lo = 0, Hi = 1;
  double FLo = double(Fastest.Late - TargetLate),
         FHi = double(AsIs.Late - TargetLate);
  StragglerWhatIf Found = Fastest;
  int Side = 0; // which end moved last: -1 Lo, +1 Hi
  for (int Step = 0; Step < 8 && Hi - Lo > 1.0 / 256 && FLo < -1000; ++Step) {
    double S = Lo - FLo * (Hi - Lo) / (FHi - FLo);
    // Keep inside the bracket, away from its ends.
    S = std::clamp(S, Lo + (Hi - Lo) / 64, Hi - (Hi - Lo) / 64);
    auto W = Eval(S);
    if (!W)
      return W.takeError();
    double F = double(W->Late - TargetLate);
    if (F <= 0) {
      Lo = S, FLo = F, Found = *W;
      if (Side == -1)
        FHi /= 2;
      Side = -1;
    } else {
      Hi = S, FHi = F;
      if (Side == 1)
        FLo /= 2;
      Side = 1;
    }
  }
  return Found;
}
