// number_options.h: validators for the numeric options of the CLI, so that a bad value gets one
// clear line naming the option, the value and what would be valid ("--iters: expected a whole
// number, got abc"), instead of CLI11's "Value abc not in range 0 to 1000000".
#pragma once
#include <cmath>
#include <cstdint>
#include <exception>
#include <string>

#include <CLI/CLI.hpp>

namespace sf {

// A whole number in [lo, hi], in base 10; CLI11 prefixes the option's name to the message. Give it
// with ->transform(), not ->check(): it rewrites the text in plain decimal for CLI11's conversion.
inline CLI::Validator whole_number_in(int64_t lo, int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        const std::string range = "from " + std::to_string(lo) + " to " + std::to_string(hi);
        long long v = 0;
        try {
          size_t used = 0;
          v = std::stoll(text, &used);
          if (used != text.size()) return "expected a whole number " + range + ", got " + text;
        } catch (const std::out_of_range&) {
          return "must be a whole number " + range + ", got " + text;
        } catch (const std::exception&) { return "expected a whole number " + range + ", got " + text; }
        if (v < lo || v > hi) return "must be a whole number " + range + ", got " + text;
        text = std::to_string(v);  // what CLI11 converts next: "010" is 10 here, but 8 (octal) to CLI11
        return "";
      },
      "", "whole_number");
}

// A finite number in [lo, hi]. (CLI11's Range lets NaN through: every comparison with NaN is false.)
inline CLI::Validator finite_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        double v = 0;
        try {
          size_t used = 0;
          v = std::stod(text, &used);
          if (used != text.size()) return "expected a number, got " + text;
        } catch (const std::exception&) { return "expected a number, got " + text; }
        if (!std::isfinite(v) || v < lo || v > hi)
          return "must be a finite number in [" + CLI::detail::to_string(lo) + ", " + CLI::detail::to_string(hi) +
                 "], got " + text;
        return "";
      },
      "", "finite");
}

}  // namespace sf
