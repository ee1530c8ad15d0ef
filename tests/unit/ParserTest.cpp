#include "syntax/Parser.h"

#include <doctest/doctest.h>

using namespace dd;

namespace {

struct Parsed {
  SourceManager SM;
  ast::AstContext Ctx;
  DiagEngine Diags;
  std::unique_ptr<ast::Module> M;
};

std::unique_ptr<Parsed> parse(const std::string &Src) {
  auto P = std::make_unique<Parsed>();
  BufferId B = P->SM.addBuffer("test.dd", Src);
  P->M = syntax::parseModule(P->SM, B, P->Ctx, P->Diags);
  return P;
}

std::string dumpOf(const std::string &Src) {
  auto P = parse(Src);
  if (!P->M)
    return "ERROR: " + renderDiagnostics(P->SM, P->Diags);
  return ast::dump(*P->M);
}

std::string errorsOf(const std::string &Src) {
  auto P = parse(Src);
  return renderDiagnostics(P->SM, P->Diags);
}

} // namespace

TEST_CASE("the AMP model parses as written") {
  CHECK_EQ(
      dumpOf(R"(
# Automatic mixed precision
param tensor_core_speedup = 3.0 "GEMM/conv kernels on tensor cores"
param memory_speedup = 2.0
let mma = select kernel where name ~ /gemm|conv|wgrad|dgrad|cutlass|xmma|scudnn/
shrink mma by tensor_core_speedup
shrink (select kernel) - mma by memory_speedup
)"),
      "(param tensor_core_speedup 3 \"GEMM/conv kernels on tensor cores\")\n"
      "(param memory_speedup 2)\n"
      "(let mma (select kernel where (~ name "
      "/gemm|conv|wgrad|dgrad|cutlass|xmma|scudnn/)))\n"
      "(shrink mma by tensor_core_speedup)\n"
      "(shrink (- (select kernel) mma) by memory_speedup)\n");
}

TEST_CASE("numbers carry units in base units") {
  CHECK_EQ(
      dumpOf("let a = 3.2ms\nlet b = 25MB\nlet c = 40Gbps\nlet d = 1_000\n"),
      "(let a 3200000:duration)\n(let b 25000000:size)\n(let c 5:bandwidth)\n"
      "(let d 1000)\n");
  CHECK(errorsOf("let x = 5furlongs\n").find("unknown unit 'furlongs'") !=
        std::string::npos);
}

TEST_CASE("precedence follows Python; ranges bind loosest of the arithmetic") {
  CHECK_EQ(dumpOf("let x = not a == b and c or d\n"),
           "(let x (or (and (not (== a b)) c) d))\n");
  CHECK_EQ(dumpOf("let y = 1 + 2 * -x\n"), "(let y (+ 1 (* 2 (neg x))))\n");
  CHECK_EQ(dumpOf("for i in 1..n+1 { print i }\n"),
           "(for i (.. 1 (+ n 1)) { (print i) })\n");
  CHECK_EQ(dumpOf("let s = a | b & c - d\n"), "(let s (| a (& b (- c d))))\n");
}

TEST_CASE("a slash divides unless a regex can start there") {
  CHECK_EQ(dumpOf("let d = bytes / n / bw\nlet r = name ~ /a\\/b/\n"),
           "(let d (/ (/ bytes n) bw))\n(let r (~ name /a/b/))\n");
}

TEST_CASE("statements of the language") {
  CHECK_EQ(
      dumpOf(R"(
import std.comm
import "ddp.dd" as d
fn f(a, b = 2) { if a > b { return a } else if a == b { return 0 } else { return b } }
let t = insert comm "allreduce" on channel "nccl" duration 2ms after x before y
depend (select kernel).first on t
remove select memset
schedule channel "nccl" by t -> t.layer.index
schedule channel "nccl" fifo
scale select cpu_op to 5us
assert count > 0, "nothing selected"
f(1, b: 3)
let g = (a, b) -> a + b
let xs = [1, 2][0]
)"),
      "(import std.comm as comm)\n"
      "(import \"ddp.dd\" as d)\n"
      "(fn f (a b=2) { (if (> a b) { (return a) } else { (if (== a b) { "
      "(return 0) } else { (return b) }) }) })\n"
      "(let t (insert comm \"allreduce\" on (channel \"nccl\") duration "
      "2000000:duration after x before y))\n"
      "(depend (. (select kernel) first) on t)\n"
      "(remove (select memset))\n"
      "(schedule (channel \"nccl\") by (lambda (t) (. (. t layer) index)))\n"
      "(schedule (channel \"nccl\") fifo)\n"
      "(scale (select cpu_op) to 5000:duration)\n"
      "(assert (> count 0) \"nothing selected\")\n"
      "(call f 1 b:3)\n"
      "(let g (lambda (a b) (+ a b)))\n"
      "(let xs (index [1 2] 0))\n");
}

