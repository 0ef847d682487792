// Exercise 21 (lesson 14 build-gpt): the GPT forward, from token ids to logits and the loss.
//
// Each token id becomes a vector (its row of the token table) plus the vector of its position;
// the blocks transform the sequence; a final LayerNorm and the head turn each position's vector
// into V scores for the next token. The loss is how surprised those scores are by the targets.
//
//   shapes:   idx (B, T) -> logits (B, T, V); targets (B, T); loss a scalar
//   weights:  model.wte.weight (V, C), model.wpe->weight (block_size, C), model.h[i] (the
//             blocks, i < model.h.size()), model.ln_f (weight, bias, eps), model.lm_head->weight
//             (V, C; with a tied head it is wte.weight itself), no head bias
//   contract: with a cache, idx holds only the tokens after the cache's cache->length() ones, so
//             their positions start there; cache->layers holds one KVCache per block (make
//             them when it is empty). Throws ShapeError naming block_size when a position would
//             reach it (check before the lookup). loss = mean cross-entropy over all B * T
//             positions, the logits as (B * T, V) and the targets as IntTensor({B * T},
//             targets->data) (the same ids, row after row); undefined when targets is null.
//   idea:     every step is one of your pieces (exercise.h lists them as your_*). Stuck?
//             `scratchformer exercise hint 21`.
//
// Check it: scratchformer exercise check 21   (or ./run.sh exercise 21)
// 中文说明：exercises/zh/21_gpt_forward.md（或 scratchformer exercise show 21 --lang zh）
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

GPTOutput gpt_forward(const GPT& model, const IntTensor& idx, const IntTensor* targets, GPTCache* cache) {
  // TODO: return {logits (B, T, V), loss (scalar, or undefined without targets)}.
  todo("gpt_forward in exercises/21_gpt_forward.cpp");
}

}  // namespace sf::exercise
