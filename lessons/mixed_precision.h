// mixed_precision.h: what lesson mixed_precision returns, the key numbers it prints, so tests/lessons/ can
// assert them (the lesson itself: mixed_precision.cpp).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace sf::lessons {

// Mixed precision.
struct MixedPrecisionResult {
  std::vector<double> fp16, bf16;            // largest, smallest subnormal, spacing at 1
  double fp16_digits = 0, bf16_digits = 0;   // significant decimal digits: 11 and 8 bits * log10(2)
  double fp16_65520, fp16_1e8;               // rounding examples: inf, 0
  double grad_fp32, grad_fp16, grad_scaled;  // dL/dW[0,0]: float32, fp16, fp16 with scaling
  double zero_fraction_fp16, zero_fraction_scaled;
  std::vector<double> scales;   // S at each of the 3 overflow iterations
  std::vector<bool> stepped;    // whether each stepped
  std::vector<double> weights;  // W2[0, 0] after each
  int64_t steps_taken;
  double final_w;
};
MixedPrecisionResult run_lesson_mixed_precision(std::ostream& out);

}  // namespace sf::lessons
