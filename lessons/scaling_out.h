// scaling_out.h: what lesson scaling_out returns, the key numbers it prints, so tests/lessons/ can
// assert them (the lesson itself: scaling_out.cpp).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace sf::lessons {

// Scaling out: gradient accumulation against one big batch (real runs), a ring all-reduce
// simulated, its cost at 8 to 1024 GPUs (a model), and where data parallelism stops helping.
struct ScalingOutResult {
  int64_t gradient_elements = 0;
  double gradient_diff = 0;                                 // |mean of 2 micro-batch gradients - batch of 8| / max |g|
  std::vector<double> big, accum2, accum4, small;           // training losses: 8, 2 x 4, 4 x 2, 4 (no accumulation)
  double accum2_diff = 0, accum4_diff = 0, small_diff = 0;  // largest relative loss difference from `big`
  double ring_error = 0;                                    // simulated ring all-reduce against the direct sum
  double ring_sent_fraction = 0;                            // values sent per rank / buffer size: 2(N-1)/N
  int64_t default_params = 0, gpt2_params = 0;
  std::vector<double> default_ms, gpt2_ms;  // modelled all-reduce ms, per link (5) x GPUs (8 64 256 1024)
  std::vector<double> dp_share;             // share of a GPT-2 small step in the all-reduce, 8 64 256 512 GPUs
  std::vector<double> memory_gb;            // per GPU on 64: data parallel, ZeRO-1, -2, -3
};
ScalingOutResult run_lesson_scaling_out(std::ostream& out);

}  // namespace sf::lessons
