// multihead.h: what lesson multihead returns, the key numbers it prints, so tests/lessons/ can
// assert them (the lesson itself: multihead.cpp).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace sf::lessons {

// Multi-head attention.
struct MultiHeadResult {
  std::vector<std::vector<int64_t>> shapes;  // x, qkv, q, k, v, y, merged, out
  double steps_vs_module;                    // max |steps - attn.forward(x)|
  std::vector<double> weights;               // (1, H, T, T) attention weights
  int64_t params_no_bias, params_bias;       // d_model 768, 12 heads
};
MultiHeadResult run_lesson_multihead(std::ostream& out);

}  // namespace sf::lessons
