// Exercise 24 (lesson 5 attention): attention's backward by hand: dq, dk and dv.
//
// Exercise 8 let autograd differentiate attention. Here you write its backward yourself, the
// way FlashAttention's backward kernel does: out = P v with P = softmax(S) and
// S = mask(q k^T / sqrt(D)), the causal mask of exercise 8 (query t sits at S_len - T + t).
//
//   shapes:  q (B, H, T, D), k and v (B, H, S, D), dout (B, H, T, D)
//            -> dq (B, H, T, D), dk (B, H, S, D), dv (B, H, S, D)
//   idea:    go backward through the three steps one at a time: out = P v is a matmul (whose
//            gradients lesson 4 embeddings derives), P = softmax(S) is exercise 6, and S is another
//            matmul times a constant. Masked scores have P = 0: what does that give them?
//   contract: keeps the inputs' dtype; dout is any gradient, not all ones.
//
// Derive it on paper first. Stuck? scratchformer exercise hint 24 (1 the idea), then
// hint 24 2 (the formula) and hint 24 3 (the code); a failing check also gives a hint.
// Check it: scratchformer exercise check 24   (or ./run.sh exercise 24)
// 中文说明：exercises/zh/24_attention_backward.md（或 scratchformer exercise show 24 --lang zh）
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

AttentionGrads attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& dout) {
  // TODO: return {dq, dk, dv}.
  todo("attention_backward in exercises/24_attention_backward.cpp");
}

}  // namespace sf::exercise
