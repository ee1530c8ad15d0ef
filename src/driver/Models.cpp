#include "driver/Models.h"

#include "driver/Format.h"
#include "driver/Session.h"

#include <fmt/format.h>

#include <algorithm>

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>

using namespace dd;
using namespace dd::driver;
namespace fs = std::filesystem;

std::vector<std::string> dd::driver::stdlibDirs() {
  std::vector<std::string> Dirs;
  if (const char *Env = std::getenv("DDSCRIPT_PATH")) {
    std::string S(Env);
    size_t Begin = 0;
    while (Begin <= S.size()) {
      size_t End = S.find(':', Begin);
      if (End == std::string::npos)
        End = S.size();
      if (End > Begin)
        Dirs.push_back(S.substr(Begin, End - Begin));
      Begin = End + 1;
    }
  }
  // An installed ddscript finds its stdlib under the prefix it sits in
  // (PREFIX/bin/ddscript, or the Python module's
  // PREFIX/lib/python3/dist-packages/ddscript/_ddscript.so, beside
  // PREFIX/share/ddscript/stdlib), wherever the prefix was moved to: the
  // nearest such folder above the file that holds this code.
  Dl_info Info;
  std::error_code Ec;
  bool Installed = false;
  if (dladdr(reinterpret_cast<void *>(&dd::driver::stdlibDirs), &Info) &&
      Info.dli_fname) {
    fs::path Self = fs::weakly_canonical(Info.dli_fname, Ec);
    fs::path Up = Self.parent_path();
    for (int Level = 0; !Ec && Level < 5 && Up.has_parent_path();
         ++Level, Up = Up.parent_path()) {
      fs::path Beside = Up / "share" / "ddscript" / "stdlib";
      if (fs::exists(Beside, Ec)) {
        if (Beside != fs::path(DD_STDLIB_INSTALL_DIR))
          Dirs.push_back(Beside.string());
        Installed = true;
        break;
      }
      if (Up == Up.parent_path())
        break;
    }
  }
  Dirs.push_back(DD_STDLIB_INSTALL_DIR);
  // The source tree only for a ddscript that is not installed (the build's).
  if (!Installed && fs::exists(DD_STDLIB_SOURCE_DIR, Ec))
    Dirs.push_back(DD_STDLIB_SOURCE_DIR);
  // Each stdlib's sibling models/ (checkpointing, save_on_cpu, what_bounds,
  // rank_layers ...), run by name as the docs run them, after the stdlib.
  std::vector<std::string> Models;
  for (const std::string &D : Dirs) {
    fs::path M = fs::path(D).parent_path() / "models";
    if (fs::path(D).filename() == "stdlib" && fs::exists(M, Ec))
      Models.push_back(M.string());
  }
  Dirs.insert(Dirs.end(), Models.begin(), Models.end());
  return Dirs;
}

std::optional<std::string> dd::driver::findModel(const std::string &Name,
                                                 std::string &Error) {
  // Every look at the file system takes an error code: a name the system
  // refuses (too long, a loop of links) is no model, not an exception.
  std::error_code Ec;
  fs::file_status St = fs::status(Name, Ec);
  if (Ec && Ec != std::errc::no_such_file_or_directory &&
      Ec != std::errc::not_a_directory) {
    Error = "no model '" + Name + "' (" + Ec.message() + ")";
    return std::nullopt;
  }
  if (fs::exists(St) && !fs::is_directory(St))
    return Name;
  std::string Looked;
  bool HasSlash = Name.find('/') != std::string::npos;
  if (!HasSlash) {
    std::string File = Name;
    if (File.size() < 3 || File.substr(File.size() - 3) != ".dd")
      File += ".dd";
    for (const std::string &D : stdlibDirs()) {
      fs::path P = fs::path(D) / File;
      if (fs::exists(P, Ec))
        return P.string();
      Looked += (Looked.empty() ? "" : ", ") + D;
    }
  }
  if (HasSlash && fs::is_directory(St)) {
    Error = "no model '" + Name + "' (a directory: give a .dd file)";
    return std::nullopt;
  }
  Error =
      "no model '" + Name + "'" +
      (HasSlash
           ? std::string(" (no such file)")
           : " (not a file here; not in " +
                 (Looked.empty() ? std::string("the stdlib") : Looked) + ")");
  return std::nullopt;
}

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

namespace {

struct Listed {
  std::string Name, Path;
  std::optional<compiler::CompiledModel> Model;
  std::string Error;               ///< its first diagnostic, when it fails
  std::vector<std::string> Hidden; ///< same name later in the search path
};

/// The models and libraries of the search path, first of each name wins.
std::vector<Listed> listModels() {
  std::vector<Listed> Out;
  for (const std::string &Dir : stdlibDirs()) {
    std::error_code EC;
    if (!fs::is_directory(Dir, EC))
      continue;
    std::vector<fs::path> Files;
    for (const fs::directory_entry &E : fs::directory_iterator(Dir, EC))
      if (E.path().extension() == ".dd" && !E.is_directory())
        Files.push_back(E.path());
    std::sort(Files.begin(), Files.end());
    for (const fs::path &F : Files) {
      std::string Name = F.stem().string();
      auto Seen = std::find_if(Out.begin(), Out.end(),
                               [&](const Listed &L) { return L.Name == Name; });
      if (Seen != Out.end()) {
        Seen->Hidden.push_back(F.string());
        continue;
      }
      Listed L;
      L.Name = Name;
      L.Path = F.string();
      SourceManager SM;
      DiagEngine Diags;
      compiler::CompileOptions Opts;
      Opts.StdlibDirs = stdlibDirs();
      L.Model = compiler::compileFile(L.Path, Opts, SM, Diags);
      if (!L.Model) {
        std::string Text = renderDiagnostics(SM, Diags);
        L.Error = Text.substr(0, Text.find('\n'));
        if (L.Error.empty())
          L.Error = "cannot compile the model";
      }
      Out.push_back(std::move(L));
    }
  }
  return Out;
}

} // namespace

int dd::driver::runModels(OutputFormat Format) {
  std::vector<Listed> All = listModels();
  bool Failed = false;
  for (const Listed &L : All)
    Failed |= !L.Model;
  if (Format == OutputFormat::Json) {
    writeJson([&](JsonWriter &W) {
      W.beginObject().key("models").beginArray();
      for (const Listed &L : All) {
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
    for (const Listed &L : All) {
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
