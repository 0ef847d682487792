// positional.h: how a transformer learns where each token is. Attention itself is blind to
// order, so one of these is chosen by name in the model config:
//   "sinusoidal"  fixed sin/cos waves added to the token embeddings (Vaswani et al. 2017)
//   "learned"     a trained (block_size, C) table added to the embeddings (GPT-2's wpe)
//   "rope"        rotary embeddings: q and k rotated by position-dependent angles inside
//                 attention, so q.k depends only on the distance (Su et al. 2021)
//   "alibi"       no embedding; a per-head linear penalty -slope * |i - j| added to the
//                 attention scores (Press et al. 2022)
//   "none"        nothing (a causal model can still infer position, weakly)
//
// Legend: B batch, T time (queries), S keys, C channels, H heads, D head size.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "autograd/names.h"
#include "autograd/tensor.h"

namespace sf {

enum class PosEncoding { none, sinusoidal, learned, rope, alibi };
inline constexpr std::array<Named<PosEncoding>, 5> kPosEncodings = {{{"learned", PosEncoding::learned},
                                                                     {"sinusoidal", PosEncoding::sinusoidal},
                                                                     {"rope", PosEncoding::rope},
                                                                     {"alibi", PosEncoding::alibi},
                                                                     {"none", PosEncoding::none}}};
// The config reads model.pos_encoding through kPosEncodings (train/options.h).
const char* pos_encoding_name(PosEncoding p);

// PE (T, C) for positions offset .. offset+T-1:
//   PE[p, 2i] = sin(p / 10000^(2i/C)),  PE[p, 2i+1] = cos(p / 10000^(2i/C)).
Tensor sinusoidal_table(int64_t T, int64_t C, int64_t offset = 0, DType dtype = DType::f32);

// Rotary embedding of x (B, H, T, D) at positions offset .. offset+T-1, "rotate-half"
// convention of GPT-NeoX and Hugging Face's Llama (pairs (i, i + D/2), not adjacent pairs):
//   theta_i = p * base^(-2i/D),  i < D/2
//   y[i]       = x[i] cos theta_i - x[i + D/2] sin theta_i
//   y[i + D/2] = x[i + D/2] cos theta_i + x[i] sin theta_i
// The backward is the inverse rotation (angle -theta). D must be even.
Tensor rope(const Tensor& x, int64_t offset = 0, double base = 10000.0);

// ALiBi slopes, one per head, as in the paper's reference code: for H a power of two,
// m_h = 2^(-8 (h+1) / H); otherwise the slopes of the closest smaller power of two n, followed
// by every other slope of 2n until there are H.
std::vector<double> alibi_slopes(int64_t H);
// The ALiBi score bias (1, H, T, S): -m_h * |p_t - s| with p_t = S - T + t the absolute position
// of query t (queries are the last T of the S keys, as with a KV cache).
Tensor alibi_bias(const std::vector<double>& slopes, int64_t T, int64_t S, DType dtype = DType::f32);

}  // namespace sf
