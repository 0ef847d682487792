// xtensor_view.cpp: look inside a model's tensors with xtensor, without copying them.
//
// Legend: T time, C channels.
#include <iostream>

#include "autograd/ops.h"
#include "autograd/xtensor.h"  // before the xtensor headers (autograd/quiet_xsimd.h says why)
#include "nn/layers.h"

#include <xtensor/xio.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xview.hpp>

int main() {
  sf::manual_seed(0);
  sf::Linear layer(4, 3);                                                    // weight (3, 4), bias (3)
  sf::Tensor x = sf::Tensor::from_vector({1, 2, 3, 4, 0, 1, 0, 1}, {2, 4});  // (T, C) = (2, 4)
  sf::sum(sf::gelu(layer.forward(x))).backward();

  // A view over the gradient's own buffer: NumPy-like expressions, no copy.
  auto grad = sf::as_xtensor<float>(layer.weight.grad());
  std::cout << "largest |dL/dW|: " << xt::amax(xt::abs(grad))() << "\n";
  std::cout << "row norms of dL/dW: " << xt::sqrt(xt::sum(grad * grad, {1})) << "\n";

  // Writes go straight into the parameter: one hand-made SGD step, W -= 0.1 dL/dW.
  auto w = sf::as_xtensor<float>(layer.weight);
  w -= 0.1f * grad;

  // And back: an expression evaluated into a new Tensor, ready for the ops again. (xt::mean
  // sums in double; keep the expression in float so that the result is a float32 tensor.)
  const float mean = xt::mean(w)();
  sf::Tensor centred = sf::to_tensor(w - mean);
  std::cout << "mean of the centred weight: " << sf::mean(centred).item() << " (about 0)\n";
  std::cout << "its first row: " << xt::view(sf::as_xtensor<float>(centred), 0, xt::all()) << "\n";
  return 0;
}
