// Exercise 25 (lesson 20 attention-cost): attention's work and memory against the linear
// layers', counted by hand.
//
// The linear layers touch each token once; attention scores every pair of tokens. Count both for
// one layer and one sequence, the way lesson attention-cost does, and the memory of P.
//
//   input:   T tokens, width C, H heads (D = C / H), bytes_per_number (4 for float32)
//   returns: attention_macs: multiply-adds of causal Q K^T and P V (query t sees t + 1 keys, D
//              per key per head, for all H heads);
//            linear_macs: multiply-adds of q, k, v (3C x C), the output projection (C x C) and
//              the MLP (4C x C and C x 4C), for T tokens;
//            p_bytes: the probabilities P (H, T, T) that are kept for backward.
//   contract: T, C, H, bytes_per_number >= 1 and H dividing C, else sf::ShapeError.
//
// Stuck? scratchformer exercise hint 25 (1 the idea, 2 the formula, 3 the code).
// Check it: scratchformer exercise check 25   (or ./run.sh exercise 25)
// 中文说明：exercises/zh/25_attention_cost.md（或 scratchformer exercise show 25 --lang zh）
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

AttentionCost attention_cost(int64_t T, int64_t C, int64_t H, int64_t bytes_per_number) {
  // TODO: return {attention_macs, linear_macs, p_bytes}.
  todo("attention_cost in exercises/25_attention_cost.cpp");
}

}  // namespace sf::exercise
