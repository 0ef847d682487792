// extrapolation.h: what lesson extrapolation returns, the key numbers it prints, so tests/lessons/ can
// assert them (the lesson itself: extrapolation.cpp).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "lessons/common/cost_common.h"

namespace sf::lessons {

// Positions past the training length: learned, sinusoidal, RoPE and ALiBi GPTs trained on 64
// and scored at every position up to 256.
struct ExtrapolationOptions {
  SmallTraining training;     // block_size: the training windows (64)
  int64_t long_length = 256;  // the windows they are scored on
  int64_t eval_windows = 64;  // val windows of long_length
  double tolerance = 0.1;     // "extrapolates": loss at 128-255 <= loss at 0-63 + this
};
struct ExtrapolationResult {
  std::string learned_error;                  // the engine's message past a learned table
  std::vector<std::string> names;             // learned (256 rows), sinusoidal, rope, alibi
  std::vector<double> in_range, middle, far;  // mean loss at 0-63, 64-127, 128-255
  std::vector<bool> extrapolates;
  std::vector<std::vector<double>> per_position;  // per model, positions 0 .. long_length-1
};
ExtrapolationResult run_lesson_extrapolation(std::ostream& out, const ExtrapolationOptions& options);
ExtrapolationResult run_lesson_extrapolation(std::ostream& out);

}  // namespace sf::lessons
