// Exercise 20 (lesson 14 build-gpt): a Pre-LN transformer block.
//
// A block is two residual sublayers: attention lets each token gather from the ones before it,
// the MLP transforms each token on its own. Pre-LN (GPT-2) normalises the input of each sublayer
// and leaves the residual path x untouched, which is why deep Pre-LN stacks train without warmup
// tricks (lesson 15 prenorm).
//
//   shapes:   x (B, T, C) -> (B, T, C); the MLP's hidden layer is (B, T, 4C)
//   weights:  block.ln_1 and block.ln_2 (weight, bias, eps), block.attn (exercise 19),
//             block.mlp.c_fc (4C, C) + bias and block.mlp.c_proj (C, 4C) + bias
//   contract: the attention sublayer first, then the MLP sublayer; the MLP's activation is GELU
//             (tanh approximation, your exercise 13); no dropout. `cache` goes to the attention.
//   idea:     each sublayer adds f(LayerNorm(x)) to x. Stuck? `scratchformer exercise hint 20`.
//
// Check it: scratchformer exercise check 20   (or ./run.sh exercise 20)
// 中文说明：exercises/zh/20_transformer_block.md（或 scratchformer exercise show 20 --lang zh）
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor transformer_block(const SelfAttentionBlock& block, const Tensor& x, KVCache* cache) {
  // TODO: return the block's output (B, T, C).
  todo("transformer_block in exercises/20_transformer_block.cpp");
}

}  // namespace sf::exercise
