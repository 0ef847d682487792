// Exercise 3 (lesson 4 embeddings): the backward of an embedding lookup, a scatter-add.
//
// out = W[ids] picks one row of the table W (V, C) per token id. In the backward, row i of
// dout (the gradient of token i's vector) belongs to row ids[i] of W. Write dW.
//
//   shapes:  ids (N) or (B, T) (any shape, N = ids.numel() ids in row-major order),
//            dout (ids shape..., C), V the vocabulary size -> dW (V, C)
//   idea:    the lookup is a one-hot matmul; its transpose scatters each row of dout back to
//            the row of W it came from.
//   contract: dW has dout's dtype; an id outside [0, V) throws sf::ShapeError naming it.
//
// Derive it on paper first. Stuck? scratchformer exercise hint 3 (1 the idea), then
// hint 3 2 (the formula) and hint 3 3 (the code); a failing check also gives a hint.
// Check it: scratchformer exercise check 3   (or ./run.sh exercise 3)
// 中文说明：exercises/zh/03_embedding_backward.md（或 scratchformer exercise show 3 --lang zh）
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor embedding_backward(const IntTensor& ids, const Tensor& dout, int64_t V) {
  // TODO: return dW (V, C).
  todo("embedding_backward in exercises/03_embedding_backward.cpp");
}

}  // namespace sf::exercise
