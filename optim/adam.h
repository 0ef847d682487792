// adam.h: Adam (L2 weight decay added to the gradient) and AdamW (decoupled weight decay),
// with torch.optim.Adam / torch.optim.AdamW's exact semantics (amsgrad off).
#pragma once
#include "optim/optimizer.h"

namespace sf {

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;  // Adam: L2 added to the gradient; AdamW: decoupled
  // AdamW only: which parameters decay (default: dim >= 2 and not an embedding by name).
  DecayRule decay_rule = {};
};

// Per parameter p with gradient g at its t-th update (t = 1 first), buffers m ("exp_avg") and
// v ("exp_avg_sq") starting at zero:
//   Adam:  g = g + wd p                          AdamW: p = p (1 - lr wd)   (decaying params)
//   m = beta1 m + (1 - beta1) g
//   v = beta2 v + (1 - beta2) g^2
//   p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
// One fused loop per run of contiguous parameters reads g, p, m, v once and writes p, m, v.
class Adam : public Optimizer {
 public:
  Adam(NamedParameters params, const AdamOptions& options);
  const char* name() const override { return decoupled_ ? "adamw" : "adam"; }
  const AdamOptions& options() const { return options_; }
  // Whether parameter i receives weight decay.
  bool decays(size_t i) const { return decay_.at(i); }

 protected:
  Adam(NamedParameters params, const AdamOptions& options, bool decoupled);
  void update(const std::vector<Run>& runs) override;
  nlohmann::json hyperparameters() const override;

 private:
  AdamOptions options_;
  bool decoupled_;
};

// AdamW: Adam with decoupled weight decay (Loshchilov & Hutter), applied only to the parameters
// the options' DecayRule selects.
class AdamW : public Adam {
 public:
  AdamW(NamedParameters params, const AdamOptions& options) : Adam(std::move(params), options, true) {}
};

}  // namespace sf
