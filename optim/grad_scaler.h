// grad_scaler.h: dynamic loss scaling for fp16 training, with torch.cuda.amp.GradScaler's
// semantics.
//
// Small gradients underflow to zero in fp16 (below 2^-24). Multiplying the loss by a large
// scale S before backward multiplies every gradient by S and lifts them into range; the
// gradients are divided by S again (unscale) before clipping and the optimizer step. When
// any unscaled gradient is Inf/NaN, the scale was too large: the step is skipped and S halves.
// After growth_interval finite steps in a row S doubles. One iteration:
//
//   scaler.scale_loss(loss).backward();   // under AutocastGuard(Precision::fp16)
//   scaler.unscale(params);               // before clip_grad_norm
//   clip_grad_norm(params, 1.0);
//   scaler.step(optimizer);               // optimizer.step() unless a gradient was Inf/NaN
//   scaler.update();                      // S *= 0.5 after an overflow, *= 2 after 2000 good steps
//
// A skipped step leaves the parameters, the optimizer state and its step count untouched (like
// torch); the learning-rate schedule still advances, since it follows the iteration (schedule.h).
// Disabled (fp32, bf16): the scale is 1, unscale only counts, step always steps, update does nothing.
#pragma once
#include <cstdint>

#include <nlohmann/json.hpp>

#include "optim/optimizer.h"

namespace sf {

struct GradScalerOptions {
  double init_scale = 65536.0;  // 2^16
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
  bool enabled = true;
};

// What one unscale pass saw, over the gradients of every parameter that has one.
struct UnscaleStats {
  int64_t elements = 0;   // gradient elements checked
  int64_t zeros = 0;      // exactly zero after unscaling
  int64_t nonfinite = 0;  // Inf or NaN
  bool found_inf() const { return nonfinite > 0; }
  // zeros / elements (0 when there are no elements).
  double zero_fraction() const { return elements ? static_cast<double>(zeros) / elements : 0.0; }
};

class GradScaler {
 public:
  explicit GradScaler(const GradScalerOptions& options = {});

  bool enabled() const { return options_.enabled; }
  double scale() const { return enabled() ? scale_ : 1.0; }   // the current S
  int64_t growth_tracker() const { return growth_tracker_; }  // finite steps since the last change

  // loss * S (differentiable); the loss itself when disabled.
  Tensor scale_loss(const Tensor& loss) const;
  // Multiplies every gradient by 1/S (float32, as torch) and counts zeros and Inf/NaN in the same
  // pass. Once per iteration: a second call before update() throws Error.
  const UnscaleStats& unscale(const NamedParameters& params);
  // Unscales first if unscale() was not called, then runs optimizer.step() unless a gradient was
  // Inf/NaN (enabled only). Returns whether the optimizer stepped.
  bool step(Optimizer& optimizer);
  // Adjusts S after this iteration's step: S *= backoff_factor and the tracker resets after an
  // overflow; otherwise the tracker counts up and at growth_interval S *= growth_factor (kept only
  // if finite) and the tracker resets. Throws Error if no unscale/step happened this iteration.
  void update();

  // {"scale", "growth_tracker"}; load checks the keys (CheckpointError naming the key).
  nlohmann::json state_dict() const;
  void load_state_dict(const nlohmann::json& state);

 private:
  GradScalerOptions options_;
  float scale_;  // float32 like torch's scale tensor
  int64_t growth_tracker_ = 0;
  bool unscaled_ = false;  // unscale() ran since the last update()
  UnscaleStats stats_;
};

}  // namespace sf
