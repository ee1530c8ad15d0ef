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
; ddscript bytecode, format 1
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

TEST_CASE("defaults are filled by the callee; named arguments by the compiler") {
  CHECK_EQ(disasm("fn f(a, b = 1, c = 2) { return a + b + c }\n"
                  "print f(5, c: 7)\n"),
           R"(
; ddscript bytecode, format 1
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
  CHECK_EQ(disasm("for i in 1..3 { if i > 1 and i < 3 or false { print i } }\n"),
           R"(
; ddscript bytecode, format 1

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
; ddscript bytecode, format 1
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
