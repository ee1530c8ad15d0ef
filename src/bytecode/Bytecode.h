//===- Bytecode.h - The contract between compiler and VM --------*- C++ -*-===//
//
// The only header both the compiler and the VM include. A compiled .dd run is
// a Program: functions (one per module's top-level code, one per fn and per
// lambda), globals, and parameters.
//
// Format (version 2; 1 had no memory instructions: Resize, Free, Offload,
// Alloc, block selects):
//   * Code is a byte string. Each instruction is an opcode byte followed by
//     its operands, little-endian: u8 ("b"), u16 ("h"), i32 ("i"); the
//     layout of each opcode is its Operands string in Opcodes.def. Jump
//     offsets are relative to the start of the next instruction.
//   * Operands name per-function tables: constants (numbers with units,
//     strings, regex patterns), filter programs (compiled select
//     predicates), insert descriptors; or locals/globals/captures by slot.
//   * A line table maps the first byte of each instruction to its source
//     range, for runtime errors and stack traces.
//   * Limits: 65,535 constants, locals, globals and functions; 255 arguments.
// Programs are built in memory and never serialized; the version names the
// instruction set and tables for the disassembly golden tests.
//
//===----------------------------------------------------------------------===//
#ifndef DD_BYTECODE_BYTECODE_H
#define DD_BYTECODE_BYTECODE_H

#include "support/SourceManager.h"
#include "support/Units.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dd::bc {

constexpr uint32_t FormatVersion = 2;

enum class Opcode : uint8_t {
#define DD_OPCODE(Name, Operands, Effect) Name,
#include "bytecode/Opcodes.def"
  NumOpcodes
};
const char *opcodeName(Opcode Op);
/// The operand layout string of \p Op ("", "h", "hb", "hi", ...).
const char *opcodeOperands(Opcode Op);
/// Bytes of an instruction with opcode \p Op, operands included.
unsigned instructionSize(Opcode Op);

enum class TypeKind : uint8_t {
#define DD_TYPE(Name, Spelling) Name,
#include "bytecode/Types.def"
  NumTypes
};
const char *typeName(TypeKind T);

enum MemberFlag : uint8_t {
  Plain = 0,
  Prop = 1,   ///< a task property select predicates test natively
  Method = 2, ///< called with arguments
  Dur = 4,
  Size = 8,
  Bw = 16,
};

enum class MemberId : uint16_t {
#define DD_MEMBER(Owner, Name, Result, Flags) Owner##_##Name,
#include "bytecode/Members.def"
  NumMembers
};

struct MemberInfo {
  TypeKind Owner;
  const char *Name;
  TypeKind Result;
  uint8_t Flags;
  Dim D; ///< for Number results
};
const MemberInfo &memberInfo(MemberId M);
std::optional<MemberId> lookupMember(TypeKind Owner, std::string_view Name);
/// Member names of \p Owner, for suggestions.
std::vector<std::string> memberNames(TypeKind Owner);
/// Member names as the compiler encodes them (GetMember's operand): one id
/// per distinct name in Members.def, whatever its owners. None for a name
/// no kind of value has.
std::optional<uint16_t> memberNameId(std::string_view Name);
const char *memberNameText(uint16_t NameId);
/// The member named \p NameId of \p Owner: one table lookup, no strings.
std::optional<MemberId> memberOf(TypeKind Owner, uint16_t NameId);
/// Every member name, for suggestions where the owner is not known.
std::vector<std::string> allMemberNames();

enum class BuiltinId : uint16_t {
#define DD_BUILTIN(Name, Min, Max, Params, Result) Name,
#include "bytecode/Builtins.def"
  NumBuiltins
};

struct BuiltinInfo {
  const char *Name;
  uint8_t MinArgs, MaxArgs;
  const char *Params;
  TypeKind Result;
};
const BuiltinInfo &builtinInfo(BuiltinId B);
std::optional<BuiltinId> lookupBuiltin(std::string_view Name);

/// A constant of a function.
struct Constant {
  enum Kind : uint8_t { Number, String, Regex } K = Number;
  double Num = 0;
  Dim D;
  std::string Str;
};

/// The kinds "select" names, as a mask over graph::TaskKind bits.
std::optional<uint32_t> selectKindMask(std::string_view Kind);
const char *selectKinds(); ///< for messages

