// Reference solution of exercise 12 (spoiler): LayerNorm backward.
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

LayerNormGrads layer_norm_backward(const Tensor& x, const Tensor& w, const Tensor& dy, double eps) {
  Tensor xc = x - mean(x, {-1}, /*keepdim=*/true);
  Tensor rstd = 1.0 / sqrt(mean(xc * xc, {-1}, /*keepdim=*/true) + eps);  // (..., 1)
  Tensor xhat = xc * rstd;
  Tensor g = dy * w;  // d loss / d xhat
  Tensor dx = rstd * (g - mean(g, {-1}, true) - xhat * mean(g * xhat, {-1}, true));
  std::vector<int64_t> rows;  // every axis but the last
  for (int64_t a = 0; a + 1 < x.dim(); ++a) rows.push_back(a);
  return {dx, sum(dy * xhat, rows), sum(dy, rows)};
}

}  // namespace sf::exercise
