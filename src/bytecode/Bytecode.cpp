#include "bytecode/Bytecode.h"

#include <algorithm>
#include <cstring>

using namespace dd;
using namespace dd::bc;

namespace {
struct OpInfo {
  const char *Name;
  const char *Operands;
};
const OpInfo OpTable[] = {
#define DD_OPCODE(Name, Operands, Effect) {#Name, Operands},
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

std::optional<MemberId> bc::lookupMember(TypeKind Owner,
                                         std::string_view Name) {
  for (unsigned I = 0; I < static_cast<unsigned>(MemberId::NumMembers); ++I)
    if (MemberTable[I].Owner == Owner && Name == MemberTable[I].Name)
      return static_cast<MemberId>(I);
  return std::nullopt;
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
  auto It = std::upper_bound(
      Lines.begin(), Lines.end(), Pc,
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
