// windows.h: what lesson windows returns, the key numbers it prints, so tests/lessons/ can
// assert them (the lesson itself: windows.cpp).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "lessons/common/cost_common.h"

namespace sf::lessons {

// Sliding windows: one GPT trained with model.window 4, 8, 16 and full attention.
struct WindowsOptions {
  SmallTraining training;                        // the budget of every model
  std::vector<int64_t> windows = {4, 8, 16, 0};  // 0: full causal attention
  int64_t val_windows = 256;                     // val windows of block_size the loss averages
  int64_t timed_length = 1024;                   // T of the timed attention
};
struct WindowsResult {
  std::vector<double> keys_per_query;       // at the training length
  std::vector<double> keys_per_query_long;  // at timed_length
  std::vector<double> val_loss;
  std::vector<double> attention_ms;  // measured forward + backward
};
WindowsResult run_lesson_windows(std::ostream& out, const WindowsOptions& options);
WindowsResult run_lesson_windows(std::ostream& out);

}  // namespace sf::lessons
