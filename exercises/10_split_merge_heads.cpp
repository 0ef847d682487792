// Exercise 10 (lesson 7 multihead): splitting into heads and merging them back.
//
// Multi-head attention cuts the C channels of every token into H heads of D = C / H channels
// and runs attention on each head separately; afterwards the heads are put side by side again.
//
//   shapes:  split_heads: x (B, T, C), H -> (B, H, T, D)
//            merge_heads: x (B, H, T, D) -> (B, T, H * D)
//   contract: H must divide C (else sf::ShapeError); sf ops keep the autograd graph.
//
// Derive it on paper first. Stuck? scratchformer exercise hint 10 (1 the idea), then
// hint 10 2 (the formula) and hint 10 3 (the code); a failing check also gives a hint.
// Check it: scratchformer exercise check 10   (or ./run.sh exercise 10)
// 中文说明：exercises/zh/10_split_merge_heads.md（或 scratchformer exercise show 10 --lang zh）
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor split_heads(const Tensor& x, int64_t H) {
  // TODO: return (B, H, T, D).
  todo("split_heads in exercises/10_split_merge_heads.cpp");
}

Tensor merge_heads(const Tensor& x) {
  // TODO: return (B, T, H * D).
  todo("merge_heads in exercises/10_split_merge_heads.cpp");
}

}  // namespace sf::exercise
