// Reference solution of exercise 13 (spoiler): GELU (tanh approximation) and its derivative.
#include <cmath>
#include <numbers>

#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

static const double kSqrt2OverPi = std::sqrt(2.0 / std::numbers::pi);

Tensor gelu_forward(const Tensor& x) {
  Tensor t = tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x));
  return 0.5 * x * (1.0 + t);
}

Tensor gelu_backward(const Tensor& x, const Tensor& dy) {
  Tensor t = tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x));
  Tensor du = kSqrt2OverPi * (1.0 + 3.0 * 0.044715 * x * x);  // du/dx
  return dy * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du);
}

}  // namespace sf::exercise
