//===- Compiler.cpp - Loading modules, checking and compiling -------------===//

#include "compiler/Compiler.h"

#include "compiler/CodeGen.h"
#include "sema/Sema.h"
#include "support/DeepStack.h"
#include "support/FileIO.h"
#include "syntax/Parser.h"

#include <filesystem>
#include <map>
#include <sstream>

using namespace dd;
using namespace dd::compiler;
namespace fs = std::filesystem;

namespace {

/// Loads a model and its imports, dependencies first.
class Loader {
public:
  Loader(const CompileOptions &O, SourceManager &SM, DiagEngine &D,
         ast::AstContext &Ctx)
      : Opts(O), SM(SM), Diags(D), Ctx(Ctx) {}

  std::vector<std::pair<ast::Module *, std::string>> Order;

  /// Parses buffer \p B as module \p Name and loads its imports.
  int loadBuffer(BufferId B, const std::string &Name, const fs::path &Dir);
  int loadFile(const fs::path &Path, const std::string &Name, SourceRange Site);

private:
  const CompileOptions &Opts;
  SourceManager &SM;
  DiagEngine &Diags;
  ast::AstContext &Ctx;
  std::vector<std::unique_ptr<ast::Module>> Owned;
  std::map<std::string, int> State; ///< canonical path -> index, -1 loading
  std::vector<std::string> Stack;   ///< for cycle messages
};

int Loader::loadFile(const fs::path &Path, const std::string &Name,
                     SourceRange Site) {
  std::error_code Ec;
  fs::path Canon = fs::weakly_canonical(Path, Ec);
  std::string Key = (Ec ? Path : Canon).string();
  auto It = State.find(Key);
  if (It != State.end()) {
    if (It->second >= 0)
      return It->second;
    std::string Cycle;
    for (const std::string &S : Stack)
      Cycle += S + " -> ";
    Diags.error(Site, "import cycle: " + Cycle + Name);
    return -1;
  }
  // A regular file only: a directory, a FIFO or /dev/zero is refused at
  // once rather than read as empty or forever.
  auto Text = readTextFile(Path.string(), MaxModelFileBytes);
  if (!Text) {
    std::string Why = llvm::toString(Text.takeError());
    for (std::string_view Prefix : {"cannot read: ", "cannot open: "})
      if (std::string_view(Why).substr(0, Prefix.size()) == Prefix)
        Why.erase(0, Prefix.size());
    // The root has no import to point at: the driver names the file.
    Diags.error(Site, Site.valid()
                          ? "cannot read '" + Path.string() + "': " + Why
                          : "cannot read: " + Why);
    return -1;
  }
  State[Key] = -1;
  Stack.push_back(Name);
  BufferId B = SM.addBuffer(Path.string(), std::move(*Text));
  int Index = loadBuffer(B, Name, Path.parent_path());
  Stack.pop_back();
  State[Key] = Index;
  return Index;
}

int Loader::loadBuffer(BufferId B, const std::string &Name,
                       const fs::path &Dir) {
  std::unique_ptr<ast::Module> M = syntax::parseModule(SM, B, Ctx, Diags);
  if (!M)
    return -1;
  bool Ok = true;
  for (ast::Stmt *S : M->Body) {
    auto *I = llvm::dyn_cast<ast::ImportStmt>(S);
    if (!I)
      continue;
    fs::path Target;
    std::string ModName = I->Module;
    if (I->IsPath) {
      Target = Dir / I->Module;
    } else {
      if (I->Module.rfind("std.", 0) != 0) {
        Diags.error(I->ModuleRange,
                    "unknown module '" + I->Module +
                        "' (import the standard library as std.NAME, other "
                        "models by path: import \"file.dd\")");
        Ok = false;
        continue;
      }
      std::string File = I->Module.substr(4) + ".dd";
      std::error_code Ec;
      for (const std::string &D : Opts.StdlibDirs)
        if (fs::exists(fs::path(D) / File, Ec)) {
          Target = fs::path(D) / File;
          break;
        }
      if (Target.empty()) {
        std::string Dirs;
        for (const std::string &D : Opts.StdlibDirs)
          Dirs += (Dirs.empty() ? "" : ", ") + D;
        Diags.error(I->ModuleRange, "no standard-library module '" + I->Module +
                                        "' (looked for " + File + " in " +
                                        (Dirs.empty() ? "no directory" : Dirs) +
                                        ")");
        Ok = false;
        continue;
      }
    }
    int Loaded = loadFile(Target, ModName, I->ModuleRange);
    if (Loaded < 0) {
      Ok = false;
      continue;
    }
    I->Loaded = static_cast<uint32_t>(Loaded);
  }
  if (!Ok)
    return -1;
  Order.push_back({M.get(), Name});
  Owned.push_back(std::move(M));
  return static_cast<int>(Order.size() - 1);
}

std::optional<CompiledModel> finish(Loader &L, int Root, SourceManager &SM,
                                    DiagEngine &Diags, BufferId RootBuffer) {
  if (Root < 0)
    return std::nullopt;
  sema::ProgramInfo Info;
  if (!sema::analyze(L.Order, Diags, Info) || Diags.hasErrors())
    return std::nullopt;
  CompiledModel Out;
  CodeGen(Info, Out.Program, Diags, SM).program();
  if (Diags.hasErrors())
    return std::nullopt;
  // The code generator's stack discipline, checked against the opcode
  // table's stack effects: a fault here is ddscript's, not the model's.
  if (auto Fault = bc::verifyStack(Out.Program)) {
    Diags.error(
        Out.Program.Functions.empty() ? SourceRange{}
                                      : Out.Program.Functions.front().Range,
        "internal error: the compiled code fails its stack check: " + *Fault);
    return std::nullopt;
  }
  for (ast::ParamStmt *P : Info.Params) {
    ParamSummary S;
    S.Name = P->Name;
    S.Doc = P->Doc;
    SourceRange R = P->Default->Range;
    S.DefaultText = SM.text(R.Buffer).substr(R.Begin, R.End - R.Begin);
    Out.Params.push_back(std::move(S));
  }
  Out.Description = leadingComment(SM.text(RootBuffer));
  // A library only declares: functions, constants, imports, parameters.
  Out.IsLibrary = true;
  for (const ast::Stmt *S : L.Order[Root].first->Body)
    Out.IsLibrary &=
        llvm::isa<ast::FnStmt, ast::LetStmt, ast::ImportStmt, ast::ParamStmt>(
            S);
  return Out;
}

} // namespace

