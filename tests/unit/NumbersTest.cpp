#include "trace/Numbers.h"

#include <doctest/doctest.h>

using dd::trace::parseMicrosAsNanos;
using dd::trace::parseScaledDecimal;

TEST_CASE("microseconds become exact nanoseconds") {
  // A double cannot hold this value exactly; the parser must.
  CHECK(parseMicrosAsNanos("4458676522690.655") == 4458676522690655);
  CHECK(parseMicrosAsNanos("1712195495519689.0") == 1712195495519689000);
  CHECK(parseMicrosAsNanos("1623142623460111") == 1623142623460111000);
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
