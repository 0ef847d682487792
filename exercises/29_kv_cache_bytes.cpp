// Exercise 29 (lesson 23 kv-cache): bytes per token for MHA, GQA and MQA.
//
// Generating with a KV cache keeps every earlier token's keys and values, in every layer. How
// much memory is that per token? Grouped-query attention (GQA) lets several query heads share
// one key/value head; multi-query attention (MQA) shares a single one.
//
//   input:   n_layer layers, n_head query heads, n_kv_head key/value heads (n_head for MHA, fewer
//            for GQA, 1 for MQA), head size D, bytes_per_number (2 for fp16/bf16, 4 for fp32)
//   returns: the bytes the cache grows by for one more token
//   contract: n_kv_head must divide n_head and every argument be >= 1, else sf::ShapeError.
//
// Stuck? scratchformer exercise hint 29 (1 the idea, 2 the formula, 3 the code).
// Check it: scratchformer exercise check 29   (or ./run.sh exercise 29)
// 中文说明：exercises/zh/29_kv_cache_bytes.md（或 scratchformer exercise show 29 --lang zh）
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

int64_t kv_cache_bytes_per_token(int64_t n_layer, int64_t n_head, int64_t n_kv_head, int64_t D,
                                 int64_t bytes_per_number) {
  // TODO: return the bytes per token.
  todo("kv_cache_bytes_per_token in exercises/29_kv_cache_bytes.cpp");
}

}  // namespace sf::exercise
