// adam.cpp: the fused Adam / AdamW update.
#include "optim/adam.h"

#include <cmath>

namespace sf {

Adam::Adam(NamedParameters params, const AdamOptions& options) : Adam(std::move(params), options, false) {}

Adam::Adam(NamedParameters params, const AdamOptions& options, bool decoupled)
    : Optimizer(std::move(params), options.lr), options_(options), decoupled_(decoupled) {
  const std::string who = decoupled ? "adamw" : "adam";
  auto in_unit = [](double b) { return std::isfinite(b) && b >= 0 && b < 1; };
  if (!in_unit(options.beta1))
    throw ConfigError(who + ": beta1 must be in [0, 1), got " + std::to_string(options.beta1));
  if (!in_unit(options.beta2))
    throw ConfigError(who + ": beta2 must be in [0, 1), got " + std::to_string(options.beta2));
  if (!std::isfinite(options.eps) || options.eps < 0)
    throw ConfigError(who + ": eps must be >= 0, got " + std::to_string(options.eps));
  if (!std::isfinite(options.weight_decay) || options.weight_decay < 0)
    throw ConfigError(who + ": weight_decay must be >= 0, got " + std::to_string(options.weight_decay));
  for (size_t i = 0; i < params_.size(); ++i)
    decay_[i] = !decoupled || options.decay_rule.applies(params_[i].first, params_[i].second);
  add_buffers({"exp_avg", "exp_avg_sq"});
}

// The per-element update, written as torch's CPU kernels compute it (add with alpha and addcmul
// are one fused multiply-add there), so the results agree to the last bit in most elements. A
// plain function of restrict pointers so that the compiler vectorizes it; every element on its own.
struct AdamScalars {
  float beta1, beta2, one_minus_beta1, one_minus_beta2, eps;
  float step_size, bias_correction2_sqrt, l2, shrink;
};

static void adam_kernel(float* __restrict p, const float* __restrict g, float* __restrict m, float* __restrict v,
                        int64_t begin, int64_t end, const AdamScalars s) {
  for (int64_t i = begin; i < end; ++i) {
    const float pi = p[i] * s.shrink;           // AdamW decay (shrink 1: none)
    const float gi = std::fma(s.l2, pi, g[i]);  // Adam's L2 term (l2 0: none)
    const float mi = std::fma(s.one_minus_beta1, gi, s.beta1 * m[i]);
    const float vi = std::fma(s.one_minus_beta2 * gi, gi, s.beta2 * v[i]);
    const float denom = std::sqrt(vi) / s.bias_correction2_sqrt + s.eps;
    m[i] = mi;
    v[i] = vi;
    p[i] = pi + (-s.step_size * mi) / denom;
  }
}

void Adam::update(const std::vector<Run>& runs) {
  std::vector<AdamScalars> scalars(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    const Run& r = runs[i];
    // Scalars in double, like torch's Python floats, then rounded once to float.
    const double t = static_cast<double>(r.step);
    AdamScalars& s = scalars[i];
    s.beta1 = static_cast<float>(options_.beta1);
    s.beta2 = static_cast<float>(options_.beta2);
    s.one_minus_beta1 = static_cast<float>(1 - options_.beta1);
    s.one_minus_beta2 = static_cast<float>(1 - options_.beta2);
    s.eps = static_cast<float>(options_.eps);
    s.step_size = static_cast<float>(lr_ / (1 - std::pow(options_.beta1, t)));
    s.bias_correction2_sqrt = static_cast<float>(std::sqrt(1 - std::pow(options_.beta2, t)));
    s.l2 = (!decoupled_ && r.decay) ? static_cast<float>(options_.weight_decay) : 0.0f;
    s.shrink = (decoupled_ && r.decay) ? static_cast<float>(1 - lr_ * options_.weight_decay) : 1.0f;
  }
  // All runs as one job over the threads: the same bits for any split.
  for_each_stretch(runs, [&](size_t i, int64_t begin, int64_t end) {
    const Run& r = runs[i];
    adam_kernel(r.p, r.g, r.buf[0], r.buf[1], begin, end, scalars[i]);
  });
}

nlohmann::json Adam::hyperparameters() const {
  return {{"lr", lr_},
          {"beta1", options_.beta1},
          {"beta2", options_.beta2},
          {"eps", options_.eps},
          {"weight_decay", options_.weight_decay}};
}

}  // namespace sf
