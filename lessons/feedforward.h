// feedforward.h: what lesson feedforward returns, the key numbers it prints, so tests/lessons/ can
// assert them (the lesson itself: feedforward.cpp).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace sf::lessons {

// Feed-forward, GELU versus ReLU.
struct FeedForwardResult {
  std::vector<double> xs, relu, gelu, gelu_tanh, drelu, dgelu;  // the table
  double tanh_approx_max_error;                                 // max |gelu - gelu_tanh| on [-6, 6]
  double dead_relu_fraction;                                    // hidden units with zero ReLU gradient on the batch
  double zero_gelu_grad_fraction;                               // hidden units with zero GELU gradient (none)
  int64_t params_768;                                           // FFN parameters for C = 768, hidden 3072, with biases
  std::vector<int64_t> shapes;  // x, hidden, out shapes flattened: (T, C), (T, 4C), (T, C)
};
FeedForwardResult run_lesson_feedforward(std::ostream& out);

}  // namespace sf::lessons
