// mixed_precision.h: the mixed-precision recipe the training loop follows each iteration.
//
// Master weights and optimizer state stay float32. The forward and the backward run under
// AutocastGuard(precision): matmuls and activations round their inputs, outputs and gradients to
// fp16/bf16 (autograd/cpu/lowp.h), while softmax, LayerNorm statistics, the loss and the optimizer
// stay float32. fp16 uses dynamic loss scaling (GradScaler) by default; bf16 has fp32's exponent
// range and does not (torch does not scale bf16 either); fp32 does nothing. One iteration:
//
//   MixedPrecision mp(Precision::fp16);
//   Tensor loss = mp.forward([&] { return model_loss(model, x, y); });
//   mp.backward(loss);                           // (loss * S).backward() under autocast
//   StepStats stats = mp.unscale_and_check(params);  // grads /= S, count zeros and Inf/NaN
//   double norm = clip_grad_norm(params, 1.0);   // on unscaled gradients
//   optimizer.set_lr(lr_at(schedule, iter));     // the schedule follows the iteration
//   mp.step(optimizer);                          // skipped when a gradient is Inf/NaN
//   mp.update();                                 // adjusts S
//
// Skipped steps: the optimizer (its step count, Adam's bias correction) does not move, while the
// learning-rate schedule keeps following the iteration counter, like torch's scheduler.step()
// after every iteration; a run with skips ends with the same lr as one without.
//
// Underflow statistic: the fraction of gradient elements that are exactly 0 after unscaling,
// over all parameters that received a gradient, counted in the unscale pass (no extra fp32
// backward). It also counts gradients that are truly zero (embedding rows of tokens absent from
// the batch, dead ReLUs), so read it against the same run in fp32, where only those remain.
#pragma once
#include <cstdint>

#include <nlohmann/json.hpp>

#include "autograd/cpu/lowp.h"
#include "optim/grad_scaler.h"
#include "optim/optimizer.h"

namespace sf {

// What happened in one iteration, for the metrics log.
struct StepStats {
  double loss_scale = 1;          // S used for this iteration's backward
  bool overflow = false;          // some gradient element was Inf/NaN
  bool skipped = false;           // the optimizer step was skipped (overflow with scaling on)
  double underflow_fraction = 0;  // zero gradient elements / gradient elements
  int64_t grad_elements = 0;
  int64_t zero_elements = 0;
  int64_t nonfinite_elements = 0;
};

class MixedPrecision {
 public:
  // Loss scaling on for fp16, off for fp32 and bf16 unless `scaler` says otherwise.
  explicit MixedPrecision(Precision precision);
  MixedPrecision(Precision precision, const GradScalerOptions& scaler);

  Precision precision() const { return precision_; }
  const GradScaler& scaler() const { return scaler_; }
  double loss_scale() const { return scaler_.scale(); }

  // Runs f() (the forward pass and the loss) under autocast and returns its result.
  template <class F>
  decltype(auto) forward(F&& f) const {
    AutocastGuard guard(precision_);
    return f();
  }
  Tensor scale_loss(const Tensor& loss) const { return scaler_.scale_loss(loss); }
  // scale_loss(loss).backward() under autocast, so the gradients are rounded as in the forward.
  void backward(const Tensor& loss) const;
  // Unscales the gradients in place and records this iteration's StepStats.
  const StepStats& unscale_and_check(const NamedParameters& params);
  // optimizer.step() unless skipped; returns whether it stepped. Unscales first if needed.
  bool step(Optimizer& optimizer);
  // Adjusts the loss scale; call once per iteration after step().
  void update();

  const StepStats& last() const { return last_; }
  int64_t overflow_events() const { return overflow_events_; }  // iterations with Inf/NaN
  int64_t skipped_steps() const { return skipped_steps_; }

  // {"precision", "scaler": {...}, "overflow_events", "skipped_steps"}; load throws
  // CheckpointError on a missing key or a different precision.
  nlohmann::json state_dict() const;
  void load_state_dict(const nlohmann::json& state);

 private:
  Precision precision_;
  GradScaler scaler_;
  StepStats last_;
  bool checked_ = false;  // unscale_and_check ran this iteration
  int64_t overflow_events_ = 0;
  int64_t skipped_steps_ = 0;
};

}  // namespace sf
