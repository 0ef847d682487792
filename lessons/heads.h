// heads.h: what lesson heads returns, the key numbers it prints, so tests/lessons/ can
// assert them (the lesson itself: heads.cpp).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "lessons/common/cost_common.h"

#include "experiments/inspect.h"

namespace sf::lessons {

// How many heads: one width (128) as 1, 2, 4 and 8 heads, trained alike; val loss and head roles.
struct HeadsOptions {
  SmallTraining training;
  std::vector<int64_t> heads = {1, 2, 4, 8};
  int64_t val_windows = 256;  // for the val loss
  int64_t role_windows = 16;  // val windows the head roles are averaged over
  std::string prompt = "ROMEO:\nWhat light is this?";
};
struct HeadsResult {
  std::vector<int64_t> params;  // the same for every head count
  std::vector<double> val_loss;
  std::vector<std::vector<HeadRole>> roles;    // per model: per layer and head
  std::vector<double> best_prev, min_entropy;  // per model, over its heads
  int64_t prompt_length = 0;
};
HeadsResult run_lesson_heads(std::ostream& out, const HeadsOptions& options);
HeadsResult run_lesson_heads(std::ostream& out);

}  // namespace sf::lessons
