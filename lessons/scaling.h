// scaling.h: what lesson scaling returns, the key numbers it prints, so tests/lessons/ can
// assert them (the lesson itself: scaling.cpp).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace sf::lessons {

// Why divide by sqrt(d_k): softmax over random scores with and without the scale, per d_k.
struct ScalingResult {
  int64_t rows = 0, keys = 0;
  double uniform_entropy = 0;                         // ln keys
  std::vector<int64_t> d_k;                           // 4 ... 1024
  std::vector<double> score_std, scaled_score_std;    // of q.k and q.k / sqrt(d_k)
  std::vector<double> max_weight, scaled_max_weight;  // mean largest weight per row
  std::vector<double> entropy, scaled_entropy;        // mean entropy per row (nats)
  std::vector<double> grad_norm, scaled_grad_norm;    // mean |d scores| per row
  std::vector<double> saturated, scaled_saturated;    // share of rows with a weight above 0.99
  double saturated_jacobian_max = 0;                  // of softmax([8, 1, 0, -1])
};
ScalingResult run_lesson_scaling(std::ostream& out);

}  // namespace sf::lessons
