// Exercise 15 (lesson 13 training): the learning rate of warmup + cosine decay.
//
// The rate climbs linearly for W steps (Adam's early updates are noisy), then falls along half a
// cosine to min_lr at step S, and stays there.
//
//   input:   schedule {lr (peak), min_lr, warmup_steps W, decay_steps S > W}, step (0 = first)
//   formula: step < W:  lr (step + 1) / (W + 1)          (starts above zero, like the framework)
//            else:      q = min(1, (step - W) / (S - W))
//                       min_lr + (lr - min_lr) (1 + cos(pi q)) / 2
//
// Derive it on paper first. Stuck? scratchformer exercise hint 15 (1 the idea), then
// hint 15 2 (the formula) and hint 15 3 (the code); a failing check also gives a hint.
// Check it: scratchformer exercise check 15   (or ./run.sh exercise 15)
// 中文说明：exercises/zh/15_warmup_cosine.md（或 scratchformer exercise show 15 --lang zh）
#include <algorithm>
#include <cmath>
#include <numbers>

#include "exercises/exercise.h"

namespace sf::exercise {

double warmup_cosine_lr(const CosineSchedule& schedule, int64_t step) {
  // TODO: return the learning rate of update `step`.
  todo("warmup_cosine_lr in exercises/15_warmup_cosine.cpp");
}

}  // namespace sf::exercise
