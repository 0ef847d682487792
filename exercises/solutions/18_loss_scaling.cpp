// Reference solution of exercise 18 (spoiler): dynamic loss scaling.
#include <cmath>

#include "exercises/exercise.h"

namespace sf::exercise {

bool loss_scaler_update(LossScaler& s, std::vector<std::vector<double>>& grads) {
  bool finite = true;
  for (auto& g : grads)
    for (double& x : g) {
      x /= s.scale;
      finite = finite && std::isfinite(x);
    }
  if (!finite) {  // the scale was too large: skip this step, halve it
    s.scale *= s.backoff_factor;
    s.good_steps = 0;
    return false;
  }
  if (++s.good_steps == s.growth_interval) {
    s.scale *= s.growth_factor;
    s.good_steps = 0;
  }
  return true;
}

}  // namespace sf::exercise
