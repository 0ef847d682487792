// Reference solution of exercise 31 (spoiler): gradient accumulation over unequal micro-batches.
#include <string>

#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

std::vector<double> accumulate_gradients(const std::vector<std::vector<double>>& micro_grads,
                                         const std::vector<int64_t>& rows) {
  if (micro_grads.empty() || micro_grads.size() != rows.size())
    throw ShapeError("accumulate_gradients: " + std::to_string(micro_grads.size()) + " gradients and " +
                     std::to_string(rows.size()) + " row counts");
  const size_t n = micro_grads[0].size();
  std::vector<double> total(n, 0.0);
  int64_t all_rows = 0;
  for (size_t k = 0; k < micro_grads.size(); ++k) {
    if (rows[k] < 1 || micro_grads[k].size() != n)
      throw ShapeError("accumulate_gradients: micro-batch " + std::to_string(k) + " has " + std::to_string(rows[k]) +
                       " rows and " + std::to_string(micro_grads[k].size()) + " gradient values");
    // Its mean-loss gradient times its rows is the sum of its rows' gradients.
    for (size_t i = 0; i < n; ++i) total[i] += static_cast<double>(rows[k]) * micro_grads[k][i];
    all_rows += rows[k];
  }
  for (double& g : total) g /= static_cast<double>(all_rows);
  return total;
}

}  // namespace sf::exercise
