// Exercise 11 (lesson 9 layernorm): LayerNorm forward.
//
// Each token's vector is centred and scaled to unit variance on its own, then given a learned
// scale w and shift b per channel.
//
//   shapes:  x (..., C), w (C), b (C) -> y (..., C)
//   formula: per row: mean = (1/C) sum_c x_c,  var = (1/C) sum_c (x_c - mean)^2  (biased),
//            y = (x - mean) / sqrt(var + eps) * w + b
//   edges:   rows far from 0 (1e6 + noise): var as mean(x^2) - mean^2 loses every digit there;
//            C = 1 and constant rows (x - mean = 0, so y = b).
//   contract: keeps x's dtype; eps is the argument (the checker tries values other than 1e-5).
//
// Derive it on paper first. Stuck? scratchformer exercise hint 11 (1 the idea), then
// hint 11 2 (the formula) and hint 11 3 (the code); a failing check also gives a hint.
// Check it: scratchformer exercise check 11   (or ./run.sh exercise 11)
// 中文说明：exercises/zh/11_layer_norm_forward.md（或 scratchformer exercise show 11 --lang zh）
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor layer_norm_forward(const Tensor& x, const Tensor& w, const Tensor& b, double eps) {
  // TODO: return y (..., C).
  todo("layer_norm_forward in exercises/11_layer_norm_forward.cpp");
}

}  // namespace sf::exercise
