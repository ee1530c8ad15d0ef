//===- Sweep.cpp - A model's parameters, one value or many ----------------===//

#include "whatif/Sweep.h"

#include "support/Progress.h"

#include <limits>

using namespace dd;
using namespace dd::whatif;

std::optional<std::vector<SettingAxis>>
dd::whatif::parseSettingAxes(const std::vector<std::string> &Args,
                             std::string &Error) {
  std::vector<SettingAxis> Axes;
  for (const std::string &S : Args) {
    size_t Eq = S.find('=');
    if (Eq == std::string::npos || Eq == 0) {
      Error = "--set takes NAME=VALUE (or NAME=V1,V2,... to sweep), got '" + S +
              "'";
      return std::nullopt;
    }
    SettingAxis A;
    A.Name = S.substr(0, Eq);
    for (const SettingAxis &Prev : Axes)
      if (Prev.Name == A.Name) {
        Error = "--set " + A.Name +
                " is given twice; to sweep it, give its values in one "
                "--set, as " +
                A.Name + "=V1,V2";
        return std::nullopt;
      }
    // Split at commas; "\," is a comma of the value.
    std::string Cur;
    std::string_view V = std::string_view(S).substr(Eq + 1);
    for (size_t I = 0; I < V.size(); ++I) {
      if (V[I] == '\\' && I + 1 < V.size() && V[I + 1] == ',') {
        Cur.push_back(',');
        ++I;
      } else if (V[I] == ',') {
        A.Values.push_back(std::move(Cur));
        Cur.clear();
      } else {
        Cur.push_back(V[I]);
      }
    }
    A.Values.push_back(std::move(Cur));
    if (A.Values.size() > 1)
      for (const std::string &X : A.Values)
        if (X.empty()) {
          Error = "--set " + S + ": an empty value in the list of " + A.Name +
                  "'s values";
          return std::nullopt;
        }
    Axes.push_back(std::move(A));
  }
  return Axes;
}

size_t dd::whatif::combinationCount(const std::vector<SettingAxis> &Axes) {
  size_t N = 1;
  for (const SettingAxis &A : Axes) {
    if (A.Values.size() > std::numeric_limits<size_t>::max() / N)
      return std::numeric_limits<size_t>::max();
    N *= A.Values.size();
  }
  return N;
}

std::vector<vm::Setting>
dd::whatif::combination(const std::vector<SettingAxis> &Axes, size_t Index) {
  std::vector<vm::Setting> Out(Axes.size());
  for (size_t I = Axes.size(); I-- > 0;) {
    const SettingAxis &A = Axes[I];
    Out[I] = {A.Name, A.Values[Index % A.Values.size()]};
    Index /= A.Values.size();
  }
  return Out;
}

std::vector<const SettingAxis *>
dd::whatif::sweptAxes(const std::vector<SettingAxis> &Axes) {
  std::vector<const SettingAxis *> Out;
  for (const SettingAxis &A : Axes)
    if (A.Values.size() > 1)
      Out.push_back(&A);
  return Out;
}

SweepRow dd::whatif::sweepRow(std::vector<vm::Setting> Swept,
                              const Prediction &P) {
  SweepRow Row;
  Row.Settings = std::move(Swept);
  Row.Result = P.Out.front();
  Row.Stats = P.R.Stats;
  Row.Output = P.R.Output;
  Row.Steps = P.R.Steps;
  Row.HasMemory = P.Mem.model() != nullptr;
  Row.PeakBytes = P.Mem.predictedPeak();
  Row.DeviceMemory = P.Mem.capacity();
  return Row;
}

SweepRun dd::whatif::sweep(const Baseline &B, const bc::Program &Program,
                           const std::vector<SettingAxis> &Axes,
                           uint64_t MaxSteps) {
  SweepRun Out;
  size_t N = combinationCount(Axes);
  Progress Bar("sweep");
  for (size_t I = 0; I < N; ++I) {
    std::vector<vm::Setting> Settings = combination(Axes, I);
    std::vector<vm::Setting> Swept;
    std::string Label;
    for (size_t A = 0; A < Axes.size(); ++A)
      if (Axes[A].Values.size() > 1) {
        Swept.push_back(Settings[A]);
        Label += (Label.empty() ? "" : ", ") + Settings[A].Name + "=" +
                 Settings[A].Text;
      }
    RunMemory Mem;
    // Checked before the trace was loaded.
    (void)Mem.takeSettings(Settings, Program);
    graph::Graph G = *B.G;
    Prediction P = predict(B, G, Program, Settings, std::move(Mem), MaxSteps);
    if (!P.ok()) {
      Bar.done();
      Out.FailedLabel = std::move(Label);
      Out.Failed = std::move(P);
      return Out;
    }
    Out.Rows.push_back(sweepRow(std::move(Swept), P));
    Bar.update(double(I + 1) / double(N));
  }
  Bar.done();
  return Out;
}
