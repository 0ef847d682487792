// training.h: what lesson training returns, the key numbers it prints, so tests/lessons/ can
// assert them (the lesson itself: training.cpp).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace sf::lessons {

// The training loop.
struct TrainingResult {
  std::vector<double> cosine;                          // lr_at(cosine) at steps 0 1 4 9 10 25 50 75 99 100 150
  std::vector<double> noam;                            // lr_at(noam) at steps 0 1000 2000 3999 8000 16000 64000
  std::vector<double> losses, norms;                   // 40 training steps: loss and pre-clip gradient norm
  double spike_norm, clipped_norm;                     // the surprising batch: before and after clipping
  std::vector<double> adamw_by_hand, adamw_optimizer;  // one step, 4 weights
};
TrainingResult run_lesson_training(std::ostream& out);

}  // namespace sf::lessons
