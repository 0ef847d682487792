// Reference solution of exercise 1 (spoiler): tanh backward.
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor tanh_backward(const Tensor& y, const Tensor& dy) {
  return dy * (1.0 - y * y);  // d tanh(x)/dx = 1 - tanh(x)^2, from the saved output
}

}  // namespace sf::exercise
