// json_int (autograd/json_int.h): the integer, or nothing, never a cast that wraps or is undefined.
#include <doctest/doctest.h>

#include <optional>

#include "autograd/json_int.h"

using namespace sf;
using json = nlohmann::json;

TEST_CASE("json_int takes an integer only when it is one and lies in the range") {
  // As parsed (a non-negative integer is unsigned there) and as built in memory (signed).
  CHECK(json_int(json::parse("42")) == 42);
  CHECK(json_int(json(int64_t{42})) == 42);
  CHECK(json_int(json::parse("-7")) == -7);
  CHECK(json_int(json::parse("9223372036854775807")) == INT64_MAX);
  CHECK(json_int(json::parse("-9223372036854775808")) == INT64_MIN);
  // Above INT64_MAX: get<int64_t>() would wrap these to -9223372036854775808 and -1.
  CHECK(json_int(json::parse("9223372036854775808")) == std::nullopt);
  CHECK(json_int(json::parse("18446744073709551615")) == std::nullopt);
  // Not integers: a float, even a whole one (a cast of 1e30 is undefined), a bool, a string, null.
  for (const char* text : {"1e30", "2.0", "0.5", "true", "\"3\"", "null", "[1]", "{}"}) {
    CAPTURE(text);
    CHECK(json_int(json::parse(text)) == std::nullopt);
  }
  // The range is inclusive at both ends, for both kinds of integer.
  CHECK(json_int(json::parse("0"), 0, 5) == 0);
  CHECK(json_int(json::parse("5"), 0, 5) == 5);
  CHECK(json_int(json::parse("6"), 0, 5) == std::nullopt);
  CHECK(json_int(json(int64_t{6}), 0, 5) == std::nullopt);
  CHECK(json_int(json::parse("-1"), 0, 5) == std::nullopt);
  CHECK(json_int(json::parse("2147483647"), INT32_MIN, INT32_MAX) == INT32_MAX);
  CHECK(json_int(json::parse("2147483648"), INT32_MIN, INT32_MAX) == std::nullopt);
  CHECK(json_int(json::parse("-2147483649"), INT32_MIN, INT32_MAX) == std::nullopt);
}
