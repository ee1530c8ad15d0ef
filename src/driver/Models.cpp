#include "driver/Models.h"

#include "driver/Session.h"

#include <cstdio>
#include <cstdlib>
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
  Dirs.push_back(DD_STDLIB_INSTALL_DIR);
  if (fs::exists(DD_STDLIB_SOURCE_DIR))
    Dirs.push_back(DD_STDLIB_SOURCE_DIR);
  return Dirs;
}

std::optional<std::string> dd::driver::findModel(const std::string &Name,
                                                 std::string &Error) {
  if (fs::exists(Name) && !fs::is_directory(Name))
    return Name;
  std::string Looked;
  bool HasSlash = Name.find('/') != std::string::npos;
  if (!HasSlash) {
    std::string File = Name;
    if (File.size() < 3 || File.substr(File.size() - 3) != ".dd")
      File += ".dd";
    for (const std::string &D : stdlibDirs()) {
      fs::path P = fs::path(D) / File;
      if (fs::exists(P))
        return P.string();
      Looked += (Looked.empty() ? "" : ", ") + D;
    }
  }
  Error = "no model '" + Name + "'" +
          (HasSlash ? std::string(" (no such file)")
                    : " (not a file here; not in " +
                          (Looked.empty() ? std::string("the stdlib")
                                          : Looked) +
                          ")");
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
  std::string Text = renderDiagnostics(SM, Diags);
  std::fputs(Text.c_str(), stderr);
  if (!M && !Diags.hasErrors())
    reportError(*Path, "cannot compile the model");
  return M;
}
