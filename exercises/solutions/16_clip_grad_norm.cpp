// Reference solution of exercise 16 (spoiler): global-norm gradient clipping.
#include <cmath>

#include "exercises/exercise.h"

namespace sf::exercise {

double clip_grad_norm(std::vector<std::vector<double>>& grads, double max_norm) {
  double squares = 0.0;
  for (const auto& g : grads)
    for (double x : g) squares += x * x;
  const double norm = std::sqrt(squares);
  const double c = max_norm / (norm + 1e-6);
  if (c < 1.0)
    for (auto& g : grads)
      for (double& x : g) x *= c;
  return norm;
}

}  // namespace sf::exercise
