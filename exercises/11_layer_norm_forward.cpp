// Exercise 11 (lesson 9, LayerNorm): LayerNorm forward.
//
// Each token's vector is centred and scaled to unit variance on its own, then given a learned
// scale w and shift b per channel.
//
//   shapes:  x (..., C), w (C), b (C) -> y (..., C)
//   formula: per row: mean = (1/C) sum_c x_c,  var = (1/C) sum_c (x_c - mean)^2  (biased),
//            y = (x - mean) / sqrt(var + eps) * w + b
//   hint:    sf::mean(x, {-1}, true) keeps the axis so it broadcasts; sf::sqrt; eps goes
//            inside the square root.
//   edges:   rows far from 0 (1e6 + noise): var as mean(x^2) - mean^2 loses every digit there;
//            C = 1 and constant rows (x - mean = 0, so y = b).
//
// Check it: scratchformer exercise check 11   (or ./run.sh exercise 11)
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor layer_norm_forward(const Tensor& x, const Tensor& w, const Tensor& b, double eps) {
  // TODO: return y (..., C).
  todo("layer_norm_forward in exercises/11_layer_norm_forward.cpp");
}

}  // namespace sf::exercise