TEST_CASE("syntax errors: several per file, each with a caret") {
  std::string E = errorsOf("let = 3\nlet y = (1 + \nshrink x by\n");
  CHECK(E.find("test.dd:1:5: error: unexpected '='") != std::string::npos);
  CHECK(E.find("  let = 3\n      ^\n") != std::string::npos);
  // Recovery reaches the later lines too.
  CHECK(E.find("test.dd:3:") != std::string::npos);
  CHECK(errorsOf("let s = \"abc\n").find("unterminated string") !=
        std::string::npos);
  CHECK(errorsOf("let x = insert kernel \"k\" on s frobnicate 3\n")
            .find("unknown insert clause 'frobnicate'") != std::string::npos);
}

TEST_CASE("a source that is not UTF-8 is an error at its first bad byte") {
  // ANTLR throws on such bytes; the parser must say where they are instead.
  std::string E = errorsOf("let a = 1\nlet b = \"x\xff\"\n");
  CHECK(E.find("test.dd:2:11: error: invalid UTF-8 (byte 0xff)") !=
        std::string::npos);
  CHECK(E.find("  let b = \"x\xff\"\n            ^\n") != std::string::npos);
  // A lone continuation byte, a truncated sequence, an encoded surrogate.
  CHECK(errorsOf("\x80").find("1:1: error: invalid UTF-8 (byte 0x80)") !=
        std::string::npos);
  CHECK(errorsOf("let s = \"\xc3\"\n").find("1:10: error: invalid UTF-8") !=
        std::string::npos);
  CHECK(errorsOf("let s = \"\xed\xa0\x80\"\n")
            .find("1:10: error: invalid UTF-8 (byte 0xed)") !=
        std::string::npos);
  // Valid multi-byte text parses.
  CHECK(errorsOf("let s = \"h\xc3\xa9llo \xe2\x80\x94\"\n").empty());
}

TEST_CASE("the caret counts characters, not bytes, before it") {
  // "é" and "—" take two and three bytes but one column on screen each: the
  // column says byte 17, the caret stands under the 14th character.
  std::string E = errorsOf("let s = \"\xc3\xa9\xe2\x80\x94\" = 3\n");
  INFO(E);
  CHECK(E.find("test.dd:1:17: error: unexpected '='") != std::string::npos);
  CHECK(E.find("\n" + std::string(2 + 13, ' ') + "^\n") != std::string::npos);
}

TEST_CASE("a long line is shown around the caret") {
  // 400 terms then a stray '=': the error is at byte 8 + 399 * 4 + 2.
  std::string Src = "let x = 1";
  for (int I = 1; I < 400; ++I)
    Src += " + 1";
  Src += " = 2\n";
  std::string E = errorsOf(Src);
  INFO(E);
  size_t Col = Src.find(" = 2") + 2;
  CHECK(E.find("test.dd:1:" + std::to_string(Col) +
               ": error: unexpected '='") != std::string::npos);
  // The line is cut to 150 bytes, with "..." where it was cut, and the
  // caret still stands under the '='.
  size_t Shown = E.find("\n  ...") + 3;
  REQUIRE(Shown != std::string::npos + 3);
  size_t ShownEnd = E.find('\n', Shown);
  std::string ShownLine = E.substr(Shown, ShownEnd - Shown);
  CHECK(ShownLine.size() <= 150 + 6);
  size_t CaretEnd = E.find('\n', ShownEnd + 1);
  std::string Caret = E.substr(ShownEnd + 1, CaretEnd - ShownEnd - 1);
  REQUIRE(Caret.back() == '^');
  CHECK(ShownLine[Caret.size() - 3] == '='); // both lines are indented by 2
}
