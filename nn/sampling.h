// sampling.h: drawing text from a GPT, one token at a time with the KV cache. The one sampler
// of the project: GPT::generate, `scratchformer sample` and the samples printed while training
// all draw through it.
//
// Each new token is drawn from softmax(logits / temperature) over the last position, restricted
// to the top_k most likely tokens (0 = all) and then to the smallest set whose probability
// reaches top_p (nucleus sampling; 1 = all). temperature 0 picks the most likely token.
//
// A byte-level vocabulary (byte-level BPE) has tokens that hold part of a character: a Chinese
// character is three UTF-8 bytes, and a token may be one of them. Drawn freely, such a model
// writes byte sequences that are not UTF-8 (a lead byte with no continuation, a continuation
// byte with no lead), and the text shows "�" (U+FFFD) there. Given the bytes of every token
// (SampleOptions::token_bytes), the sampler keeps to whole characters: see whole_characters.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "autograd/tensor.h"
#include "nn/gpt.h"

namespace sf {

struct SampleOptions {
  int64_t max_new_tokens = 200;
  double temperature = 1.0;
  int64_t top_k = 0;
  double top_p = 1.0;
  // The bytes each token id stands for, for a byte-level vocabulary; null for one whose tokens
  // are whole characters (the char tokenizer), where there is nothing to keep whole.
  std::shared_ptr<const std::vector<std::string>> token_bytes;
  // With token_bytes: each draw is restricted to the tokens whose bytes can follow the bytes
  // drawn so far in valid UTF-8 (finishing the character left open, or starting new ones), the
  // probabilities renormalised over them before top_k and top_p; and a sample ends on a character
  // boundary: when max_new_tokens leaves a character open, up to 3 more tokens (its missing
  // continuation bytes, nothing else) finish it. Off, tokens are drawn as the model says, and the
  // text can hold broken characters (tests/nn/test_sampling_utf8.cpp counts them).
  bool whole_characters = true;
};

// The index drawn from one row of logits (V values, float32 or float64) under the options above.
int32_t sample_from_logits(const float* logits, int64_t V, const SampleOptions& o, Generator& gen);
int32_t sample_from_logits(const double* logits, int64_t V, const SampleOptions& o, Generator& gen);

// Continues each prompt (every row at least one token, all rows the same length) by
// max_new_tokens sampled tokens, drawing row 0, 1, ... at each step. Runs the model in eval mode
// without gradients; the context slides (and the cache is recomputed) past block_size.
// `on_token`, when given, sees each new token of a one-row call as it is drawn (to stream it) and
// returns false to stop early (e.g. on Ctrl-C); the tokens drawn so far are returned.
std::vector<std::vector<int32_t>> sample_rows(GPT& model, std::vector<std::vector<int32_t>> prompts,
                                              const SampleOptions& o, Generator& gen,
                                              const std::function<bool(int32_t)>& on_token = nullptr);

// One row: the prompt followed by what sample_rows draws after it.
std::vector<int32_t> sample_gpt(GPT& model, std::vector<int32_t> prompt, const SampleOptions& o, Generator& gen,
                                const std::function<bool(int32_t)>& on_token = nullptr);

}  // namespace sf
