// json_int.h: an integer read from JSON only when it is one and fits.
//
// nlohmann's get<int64_t>() casts a number written as a float (1e30) with a plain cast, which is
// undefined behaviour out of range, and wraps an unsigned integer above INT64_MAX into a negative
// one; get<int32_t>() cuts the high bits off. Counts, steps and ids saved in checkpoints and
// tokenizer files are always written as integers, so every reader of them goes through here and
// refuses anything else by name.
//
// A parsed document holds a non-negative integer as unsigned and a negative one as signed, while a
// json built in memory (a state_dict() not yet written) holds what it was given: both are compared
// by value.
#pragma once
#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

namespace sf {

// j's value if j is an integer (not a float, not a bool) in [min, max]; otherwise nothing.
inline std::optional<int64_t> json_int(const nlohmann::json& j, int64_t min = INT64_MIN, int64_t max = INT64_MAX) {
  int64_t v = 0;
  if (j.is_number_unsigned()) {
    const uint64_t u = j.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    v = static_cast<int64_t>(u);
  } else if (j.is_number_integer()) {
    v = j.get<int64_t>();
  } else {
    return std::nullopt;
  }
  if (v < min || v > max) return std::nullopt;
  return v;
}

}  // namespace sf
