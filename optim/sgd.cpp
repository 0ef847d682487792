// sgd.cpp: the SGD update, one loop per run of contiguous parameters.
#include "optim/sgd.h"

#include <cmath>

namespace sf {

SGD::SGD(NamedParameters params, const SGDOptions& options)
    : Optimizer(std::move(params), options.lr), options_(options) {
  auto finite_nonneg = [](double v) { return std::isfinite(v) && v >= 0; };
  if (!finite_nonneg(options.momentum))
    throw ConfigError("sgd: momentum must be >= 0, got " + std::to_string(options.momentum));
  if (!finite_nonneg(options.weight_decay))
    throw ConfigError("sgd: weight_decay must be >= 0, got " + std::to_string(options.weight_decay));
  if (!std::isfinite(options.dampening)) throw ConfigError("sgd: dampening must be a finite number");
  if (options.nesterov && (options.momentum <= 0 || options.dampening != 0))
    throw ConfigError("sgd: nesterov needs momentum > 0 and dampening 0");
  if (options.momentum != 0) add_buffers({"momentum_buffer"});
}

void SGD::update(const std::vector<Run>& runs) {
  const float lr = static_cast<float>(lr_);
  const float wd = static_cast<float>(options_.weight_decay);
  const float mu = static_cast<float>(options_.momentum);
  const float keep = static_cast<float>(1.0 - options_.dampening);
  const bool momentum = options_.momentum != 0, nesterov = options_.nesterov;
  // All runs as one job over the threads; each element on its own, so the same bits for any split.
  for_each_stretch(runs, [&](size_t run, int64_t begin, int64_t end) {
    const Run& r = runs[run];
    float* __restrict p = r.p;
    const float* __restrict g = r.g;
    float* __restrict b = r.buf[0];
    const bool first = r.step == 1;
    // a + alpha * b as one fused multiply-add, as torch's CPU add kernel computes it.
    for (int64_t i = begin; i < end; ++i) {
      float d = wd != 0 ? std::fma(wd, p[i], g[i]) : g[i];
      if (momentum) {
        b[i] = first ? d : std::fma(keep, d, mu * b[i]);
        d = nesterov ? std::fma(mu, b[i], d) : b[i];
      }
      p[i] = std::fma(-lr, d, p[i]);
    }
  });
}

nlohmann::json SGD::hyperparameters() const {
  return {{"lr", lr_},
          {"momentum", options_.momentum},
          {"dampening", options_.dampening},
          {"weight_decay", options_.weight_decay},
          {"nesterov", options_.nesterov}};
}

}  // namespace sf
