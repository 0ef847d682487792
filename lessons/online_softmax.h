// online_softmax.h: what lesson online_softmax returns, the key numbers it prints, so tests/lessons/ can
// assert them (the lesson itself: online_softmax.cpp).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace sf::lessons {

// The online softmax: a row read tile by tile, and a tiled causal attention against sf::attention.
struct OnlineSoftmaxResult {
  std::vector<double> running_max, running_sum;  // m and l after each tile
  std::vector<double> online_weights, softmax_weights;
  double weight_diff = 0;                            // max |online - softmax|
  std::vector<double> online_output;                 // acc / l (D = 2)
  double output_diff = 0;                            // against softmax(s) V
  double tiled_diff = 0;                             // tiled causal attention against sf::attention
  double engine_tiled_diff = 0;                      // the engine's tiled kernel against its stored one (output, grads)
  int64_t stored_entries = 0;                        // of the P sf::attention keeps
  std::vector<double> matrix_bytes, row_stat_bytes;  // T x T against 2 T floats, T = 256 ... 32768
};
OnlineSoftmaxResult run_lesson_online_softmax(std::ostream& out);

}  // namespace sf::lessons
