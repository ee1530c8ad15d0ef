#include "bytecode/Bytecode.h"

#include <fmt/format.h>

using namespace dd;
using namespace dd::bc;

static std::string constantText(const Constant &C) {
  switch (C.K) {
  case Constant::Number:
    return formatQuantity(C.Num, C.D);
  case Constant::String:
    return "\"" + C.Str + "\"";
  case Constant::Regex:
    return "/" + C.Str + "/";
  }
  return "?";
}

static const char *filterOpName(FilterOp Op) {
  switch (Op) {
  case FilterOp::True:
    return "true";
  case FilterOp::Prop:
    return "prop";
  case FilterOp::LayerProp:
    return "layer.prop";
  case FilterOp::Capture:
    return "capture";
  case FilterOp::Arith:
    return "arith";
  case FilterOp::Compare:
    return "compare";
  case FilterOp::Match:
    return "match";
  case FilterOp::NotMatch:
    return "nomatch";
  case FilterOp::In:
    return "in";
  case FilterOp::And:
    return "and";
  case FilterOp::Or:
    return "or";
  case FilterOp::Not:
    return "not";
  case FilterOp::Truthy:
    return "truthy";
  }
  return "?";
}

static std::string filterNodeText(const FilterNode &N) {
  static const char *Cmp[] = {"==", "!=", "<", "<=", ">", ">="};
  static const char *Ar[] = {"+", "-", "*", "/", "%"};
  switch (N.Op) {
  case FilterOp::Prop:
  case FilterOp::LayerProp:
    return fmt::format("{} {}", filterOpName(N.Op),
                       memberInfo(static_cast<MemberId>(N.Sub)).Name);
  case FilterOp::Capture:
    return fmt::format("capture #{}", N.A);
  case FilterOp::Arith:
    return fmt::format("arith %{} {} %{}", N.A, Ar[N.Sub % 5], N.B);
  case FilterOp::Compare:
    return fmt::format("compare %{} {} %{}", N.A, Cmp[N.Sub % 6], N.B);
  case FilterOp::Not:
  case FilterOp::Truthy:
    return fmt::format("{} %{}", filterOpName(N.Op), N.A);
  case FilterOp::True:
    return "true";
  default:
    return fmt::format("{} %{} %{}", filterOpName(N.Op), N.A, N.B);
  }
}

std::string bc::disassemble(const Program &P, const SourceManager *SM) {
  std::string Out =
      fmt::format("; ddscript bytecode, format {}\n", FormatVersion);
  for (size_t G = 0; G < P.GlobalNames.size(); ++G)
    Out += fmt::format("global {} {}\n", G, P.GlobalNames[G]);
  for (const ParamInfo &Pm : P.Params)
    Out += fmt::format("param {} -> global {}\n", Pm.Name, Pm.Global);
  for (size_t FI = 0; FI < P.Functions.size(); ++FI) {
    const Function &F = P.Functions[FI];
    Out += fmt::format("\nfunction {} {} (params {}, required {}, locals {}, "
                       "captures {})\n",
                       FI, F.Name, F.NumParams, F.RequiredParams, F.NumLocals,
                       F.NumCaptures);
    for (size_t C = 0; C < F.Constants.size(); ++C)
      Out += fmt::format("  const {} {}\n", C, constantText(F.Constants[C]));
    for (size_t X = 0; X < F.Filters.size(); ++X) {
      const FilterProgram &Fp = F.Filters[X];
      Out += fmt::format("  filter {} {} captures {}: {}\n", X,
                         Fp.Blocks ? std::string("blocks")
                                   : fmt::format("kinds 0x{:02x}", Fp.KindMask),
                         Fp.NumCaptures, Fp.Text);
      for (size_t N = 0; N < Fp.Nodes.size(); ++N)
        Out += fmt::format("    %{} = {}\n", N, filterNodeText(Fp.Nodes[N]));
    }
    for (size_t X = 0; X < F.Inserts.size(); ++X)
      Out += fmt::format("  insert {} kind {} clauses 0x{:02x} \"{}\"\n", X,
                         F.Inserts[X].TaskKind, F.Inserts[X].Clauses,
                         F.Inserts[X].Name);
    uint32_t LastLine = 0;
    for (uint32_t Pc = 0; Pc < F.Code.size();) {
      Opcode Op = static_cast<Opcode>(F.Code[Pc]);
      std::string Line = "    ";
      if (SM) {
        SourceRange R = F.rangeAt(Pc);
        if (R.valid()) {
          uint32_t L = SM->lineColumn(R.Buffer, R.Begin).Line;
          if (L != LastLine)
            Line = fmt::format("{:>4}", L);
          LastLine = L;
        }
      }
      std::string Ops;
      const char *Layout = opcodeOperands(Op);
      for (unsigned I = 0; Layout[I]; ++I) {
        int64_t V = readOperand(F, Pc, I);
        if (Layout[I] == 'i')
          Ops += fmt::format(
              " ->{:04}", static_cast<int64_t>(Pc + instructionSize(Op)) + V);
        else
          Ops += fmt::format(" {}", V);
      }
      std::string Note;
      if (Op == Opcode::GetMember)
        Note = std::string("  ; .") +
               memberNameText(static_cast<uint16_t>(readOperand(F, Pc, 0)));
      else if ((Op == Opcode::Const || Op == Opcode::Channel) &&
               readOperand(F, Pc, 0) < static_cast<int64_t>(F.Constants.size()))
        Note = "  ; " + constantText(F.Constants[readOperand(F, Pc, 0)]);
      else if ((Op == Opcode::LoadGlobal || Op == Opcode::StoreGlobal) &&
               readOperand(F, Pc, 0) <
                   static_cast<int64_t>(P.GlobalNames.size()))
        Note = "  ; " + P.GlobalNames[readOperand(F, Pc, 0)];
      else if (Op == Opcode::CallBuiltin)
        Note = std::string("  ; ") +
               builtinInfo(static_cast<BuiltinId>(readOperand(F, Pc, 0))).Name;
      else if (Op == Opcode::MakeClosure &&
               readOperand(F, Pc, 0) < static_cast<int64_t>(P.Functions.size()))
        Note = "  ; " + P.Functions[readOperand(F, Pc, 0)].Name;
      Out +=
          fmt::format("{} {:04} {}{}{}\n", Line, Pc, opcodeName(Op), Ops, Note);
      Pc += instructionSize(Op);
    }
  }
  return Out;
}
