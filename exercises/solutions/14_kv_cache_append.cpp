// Reference solution of exercise 14 (spoiler): appending to a KV cache.
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

void kv_cache_append(KVCache& cache, const Tensor& k, const Tensor& v) {
  if (k.dim() != 4 || k.shape() != v.shape())
    throw ShapeError("kv_cache_append: k " + shape_str(k.shape()) + " and v " + shape_str(v.shape()) +
                     " must both be (B, H, T, D)");
  if (!cache.k.defined()) {
    cache.k = k;
    cache.v = v;
    return;
  }
  if (k.size(0) != cache.k.size(0) || k.size(1) != cache.k.size(1) || k.size(3) != cache.k.size(3))
    throw ShapeError("kv_cache_append: k " + shape_str(k.shape()) + " does not fit the cache " +
                     shape_str(cache.k.shape()));
  cache.k = concat({cache.k, k}, 2);  // (B, H, S + T, D)
  cache.v = concat({cache.v, v}, 2);
}

}  // namespace sf::exercise
