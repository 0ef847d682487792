// clip.cpp: global-norm and value clipping, one loop per gradient.
#include "optim/clip.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace sf {

// Calls f(x, n) with each defined gradient's elements, x typed as the gradient is.
template <class F>
static void for_each_grad(const NamedParameters& params, F f) {
  for (const auto& [name, p] : params) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    dispatch(g.dtype(), [&](auto tag) { f(g.data<decltype(tag)>(), g.numel()); });
  }
}

double grad_norm(const NamedParameters& params) {
  double sum_sq = 0;
  for_each_grad(params, [&sum_sq](const auto* x, int64_t n) {
    // Eight independent partial sums in a fixed order: vectorizes, and stays deterministic.
    double lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
      for (int j = 0; j < 8; ++j) lane[j] += static_cast<double>(x[i + j]) * x[i + j];
    for (; i < n; ++i) lane[0] += static_cast<double>(x[i]) * x[i];
    sum_sq += ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
  });
  return std::sqrt(sum_sq);
}

double clip_grad_norm(const NamedParameters& params, double max_norm) {
  if (!(max_norm > 0) || !std::isfinite(max_norm))
    throw ConfigError("clip_grad_norm: max_norm must be a finite number > 0, got " + std::to_string(max_norm));
  const double norm = grad_norm(params);
  // The coefficient in float32 like torch's (its norm is a float32 tensor).
  const float coef = static_cast<float>(max_norm) / (static_cast<float>(norm) + 1e-6f);
  if (coef >= 1) return norm;  // torch multiplies by the clamped 1.0: a no-op
  for_each_grad(params, [coef](auto* x, int64_t n) {
    using T = std::remove_pointer_t<decltype(x)>;
    const T c = static_cast<T>(coef);
    for (int64_t i = 0; i < n; ++i) x[i] *= c;
  });
  return norm;
}

void clip_grad_value(const NamedParameters& params, double clip_value) {
  if (!(clip_value > 0) || !std::isfinite(clip_value))
    throw ConfigError("clip_grad_value: clip_value must be a finite number > 0, got " + std::to_string(clip_value));
  for_each_grad(params, [clip_value](auto* x, int64_t n) {
    using T = std::remove_pointer_t<decltype(x)>;
    const T hi = static_cast<T>(clip_value), lo = -hi;
    for (int64_t i = 0; i < n; ++i) x[i] = std::clamp(x[i], lo, hi);
  });
}

}  // namespace sf