/// A compiled select predicate: a tree of nodes evaluated column-wise over
/// all tasks, each node one native loop. Nodes refer to children by index;
/// the root is the last node.
enum class FilterOp : uint8_t {
  True,      ///< all candidate tasks
  Prop,      ///< column: task property Sub (a MemberId)
  LayerProp, ///< column: member Sub of the task's layer (index, name)
  Capture,   ///< column: captured value A, the same for every task
  Arith,     ///< column: A op B (Sub: 0 + 1 - 2 * 3 / 4 %)
  Compare,   ///< mask: A cmp B (Sub: 0 == 1 != 2 < 3 <= 4 > 5 >=)
  Match,     ///< mask: string column A ~ regex/string capture B
  NotMatch,
  In, ///< mask: column A in captured list/set/range B
  And,
  Or,
  Not,
  Truthy, ///< mask: column A is truthy (bool properties)
};

struct FilterNode {
  FilterOp Op;
  uint16_t Sub = 0;
  uint16_t A = 0, B = 0;
};

struct FilterProgram {
  uint32_t KindMask = 0;
  /// Selects memory blocks ("select block"): properties are Block members
  /// and KindMask is unused.
  bool Blocks = false;
  uint8_t NumCaptures = 0;
  std::vector<FilterNode> Nodes; ///< root last
  std::string Text;              ///< the predicate's source, for disasm
};

/// What an insert instruction pops, in this order: on, duration, bytes,
/// after, before (only the clauses present).
struct InsertDesc {
  enum Clause : uint8_t {
    On = 1,
    Duration = 2,
    Bytes = 4,
    After = 8,
    Before = 16
  };
  uint8_t TaskKind; ///< graph::TaskKind
  uint8_t Clauses;
  std::string Name;
};

/// The operand of Free, Offload and Alloc: which clauses were pushed. They
/// are pushed after the target (a block set, or alloc's size) in the order
/// of these bits; the point (after/before) is always present.
enum MemOperand : uint8_t {
  AtEnd = 1,              ///< the point is its task's end (after), not start
  HasUntil = 2,           ///< free: allocated again / alloc: freed, at a task
  UntilAtEnd = 4,         ///< alloc: freed at the end (through), not start
  HasOn = 8,              ///< offload: copy stream / alloc: device
  HasBandwidth = 16,      ///< offload
  HasPrefetchAfter = 32,  ///< offload
  HasPrefetchBefore = 64, ///< offload
  HasPrefetchOn = 128,    ///< offload
};

struct LineEntry {
  uint32_t Pc;
  SourceRange Range;
};

struct Function {
  std::string Name;
  uint16_t NumParams = 0, RequiredParams = 0, NumLocals = 0, NumCaptures = 0;
  std::vector<uint8_t> Code;
  std::vector<Constant> Constants;
  std::vector<FilterProgram> Filters;
  std::vector<InsertDesc> Inserts;
  std::vector<LineEntry> Lines;
  SourceRange Range;
  /// The source range of the instruction at \p Pc.
  SourceRange rangeAt(uint32_t Pc) const;
};

struct ParamInfo {
  std::string Name, Doc, Module;
  uint16_t Global;
  Constant Default; ///< when the default is a literal (for `ddscript models`)
  bool LiteralDefault = false;
  /// The default is the literal true or false: --set takes only those.
  bool BoolDefault = false;
  SourceRange Range;
};

struct Program {
  std::vector<Function> Functions;
  std::vector<std::string> GlobalNames;
  std::vector<ParamInfo> Params;
  /// Top-level code of each module, imported modules first.
  std::vector<uint32_t> InitOrder;
};

/// Reads operand \p Index (0-based, per the layout) of the instruction at
/// \p Pc.
int64_t readOperand(const Function &F, uint32_t Pc, unsigned Index);

/// Checks every function's code against the stack effects of Opcodes.def:
/// no instruction takes more values than the stack holds, paths that meet
/// hold as many values, a return has its value, jumps stay in the
/// function. A message naming the first fault; none when the code is sound.
std::optional<std::string> verifyStack(const Program &P);

/// A listing of every function: constants, filters, and instructions with
/// their operands and source lines.
std::string disassemble(const Program &P, const SourceManager *SM = nullptr);

} // namespace dd::bc

#endif
