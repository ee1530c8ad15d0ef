#include "trace/Numbers.h"
#include "support/Checked.h"
#include "support/Format.h"
#include "support/Units.h"

#include <doctest/doctest.h>

#include <limits>
#include <string>

using dd::trace::parseMicrosAsNanos;
using dd::trace::parseScaledDecimal;

TEST_CASE("microseconds become exact nanoseconds") {
  // A double cannot hold this value exactly; the parser must.
  CHECK(parseMicrosAsNanos("4458676522690.655") == 4458676522690655);
  CHECK(parseMicrosAsNanos("1712195495519689.0") == 1712195495519689000);
  CHECK(parseMicrosAsNanos("1623142623460111") == 1623142623460111000);
  // 19 digits: epoch microseconds with three decimals (HTA traces).
  CHECK(parseMicrosAsNanos("1712195497714866.810") == 1712195497714866810);
  CHECK(parseMicrosAsNanos("-1712195497714866.810") == -1712195497714866810);
  CHECK(parseScaledDecimal("9999999999999999999", 0) == std::nullopt);
  CHECK(parseScaledDecimal("0.000000000000000005", 0) == 0);
  CHECK(parseScaledDecimal("0.500000000000000000", 0) == 1);
  CHECK(parseMicrosAsNanos("0.001") == 1);
  CHECK(parseMicrosAsNanos("12") == 12000);
  CHECK(parseMicrosAsNanos("-3.5") == -3500);
}

TEST_CASE("digits below a nanosecond round half away from zero") {
  CHECK(parseMicrosAsNanos("1.0004") == 1000);
  CHECK(parseMicrosAsNanos("1.0005") == 1001);
  CHECK(parseMicrosAsNanos("-1.0005") == -1001);
  CHECK(parseMicrosAsNanos("0.0000001") == 0);
}

TEST_CASE("exponents, quotes and blanks") {
  CHECK(parseMicrosAsNanos("1e3") == 1000000);
  CHECK(parseMicrosAsNanos("1.5E-3") == 2); // 1.5 ns rounds up
  CHECK(parseMicrosAsNanos("\"25.5\"") == 25500);
  CHECK(parseMicrosAsNanos("  7 \n") == 7000);
  CHECK(parseScaledDecimal("42", 0) == 42);
}

TEST_CASE("malformed and out-of-range text is refused") {
  CHECK_FALSE(parseMicrosAsNanos(""));
  CHECK_FALSE(parseMicrosAsNanos("abc"));
  CHECK_FALSE(parseMicrosAsNanos("1.2.3"));
  CHECK_FALSE(parseMicrosAsNanos("1e"));
  CHECK_FALSE(parseMicrosAsNanos("12x"));
  // 10159970886766084423 us does not fit in int64 ns.
  CHECK_FALSE(parseMicrosAsNanos("10159970886766084423"));
  CHECK_FALSE(parseScaledDecimal("10159970886766084423", 0));
  CHECK(parseScaledDecimal("9223372036854775807", 0) == INT64_MAX);
}

namespace {
/// A small deterministic generator for the randomised checks.
struct XorShift {
  uint64_t State;
  uint64_t operator()() {
    State ^= State << 13;
    State ^= State >> 7;
    State ^= State << 17;
    return State;
  }
};
} // namespace

TEST_CASE("plain decimals parse as the general parser does") {
  // Plain text takes a fast path; the same text in quotes takes the
  // general one. Both must agree on every value, rounding included.
  XorShift Next{88172645463325252ull};
  for (int I = 0; I < 20000; ++I) {
    std::string S = (Next() % 4 == 0) ? "-" : "";
    // Up to 19 digits before the point (the fast path's limit) and more.
    S += std::to_string(Next() % 10000000000000000000ull >> (Next() % 64));
    if (Next() % 3) {
      S += ".";
      for (uint64_t D = Next() % 9; D > 0; --D)
        S += char('0' + Next() % 10);
    }
    for (int Scale : {0, 3, 9}) {
      CAPTURE(S);
      CAPTURE(Scale);
      CHECK(parseScaledDecimal(S, Scale) ==
            parseScaledDecimal("\"" + S + "\"", Scale));
    }
  }
}

