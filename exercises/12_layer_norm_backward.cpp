// Exercise 12 (lesson 9, LayerNorm): LayerNorm backward.
//
// y = xhat * w + b with xhat = (x - mean) * rstd and rstd = 1 / sqrt(var + eps), per row.
// Given dy, return the gradients of x, w and b.
//
//   shapes:  x, dy (..., C), w (C) -> dx (..., C), dw (C), db (C)
//   formula: db = sum over rows of dy;  dw = sum over rows of dy * xhat
//            g = dy * w (the gradient reaching xhat), then per row:
//            dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
//   why:     mean and var depend on every x of the row; the two subtracted means remove the
//            two directions LayerNorm cannot see (shifting a row, and scaling it).
//   hint:    "sum over rows" is over every axis but the last (axes 0 .. x.dim() - 2), with
//            sf::sum(t, axes); the per-row means are sf::mean(t, {-1}, true).
//
// Check it: scratchformer exercise check 12   (or ./run.sh exercise 12)
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

LayerNormGrads layer_norm_backward(const Tensor& x, const Tensor& w, const Tensor& dy, double eps) {
  // TODO: return {dx, dw, db}.
  todo("layer_norm_backward in exercises/12_layer_norm_backward.cpp");
}

}  // namespace sf::exercise
