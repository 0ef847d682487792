// attention_cost.h: what lesson attention_cost returns, the key numbers it prints, so tests/lessons/ can
// assert them (the lesson itself: attention_cost.cpp).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace sf::lessons {

// What attention costs: the T x T score matrix counted, and attention's forward + backward
// measured against the linear layers' at one width.
struct AttentionCostOptions {
  std::vector<int64_t> lengths = {64, 128, 256, 512, 1024, 2048, 4096};  // T
  int64_t n_embd = 128, n_head = 4;                                      // the default model's width
  int64_t work_per_length = 1 << 22;                                     // repeats at T: this / T^2, at least 1 ...
  int64_t max_repeats = 20;                                              // ... and at most this
};
struct AttentionCostResult {
  int64_t entries_2048 = 0, entries_32768 = 0;  // T^2
  double gpt2_probabilities_bytes_2048 = 0;     // 12 layers x 12 heads x 2048^2 x 4 bytes
  std::vector<double> count_ratio;              // attention / linear multiply-adds, per T
  int64_t count_crossover = 0;                  // T where the counts are equal (12 C - 1)
  std::vector<double> p_bytes, linear_bytes;    // kept for backward, per T
  std::vector<double> attention_ms, linear_ms;  // measured forward + backward, per T
  int64_t measured_crossover = 0;               // first T where attention took longer (0: none)
  // Step 5, one GPT step at the default width: bytes the graph keeps for backward without and
  // with activation recomputation, and the multiply-adds recomputation adds to the step.
  double saved_bytes = 0, saved_bytes_recompute = 0;
  double recompute_extra_work = 0;  // extra multiply-adds / the step's (forward + backward)
};
// A slow lesson (it measures for about a minute), once per process for given options.
AttentionCostResult run_lesson_attention_cost(std::ostream& out, const AttentionCostOptions& options);
AttentionCostResult run_lesson_attention_cost(std::ostream& out);

}  // namespace sf::lessons
