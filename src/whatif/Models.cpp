//===- Models.cpp - Where models are found, and which there are ----------===//

#include "whatif/Models.h"

#include "support/Diagnostics.h"
#include "support/FileIO.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

using namespace dd;
using namespace dd::whatif;
namespace fs = std::filesystem;

std::vector<std::string> dd::whatif::stdlibDirs() {
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
  std::error_code Ec;
  bool Installed = false;
  if (std::string Self = codeImagePath(); !Self.empty()) {
    fs::path Up = fs::path(Self).parent_path();
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

std::optional<std::string> dd::whatif::findModel(const std::string &Name,
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

std::vector<ListedModel> dd::whatif::listModels() {
  std::vector<ListedModel> Out;
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
      auto Seen =
          std::find_if(Out.begin(), Out.end(),
                       [&](const ListedModel &L) { return L.Name == Name; });
      if (Seen != Out.end()) {
        Seen->Hidden.push_back(F.string());
        continue;
      }
      ListedModel L;
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
