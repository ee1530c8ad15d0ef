//===- Annotate.cpp - Iterations, phases and layers of tasks --------------===//
//
// Phases come from the operator hierarchy (autograd engine nodes are
// backward, Optimizer.step# annotations optimizer, "## forward ##" and the
// like), from the thread (autograd threads run backward), and otherwise from
// the task's position in its iteration: before the first backward task is
// forward, after the last one optimizer (when the trace names no optimizer
// step). Layers are nn.Module ranges when the trace has them (Python frames
// of the PyTorch profiler, or NVTX ranges "nn.Module: NAME" and
// "nn.Module: NAME (backward)" of ddscript's helper); otherwise each
// top-level forward operator is a layer ("conv2d#3": the third conv2d call
// of the iteration's forward pass, so that data-loading calls that vary
// between iterations do not shift the numbering). Backward operators join
// the layer of the forward operator with the same autograd sequence number.
// GPU work inherits from the call that launched it.
//
//===----------------------------------------------------------------------===//

#include "builder/BuilderImpl.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <cctype>
#include <optional>

using namespace dd;
using namespace dd::graph;
using namespace dd::graph::detail;

static bool startsWith(std::string_view S, std::string_view P) {
  return S.substr(0, P.size()) == P;
}

static bool containsLower(std::string_view S, std::string_view Needle) {
  std::string L(S);
  for (char &Ch : L)
    Ch = static_cast<char>(std::tolower(static_cast<unsigned char>(Ch)));
  return L.find(Needle) != std::string::npos;
}

static Phase phaseOfName(TaskKind K, std::string_view N) {
  if (startsWith(N, "autograd::engine::evaluate_function"))
    return Phase::Backward;
  // Older traces name autograd nodes bare: "CudnnConvolutionBackward",
  // "AddBackward0", "torch::autograd::AccumulateGrad".
  if (K == TaskKind::CpuOp) {
    std::string_view Stem = N;
    while (!Stem.empty() &&
           std::isdigit(static_cast<unsigned char>(Stem.back())))
      Stem.remove_suffix(1);
    if ((Stem.size() > 8 && Stem.substr(Stem.size() - 8) == "Backward" &&
         !startsWith(N, "aten::")) ||
        startsWith(N, "torch::autograd::"))
      return Phase::Backward;
  }
  if (startsWith(N, "Optimizer.step#") || N == "## optimizer ##")
    return Phase::Optimizer;
  if (startsWith(N, "Optimizer.zero_grad#") || N == "## zero_grad ##")
    return Phase::Other;
  if (startsWith(N, "enumerate(DataLoader)") ||
      N.find("data_load") != std::string_view::npos ||
      N.find("copy_batch_to_gpu") != std::string_view::npos ||
      N.find("wait_for_batch") != std::string_view::npos)
    return Phase::Other;
  if (K == TaskKind::Annotation && !startsWith(N, "ProfilerStep#")) {
    if (containsLower(N, "backward"))
      return Phase::Backward;
    if (containsLower(N, "optimizer"))
      return Phase::Optimizer;
    if (containsLower(N, "forward"))
      return Phase::Forward;
  }
  return Phase::Unknown;
}

static void assignIterations(BuildContext &C) {
  Graph &G = C.G;
  auto WindowOf = [&](int64_t Ts) -> int32_t {
    auto It = std::partition_point(
        C.Windows.begin(), C.Windows.end(),
        [&](const IterationWindow &W) { return W.Begin <= Ts; });
    if (It == C.Windows.begin())
      return -1;
    --It;
    return Ts < It->End ? static_cast<int32_t>(It - C.Windows.begin()) : -1;
  };
  for (TaskId X = 0; X < G.numTasks(); ++X) {
    if (G.isGpu(X) && G.Launcher[X] != NoTask)
      continue; // below, from the launcher
    G.IterationOf[X] = WindowOf(G.MeasuredStart[X]);
  }
  for (TaskId X = 0; X < G.numTasks(); ++X)
    if (G.isGpu(X) && G.Launcher[X] != NoTask)
      G.IterationOf[X] = G.IterationOf[G.Launcher[X]];
}

