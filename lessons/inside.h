// inside.h: what lesson inside returns, the key numbers it prints, so tests/lessons/ can
// assert them (the lesson itself: inside.cpp).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "experiments/inspect.h"

namespace sf::lessons {

// Looking inside a trained transformer: the default GPT's heads and the reverse model's
// cross-attention, measured with experiments/inspect.h.
struct InsideOptions {
  int64_t gpt_steps = 1500;     // configs/default.json's own budget
  int64_t reverse_steps = 600;  // of configs/reverse.json's 1500, to keep the lesson to minutes
  int64_t role_windows = 16;    // val windows the head roles are averaged over
  bool full_val = true;         // the GPT's val loss over the whole val split (false: 20 batches)
  int64_t eval_iters = 0;       // batches per loss estimate (0: each config's own, 20 and 10)
};
struct InsideResult {
  int64_t gpt_steps = 0, reverse_steps = 0;
  double gpt_val_loss = 0;       // the whole val split
  std::vector<HeadRole> roles;   // per layer and head, mean over the windows
  double uniform_entropy = 0;    // what a head spreading evenly over the past would have
  AttentionMaps prompt_maps;     // the default model over the lesson's prompt
  double reverse_accuracy = -1;  // exact-match on the held-out sequences
  CrossAttentionReport cross;    // the share on the mirrored position, per decoder layer
};
InsideResult run_lesson_inside(std::ostream& out, const InsideOptions& options);
InsideResult run_lesson_inside(std::ostream& out);

}  // namespace sf::lessons
