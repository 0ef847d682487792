// Exercise 8 (lesson 5 attention): scaled dot-product attention with a causal mask.
//
// Every query scores every key, softmax turns the scores into weights, the output is the
// weighted average of the values. A causal (decoder) model may not look ahead.
//
//   shapes:  q (B, H, T, D), k and v (B, H, S, D) -> out (B, H, T, D); scores are (B, H, T, S)
//   causal:  the T queries are the last T of the S positions (with a KV cache, S - T keys came
//            before them): query t sits at position S - T + t and sees keys s <= S - T + t.
//            With T = S that is the usual lower-triangular mask.
//   contract: keeps q's dtype; built from sf ops on q, k, v (the checker differentiates it).
//
// Derive it on paper first. Stuck? scratchformer exercise hint 8 (1 the idea), then
// hint 8 2 (the formula) and hint 8 3 (the code); a failing check also gives a hint.
// Check it: scratchformer exercise check 8   (or ./run.sh exercise 8)
// 中文说明：exercises/zh/08_causal_attention.md（或 scratchformer exercise show 8 --lang zh）
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
