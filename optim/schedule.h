// schedule.h: learning-rate schedules, pure functions of the step.
//
// Step indexing: step 0 is the first update. The training loop asks for lr_at(step) before the
// update of iteration `step` (0, 1, ..., total-1) and passes it to Optimizer::set_lr. The step is
// the iteration counter, so the schedule also advances over steps the loss scaler skips (see
// grad_scaler.h), exactly like calling torch's scheduler.step() after every iteration.
//
// With base rate lr, floor min_lr, W = warmup_steps, S = decay_steps (usually the run length):
//   warmup (all but noam), step < W:   lr * (step + 1) / (W + 1)     starts above zero
//   constant:                          lr
//   cosine, step >= W:                 min_lr + (lr - min_lr) * (1 + cos(pi * q)) / 2
//   linear, step >= W:                 lr + (min_lr - lr) * q
//        where q = min(1, (step - W) / (S - W)): lr at step W, min_lr from step S on
//   noam (inverse square root):        lr * d_model^-0.5 * min(s^-0.5, s * W^-1.5),  s = step + 1
//        lr is the "factor" of the Annotated Transformer; s = step + 1 avoids 0^-0.5 at step 0;
//        the peak lr * (d_model W)^-0.5 is reached at step W - 1; W = 0: lr * d_model^-0.5 * s^-0.5.
// warmup_steps 0 means no warmup.
#pragma once
#include <cstdint>
#include <string>

namespace sf {

enum class ScheduleKind { constant, cosine, linear, noam };

struct ScheduleOptions {
  ScheduleKind kind = ScheduleKind::constant;
  double lr = 1e-3;          // peak (or constant) rate; the factor for noam
  double min_lr = 0.0;       // floor reached by cosine / linear at decay_steps
  int64_t warmup_steps = 0;  // W
  int64_t decay_steps = 0;   // S: cosine / linear only, must be > W
  int64_t d_model = 512;     // noam only
};

// Throws ConfigError naming the field when the options are impossible (lr <= 0, min_lr > lr,
// negative warmup, decay_steps <= warmup_steps for cosine/linear, d_model <= 0 for noam).
void validate(const ScheduleOptions& options);

// The learning rate of update `step` (0 = first); step < 0 throws.
double lr_at(const ScheduleOptions& options, int64_t step);

}  // namespace sf
