// Exercise 12 (lesson 9 layernorm): LayerNorm backward.
//
// y = xhat * w + b with xhat = (x - mean) * rstd and rstd = 1 / sqrt(var + eps), per row.
// Given dy, return the gradients of x, w and b.
//
//   shapes:  x, dy (..., C), w (C) -> dx (..., C), dw (C), db (C)
//   idea:    go backward step by step: y from xhat, xhat from x - mean and rstd, and both the
//            mean and the variance depend on every x of the row (lesson layernorm: "derive it
//            first"). dw and db sum over every axis but the last.
//   contract: keeps the inputs' dtype; eps is the argument (the checker tries eps 0.3).
//
// Derive it on paper first. Stuck? scratchformer exercise hint 12 (1 the idea), then
// hint 12 2 (the formula) and hint 12 3 (the code); a failing check also gives a hint.
// Check it: scratchformer exercise check 12   (or ./run.sh exercise 12)
// 中文说明：exercises/zh/12_layer_norm_backward.md（或 scratchformer exercise show 12 --lang zh）
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

LayerNormGrads layer_norm_backward(const Tensor& x, const Tensor& w, const Tensor& dy, double eps) {
  // TODO: return {dx, dw, db}.
  todo("layer_norm_backward in exercises/12_layer_norm_backward.cpp");
}

}  // namespace sf::exercise
