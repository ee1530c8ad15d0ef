// The compiler's output, compared as disassembly.

#include "compiler/Compiler.h"

#include <doctest/doctest.h>

using namespace dd;

namespace {

std::string disasm(const std::string &Src) {
  SourceManager SM;
  DiagEngine Diags;
  compiler::CompileOptions Opts;
  auto M = compiler::compileSource("t.dd", Src, Opts, SM, Diags);
  if (!M)
    return "ERROR\n" + renderDiagnostics(SM, Diags);
  return "\n" + bc::disassemble(M->Program);
}

} // namespace

TEST_CASE("a select predicate compiles to a filter over captured values") {
  CHECK_EQ(disasm("param f = 2.0\n"
                  "let k = select kernel where name ~ /gemm/ and "
                  "duration > 1us\n"
                  "shrink k by f\n"),
           R"(
; ddscript bytecode, format 2
global 0 f
global 1 k
param f -> global 0

function 0 <module <main>> (params 0, required 0, locals 0, captures 0)
  const 0 2
  const 1 /gemm/
  const 2 1.000 us
  filter 0 kinds 0x08 captures 2: name ~ /gemm/ and duration > 1us
    %0 = prop name
    %1 = capture #0
    %2 = match %0 %1
    %3 = prop duration
    %4 = capture #1
    %5 = compare %3 > %4
    %6 = and %2 %5
     0000 Const 0  ; 2
     0003 Param 0
     0006 Const 1  ; /gemm/
     0009 Const 2  ; 1.000 us
     0012 Select 0 2
     0016 StoreGlobal 1  ; k
     0019 LoadGlobal 1  ; k
     0022 LoadGlobal 0  ; f
     0025 Scale 1
     0027 PushNone
     0028 Return
)");
}

TEST_CASE(
    "defaults are filled by the callee; named arguments by the compiler") {
  CHECK_EQ(disasm("fn f(a, b = 1, c = 2) { return a + b + c }\n"
                  "print f(5, c: 7)\n"),
           R"(
; ddscript bytecode, format 2
global 0 f

function 0 <module <main>> (params 0, required 0, locals 0, captures 0)
  const 0 5
  const 1 7
     0000 MakeClosure 1 0  ; f
     0004 StoreGlobal 0  ; f
     0007 LoadGlobal 0  ; f
     0010 Const 0  ; 5
     0013 PushMissing
     0014 Const 1  ; 7
     0017 Call 3
     0019 Print 1
     0021 PushNone
     0022 Return

function 1 f (params 3, required 1, locals 3, captures 0)
  const 0 1
  const 1 2
     0000 JumpIfPresent 1 ->0013
     0007 Const 0  ; 1
     0010 StoreLocal 1
     0013 JumpIfPresent 2 ->0026
     0020 Const 1  ; 2
     0023 StoreLocal 2
     0026 LoadLocal 0
     0029 LoadLocal 1
     0032 Add
     0033 LoadLocal 2
     0036 Add
     0037 Return
     0038 PushNone
     0039 Return
)");
}

TEST_CASE("and/or short-circuit; loops keep their iterator in a local") {
  CHECK_EQ(
      disasm("for i in 1..3 { if i > 1 and i < 3 or false { print i } }\n"),
      R"(
; ddscript bytecode, format 2

function 0 <module <main>> (params 0, required 0, locals 2, captures 0)
  const 0 1
  const 1 3
     0000 Const 0  ; 1
     0003 Const 1  ; 3
     0006 MakeRange
     0007 IterInit 0
     0010 IterNext 0 ->0060
     0017 StoreLocal 1
     0020 LoadLocal 1
     0023 Const 0  ; 1
     0026 Gt
     0027 JumpIfFalseKeep ->0039
     0032 LoadLocal 1
     0035 Const 1  ; 3
     0038 Lt
     0039 JumpIfTrueKeep ->0045
     0044 PushFalse
     0045 JumpIfFalse ->0055
     0050 LoadLocal 1
     0053 Print 1
     0055 Jump ->0010
     0060 PushNone
     0061 Return
)");
}

TEST_CASE("a lambda captures the enclosing function's variables by value") {
  CHECK_EQ(disasm("fn adder(k) { let m = k * 2\n return x -> x + m }\n"),
           R"(
; ddscript bytecode, format 2
global 0 adder

function 0 <module <main>> (params 0, required 0, locals 0, captures 0)
     0000 MakeClosure 1 0  ; adder
     0004 StoreGlobal 0  ; adder
     0007 PushNone
     0008 Return

function 1 adder (params 1, required 1, locals 2, captures 0)
  const 0 2
     0000 LoadLocal 0
     0003 Const 0  ; 2
     0006 Mul
     0007 StoreLocal 1
     0010 LoadLocal 1
     0013 MakeClosure 2 1  ; lambda
     0017 Return
     0018 PushNone
     0019 Return

function 2 lambda (params 1, required 1, locals 1, captures 1)
     0000 LoadLocal 0
     0003 LoadCapture 0
     0006 Add
     0007 Return
)");
}