static void assignPhases(BuildContext &C) {
  Graph &G = C.G;
  const trace::Trace &T = C.T;
  bool NamedOptimizer = false;
  std::vector<bool> AutogradThread(G.Resources.size(), false);
  for (ResourceId R = 0; R < G.Resources.size(); ++R)
    AutogradThread[R] = G.Resources[R].Kind == ResourceKind::CpuThread &&
                        containsLower(G.Resources[R].Name, "autograd");
  // Containers precede their children, so one pass propagates downwards.
  std::vector<ResourceId> ThreadOf(G.numTasks(), NoResource);
  for (TaskId X = 0; X < G.numTasks(); ++X) {
    if (G.isGpu(X))
      continue;
    Phase Own = phaseOfName(G.Kind[X], G.name(X));
    if (Own == Phase::Optimizer)
      NamedOptimizer = true;
    if (Own == Phase::Unknown && G.Event[X] != ~0u &&
        T.FwdThread[G.Event[X]] > 0)
      Own = Phase::Backward;
    TaskId P = G.Parent[X];
    if (Own == Phase::Unknown && P != NoTask)
      Own = G.PhaseOf[P];
    G.PhaseOf[X] = Own;
  }
  // Thread of each CPU task (containers: of their first leaf).
  for (TaskId X = 0; X < G.numTasks(); ++X)
    if (!G.isGpu(X))
      ThreadOf[X] = G.isContainer(X) ? G.Res[G.FirstLeaf[X]] : G.Res[X];
  for (TaskId X = 0; X < G.numTasks(); ++X)
    if (!G.isGpu(X) && G.PhaseOf[X] == Phase::Unknown &&
        AutogradThread[ThreadOf[X]])
      G.PhaseOf[X] = Phase::Backward;

  // Position in the iteration for the rest.
  size_t NumIt = G.Iterations.size();
  std::vector<int64_t> FirstBwd(NumIt, INT64_MAX), LastBwd(NumIt, INT64_MIN);
  for (TaskId X = 0; X < G.numTasks(); ++X) {
    int32_t It = G.IterationOf[X];
    if (G.isGpu(X) || It < 0 || G.PhaseOf[X] != Phase::Backward)
      continue;
    FirstBwd[It] = std::min(FirstBwd[It], C.mStart(X));
    LastBwd[It] = std::max(LastBwd[It], C.mEnd(X));
  }
  for (TaskId X = 0; X < G.numTasks(); ++X) {
    int32_t It = G.IterationOf[X];
    if (G.isGpu(X) || It < 0 || G.PhaseOf[X] != Phase::Unknown)
      continue;
    int64_t S = C.mStart(X), E = C.mEnd(X);
    if (FirstBwd[It] == INT64_MAX || E <= FirstBwd[It])
      G.PhaseOf[X] = Phase::Forward;
    else if (S >= LastBwd[It])
      G.PhaseOf[X] = NamedOptimizer ? Phase::Other : Phase::Optimizer;
    else if (S >= FirstBwd[It] && E <= LastBwd[It])
      G.PhaseOf[X] = Phase::Backward;
  }
  for (TaskId X = 0; X < G.numTasks(); ++X)
    if (G.isGpu(X) && G.Launcher[X] != NoTask)
      G.PhaseOf[X] = G.PhaseOf[G.Launcher[X]];
}

/// The module that event \p E is a range of, if it is one.
static std::optional<std::string_view> moduleOf(const trace::Trace &T,
                                                EventId E) {
  std::string_view N = T.name(E);
  bool Named = startsWith(N, "nn.Module: ");
  if (Named)
    N.remove_prefix(11);
  if (T.Kind[E] == trace::EventKind::PythonFunction)
    return N;
  if (T.Kind[E] != trace::EventKind::Marker || !Named)
    return std::nullopt;
  // Backward ranges join the layer of their forward range.
  constexpr std::string_view Backward = " (backward)";
  if (N.size() > Backward.size() &&
      N.substr(N.size() - Backward.size()) == Backward)
    N.remove_suffix(Backward.size());
  return N;
}

