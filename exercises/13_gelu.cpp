// Exercise 13 (lesson 10, feed-forward): GELU, the nonlinearity of GPT-2 and BERT, forward
// and backward (the tanh approximation, GPT-2's nn.GELU(approximate="tanh")).
//
//   shapes:  x, dy, y, dx all the same shape
//   forward: u = sqrt(2/pi) (x + 0.044715 x^3),  t = tanh(u),  y = 0.5 x (1 + t)
//   backward: dy/dx = 0.5 (1 + t) + 0.5 x (1 - t^2) du/dx,  du/dx = sqrt(2/pi) (1 + 3 * 0.044715 x^2)
//            dx = dy * dy/dx
//   hint:    elementwise sf ops: sf::tanh, and * and + with doubles (2.0 * x, 1.0 + t);
//            std::sqrt(2.0 / std::numbers::pi) is a plain double.
//
// Check it: scratchformer exercise check 13   (or ./run.sh exercise 13)
#include <cmath>
#include <numbers>

#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor gelu_forward(const Tensor& x) {
  // TODO: return GELU(x).
  todo("gelu_forward in exercises/13_gelu.cpp");
}

Tensor gelu_backward(const Tensor& x, const Tensor& dy) {
  // TODO: return dx.
  todo("gelu_backward in exercises/13_gelu.cpp");
}

}  // namespace sf::exercise
