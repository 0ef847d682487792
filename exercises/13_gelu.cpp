// Exercise 13 (lesson 10 feedforward): GELU, the nonlinearity of GPT-2 and BERT, forward
// and backward (the tanh approximation, GPT-2's nn.GELU(approximate="tanh")).
//
//   shapes:  x, dy, y, dx all the same shape
//   forward: u = sqrt(2/pi) (x + 0.044715 x^3),  t = tanh(u),  y = 0.5 x (1 + t)
//   idea:    the backward is the product rule (x times a smooth step) and the chain rule
//            through tanh and the cubic inside it; multiply by dy.
//   contract: keeps x's dtype.
//
// Derive it on paper first. Stuck? scratchformer exercise hint 13 (1 the idea), then
// hint 13 2 (the formula) and hint 13 3 (the code); a failing check also gives a hint.
// Check it: scratchformer exercise check 13   (or ./run.sh exercise 13)
// 中文说明：exercises/zh/13_gelu.md（或 scratchformer exercise show 13 --lang zh）
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
