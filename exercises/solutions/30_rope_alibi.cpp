// Reference solution of exercise 30 (spoiler): RoPE's rotation and ALiBi's bias.
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor rope_rotate(const Tensor& x, int64_t offset) {
  if (x.dim() != 4 || x.size(3) % 2 != 0)
    throw ShapeError("rope_rotate: x " + shape_str(x.shape()) + " must be (B, H, T, D) with D even");
  const int64_t T = x.size(2), D = x.size(3), half = D / 2;
  // cos and sin of every (position, pair) as (T, D/2) tensors, in x's dtype.
  std::vector<double> c(static_cast<size_t>(T * half)), s(c.size());
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < half; ++i) {
      const double angle =
          static_cast<double>(offset + t) * std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(D));
      c[t * half + i] = std::cos(angle);
      s[t * half + i] = std::sin(angle);
    }
  Tensor cos_t = Tensor::from_vector(c, {T, half}, x.dtype()), sin_t = Tensor::from_vector(s, {T, half}, x.dtype());
  Tensor x1 = slice(x, 3, 0, half), x2 = slice(x, 3, half, D);  // the pairs (i, i + D/2)
  return concat({x1 * cos_t - x2 * sin_t, x2 * cos_t + x1 * sin_t}, 3);
}

Tensor alibi_score_bias(const std::vector<double>& slopes, int64_t T, int64_t S) {
  if (T < 0 || S < T)
    throw ShapeError("alibi_score_bias: T " + std::to_string(T) + " queries for S " + std::to_string(S) + " keys");
  const int64_t H = static_cast<int64_t>(slopes.size());
  std::vector<double> bias(static_cast<size_t>(H * T * S));
  for (int64_t h = 0; h < H; ++h)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t s = 0; s < S; ++s)
        bias[(h * T + t) * S + s] = -slopes[static_cast<size_t>(h)] * static_cast<double>(std::llabs(S - T + t - s));
  return Tensor::from_vector(bias, {1, H, T, S}, DType::f64);
}

}  // namespace sf::exercise