TEST_CASE("digits are read eight at a time without changing any value") {
  // The fast path reads runs of eight digits at once: runs that end, or
  // hold something else, at every position of an eight-byte block.
  CHECK(parseScaledDecimal("12345678", 0) == 12345678);
  CHECK(parseScaledDecimal("1234567890123456", 0) == 1234567890123456);
  CHECK(parseScaledDecimal("1712195497714866.810", 3) == 1712195497714866810);
  CHECK(parseScaledDecimal("0000000000000000001", 0) == 1);
  CHECK(parseScaledDecimal("99999999.99999999", 8) == 9999999999999999);
  CHECK_FALSE(parseScaledDecimal("12345678901234567890", 0)); // 20 digits
  XorShift Next{2463534242ull};
  // Not blanks or quotes: the general parser trims those only outside
  // quotes, so the two readings would differ for a reason of their own.
  const std::string Odd = "/:.e-+x";
  for (int I = 0; I < 20000; ++I) {
    std::string S;
    for (uint64_t N = 1 + Next() % 24; N > 0; --N)
      S += char('0' + Next() % 10);
    if (Next() % 2)
      S[Next() % S.size()] = Odd[Next() % Odd.size()];
    CAPTURE(S);
    CHECK(parseScaledDecimal(S, 3) == parseScaledDecimal("\"" + S + "\"", 3));
  }
}

TEST_CASE("command-line quantities: a number and a unit of the dimension") {
  using dd::Dim;
  CHECK(dd::parseQuantity("35.5ms", Dim::duration()) ==
        doctest::Approx(35.5e6));
  CHECK(dd::parseQuantity("2us", Dim::duration()) == doctest::Approx(2000));
  CHECK(dd::parseQuantity("16GiB", Dim::bytes()) ==
        doctest::Approx(16.0 * 1024 * 1024 * 1024));
  CHECK_FALSE(dd::parseQuantity("35.5", Dim::duration()));
  CHECK_FALSE(dd::parseQuantity("3GB", Dim::duration()));
  CHECK_FALSE(dd::parseQuantity("-1ms", Dim::duration()));
  CHECK_FALSE(dd::parseQuantity("ms", Dim::duration()));
  CHECK_FALSE(dd::parseQuantity("5 ms", Dim::duration()));
}

TEST_CASE("one reader of quantities: what it takes and what it refuses") {
  using dd::Dim;
  struct Row {
    const char *Text;
    bool Ok;
    double Value; ///< base units
    Dim D;
  };
  const Row Rows[] = {
      {"10_000Mbps", true, 1.25, Dim::bandwidth()}, // 10 Gb/s = 1.25 B/ns
      {"16_000MB", true, 16e9, Dim::bytes()},
      {"1e3us", true, 1e6, Dim::duration()},
      {"1.5E-3s", true, 1.5e6, Dim::duration()},
      {"2KiB", true, 2048, Dim::bytes()},
      {"0", true, 0, Dim()},
      {"-5ms", true, -5e6, Dim::duration()},
      {"+7", true, 7, Dim()},
      {"0x10GB", false, 0, Dim()}, // no hexadecimal
      {"1__0", false, 0, Dim()},   // one underscore between digits
      {"10_", false, 0, Dim()},
      {"_10", false, 0, Dim()},
      {".5ms", false, 0, Dim()}, // a digit first, as in .dd
      {"5.ms", false, 0, Dim()},
      {"16 GB", false, 0, Dim()},
      {"1e400", false, 0, Dim()}, // finite only
      {"5xyz", false, 0, Dim()},
      {"", false, 0, Dim()},
      {"ms", false, 0, Dim()},
  };
  for (const Row &R : Rows) {
    CAPTURE(R.Text);
    std::string Why;
    auto Q = dd::readQuantity(R.Text, &Why);
    CHECK(Q.has_value() == R.Ok);
    if (Q && R.Ok) {
      CHECK(Q->Value == doctest::Approx(R.Value));
      CHECK(Q->D == R.D);
    }
    if (!R.Ok)
      CHECK_FALSE(Why.empty());
  }
  // A .dd literal's minus is an operator.
  CHECK_FALSE(dd::readQuantity("-5ms", nullptr, /*AllowSign=*/false));
  // On the command line: 0 without a unit in any dimension, not other
  // plain numbers; underscores as in .dd; no hexadecimal.
  CHECK(dd::parseQuantity("0", Dim::duration()) == 0);
  CHECK(dd::parseQuantity("16_000MB", Dim::bytes()) == doctest::Approx(16e9));
  CHECK_FALSE(dd::parseQuantity("0x10GB", Dim::bytes()));
  CHECK_FALSE(dd::parseQuantity("7", Dim::duration()));
}

