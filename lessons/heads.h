// heads.h: what lesson heads returns, the key numbers it prints, so tests/lessons/ can
// assert them (the lesson itself: heads.cpp).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "lessons/common/cost_common.h"

#include "train/inspect.h"
#include "lessons/inside.h"  // HeadScore: the scores of lesson inside

namespace sf::lessons {

// How many heads: one width (128) as 1, 2, 4 and 8 heads, each trained from two seeds alike;
// val loss and the heads' scores.
struct HeadsOptions {
  SmallTraining training;
  std::vector<int64_t> heads = {1, 2, 4, 8};
  std::vector<int64_t> seeds = {1337, 1338};  // initial weights and batches
  int64_t val_windows = 256;                  // for the val loss
  int64_t role_windows = 16;                  // val windows the scores are averaged over
  int64_t induction_sequences = 8;            // repeated random sequences for the induction score
  std::string prompt = "ROMEO:\nWhat light is this?";
};
struct HeadsResult {
  std::vector<int64_t> params;                              // the same for every head count
  std::vector<std::vector<double>> val_loss;                // [model][seed]
  std::vector<std::vector<std::vector<HeadScore>>> scores;  // [model][seed][layer * heads + head]
  HeadScoreBaselines even;
  int64_t prompt_length = 0;
};
HeadsResult run_lesson_heads(std::ostream& out, const HeadsOptions& options);
HeadsResult run_lesson_heads(std::ostream& out);

}  // namespace sf::lessons
