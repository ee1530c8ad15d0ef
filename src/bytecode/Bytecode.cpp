#include "bytecode/Bytecode.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

using namespace dd;
using namespace dd::bc;

namespace {
/// Opcodes.def's "V": a stack effect that follows from the operands
/// (stackEffect below).
constexpr int V = std::numeric_limits<int>::min();
struct OpInfo {
  const char *Name;
  const char *Operands;
  int Effect; ///< net values pushed; V: see stackEffect
};
const OpInfo OpTable[] = {
#define DD_OPCODE(Name, Operands, Effect) {#Name, Operands, Effect},
#include "bytecode/Opcodes.def"
};

const char *TypeNames[] = {
#define DD_TYPE(Name, Spelling) Spelling,
#include "bytecode/Types.def"
};

constexpr Dim dimOf(uint8_t Flags) {
  return (Flags & Dur)    ? Dim{0, 1}
         : (Flags & Size) ? Dim{1, 0}
         : (Flags & Bw)   ? Dim{1, -1}
                          : Dim{0, 0};
}

const MemberInfo MemberTable[] = {
#define DD_MEMBER(Owner, Name, Result, Flags)                                  \
  {TypeKind::Owner, #Name, TypeKind::Result, static_cast<uint8_t>(Flags),      \
   dimOf(static_cast<uint8_t>(Flags))},
#include "bytecode/Members.def"
};

const BuiltinInfo BuiltinTable[] = {
#define DD_BUILTIN(Name, Min, Max, Params, Result)                             \
  {#Name, Min, Max, Params, TypeKind::Result},
#include "bytecode/Builtins.def"
};
} // namespace

const char *bc::opcodeName(Opcode Op) {
  return OpTable[static_cast<unsigned>(Op)].Name;
}

const char *bc::opcodeOperands(Opcode Op) {
  return OpTable[static_cast<unsigned>(Op)].Operands;
}

unsigned bc::instructionSize(Opcode Op) {
  unsigned Size = 1;
  for (const char *C = opcodeOperands(Op); *C; ++C)
    Size += *C == 'b' ? 1 : *C == 'h' ? 2 : 4;
  return Size;
}

const char *bc::typeName(TypeKind T) {
  return TypeNames[static_cast<unsigned>(T)];
}

const MemberInfo &bc::memberInfo(MemberId M) {
  return MemberTable[static_cast<unsigned>(M)];
}

std::vector<std::string> bc::memberNames(TypeKind Owner) {
  std::vector<std::string> Out;
  for (const MemberInfo &M : MemberTable)
    if (M.Owner == Owner)
      Out.push_back(M.Name);
  return Out;
}

namespace {
/// The distinct member names (in first-appearance order of Members.def)
/// and, per owner and name, the member: built once.
struct MemberNames {
  std::vector<const char *> Names;
  std::vector<int32_t> ByOwner; // [owner * Names.size() + name]: id or -1
  MemberNames() {
    constexpr unsigned N = static_cast<unsigned>(MemberId::NumMembers);
    std::vector<uint16_t> NameOf(N);
    for (unsigned I = 0; I < N; ++I) {
      auto It = std::find_if(Names.begin(), Names.end(), [&](const char *S) {
        return std::string_view(S) == MemberTable[I].Name;
      });
      NameOf[I] = static_cast<uint16_t>(It - Names.begin());
      if (It == Names.end())
        Names.push_back(MemberTable[I].Name);
    }
    size_t Owners = static_cast<size_t>(TypeKind::NumTypes);
    ByOwner.assign(Owners * Names.size(), -1);
    for (unsigned I = 0; I < N; ++I)
      ByOwner[static_cast<size_t>(MemberTable[I].Owner) * Names.size() +
              NameOf[I]] = static_cast<int32_t>(I);
  }
};
const MemberNames &memberNamesTable() {
  static const MemberNames T;
  return T;
}
} // namespace

std::optional<uint16_t> bc::memberNameId(std::string_view Name) {
  const MemberNames &T = memberNamesTable();
  for (size_t I = 0; I < T.Names.size(); ++I)
    if (Name == T.Names[I])
      return static_cast<uint16_t>(I);
  return std::nullopt;
}

const char *bc::memberNameText(uint16_t NameId) {
  const MemberNames &T = memberNamesTable();
  return NameId < T.Names.size() ? T.Names[NameId] : "?";
}

std::optional<MemberId> bc::memberOf(TypeKind Owner, uint16_t NameId) {
  const MemberNames &T = memberNamesTable();
  if (NameId >= T.Names.size())
    return std::nullopt;
  int32_t Id = T.ByOwner[static_cast<size_t>(Owner) * T.Names.size() + NameId];
  if (Id < 0)
    return std::nullopt;
  return static_cast<MemberId>(Id);
}

std::optional<MemberId> bc::lookupMember(TypeKind Owner,
                                         std::string_view Name) {
  auto Id = memberNameId(Name);
  return Id ? memberOf(Owner, *Id) : std::nullopt;
}

std::vector<std::string> bc::allMemberNames() {
  const MemberNames &T = memberNamesTable();
  return {T.Names.begin(), T.Names.end()};
}

const BuiltinInfo &bc::builtinInfo(BuiltinId B) {
  return BuiltinTable[static_cast<unsigned>(B)];
}

std::optional<BuiltinId> bc::lookupBuiltin(std::string_view Name) {
  for (unsigned I = 0; I < static_cast<unsigned>(BuiltinId::NumBuiltins); ++I)
    if (Name == BuiltinTable[I].Name)
      return static_cast<BuiltinId>(I);
  return std::nullopt;
}

std::optional<uint32_t> bc::selectKindMask(std::string_view K) {
  // Bits follow graph::TaskKind: CpuOp, Annotation, Runtime, Kernel, Memcpy,
  // Memset, Comm.
  constexpr uint32_t CpuOp = 1, Annotation = 2, Runtime = 4, Kernel = 8,
                     Memcpy = 16, Memset = 32, Comm = 64;
  if (K == "task" || K == "tasks")
    return 127;
  if (K == "gpu")
    return Kernel | Memcpy | Memset | Comm;
  if (K == "kernel" || K == "kernels")
    return Kernel;
  if (K == "comm")
    return Comm;
  if (K == "memcpy")
    return Memcpy;
  if (K == "memset")
    return Memset;
  if (K == "cpu")
    return CpuOp | Annotation | Runtime;
  if (K == "cpu_op" || K == "op")
    return CpuOp;
  if (K == "annotation")
    return Annotation;
  if (K == "runtime")
    return Runtime;
  return std::nullopt;
}

const char *bc::selectKinds() {
  return "task, gpu, kernel, comm, memcpy, memset, cpu, cpu_op, annotation, "
         "runtime; or block (memory blocks)";
}

SourceRange Function::rangeAt(uint32_t Pc) const {
  auto It =
      std::upper_bound(Lines.begin(), Lines.end(), Pc,
                       [](uint32_t P, const LineEntry &E) { return P < E.Pc; });
  if (It == Lines.begin())
    return Range;
  return (It - 1)->Range;
}

int64_t bc::readOperand(const Function &F, uint32_t Pc, unsigned Index) {
  Opcode Op = static_cast<Opcode>(F.Code[Pc]);
  const char *L = opcodeOperands(Op);
  uint32_t At = Pc + 1;
  for (unsigned I = 0; L[I]; ++I) {
    unsigned W = L[I] == 'b' ? 1 : L[I] == 'h' ? 2 : 4;
    if (I == Index) {
      if (W == 1)
        return F.Code[At];
      if (W == 2)
        return F.Code[At] | (F.Code[At + 1] << 8);
      int32_t V;
      std::memcpy(&V, &F.Code[At], 4); // little-endian hosts only
      return V;
    }
    At += W;
  }
  return 0;
}

namespace {
/// Where an instruction leaves the stack: its net effect when it goes on
/// to the next instruction and, for a jump, when it jumps.
struct Effect {
  std::optional<int> Next, Taken;
};

/// The effect of the instruction at \p Pc, from Opcodes.def's column, and
/// for its "V" entries from the operands; none when the table has no rule.
std::optional<Effect> stackEffect(const Function &F, uint32_t Pc) {
  auto Op = static_cast<Opcode>(F.Code[Pc]);
  auto Operand = [&](unsigned I) { return readOperand(F, Pc, I); };
  auto Bits = [](int64_t B) { return std::popcount(static_cast<uint64_t>(B)); };
  int Fixed = OpTable[static_cast<unsigned>(Op)].Effect;
  Effect E;
  switch (Op) {
  case Opcode::Return:
    return E; // ends the path
  case Opcode::Jump:
    E.Taken = 0;
    return E;
  case Opcode::JumpIfFalse:
    E.Next = E.Taken = -1;
    return E;
  case Opcode::JumpIfPresent:
    E.Next = E.Taken = 0;
    return E;
  case Opcode::JumpIfFalseKeep:
  case Opcode::JumpIfTrueKeep:
    E.Next = -1, E.Taken = 0;
    return E;
  case Opcode::IterNext:
    E.Next = 1, E.Taken = 0;
    return E;
  case Opcode::MakeList:
    E.Next = 1 - static_cast<int>(Operand(0));
    return E;
  case Opcode::Call:
    E.Next = -static_cast<int>(Operand(0)); // callee and arguments: result
    return E;
  case Opcode::CallBuiltin:
  case Opcode::MakeClosure:
  case Opcode::Select:
    E.Next = 1 - static_cast<int>(Operand(1));
    return E;
  case Opcode::Insert: {
    size_t D = static_cast<size_t>(Operand(0));
    if (D >= F.Inserts.size())
      return std::nullopt;
    E.Next = 1 - Bits(F.Inserts[D].Clauses);
    return E;
  }
  case Opcode::Free: // target, point, until
    E.Next = -2 - Bits(Operand(0) & HasUntil);
    return E;
  case Opcode::Offload: // target, point, the clauses
    E.Next = -2 - Bits(Operand(0) & (HasOn | HasBandwidth | HasPrefetchAfter |
                                     HasPrefetchBefore | HasPrefetchOn));
    return E;
  case Opcode::Alloc: // size, point, until, on: the block
    E.Next = -1 - Bits(Operand(0) & (HasUntil | HasOn));
    return E;
  case Opcode::Schedule: // resource, and a priority function for 0
    E.Next = Operand(0) == 0 ? -2 : -1;
    return E;
  case Opcode::Print:
    E.Next = -static_cast<int>(Operand(0));
    return E;
  case Opcode::Assert: // condition, and the message for 1
    E.Next = -1 - static_cast<int>(Operand(0) != 0);
    return E;
  default:
    // Every other opcode: Opcodes.def's fixed effect (a new "V" entry
    // without a rule above is reported, not guessed).
    break;
  }
  if (Fixed == V)
    return std::nullopt;
  E.Next = Fixed;
  return E;
}
} // namespace

std::optional<std::string> bc::verifyStack(const Program &P) {
  for (const Function &F : P.Functions) {
    uint32_t Size = static_cast<uint32_t>(F.Code.size());
    std::vector<int> Depth(Size + 1, -1);
    std::vector<std::pair<uint32_t, int>> Work = {{0, 0}};
    auto Fail = [&](uint32_t Pc, const std::string &What) {
      return std::optional<std::string>(
          fmt::format("{}, at {:04} of function '{}'", What, Pc, F.Name));
    };
    while (!Work.empty()) {
      // Not a structured binding: the lambda below captures Pc and D, which
      // clang before 16 refuses for bindings.
      uint32_t Pc = Work.back().first;
      int D = Work.back().second;
      Work.pop_back();
      if (Pc >= Size)
        continue; // the end of the code
      if (Depth[Pc] >= 0) {
        if (Depth[Pc] != D)
          return Fail(Pc, fmt::format("paths meet with {} and {} values on "
                                      "the stack",
                                      Depth[Pc], D));
        continue;
      }
      Depth[Pc] = D;
      auto Op = static_cast<Opcode>(F.Code[Pc]);
      if (F.Code[Pc] >= static_cast<uint8_t>(Opcode::NumOpcodes))
        return Fail(Pc, "an unknown opcode");
      std::optional<Effect> E = stackEffect(F, Pc);
      if (!E)
        return Fail(
            Pc, fmt::format("no stack effect known for {}", opcodeName(Op)));
      if (Op == Opcode::Return && D < 1)
        return Fail(Pc, "a return with nothing to return");
      uint32_t Next = Pc + instructionSize(Op);
      auto Go = [&](uint32_t To, int Delta) -> std::optional<std::string> {
        if (D + Delta < 0)
          return Fail(Pc, fmt::format("{} takes more values than the stack "
                                      "holds ({})",
                                      opcodeName(Op), D));
        Work.push_back({To, D + Delta});
        return std::nullopt;
      };
      if (E->Next)
        if (auto Err = Go(Next, *E->Next))
          return Err;
      if (E->Taken) {
        int64_t To = static_cast<int64_t>(Next) +
                     readOperand(F, Pc,
                                 static_cast<unsigned>(
                                     std::strlen(opcodeOperands(Op)) - 1));
        if (To < 0 || To > Size)
          return Fail(Pc, "a jump out of the function");
        if (auto Err = Go(static_cast<uint32_t>(To), *E->Taken))
          return Err;
      }
    }
  }
  return std::nullopt;
}
