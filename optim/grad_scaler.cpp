// grad_scaler.cpp: loss scaling, the unscale + Inf/NaN check pass, and the scale update.
#include "optim/grad_scaler.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "autograd/json_int.h"
#include "autograd/ops.h"

namespace sf {

// The scale is a normal float32: from 2^-126 to float's largest. Beyond the largest the cast to
// float is undefined; below 2^-126 the inverse the unscale pass multiplies by, 1 / S, would be
// beyond float's largest (and a subnormal scale could round to 0).
static bool normal_float32(double x) {
  return x >= std::numeric_limits<float>::min() && x <= std::numeric_limits<float>::max();
}

GradScaler::GradScaler(const GradScalerOptions& o) : options_(o), scale_(1.0f) {
  if (!normal_float32(o.init_scale))
    throw ConfigError("grad_scaler: init_scale must be a float32 from 2^-126 to its largest, got " +
                      nlohmann::json(o.init_scale).dump());
  scale_ = static_cast<float>(o.init_scale);
  if (!(o.growth_factor > 1) || !normal_float32(o.growth_factor))
    throw ConfigError("grad_scaler: growth_factor must be a float32 > 1, got " +
                      nlohmann::json(o.growth_factor).dump());
  if (!(o.backoff_factor > 0 && o.backoff_factor < 1))
    throw ConfigError("grad_scaler: backoff_factor must be in (0, 1), got " + std::to_string(o.backoff_factor));
  if (o.growth_interval < 1)
    throw ConfigError("grad_scaler: growth_interval must be >= 1, got " + std::to_string(o.growth_interval));
}

Tensor GradScaler::scale_loss(const Tensor& loss) const {
  if (!enabled()) return loss;
  return loss * static_cast<double>(scale_);
}

// Inf and NaN are the floats whose exponent bits are all ones.
static inline bool nonfinite_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return (u & 0x7F800000u) == 0x7F800000u;
}

const UnscaleStats& GradScaler::unscale(const NamedParameters& params) {
  if (unscaled_)
    throw Error("grad_scaler: unscale() was already called this iteration (call update() after each step)");
  stats_ = UnscaleStats{};
  // torch: inv_scale = scale.double().reciprocal().float()
  const float inv = enabled() ? static_cast<float>(1.0 / static_cast<double>(scale_)) : 1.0f;
  for (const auto& [name, p] : params) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    if (g.dtype() != DType::f32)
      throw ShapeError("grad_scaler: gradient of '" + name + "' is " + dtype_name(g.dtype()) + ", expected float32");
    float* x = g.data<float>();
    const int64_t n = g.numel();
    int64_t zeros = 0, nonfinite = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float y = x[i] * inv;
      x[i] = y;
      zeros += y == 0.0f;
      nonfinite += nonfinite_bits(y);
    }
    stats_.elements += n;
    stats_.zeros += zeros;
    stats_.nonfinite += nonfinite;
  }
  unscaled_ = true;
  return stats_;
}

bool GradScaler::step(Optimizer& optimizer) {
  if (!unscaled_) unscale(optimizer.params());
  if (enabled() && stats_.found_inf()) return false;
  optimizer.step();
  return true;
}

void GradScaler::update() {
  if (!unscaled_) throw Error("grad_scaler: update() without unscale() or step() in this iteration");
  unscaled_ = false;
  if (!enabled()) return;
  if (stats_.found_inf()) {
    // Never below 2^-126 (see normal_float32): it takes about 140 overflowing steps in a row from
    // the default 65536 to get there, and a state below it could not be loaded back.
    scale_ = std::max(scale_ * static_cast<float>(options_.backoff_factor), std::numeric_limits<float>::min());
    growth_tracker_ = 0;
    return;
  }
  if (++growth_tracker_ == options_.growth_interval) {
    const float grown = scale_ * static_cast<float>(options_.growth_factor);
    if (std::isfinite(grown)) scale_ = grown;
    growth_tracker_ = 0;
  }
}

nlohmann::json GradScaler::state_dict() const {
  return {{"scale", static_cast<double>(scale_)}, {"growth_tracker", growth_tracker_}};
}

void GradScaler::load_state_dict(const nlohmann::json& s) {
  if (!s.is_object() || !s.contains("scale") || !s.at("scale").is_number())
    throw CheckpointError("grad_scaler state: missing number 'scale'");
  if (!s.contains("growth_tracker") || !s.at("growth_tracker").is_number_integer())
    throw CheckpointError("grad_scaler state: missing integer 'growth_tracker'");
  const double scale = s.at("scale").get<double>();
  const std::optional<int64_t> tracker = json_int(s.at("growth_tracker"), 0, options_.growth_interval - 1);
  // Checked as a double, before the cast to float (see normal_float32).
  if (!normal_float32(scale))
    throw CheckpointError("grad_scaler state: 'scale' must be a float32 from 2^-126 to its largest, got " +
                          s.at("scale").dump());
  if (!tracker)
    throw CheckpointError("grad_scaler state: 'growth_tracker' must be in [0, growth_interval), got " +
                          s.at("growth_tracker").dump());
  scale_ = static_cast<float>(scale);
  growth_tracker_ = *tracker;
  unscaled_ = false;
}

}  // namespace sf
