//===- Models.cpp - Compiling a model; ddscript models --------------------===//

#include "driver/Models.h"

#include "driver/Format.h"
#include "driver/Session.h"

#include <fmt/format.h>

using namespace dd;
using namespace dd::driver;

std::optional<compiler::CompiledModel>
dd::driver::loadModel(const std::string &Name, SourceManager &SM,
                      std::string *PathOut) {
  std::string Error;
  auto Path = findModel(Name, Error);
  if (!Path) {
    reportError("ddscript", Error);
    return std::nullopt;
  }
  if (PathOut)
    *PathOut = *Path;
  compiler::CompileOptions Opts;
  Opts.StdlibDirs = stdlibDirs();
  DiagEngine Diags;
  auto M = compiler::compileFile(*Path, Opts, SM, Diags);
  // An error without a place is about the file itself (it cannot be read).
  const auto &All = Diags.diagnostics();
  for (size_t I = 0; I < All.size() && I < MaxShownDiagnostics; ++I) {
    const Diagnostic &D = All[I];
    if (D.Range.valid() || D.Level != Severity::Error)
      reportDiagnostic(SM, D);
    else
      reportError(*Path, D.Message);
  }
  if (std::string More = moreDiagnostics(Diags); !More.empty())
    writeErr(More);
  if (!M && !Diags.hasErrors())
    reportError(*Path, "cannot compile the model");
  return M;
}

int dd::driver::runModels(OutputFormat Format) {
  std::vector<whatif::ListedModel> All = whatif::listModels();
  bool Failed = false;
  for (const whatif::ListedModel &L : All)
    Failed |= !L.Model;
  if (Format == OutputFormat::Json) {
    writeJson([&](JsonWriter &W) {
      W.beginObject().key("models").beginArray();
      for (const whatif::ListedModel &L : All) {
        W.beginObject().field("name", L.Name).field("path", L.Path);
        if (!L.Model) {
          W.field("error", L.Error).endObject();
          continue;
        }
        W.field("description", L.Model->Description)
            .field("library", L.Model->IsLibrary);
        W.key("params").beginArray();
        for (const compiler::ParamSummary &P : L.Model->Params)
          W.beginObject()
              .field("name", P.Name)
              .field("default", P.DefaultText)
              .field("doc", P.Doc)
              .endObject();
        W.endArray().endObject();
      }
      W.endArray().key("search_path").beginArray();
      for (const std::string &D : stdlibDirs())
        W.value(D);
      W.endArray().endObject();
    });
    return Failed ? ExitBadInput : ExitOk;
  }
  std::string S;
  auto Section = [&](bool Libraries) {
    for (const whatif::ListedModel &L : All) {
      if (L.Model && L.Model->IsLibrary != Libraries)
        continue;
      if (!L.Model) {
        if (!Libraries)
          S += fmt::format("  {:<16} does not compile: {}\n", L.Name, L.Error);
        continue;
      }
      S += fmt::format("  {:<16} {}\n", L.Name, L.Model->Description);
      Table T;
      for (const compiler::ParamSummary &P : L.Model->Params)
        T.row({P.Name + " = " + P.DefaultText, P.Doc});
      S += T.render(std::string(19, ' '));
      for (const std::string &H : L.Hidden)
        S += std::string(19, ' ') + "(hides " + H + ")\n";
    }
  };
  S += "Models: ddscript run NAME --trace T [--set PARAM=VALUE ...]\n";
  Section(false);
  S += "\nLibraries: import std.NAME as NAME (they change nothing alone)\n";
  Section(true);
  S += "\nddscript run NAME reads the file NAME if there is one, else NAME.dd "
       "from the first of:\n";
  for (const std::string &D : stdlibDirs())
    S += "  " + D + "\n";
  writeOut(S);
  return Failed ? ExitBadInput : ExitOk;
}
