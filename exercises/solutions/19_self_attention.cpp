// Reference solution of exercise 19 (spoiler): causal self-attention from your pieces.
#include <cmath>
#include <limits>

#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor causal_self_attention(const MultiHeadAttention& attn, const Tensor& x, KVCache* cache) {
  const int64_t C = x.size(2), H = attn.n_head(), D = C / H;
  Tensor qkv = linear(x, attn.c_attn->weight, attn.c_attn->bias);  // (B, T, 3C)
  Tensor q = split_heads(slice(qkv, 2, 0, C), H);                  // (B, H, T, D)
  Tensor k = split_heads(slice(qkv, 2, C, 2 * C), H);
  Tensor v = split_heads(slice(qkv, 2, 2 * C, 3 * C), H);
  if (cache != nullptr) {
    kv_cache_append(*cache, k, v);  // (B, H, S, D): the cached positions, then these
    k = cache->k;
    v = cache->v;
  }
  const int64_t T = q.size(2), S = k.size(2);
  Tensor scores = matmul(q, transpose(k, -2, -1)) / std::sqrt(static_cast<double>(D));  // (B, H, T, S)
  std::vector<double> m(static_cast<size_t>(T * S), 0.0);                               // 1 = masked
  for (int64_t t = 0; t < T; ++t)
    for (int64_t s = 0; s < S; ++s) m[t * S + s] = s > S - T + t ? 1.0 : 0.0;
  Tensor mask = Tensor::from_vector(m, {1, 1, T, S}, x.dtype());
  scores = masked_fill(scores, mask, -std::numeric_limits<double>::infinity());
  Tensor y = matmul(your_softmax(scores), v);                                     // (B, H, T, D)
  return linear(exercise::merge_heads(y), attn.c_proj.weight, attn.c_proj.bias);  // (B, T, C)
}

}  // namespace sf::exercise
