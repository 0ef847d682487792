// Reference solution of exercise 10 (spoiler): splitting and merging heads.
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor split_heads(const Tensor& x, int64_t H) {
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2);
  if (C % H != 0) throw ShapeError("split_heads: H " + std::to_string(H) + " does not divide C " + std::to_string(C));
  return transpose(reshape(x, {B, T, H, C / H}), 1, 2);  // (B, T, H, D) -> (B, H, T, D)
}

Tensor merge_heads(const Tensor& x) {
  const int64_t B = x.size(0), H = x.size(1), T = x.size(2), D = x.size(3);
  return reshape(transpose(x, 1, 2), {B, T, H * D});  // (B, T, H, D) -> (B, T, C)
}

}  // namespace sf::exercise
