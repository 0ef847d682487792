// kv_cache.h: what lesson kv_cache returns, the key numbers it prints, so tests/lessons/ can
// assert them (the lesson itself: kv_cache.cpp).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace sf::lessons {

// The KV cache's memory: bytes per token and context for MHA, GQA and MQA, and sampling
// measured with and without the cache.
struct KvCacheOptions {
  int64_t new_tokens = 200;  // sampled in the measurement
  int repeats = 1;
};
struct KvCacheResult {
  double engine_bytes_per_token = 0, formula_bytes_per_token = 0;  // the small GPT's cache
  std::vector<double> per_token_fp16, context_fp16;                // GPT-2 small MHA, GQA, MQA, then 7B MHA, GQA, MQA
  double cached_tokens_per_s = 0, uncached_tokens_per_s = 0;
  bool same_tokens = false;  // greedy: the cache changes the speed, not the tokens
};
KvCacheResult run_lesson_kv_cache(std::ostream& out, const KvCacheOptions& options);
KvCacheResult run_lesson_kv_cache(std::ostream& out);

}  // namespace sf::lessons
