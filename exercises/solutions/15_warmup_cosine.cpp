// Reference solution of exercise 15 (spoiler): warmup + cosine schedule.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "exercises/exercise.h"

namespace sf::exercise {

double warmup_cosine_lr(const CosineSchedule& s, int64_t step) {
  if (step < s.warmup_steps) return s.lr * static_cast<double>(step + 1) / static_cast<double>(s.warmup_steps + 1);
  const double q =
      std::min(1.0, static_cast<double>(step - s.warmup_steps) / static_cast<double>(s.decay_steps - s.warmup_steps));
  return s.min_lr + (s.lr - s.min_lr) * (1.0 + std::cos(std::numbers::pi * q)) / 2.0;
}

}  // namespace sf::exercise
