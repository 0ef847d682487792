// Reference solution of exercise 20 (spoiler): a Pre-LN transformer block.
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor transformer_block(const SelfAttentionBlock& block, const Tensor& x, KVCache* cache) {
  const LayerNorm& ln_1 = block.ln_1;
  const LayerNorm& ln_2 = block.ln_2;
  Tensor h = x + causal_self_attention(block.attn, your_layer_norm(x, ln_1.weight, ln_1.bias, ln_1.eps), cache);
  Tensor a = your_gelu(linear(your_layer_norm(h, ln_2.weight, ln_2.bias, ln_2.eps), block.mlp.c_fc.weight,
                              block.mlp.c_fc.bias));                     // (B, T, 4C)
  return h + linear(a, block.mlp.c_proj.weight, block.mlp.c_proj.bias);  // (B, T, C)
}

}  // namespace sf::exercise
