// Exercise 14 (lesson 12 decoder): appending to a KV cache.
//
// When a decoder generates token by token, the keys and values of the earlier tokens do not
// change, so each layer keeps them (sf::KVCache, nn/attention.h) and only the new token's are
// computed; attention then runs the new query over every cached key.
//
//   shapes:  cache.k, cache.v (B, H, S, D), undefined while empty (cache.k.defined() is false);
//            k, v (B, H, T_new, D) -> cache.k, cache.v (B, H, S + T_new, D)
//   formula: the new keys go after the old ones along the time axis (axis 2)
//   edges:   keys whose B, H or D differ from the cache's are a mistake: throw sf::ShapeError
//            naming both shapes (sf::concat already throws one).
//   contract: keeps the dtype; keys whose B, H or D differ from the cache's throw sf::ShapeError.
//
// Derive it on paper first. Stuck? scratchformer exercise hint 14 (1 the idea), then
// hint 14 2 (the formula) and hint 14 3 (the code); a failing check also gives a hint.
// Check it: scratchformer exercise check 14   (or ./run.sh exercise 14)
// 中文说明：exercises/zh/14_kv_cache_append.md（或 scratchformer exercise show 14 --lang zh）
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

void kv_cache_append(KVCache& cache, const Tensor& k, const Tensor& v) {
  // TODO: append k and v to the cache.
  todo("kv_cache_append in exercises/14_kv_cache_append.cpp");
}

}  // namespace sf::exercise
