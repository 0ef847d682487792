// attention.h: what lesson attention returns, the key numbers it prints, so tests/lessons/ can
// assert them (the lesson itself: attention.cpp).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace sf::lessons {

// Attention by hand (the worked example).
struct AttentionResult {
  std::vector<double> scores;                  // 0.36, 0.81, 1.01
  std::vector<double> scaled;                  // 0.18, 0.405, 0.505
  std::vector<double> weights;                 // about 0.275, 0.344, 0.381
  std::vector<double> output;                  // about 0.334, 0.483, 0.577, 0.321
  std::vector<double> output_rounded_weights;  // 0.3338, 0.4826, 0.5768, 0.3206
  std::vector<double> causal_weights;          // (3, 3) after the causal mask
  std::vector<double> padding_weights;         // (4, 4) with the last key padded
  std::vector<double> fused_output;            // sf::attention's output for the same q, k, v (3, 4)
  std::vector<double> hand_output;             // softmax(QK^T/2 + mask) V written with ops (3, 4)
  std::vector<double> all_masked_row;          // softmax of a row that is entirely -inf
  std::vector<double> sentence_weights;        // (5, 5): 我 喜欢 吃 红 苹果 with learned projections, causal
};
AttentionResult run_lesson_attention(std::ostream& out);

}  // namespace sf::lessons
