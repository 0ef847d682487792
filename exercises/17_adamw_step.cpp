// Exercise 17 (lesson 13 training): one AdamW update (torch.optim.AdamW).
//
// Adam keeps two running averages per weight, of the gradient (m) and of its square (v), and
// moves each weight by about lr in the direction of m / sqrt(v). AdamW also shrinks the weights
// directly (decoupled weight decay) instead of adding wd * p to the gradient.
//
//   input:   p (weights, updated in place), g (gradient), m and v (same size, in place, zero
//            before the first update), t = 1, 2, ... the update number, config {lr, beta1,
//            beta2, eps, weight_decay}
//   formula: for every i:
//              p = p (1 - lr wd)
//              m = beta1 m + (1 - beta1) g
//              v = beta2 v + (1 - beta2) g^2
//              p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
//   contract: every field of the config is used (the checker tries other betas and eps).
//
// Derive it on paper first. Stuck? scratchformer exercise hint 17 (1 the idea), then
// hint 17 2 (the formula) and hint 17 3 (the code); a failing check also gives a hint.
// Check it: scratchformer exercise check 17   (or ./run.sh exercise 17)
// 中文说明：exercises/zh/17_adamw_step.md（或 scratchformer exercise show 17 --lang zh）
#include <cmath>

#include "exercises/exercise.h"

namespace sf::exercise {

void adamw_step(std::vector<double>& p, const std::vector<double>& g, std::vector<double>& m, std::vector<double>& v,
                int64_t t, const AdamWConfig& config) {
  // TODO: update p, m and v.
  todo("adamw_step in exercises/17_adamw_step.cpp");
}

}  // namespace sf::exercise