static void assignLayers(BuildContext &C) {
  Graph &G = C.G;
  const trace::Trace &T = C.T;
  llvm::StringMap<LayerId> ByKey;
  auto LayerFor = [&](const std::string &Key, LayerId Enclosing = NoLayer) {
    auto [It, New] = ByKey.try_emplace(Key, static_cast<LayerId>(0));
    if (New) {
      It->second = static_cast<LayerId>(G.Layers.size());
      G.Layers.push_back(
          {Key, static_cast<uint32_t>(G.Layers.size()), Enclosing});
    }
    return It->second;
  };

  bool HaveModules = false;
  for (TaskId X = 0; X < G.numTasks(); ++X)
    if (!G.isGpu(X) && G.Event[X] != ~0u && moduleOf(T, G.Event[X]))
      HaveModules = true;

  if (HaveModules) {
    for (TaskId X = 0; X < G.numTasks(); ++X) {
      if (G.isGpu(X))
        continue;
      EventId E = G.Event[X];
      std::optional<std::string_view> Module;
      if (E != ~0u)
        Module = moduleOf(T, E);
      if (Module) {
        // The module range around this one, where it first appears, is
        // its parent (parents are tasks of lower ids, labelled already).
        LayerId Enclosing =
            G.Parent[X] != NoTask ? G.LayerOf[G.Parent[X]] : NoLayer;
        G.LayerOf[X] = LayerFor(std::string(*Module), Enclosing);
      } else if (G.Parent[X] != NoTask) {
        G.LayerOf[X] = G.LayerOf[G.Parent[X]];
      }
    }
  } else {
    // Top-level forward operators: the k-th call of an operator in an
    // iteration is layer "op#k" (so data-loading calls that vary between
    // iterations do not shift the numbering of the model's layers).
    std::vector<llvm::StringMap<uint32_t>> Ordinal(G.Iterations.size());
    std::vector<TaskId> Order;
    for (TaskId X = 0; X < G.numTasks(); ++X)
      if (!G.isGpu(X))
        Order.push_back(X);
    std::stable_sort(Order.begin(), Order.end(), [&](TaskId A, TaskId B) {
      return C.mStart(A) < C.mStart(B);
    });
    // Whether an operator encloses X, remembered along each walk up so that
    // deep nesting costs one walk, not one per task.
    std::vector<int8_t> OpAbove(G.numTasks(), -1);
    llvm::SmallVector<TaskId, 16> Path;
    auto HasOpAbove = [&](TaskId X) {
      Path.clear();
      bool Found = false;
      for (TaskId P = G.Parent[X]; P != NoTask; P = G.Parent[P]) {
        if (G.Kind[P] == TaskKind::CpuOp || OpAbove[P] >= 0) {
          Found = G.Kind[P] == TaskKind::CpuOp || OpAbove[P] == 1;
          break;
        }
        Path.push_back(P);
      }
      for (TaskId P : Path)
        OpAbove[P] = Found;
      return Found;
    };
    for (TaskId X : Order) {
      int32_t It = G.IterationOf[X];
      if (It < 0 || G.Kind[X] != TaskKind::CpuOp ||
          G.PhaseOf[X] != Phase::Forward)
        continue;
      if (HasOpAbove(X))
        continue;
      std::string_view N = G.name(X);
      if (startsWith(N, "aten::"))
        N.remove_prefix(6);
      uint32_t K = ++Ordinal[It][N];
      G.LayerOf[X] = LayerFor(std::string(N) + "#" + std::to_string(K));
    }
    for (TaskId X = 0; X < G.numTasks(); ++X)
      if (!G.isGpu(X) && G.LayerOf[X] == NoLayer && G.Parent[X] != NoTask &&
          G.PhaseOf[X] == Phase::Forward)
        G.LayerOf[X] = G.LayerOf[G.Parent[X]];
  }

  // Backward operators join their forward operator's layer.
  llvm::DenseMap<int64_t, TaskId> ForwardBySeq;
  for (TaskId X = 0; X < G.numTasks(); ++X) {
    if (G.isGpu(X) || G.Event[X] == ~0u || G.PhaseOf[X] != Phase::Forward)
      continue;
    EventId E = G.Event[X];
    // Operators that create no autograd node (a buffer's in-place add)
    // record the current sequence number too; the node's creator is the
    // last operator to record it.
    if (T.SeqNumber[E] != trace::NoValue && T.FwdThread[E] <= 0)
      ForwardBySeq[T.SeqNumber[E]] = X;
  }
  for (TaskId X = 0; X < G.numTasks(); ++X) {
    if (G.isGpu(X) || G.PhaseOf[X] != Phase::Backward)
      continue;
    EventId E = G.Event[X];
    if (E != ~0u && T.SeqNumber[E] != trace::NoValue && T.FwdThread[E] > 0) {
      auto It = ForwardBySeq.find(T.SeqNumber[E]);
      if (It != ForwardBySeq.end()) {
        G.LayerOf[X] = G.LayerOf[It->second];
        continue;
      }
    }
    if (G.LayerOf[X] == NoLayer && G.Parent[X] != NoTask)
      G.LayerOf[X] = G.LayerOf[G.Parent[X]];
  }
  // Gradient accumulation has no forward operator: it belongs to the layer
  // whose backward produced the gradient, the layered backward operator
  // that ran before it on its thread.
  llvm::DenseMap<ResourceId, LayerId> LastBackwardLayer;
  auto IsAccumulate = [&](TaskId X) {
    std::string_view N = G.name(X);
    return N.size() >= 14 && N.substr(N.size() - 14) == "AccumulateGrad";
  };
  for (TaskId X = 0; X < G.numTasks(); ++X) {
    if (G.isGpu(X) || G.PhaseOf[X] != Phase::Backward)
      continue;
    ResourceId Thread = G.isContainer(X) ? G.Res[G.FirstLeaf[X]] : G.Res[X];
    if (G.LayerOf[X] == NoLayer) {
      if (G.Parent[X] != NoTask && G.LayerOf[G.Parent[X]] != NoLayer)
        G.LayerOf[X] = G.LayerOf[G.Parent[X]];
      else if (IsAccumulate(X)) {
        auto It = LastBackwardLayer.find(Thread);
        if (It != LastBackwardLayer.end())
          G.LayerOf[X] = It->second;
      }
    } else if (!IsAccumulate(X) &&
               (G.Parent[X] == NoTask || !IsAccumulate(G.Parent[X]))) {
      LastBackwardLayer[Thread] = G.LayerOf[X];
    }
  }
  for (TaskId X = 0; X < G.numTasks(); ++X)
    if (G.isGpu(X) && G.Launcher[X] != NoTask)
      G.LayerOf[X] = G.LayerOf[G.Launcher[X]];
}

void detail::annotate(BuildContext &C) {
  assignIterations(C);
  assignPhases(C);
  assignLayers(C);
}
