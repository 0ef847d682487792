// Exercise 19 (lesson 14, build a GPT): causal self-attention as a module, from your pieces.
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
//   idea:     the steps above, in that order, with your own pieces: split_heads and merge_heads
//             (10), kv_cache_append (14), the causal mask (8) and your_softmax (5 and 6 as one
//             autograd op, exercise.h); write exercise::merge_heads (sf::merge_heads, the
//             framework's, has the same name). sf::linear and sf::slice do the projections and the
//             q / k / v chunks. Use sf ops on tensors only: the checker differentiates it.
//
// Check it: scratchformer exercise check 19   (or ./run.sh exercise 19)
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
