// decoder.h: what lesson decoder returns, the key numbers it prints, so tests/lessons/ can
// assert them (the lesson itself: decoder.cpp).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace sf::lessons {

// Decoder block and KV cache.
struct DecoderResult {
  std::vector<double> self_weights;   // (4, 4) causal self-attention, layer 0 head 0
  std::vector<double> cross_weights;  // (4, 3) cross-attention, layer 0 head 0
  double cache_vs_full;               // max |cached logits - recomputed logits|
  int64_t tiny_without, tiny_with;    // multiply-adds for 4 tokens of this model
  int64_t base_without, base_with;    // ... and 50 tokens of the base Transformer
  double pad_weight_encoder = -1;     // the largest weight on a <pad> source key: encoder self-attention
  double pad_weight_cross = -1;       // ... and the decoder's cross-attention (both must be 0)
};
DecoderResult run_lesson_decoder(std::ostream& out);

}  // namespace sf::lessons