std::string compiler::leadingComment(const std::string &Text) {
  std::istringstream In(Text);
  std::string Line;
  while (std::getline(In, Line)) {
    size_t B = Line.find_first_not_of(" \t\r");
    if (B == std::string::npos)
      continue;
    std::string_view L(Line);
    L.remove_prefix(B);
    if (L.substr(0, 2) == "//")
      L.remove_prefix(2);
    else if (L.substr(0, 1) == "#")
      L.remove_prefix(1);
    else
      return "";
    while (!L.empty() &&
           (L.front() == ' ' || L.front() == '#' || L.front() == '/'))
      L.remove_prefix(1);
    while (!L.empty() && (L.back() == ' ' || L.back() == '\r'))
      L.remove_suffix(1);
    if (!L.empty())
      return std::string(L);
  }
  return "";
}

// The parser, the checks and the code generator recurse once or more per
// level a model nests: on a stack of a known size (support/DeepStack.h).
std::optional<CompiledModel> compiler::compileFile(const std::string &Path,
                                                   const CompileOptions &Opts,
                                                   SourceManager &SM,
                                                   DiagEngine &Diags) {
  std::optional<CompiledModel> Out;
  runOnDeepStack([&] {
    ast::AstContext Ctx;
    Loader L(Opts, SM, Diags, Ctx);
    int Root = L.loadFile(Path, "<main>", {});
    BufferId RootBuffer = Root >= 0 ? L.Order[Root].first->Buffer : 0;
    Out = finish(L, Root, SM, Diags, RootBuffer);
  });
  return Out;
}

std::optional<CompiledModel> compiler::compileSource(const std::string &Name,
                                                     std::string Text,
                                                     const CompileOptions &Opts,
                                                     SourceManager &SM,
                                                     DiagEngine &Diags) {
  std::optional<CompiledModel> Out;
  runOnDeepStack([&] {
    ast::AstContext Ctx;
    Loader L(Opts, SM, Diags, Ctx);
    BufferId B = SM.addBuffer(Name, std::move(Text));
    int Root = L.loadBuffer(B, "<main>", fs::path(Name).parent_path());
    Out = finish(L, Root, SM, Diags, B);
  });
  return Out;
}
