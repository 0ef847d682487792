// Exercise 3 (lesson 4, embeddings): the backward of an embedding lookup, a scatter-add.
//
// out = W[ids] picks one row of the table W (V, C) per token id. In the backward, row i of
// dout (the gradient of token i's vector) belongs to row ids[i] of W. Write dW.
//
//   shapes:  ids (N) or (B, T) (any shape, N = ids.numel() ids in row-major order),
//            dout (ids shape..., C), V the vocabulary size -> dW (V, C)
//   formula: dW[v] = sum over every i with ids[i] == v of dout[i]   (zero if v never occurs)
//   hint:    dout.to_vector() gives its values as doubles, row i at [i * C, (i + 1) * C);
//            Tensor::from_vector(values, {V, C}, dout.dtype()) builds the result.
//            A token that occurs twice receives both gradients: add, never assign.
//
// Check it: scratchformer exercise check 3   (or ./run.sh exercise 3)
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor embedding_backward(const IntTensor& ids, const Tensor& dout, int64_t V) {
  // TODO: return dW (V, C).
  todo("embedding_backward in exercises/03_embedding_backward.cpp");
}

}  // namespace sf::exercise
