// clip.cpp: global-norm and value clipping, one loop per gradient (long ones over the thread pool).
#include "optim/clip.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "autograd/cpu/threads.h"

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

// The sum of squares of x[0..n) in double: eight independent partial sums in a fixed order (it
// vectorizes and stays deterministic).
template <class T>
static double sum_of_squares(const T* x, int64_t n) {
  double lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) lane[j] += static_cast<double>(x[i + j]) * x[i + j];
  for (; i < n; ++i) lane[0] += static_cast<double>(x[i]) * x[i];
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

// Each gradient goes in chunks of kNormChunk elements, the chunks over the thread pool, their sums
// added in order: the chunks are fixed by the size, so any number of threads gives the same bits.
constexpr int64_t kNormChunk = int64_t(1) << 16;

double grad_norm(const NamedParameters& params) {
  double sum_sq = 0;
  std::vector<double> chunk_sums;
  for_each_grad(params, [&](const auto* x, int64_t n) {
    const int64_t chunks = (n + kNormChunk - 1) / kNormChunk;
    chunk_sums.assign(static_cast<size_t>(chunks), 0.0);
    parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c)
        chunk_sums[static_cast<size_t>(c)] =
            sum_of_squares(x + c * kNormChunk, std::min(kNormChunk, n - c * kNormChunk));
    });
    for (double v : chunk_sums) sum_sq += v;
  });
  return std::sqrt(sum_sq);
}

double clip_grad_norm(const NamedParameters& params, double max_norm) {
  JobLabel label("clip_grad_norm");
  if (!(max_norm > 0) || !std::isfinite(max_norm))
    throw ConfigError("clip_grad_norm: max_norm must be a finite number > 0, got " + std::to_string(max_norm));
  const double norm = grad_norm(params);
  // The coefficient in float32 like torch's (its norm is a float32 tensor).
  const float coef = static_cast<float>(max_norm) / (static_cast<float>(norm) + 1e-6f);
  if (coef >= 1) return norm;  // torch multiplies by the clamped 1.0: a no-op
  for_each_grad(params, [coef](auto* x, int64_t n) {
    using T = std::remove_pointer_t<decltype(x)>;
    const T c = static_cast<T>(coef);
    parallel_for(n, kElementGrain, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) x[i] *= c;
    });
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