TEST_CASE("shorten cuts long names for tables, never inside a character") {
  CHECK(dd::shorten("conv2d", 10) == "conv2d");
  CHECK(dd::shorten("abcdefghijkl", 10) == "abcdefg...");
  // "é" is two bytes (C3 A9): a cut that would fall between them backs off.
  std::string E = "ab\xC3\xA9\xC3\xA9xyz";
  CHECK(dd::shorten(E, 6) == "ab...");
  CHECK(dd::shorten(E, 7) == "ab\xC3\xA9...");
  // A three-byte character (the euro sign, E2 82 AC) is kept whole or left out.
  std::string Euro = "\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC";
  for (size_t Max = 3; Max < Euro.size(); ++Max) {
    std::string Out = dd::shorten(Euro, Max);
    CAPTURE(Max);
    CHECK((Out.size() - 3) % 3 == 0);
    CHECK(Out.size() <= Max);
  }
}

TEST_CASE("JSON strings: escaped, and invalid UTF-8 replaced") {
  using dd::jsonEscape;
  CHECK(jsonEscape("conv2d") == "conv2d");
  CHECK(jsonEscape("") == "");
  CHECK(jsonEscape("a\"b\\c") == "a\\\"b\\\\c");
  CHECK(jsonEscape("l1\nl2\r\tx") == "l1\\nl2\\r\\tx");
  CHECK(jsonEscape(std::string_view("\0\x01\x1f\x7f", 4)) ==
        "\\u0000\\u0001\\u001f\x7f");
  // Valid UTF-8 of every length passes through: é, €, U+10FFFF.
  CHECK(jsonEscape("\xc3\xa9 \xe2\x82\xac \xf4\x8f\xbf\xbf") ==
        "\xc3\xa9 \xe2\x82\xac \xf4\x8f\xbf\xbf");
  // Each byte that starts no valid sequence becomes U+FFFD, and the
  // following bytes are read afresh.
  CHECK(jsonEscape("ok \xff bad") == "ok \\ufffd bad");
  CHECK(jsonEscape("\x80x") == "\\ufffdx");            // stray continuation
  CHECK(jsonEscape("\xe2\x82") == "\\ufffd\\ufffd");   // truncated at end
  CHECK(jsonEscape("\xe2\x82x") == "\\ufffd\\ufffdx"); // truncated inside
  CHECK(jsonEscape("\xc0\xaf") == "\\ufffd\\ufffd");   // overlong '/'
  CHECK(jsonEscape("\xe0\x80\xaf") == "\\ufffd\\ufffd\\ufffd"); // overlong
  CHECK(jsonEscape("\xed\xa0\x80") == "\\ufffd\\ufffd\\ufffd"); // surrogate
  CHECK(jsonEscape("\xf4\x90\x80\x80") ==                       // > U+10FFFF
        "\\ufffd\\ufffd\\ufffd\\ufffd");
  // The writer's keys and values go through the same escaper.
  std::string Out;
  dd::JsonWriter W(Out);
  W.beginObject().field("k\"\xff", "v\n\xc3").endObject();
  CHECK(Out == "{\"k\\\"\\ufffd\":\"v\\n\\ufffd\"}");
}

TEST_CASE("JSON microseconds: three decimals, exact to the nanosecond") {
  using dd::formatMicros;
  CHECK(formatMicros(0) == "0.000");
  CHECK(formatMicros(1) == "0.001");
  CHECK(formatMicros(999) == "0.999");
  CHECK(formatMicros(1000) == "1.000");
  CHECK(formatMicros(12345) == "12.345");
  CHECK(formatMicros(-1) == "-0.001");
  CHECK(formatMicros(-1500) == "-1.500");
  CHECK(formatMicros(1712195497714866810) == "1712195497714866.810");
  CHECK(formatMicros(INT64_MAX) == "9223372036854775.807");
  CHECK(formatMicros(INT64_MIN) == "-9223372036854775.808");
  // What is written reads back as the same nanoseconds.
  for (int64_t Ns : {int64_t(0), int64_t(1), int64_t(-999),
                     int64_t(4458676522690655), int64_t(-1712195497714866810)})
    CHECK(parseMicrosAsNanos(formatMicros(Ns)) == Ns);
  std::string Out;
  dd::JsonWriter W(Out);
  W.beginArray().micros(-2).micros(3000).endArray();
  CHECK(Out == "[-0.002,3.000]");
}

