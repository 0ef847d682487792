// encoder.h: what lesson encoder returns, the key numbers it prints, so tests/lessons/ can
// assert them (the lesson itself: encoder.cpp).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace sf::lessons {

// Encoder block.
struct EncoderResult {
  double by_hand_vs_block;    // max |residual steps by hand - block.forward|
  std::vector<double> norms;  // mean token norms: x, attn, x+attn, ffn, out
  double grad_upstream, grad_with_residual, grad_sublayers_only, grad_without_residual;
  std::vector<double> stack_norms;  // 6 blocks: after attention, after FFN, ...
};
EncoderResult run_lesson_encoder(std::ostream& out);

}  // namespace sf::lessons
