// Reference solution of exercise 5 (spoiler): a stable softmax.
#include <cmath>
#include <vector>

#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor softmax_forward(const Tensor& x) {
  Tensor m = max(x, -1, /*keepdim=*/true);  // (..., 1): the row max
  // A fully masked row (every score -inf) has max -inf, and -inf - (-inf) is nan. Its max is
  // taken as 0 instead, so its exponentials are all e^-inf = 0, and its sum is replaced by 1:
  // the row comes out as zeros, as sf::softmax returns.
  std::vector<double> maxima = m.to_vector(), empty(maxima.size(), 0.0);
  for (size_t i = 0; i < maxima.size(); ++i) empty[i] = std::isinf(maxima[i]) && maxima[i] < 0 ? 1.0 : 0.0;
  Tensor fully_masked = Tensor::from_vector(empty, m.shape(), x.dtype());  // 1 where the row is all -inf
  m = masked_fill(m, fully_masked, 0.0);
  Tensor e = exp(x - m);  // every exponent <= 0: no overflow
  return e / (sum(e, -1, /*keepdim=*/true) + fully_masked);
}

}  // namespace sf::exercise
