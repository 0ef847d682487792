// errata.h: what the two files of lesson 17 share: the GPT forward with article 004's mask
// bug, and the training loop both models run (errata.cpp, where the text's excerpts live).
#pragma once
#include <vector>

#include "data/lm_batches.h"
#include "nn/gpt.h"

namespace sf::lessons::errata {

// model's logits (B, T, V) for idx (B, T) with no causal mask: every position sees every token.
Tensor leaky_forward(GPT& model, const IntTensor& idx);

// `steps` steps of AdamW (lr 3e-3, no weight decay, clipping at 1.0) on `batches`, with the
// causal mask (model.forward) or without it (leaky_forward); a progress bar on stderr.
// Returns the training loss of every step.
std::vector<double> train(GPT& model, bool leaky, data::RandomWindows& batches, int64_t steps);

}  // namespace sf::lessons::errata
