// Reference solution of exercise 24 (spoiler): causal attention's backward by hand.
#include <cmath>
#include <limits>

#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

AttentionGrads attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& dout) {
  const int64_t T = q.size(2), S = k.size(2), D = q.size(3);
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  // The forward again: the probabilities P (B, H, T, S).
  std::vector<double> m(static_cast<size_t>(T * S), 0.0);  // 1 = masked
  for (int64_t t = 0; t < T; ++t)
    for (int64_t s = 0; s < S; ++s) m[t * S + s] = s > S - T + t ? 1.0 : 0.0;
  Tensor mask = Tensor::from_vector(m, {1, 1, T, S}, q.dtype());
  Tensor scores = matmul(q, transpose(k, -2, -1)) * scale;
  Tensor P = softmax(masked_fill(scores, mask, -std::numeric_limits<double>::infinity()), -1);
  // out = P v: dv = P^T dout, dP = dout v^T.
  Tensor dv = matmul(transpose(P, -2, -1), dout);
  Tensor dP = matmul(dout, transpose(v, -2, -1));
  // P = softmax(scores): exercise 6. Masked entries have P = 0, so their dS is 0.
  Tensor dS = P * (dP - sum(dP * P, -1, /*keepdim=*/true));
  // scores = q k^T * scale.
  Tensor dq = matmul(dS, k) * scale;
  Tensor dk = matmul(transpose(dS, -2, -1), q) * scale;
  return {dq, dk, dv};
}

}  // namespace sf::exercise
