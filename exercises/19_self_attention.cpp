// Exercise 19 (lesson 14 build-gpt): causal self-attention as a module, from your pieces.
//
// The attention of exercise 8, now inside a layer with weights: project every token to a query,
// a key and a value, split them into heads, attend causally, merge the heads, project back.
//
//   shapes:   x (B, T, C) -> (B, T, C); H = attn.n_head(), D = C / H
//   weights:  attn.c_attn->weight (3C, C) and ->bias (3C): q, k, v stacked in that order along
//             the last axis of x W^T + b; attn.c_proj.weight (C, C) and .bias (C)
//   contract: with a cache (not null), x holds only the T new tokens: their keys and values are
//             appended to the cache (your exercise 14) and the queries attend over all S cached
//             keys, query t sitting at position S - T + t (the mask of exercise 8). Without a
//             cache, S = T.
//   idea:     the steps above, in that order, each one a piece you wrote in exercises 5-14 (the
//             softmax comes as one autograd op, your_softmax in exercise.h; the mask is applied
//             with sf::masked_fill, which autograd differentiates). Write exercise::split_heads
//             and exercise::merge_heads with the namespace: sf::merge_heads is the framework's
//             and a bare merge_heads(y) is ambiguous. The q, k, v layout of c_attn is lesson 7
//             multihead's. Stuck? `scratchformer exercise hint 19` (tier 2: the formula, tier 3:
//             the code-level hint).
//
// Check it: scratchformer exercise check 19   (or ./run.sh exercise 19)
// 中文说明：exercises/zh/19_self_attention.md（或 scratchformer exercise show 19 --lang zh）
#include <cmath>
#include <limits>

#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor causal_self_attention(const MultiHeadAttention& attn, const Tensor& x, KVCache* cache) {
  // TODO: return the attention layer's output (B, T, C).
  todo("causal_self_attention in exercises/19_self_attention.cpp");
}

}  // namespace sf::exercise