TEST_CASE("every opcode has a name and a consistent size") {
  for (unsigned I = 0; I < static_cast<unsigned>(bc::Opcode::NumOpcodes); ++I) {
    auto Op = static_cast<bc::Opcode>(I);
    CAPTURE(bc::opcodeName(Op));
    CHECK(std::string(bc::opcodeName(Op)).size() > 0);
    unsigned Size = 1;
    for (const char *C = bc::opcodeOperands(Op); *C; ++C)
      Size += *C == 'b' ? 1 : *C == 'h' ? 2 : 4;
    CHECK(bc::instructionSize(Op) == Size);
  }
}

TEST_CASE("memory statements push their clauses in MemOperand order") {
  CHECK_EQ(disasm("let b = select block where class == activation and "
                  "layer.index < 3\n"
                  "let t = select kernel\n"
                  "free b after t until t\n"
                  "offload b after t bandwidth 1GBps prefetch before t\n"),
           R"(
; ddscript bytecode, format 2
global 0 b
global 1 t

function 0 <module <main>> (params 0, required 0, locals 0, captures 0)
  const 0 "activation"
  const 1 3
  const 2 1.00 GB/s
  filter 0 blocks captures 2: class == activation and layer.index < 3
    %0 = prop class
    %1 = capture #0
    %2 = compare %0 == %1
    %3 = layer.prop index
    %4 = capture #1
    %5 = compare %3 < %4
    %6 = and %2 %5
  filter 1 kinds 0x08 captures 0: 
    %0 = true
     0000 Const 0  ; "activation"
     0003 Const 1  ; 3
     0006 Select 0 2
     0010 StoreGlobal 0  ; b
     0013 Select 1 0
     0017 StoreGlobal 1  ; t
     0020 LoadGlobal 0  ; b
     0023 LoadGlobal 1  ; t
     0026 LoadGlobal 1  ; t
     0029 Free 3
     0031 LoadGlobal 0  ; b
     0034 LoadGlobal 1  ; t
     0037 Const 2  ; 1.00 GB/s
     0040 LoadGlobal 1  ; t
     0043 Offload 81
     0045 PushNone
     0046 Return
)");
}

TEST_CASE("compiled code keeps the stack discipline the opcode table states") {
  // Every statement kind and the opcodes whose effect follows from their
  // operands: the compiler checks each program (verifyStack) and refuses
  // one that fails, so this compiling is the check.
  SourceManager SM;
  DiagEngine Diags;
  compiler::CompileOptions Opts;
  auto M = compiler::compileSource(
      "t.dd",
      "param n = 3 \"n\"\n"
      "let k = select kernel where duration > 1us and name ~ \"gemm\"\n"
      "let xs = [1, 2, n]\n"
      "fn f(a, b = 2) { if a > b { return a } return b }\n"
      "for x in xs { if x == 2 { continue } if x > 5 { break } print x, f(x) "
      "}\n"
      "try { shrink k by 2 }\n"
      "let t = insert kernel \"p\" on k.first.stream duration 1us after "
      "k.first\n"
      "depend t on k.first\n"
      "schedule channel \"c\" by t -> t.duration\n"
      "let b = select block where size > 1MB\n"
      "free b after k.first until k.last\n"
      "offload b after k.first bandwidth 1GBps prefetch before k.last\n"
      "let a = alloc 1MB after k.first until k.last\n"
      "assert n > 0 or n < 0, \"never\"\n"
      "print xs[1:2], len(xs), (x -> x + n)(1)\n",
      Opts, SM, Diags);
  REQUIRE_MESSAGE(M, renderDiagnostics(SM, Diags));
  CHECK_FALSE(bc::verifyStack(M->Program));

  // A function that pops what it never pushed, and one whose paths meet
  // with different depths, are caught.
  bc::Program Bad;
  bc::Function F;
  F.Name = "bad";
  F.Code = {static_cast<uint8_t>(bc::Opcode::Pop)};
  Bad.Functions.push_back(F);
  auto Fault = bc::verifyStack(Bad);
  REQUIRE(Fault);
  CHECK(Fault->find("takes more values than the stack holds") !=
        std::string::npos);
  // PushTrue; JumpIfFalse +1 (over a PushNone); PushNone; Return: the
  // jump arrives with no value, the fall-through with one.
  F.Code = {static_cast<uint8_t>(bc::Opcode::PushTrue),
            static_cast<uint8_t>(bc::Opcode::JumpIfFalse),
            1,
            0,
            0,
            0,
            static_cast<uint8_t>(bc::Opcode::PushNone),
            static_cast<uint8_t>(bc::Opcode::PushNone),
            static_cast<uint8_t>(bc::Opcode::Return)};
  Bad.Functions = {F};
  Fault = bc::verifyStack(Bad);
  REQUIRE(Fault);
  CHECK(Fault->find("paths meet with") != std::string::npos);
}
