// Exercise 8 (lesson 5, attention): scaled dot-product attention with a causal mask.
//
// Every query scores every key, softmax turns the scores into weights, the output is the
// weighted average of the values. A causal (decoder) model may not look ahead.
//
//   shapes:  q (B, H, T, D), k and v (B, H, S, D) -> out (B, H, T, D); scores are (B, H, T, S)
//   formula: scores = q k^T / sqrt(D)
//            scores[t, s] = -inf where key s lies in query t's future
//            out = softmax(scores over s) v
//   causal:  the T queries are the last T of the S positions (with a KV cache, S - T keys came
//            before them): query t sits at position S - T + t and sees keys s <= S - T + t.
//            With T = S that is the usual lower-triangular mask.
//   hint:    sf::matmul(q, sf::transpose(k, -2, -1)) gives the scores. Build the mask as a
//            (1, 1, T, S) tensor of 0/1 (1 = masked; Tensor::from_vector(values, {1, 1, T, S},
//            q.dtype())), then sf::masked_fill(scores, mask, -INFINITY) and sf::softmax(.., -1).
//            Use sf ops on q, k, v (no copying values out): the checker differentiates your
//            function with autograd.
//
// Check it: scratchformer exercise check 8   (or ./run.sh exercise 8)
#include <cmath>
#include <limits>

#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor causal_attention(const Tensor& q, const Tensor& k, const Tensor& v) {
  // TODO: return the attention output (B, H, T, D).
  todo("causal_attention in exercises/08_causal_attention.cpp");
}

}  // namespace sf::exercise
