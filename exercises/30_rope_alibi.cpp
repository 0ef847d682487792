// Exercise 30 (lesson 24 extrapolation): RoPE's rotation and ALiBi's bias.
//
// Two ways to tell attention where tokens are without adding anything to the embeddings. RoPE
// rotates each pair of a query's (and key's) channels by an angle proportional to its position,
// so q . k depends only on the distance between them. ALiBi adds to each score a penalty
// proportional to the distance, with one slope per head.
//
//   rope_rotate:      x (B, H, T, D), D even, positions p = offset .. offset + T - 1 -> (B, H, T, D);
//                     channel i (i < D/2) is paired with channel i + D/2 (the rotate-half
//                     convention of GPT-NeoX and Llama), pair i turns by p * 10000^(-2i/D);
//                     keeps x's dtype; an odd D throws sf::ShapeError.
//   alibi_score_bias: slopes (H), T queries, S keys (S >= T) -> (1, H, T, S) float64: minus the
//                     head's slope times the distance between query t (at S - T + t) and key s;
//                     S < T throws sf::ShapeError.
//
// Stuck? scratchformer exercise hint 30 (1 the idea, 2 the formula, 3 the code).
// Check it: scratchformer exercise check 30   (or ./run.sh exercise 30)
// 中文说明：exercises/zh/30_rope_alibi.md（或 scratchformer exercise show 30 --lang zh）
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor rope_rotate(const Tensor& x, int64_t offset) {
  // TODO: return x rotated.
  todo("rope_rotate in exercises/30_rope_alibi.cpp");
}

Tensor alibi_score_bias(const std::vector<double>& slopes, int64_t T, int64_t S) {
  // TODO: return the (1, H, T, S) bias.
  todo("alibi_score_bias in exercises/30_rope_alibi.cpp");
}

}  // namespace sf::exercise
