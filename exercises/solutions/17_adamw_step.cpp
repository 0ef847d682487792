// Reference solution of exercise 17 (spoiler): one AdamW update.
#include <cmath>

#include "exercises/exercise.h"

namespace sf::exercise {

void adamw_step(std::vector<double>& p, const std::vector<double>& g, std::vector<double>& m, std::vector<double>& v,
                int64_t t, const AdamWConfig& c) {
  const double bc1 = 1.0 - std::pow(c.beta1, static_cast<double>(t));
  const double bc2 = 1.0 - std::pow(c.beta2, static_cast<double>(t));
  for (size_t i = 0; i < p.size(); ++i) {
    p[i] *= 1.0 - c.lr * c.weight_decay;  // decoupled decay
    m[i] = c.beta1 * m[i] + (1.0 - c.beta1) * g[i];
    v[i] = c.beta2 * v[i] + (1.0 - c.beta2) * g[i] * g[i];
    p[i] -= c.lr / bc1 * m[i] / (std::sqrt(v[i]) / std::sqrt(bc2) + c.eps);
  }
}

}  // namespace sf::exercise
