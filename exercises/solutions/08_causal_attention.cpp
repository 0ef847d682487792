// Reference solution of exercise 8 (spoiler): causal scaled dot-product attention.
#include <cmath>
#include <limits>

#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor causal_attention(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t T = q.size(2), S = k.size(2), D = q.size(3);
  Tensor scores = matmul(q, transpose(k, -2, -1)) / std::sqrt(static_cast<double>(D));  // (B, H, T, S)
  std::vector<double> m(static_cast<size_t>(T * S), 0.0);                               // 1 = masked
  for (int64_t t = 0; t < T; ++t)
    for (int64_t s = 0; s < S; ++s) m[t * S + s] = s > S - T + t ? 1.0 : 0.0;
  Tensor mask = Tensor::from_vector(m, {1, 1, T, S}, q.dtype());
  scores = masked_fill(scores, mask, -std::numeric_limits<double>::infinity());
  return matmul(softmax(scores, -1), v);  // (B, H, T, D)
}

}  // namespace sf::exercise
