// Exercise 23 (lesson 14 build-gpt; sampling as in lesson 1 task): generate() with the KV cache.
//
// A language model gives scores for the next token; writing text is drawing one, appending it,
// and asking again. The KV cache makes each new token cost one position, not the whole prefix.
//
//   sample_token: logits (V) -> a token id
//     temperature <= 0: the most likely token (the first of equal ones), no draw.
//     Else sort the ids by logit, most likely first (ties: smaller id first, std::stable_sort);
//     keep the top_k first (0 = all); weights p_i = exp((z_i - z_max) / temperature) (the
//     softmax before dividing by the sum); with top_p < 1 keep only the shortest prefix whose
//     weight reaches top_p times the kept total (at least one); then one draw:
//     r = gen.uniform() * (kept total), walk the kept ids subtracting p_i, stop when r < 0.
//     (This order of draws is the framework's, so the checker can compare token by token.)
//   generate: prompt (T0 >= 1 ids) -> prompt + max_new_tokens ids
//     No gradients (sf::NoGradGuard). Start from an empty `cache` (clear what it holds), feed the
//     prompt once (its last block_size tokens) through your gpt_forward with it, then each new
//     token once, right after drawing it, except the last one drawn (nothing is drawn after it):
//     at the end the cache holds the prompt and every new token but the last. When the cache
//     would pass block_size, clear it and feed the last block_size tokens again (the window
//     slides).
//   idea: the next token depends only on the last position's logits. Stuck? `scratchformer
//         exercise hint 23`.
//
// Check it: scratchformer exercise check 23   (or ./run.sh exercise 23)
// 中文说明：exercises/zh/23_generate.md（或 scratchformer exercise show 23 --lang zh）
#include <algorithm>
#include <cmath>
#include <numeric>

#include "exercises/exercise.h"

namespace sf::exercise {

int64_t sample_token(const std::vector<double>& logits, const SamplingConfig& s, Generator& gen) {
  // TODO: return the drawn token id.
  todo("sample_token in exercises/23_generate.cpp");
}

std::vector<int32_t> generate(const GPT& model, const std::vector<int32_t>& prompt, int64_t max_new_tokens,
                              const SamplingConfig& s, Generator& gen, GPTCache& cache) {
  // TODO: return the prompt followed by max_new_tokens sampled ids.
  todo("generate in exercises/23_generate.cpp");
}

}  // namespace sf::exercise
