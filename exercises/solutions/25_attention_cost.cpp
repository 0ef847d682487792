// Reference solution of exercise 25 (spoiler): counting attention's work and memory.
#include <string>

#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

AttentionCost attention_cost(int64_t T, int64_t C, int64_t H, int64_t bytes_per_number) {
  if (T < 1 || C < 1 || H < 1 || bytes_per_number < 1 || C % H != 0)
    throw ShapeError("attention_cost: T " + std::to_string(T) + ", C " + std::to_string(C) + ", H " +
                     std::to_string(H) + " (need sizes >= 1 and H dividing C)");
  AttentionCost cost;
  // Query t: (t + 1) keys x D for Q K^T and as many for P V, in each of H heads (H D = C):
  // sum over t of 2 (t + 1) C = T (T + 1) C.
  cost.attention_macs = T * (T + 1) * C;
  // 3C^2 (q, k, v) + C^2 (projection) + 8C^2 (the MLP) per token.
  cost.linear_macs = 12 * T * C * C;
  cost.p_bytes = H * T * T * bytes_per_number;
  return cost;
}

}  // namespace sf::exercise
