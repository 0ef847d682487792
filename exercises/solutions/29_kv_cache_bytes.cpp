// Reference solution of exercise 29 (spoiler): the KV cache's bytes per token.
#include <string>

#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

int64_t kv_cache_bytes_per_token(int64_t n_layer, int64_t n_head, int64_t n_kv_head, int64_t D,
                                 int64_t bytes_per_number) {
  if (n_layer < 1 || n_head < 1 || n_kv_head < 1 || D < 1 || bytes_per_number < 1 || n_head % n_kv_head != 0)
    throw ShapeError("kv_cache_bytes_per_token: n_kv_head " + std::to_string(n_kv_head) + " must divide n_head " +
                     std::to_string(n_head) + ", and every size be >= 1");
  // One key and one value vector of D numbers per key/value head, in every layer.
  return 2 * n_layer * n_kv_head * D * bytes_per_number;
}

}  // namespace sf::exercise
