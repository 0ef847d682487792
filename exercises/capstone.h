// capstone.h: `scratchformer exercise capstone`: a GPT trained on Tiny Shakespeare with your code.
//
// Every piece an exercise covers is yours: the embedding's backward (3), softmax (5, 6),
// cross-entropy (7), heads (10), LayerNorm (11, 12), GELU (13), the KV cache (14), the schedule
// (15), clipping (16), AdamW (17), attention (19), the block (20), the GPT forward (21), the step
// (22) and generate (23). They come in the one way the checker uses too: the functions of
// exercise.h, linked from exercises/*.cpp. The framework only supplies the tensors and their
// plain ops (matmul, reshape, ...), the data and the initial weights.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>

#include "exercises/check/checker.h"  // LessonLabel

namespace sf::exercise {

struct CapstoneOptions {
  int64_t steps = 1500;         // training steps (batches of 12 windows of 64 characters)
  int64_t eval_interval = 250;  // estimate the val loss every this many steps, and at the end
  int64_t eval_iters = 20;      // random val batches per estimate
  double target = 2.0;          // the val loss the run must reach
  int64_t sample_tokens = 300;  // characters sampled at the end (0: none)
  uint64_t seed = 1337;
};

struct CapstoneResult {
  int exit_code = 1;       // 0: trained and reached the target; 1: a piece is missing or failing, or not reached
  double val_loss = -1;    // the last estimate (-1 when training did not run)
  double seconds = 0;      // wall time of the training loop
  double cpu_seconds = 0;  // CPU time of the process (all threads) during the loop
  std::string sample;      // the generated text
};

// Checks the pieces (the first missing or failing one ends it with what to do), then trains and
// samples, printing progress to `out`. lesson_label names the lesson of a missing piece.
CapstoneResult run_capstone(const CapstoneOptions& options, std::ostream& out, const LessonLabel& lesson_label);

}  // namespace sf::exercise
