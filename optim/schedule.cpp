// schedule.cpp: the learning-rate formulas documented in schedule.h.
#include "optim/schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "autograd/errors.h"

namespace sf {

void validate(const ScheduleOptions& o) {
  auto fail = [](const std::string& what) { throw ConfigError("schedule." + what); };
  if (!std::isfinite(o.lr) || o.lr <= 0) fail("lr must be > 0, got " + std::to_string(o.lr));
  if (o.warmup_steps < 0) fail("warmup_steps must be >= 0, got " + std::to_string(o.warmup_steps));
  if (o.kind == ScheduleKind::cosine || o.kind == ScheduleKind::linear) {
    if (!std::isfinite(o.min_lr) || o.min_lr < 0 || o.min_lr > o.lr)
      fail("min_lr must be in [0, lr], got " + std::to_string(o.min_lr));
    if (o.decay_steps <= o.warmup_steps)
      fail("decay_steps (" + std::to_string(o.decay_steps) + ") must be greater than warmup_steps (" +
           std::to_string(o.warmup_steps) + ")");
  }
  if (o.kind == ScheduleKind::noam && o.d_model <= 0)
    fail("d_model must be > 0 for noam, got " + std::to_string(o.d_model));
}

double lr_at(const ScheduleOptions& o, int64_t step) {
  validate(o);
  if (step < 0) throw ConfigError("schedule: step must be >= 0, got " + std::to_string(step));
  const double W = static_cast<double>(o.warmup_steps);
  if (o.kind == ScheduleKind::noam) {
    const double s = static_cast<double>(step) + 1;
    const double shape = o.warmup_steps == 0 ? 1 / std::sqrt(s) : std::min(1 / std::sqrt(s), s * std::pow(W, -1.5));
    return o.lr / std::sqrt(static_cast<double>(o.d_model)) * shape;
  }
  if (step < o.warmup_steps) return o.lr * static_cast<double>(step + 1) / (W + 1);
  if (o.kind == ScheduleKind::constant) return o.lr;
  const double q =
      std::min(1.0, static_cast<double>(step - o.warmup_steps) / static_cast<double>(o.decay_steps - o.warmup_steps));
  if (o.kind == ScheduleKind::cosine) return o.min_lr + (o.lr - o.min_lr) * 0.5 * (1 + std::cos(std::numbers::pi * q));
  return o.lr + (o.min_lr - o.lr) * q;  // linear
}

}  // namespace sf
