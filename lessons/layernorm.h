// layernorm.h: what lesson layernorm returns, the key numbers it prints, so tests/lessons/ can
// assert them (the lesson itself: layernorm.cpp).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace sf::lessons {

// LayerNorm.
struct LayerNormResult {
  std::vector<double> means, stds;          // per token, before
  std::vector<double> out_means, out_stds;  // per token, after (0 and about 1)
  double scale_invariance;                  // max |LN(10 x) - LN(x)|
  double fused_vs_composed;                 // max |dx fused - dx composed from primitives|
  double grad_row_sum;                      // max |sum_c dx[t, c]|: the gradient has no mean component
  double grad_dot_xhat;                     // max |sum_c dx[t, c] * xhat[t, c]|
};
LayerNormResult run_lesson_layernorm(std::ostream& out);

}  // namespace sf::lessons