TEST_CASE("JSON writer: breakLine puts the next item on its own line") {
  std::string Out;
  dd::JsonWriter W(Out);
  W.beginObject().field("a", 1).breakLine();
  W.key("b").beginArray();
  for (int I = 0; I < 2; ++I)
    W.breakLine(2).beginObject().field("i", I).endObject();
  W.endArray().breakLine().key("c").beginArray().breakLine().endArray();
  W.endObject();
  CHECK(Out == "{\"a\":1,\n\"b\":[\n  {\"i\":0},\n  {\"i\":1}],\n\"c\":[\n]}");
}

TEST_CASE("sums of bounded quantities saturate instead of wrapping") {
  const int64_t Max = std::numeric_limits<int64_t>::max();
  const int64_t Min = std::numeric_limits<int64_t>::min();
  CHECK(dd::addSaturating(1, 2) == 3);
  CHECK(dd::addSaturating(Max, 1) == Max);
  CHECK(dd::addSaturating(Max - 5, 5) == Max);
  CHECK(dd::addSaturating(Min, -1) == Min);
  CHECK(dd::addSaturating(Max, Min) == -1);
  CHECK(dd::subSaturating(Min, 1) == Min);
  CHECK(dd::subSaturating(Max, -1) == Max);
  CHECK(dd::subSaturating(0, Min) == Max);
  CHECK(dd::subSaturating(-3, 4) == -7);
}

TEST_CASE("JSON writer: the same document as values, with no text") {
  // One writing, run into text and into values: every kind, nesting, keys
  // in order, a non-finite double as null, breakLine ignored.
  auto Write = [](dd::JsonWriter &W) {
    W.beginObject().field("name", "conv\xff").field("n", int64_t(-3));
    W.field("u", uint64_t(1) << 63).field("x", 0.1).field("ok", true);
    W.key("inf").value(std::numeric_limits<double>::infinity());
    W.key("none").null().breakLine(2);
    W.key("list").beginArray().micros(12345).beginObject().endObject();
    W.beginArray().endArray().endArray().endObject();
  };
  std::string Text;
  dd::JsonWriter T(Text);
  Write(T);
  CHECK(Text == "{\"name\":\"conv\\ufffd\",\"n\":-3,\"u\":9223372036854775808,"
                "\"x\":0.1,\"ok\":true,\"inf\":null,\"none\":null,\n  "
                "\"list\":[12.345,{},[]]}");
  using K = dd::JsonValue::Kind;
  dd::JsonValue V;
  dd::JsonWriter W(V);
  Write(W);
  REQUIRE(V.K == K::Object);
  REQUIRE(V.Items.size() == 8);
  REQUIRE(V.Keys.size() == 8);
  CHECK(V.Keys[0] == "name");
  CHECK(V.Items[0].String == "conv\xff"); // bytes: escaped in text
  CHECK(V.Items[1].K == K::Int);
  CHECK(V.Items[1].Int == -3);
  CHECK(V.Items[2].K == K::UInt);
  CHECK(V.Items[2].UInt == uint64_t(1) << 63);
  CHECK(V.Items[3].Double == 0.1);
  CHECK(V.Items[4].Bool);
  CHECK(V.Items[5].K == K::Null);
  CHECK(V.Items[6].K == K::Null);
  const dd::JsonValue &L = V.Items[7];
  CHECK(V.Keys[7] == "list");
  REQUIRE(L.Items.size() == 3);
  // micros(): the double the text's "12.345" reads back as.
  CHECK(L.Items[0].Double == 12.345);
  CHECK(L.Items[1].K == K::Object);
  CHECK(L.Items[1].Items.empty());
  CHECK(L.Items[1].Keys.empty());
  CHECK(L.Items[2].K == K::Array);
  CHECK(L.Items[2].Items.empty());
  // A document after another replaces it.
  dd::JsonWriter Again(V);
  Again.value(int64_t(7));
  CHECK(V.K == K::Int);
  CHECK(V.Items.empty());
}
