//===- Roofline.cpp - The report's roofline of the traced kernels ---------===//
//
// The kernels of the steady-state iteration whose work the recorded shapes
// give (graph::taskFlops, graph::taskMovedBytes): each one's arithmetic
// intensity (FLOPs per byte moved) and achieved FLOP/s over its traced
// duration, with the roofs of the trace's GPU from the catalogue (its dense
// peaks and memory bandwidth) where the catalogue knows it. The page draws
// the points against the roofs and tabulates them by kernel class.
//
//===----------------------------------------------------------------------===//

#include "graph/KernelClass.h"
#include "ops/Gpus.h"
#include "report/ReportImpl.h"

#include <algorithm>
#include <cmath>

using namespace dd;
using namespace dd::report;
using namespace dd::report::detail;

Roofline detail::roofline(const RunData &D) {
  Roofline R;
  const Graph &G = *D.G;
  // The pages of opportunities, compare and sweeps are about other things.
  if (D.Opportunities || D.Compared || D.SweepResults ||
      D.SteadyState >= G.Iterations.size())
    return R;
  R.Iteration = G.Iterations[D.SteadyState].Label;
  std::vector<double> Flops = graph::taskFlops(G);
  std::vector<double> Moved = graph::taskMovedBytes(G);
  R.Classes.resize(graph::NumKernelClasses);
  for (TaskId T = 0; T < G.numTasks(); ++T) {
    if (G.Kind[T] != graph::TaskKind::Kernel ||
        G.IterationOf[T] != static_cast<int32_t>(D.SteadyState) ||
        G.MeasuredDur[T] == graph::NoTime)
      continue;
    graph::KernelClass K = graph::kernelClassOf(G, T);
    Roofline::ClassRow &C = R.Classes[static_cast<unsigned>(K)];
    ++C.Kernels;
    C.Ns += G.MeasuredDur[T];
    R.KernelNs += G.MeasuredDur[T];
    double F = Flops[T], B = Moved[T];
    if (std::isnan(F) || std::isnan(B) || F <= 0 || B <= 0 ||
        G.MeasuredDur[T] <= 0)
      continue;
    ++C.Sized;
    C.SizedNs += G.MeasuredDur[T];
    C.Flops += F;
    C.Bytes += B;
    R.Points.push_back(
        {F / B, F / double(G.MeasuredDur[T]) / 1e3, G.MeasuredDur[T], K, T});
  }
  R.SizedKernels = R.Points.size();
  for (const Roofline::Point &P : R.Points)
    R.SizedNs += P.Ns;
  // The longest first (ties by task: deterministic); the page draws at most
  // MaxPoints of them.
  std::sort(R.Points.begin(), R.Points.end(),
            [](const Roofline::Point &A, const Roofline::Point &B) {
              return A.Ns != B.Ns ? A.Ns > B.Ns : A.Task < B.Task;
            });
  if (R.Points.size() > Roofline::MaxPoints)
    R.Points.resize(Roofline::MaxPoints);
  if (const ops::GpuSpec *S = ops::gpuForDevice(D.DeviceName)) {
    R.Gpu = S->Key;
    R.BandwidthGBs = S->BandwidthGBs;
    for (auto [Name, V] : {std::pair<const char *, double>{"fp32", S->Fp32},
                           {"tf32", S->Tf32},
                           {"bf16/fp16", S->Half},
                           {"fp8", S->Fp8}})
      if (V > 0)
        R.Peaks.push_back({Name, V});
  }
  return R;
}
