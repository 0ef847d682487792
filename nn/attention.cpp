// attention.cpp: MultiHeadAttention (self and cross), the head split/merge ops, and the composed
// reference for the attention weights.
//
// Legend: B batch, T time (queries), S keys, C channels, H heads, G key/value heads, D head size.
#include "nn/attention.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "autograd/errors.h"
#include "autograd/graph.h"
#include "autograd/ops_attention.h"
#include "nn/heads.h"

namespace sf {

// ---- head split / merge (one strided copy each way) ----

// Copies D-element rows between columns [first, first + H * D) of x (B, T, W) and heads
// (B, H, T, D). to_heads: heads <- x; otherwise x <- heads.
template <class Tp>
static void copy_heads(Tp* x, Tp* heads, int64_t B, int64_t T, int64_t W, int64_t first, int64_t H, int64_t D,
                       bool to_heads) {
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t) {
        Tp* xr = x + (b * T + t) * W + first + h * D;
        Tp* hr = heads + ((b * H + h) * T + t) * D;
        if (to_heads) std::memcpy(hr, xr, static_cast<size_t>(D) * sizeof(Tp));
        else std::memcpy(xr, hr, static_cast<size_t>(D) * sizeof(Tp));
      }
}

Tensor split_heads(const Tensor& x, int64_t n, int64_t index, int64_t H) {
  if (x.dim() != 3 || x.size(2) % (n * H) != 0 || index < 0 || index >= n)
    throw ShapeError("split_heads: x " + shape_str(x.shape()) + " is not (B, T, " + std::to_string(n) +
                     " * H * D) with H = " + std::to_string(H));
  const int64_t C = x.size(2) / n;
  return slice_heads(x, index * C, H, C / H);
}

Tensor slice_heads(const Tensor& x, int64_t first, int64_t H, int64_t D) {
  if (x.dim() != 3 || H <= 0 || D <= 0 || first < 0 || first + H * D > x.size(2))
    throw ShapeError("slice_heads: x " + shape_str(x.shape()) + " has no columns [" + std::to_string(first) + ", " +
                     std::to_string(first + H * D) + ") for " + std::to_string(H) + " heads of " + std::to_string(D));
  const int64_t B = x.size(0), T = x.size(1), W = x.size(2);
  Tensor out = Tensor::empty({B, H, T, D}, x.dtype());  // (B, H, T, D)
  dispatch(x.dtype(), [&](auto tag) {
    using Tp = decltype(tag);
    copy_heads(const_cast<Tp*>(x.data<Tp>()), out.data<Tp>(), B, T, W, first, H, D, true);
  });
  return record(out, "slice_heads", {x}, [x, first, H, D](const Tensor& dout) {
    const int64_t B = x.size(0), T = x.size(1), W = x.size(2);
    // The copy writes every element when the heads are all of x's columns.
    Tensor dx = H * D == W ? Tensor::empty(x.shape(), x.dtype()) : Tensor::zeros(x.shape(), x.dtype());
    dispatch(x.dtype(), [&](auto tag) {
      using Tp = decltype(tag);
      copy_heads(dx.data<Tp>(), const_cast<Tp*>(dout.data<Tp>()), B, T, W, first, H, D, false);
    });
    accumulate_grad(x, std::move(dx));
  });
}

Tensor repeat_heads(const Tensor& x, int64_t n_rep) {
  if (x.dim() != 4 || n_rep <= 0)
    throw ShapeError("repeat_heads: x must be (B, G, S, D) and n_rep >= 1, got " + shape_str(x.shape()) + " and " +
                     std::to_string(n_rep));
  if (n_rep == 1) return x;
  const int64_t B = x.size(0), G = x.size(1), S = x.size(2), D = x.size(3);
  Tensor y = expand(reshape(x, {B, G, 1, S * D}), {B, G, n_rep, S * D});  // backward: sum over n_rep
  return reshape(y, {B, G * n_rep, S, D});                                // (B, H, S, D)
}

Tensor merge_heads(const Tensor& x) {
  if (x.dim() != 4) throw ShapeError("merge_heads: x must be (B, H, T, D), got " + shape_str(x.shape()));
  const int64_t B = x.size(0), H = x.size(1), T = x.size(2), D = x.size(3);
  Tensor out = Tensor::empty({B, T, H * D}, x.dtype());  // (B, T, C)
  dispatch(x.dtype(), [&](auto tag) {
    using Tp = decltype(tag);
    copy_heads(out.data<Tp>(), const_cast<Tp*>(x.data<Tp>()), B, T, H * D, 0, H, D, false);
  });
  return record(out, "merge_heads", {x}, [x](const Tensor& dout) {
    const int64_t B = x.size(0), H = x.size(1), T = x.size(2), D = x.size(3);
    Tensor dx = Tensor::empty(x.shape(), x.dtype());
    dispatch(x.dtype(), [&](auto tag) {
      using Tp = decltype(tag);
      copy_heads(const_cast<Tp*>(dout.data<Tp>()), dx.data<Tp>(), B, T, H * D, 0, H, D, true);
    });
    accumulate_grad(x, std::move(dx));
  });
}

// ---- the composed reference ----

Tensor mask_tensor(const AttentionMask& mask, int64_t T, int64_t S, DType dtype) {
  const bool pad = mask.key_padding.defined();
  if (!mask.causal && mask.window <= 0 && !pad) return Tensor();
  const int64_t Bm = pad ? mask.key_padding.size(0) : 1;
  Tensor m = Tensor::empty({Bm, 1, T, S}, dtype);  // (B or 1, 1, T, S)
  std::vector<double> padding = pad ? mask.key_padding.to_vector() : std::vector<double>();
  dispatch(dtype, [&](auto tag) {
    using Tp = decltype(tag);
    Tp* out = m.data<Tp>();
    for (int64_t b = 0; b < Bm; ++b)
      for (int64_t t = 0; t < T; ++t) {
        const auto [first, end] = mask.visible_keys(t, T, S);
        for (int64_t s = 0; s < S; ++s) {
          bool masked = s < first || s >= end || (pad && padding[static_cast<size_t>(b * S + s)] != 0);
          out[(b * T + t) * S + s] = masked ? Tp(1) : Tp(0);
        }
      }
  });
  return m;
}

Tensor attention_weights(const Tensor& q, const Tensor& k, const AttentionMask& mask, const Tensor& bias) {
  const int64_t T = q.size(2), S = k.size(2), D = q.size(3);
  Tensor scores = matmul_bt(q, k) * (1.0 / std::sqrt(static_cast<double>(D)));  // (B, H, T, S)
  if (bias.defined()) scores = scores + bias;
  Tensor m = mask_tensor(mask, T, S, q.dtype());  // (B or 1, 1, T, S)
  if (m.defined()) scores = masked_fill(scores, m, -std::numeric_limits<double>::infinity());
  return softmax(scores, -1);  // (B, H, T, S), an all -inf row gives zeros
}

// ---- MultiHeadAttention ----

static const AttentionConfig& validated(const AttentionConfig& c) {
  const std::string broken = head_rule_error(c.d_model, c.n_head, c.n_kv_head, c.pos == PosEncoding::rope, "d_model");
  if (!broken.empty()) throw ConfigError("attention: " + broken);
  if (c.cross && c.n_kv_head > 0 && c.n_kv_head != c.n_head)
    throw ConfigError("attention: cross-attention has n_kv_head = n_head, got " + std::to_string(c.n_kv_head));
  return c;
}

MultiHeadAttention::MultiHeadAttention(const AttentionConfig& config, Generator* gen)
    : Module(config.cross ? "CrossAttention" : "SelfAttention"),
      c_proj(validated(config).d_model, config.d_model, config.bias),
      attn_dropout(config.dropout, gen),
      resid_dropout(config.dropout, gen),
      config_(config) {
  const int64_t C = config.d_model;
  if (config.cross) {
    register_module("c_q", c_q.emplace(C, C, config.bias));
    register_module("c_kv", c_kv.emplace(C, 2 * C, config.bias));
  } else {
    register_module("c_attn", c_attn.emplace(C, C + 2 * n_kv_head() * head_size(), config.bias));  // q, k, v
  }
  register_module("c_proj", c_proj);
  register_module("attn_dropout", attn_dropout);
  register_module("resid_dropout", resid_dropout);
  if (config.pos == PosEncoding::alibi && !config.cross) alibi_slopes_ = alibi_slopes(config.n_head);
}

static void check_input(const Tensor& x, int64_t C, const char* what) {
  if (x.dim() != 3 || x.size(2) != C)
    throw ShapeError(std::string("attention: ") + what + " must be (B, T, " + std::to_string(C) + "), got " +
                     shape_str(x.shape()));
}

Tensor MultiHeadAttention::forward(const Tensor& x, const AttentionMask& mask, KVCache* cache) {
  if (config_.cross) throw ConfigError("attention: a cross-attention layer needs forward_cross");
  check_input(x, config_.d_model, "x");
  Tensor qkv = c_attn->forward(x);  // (B, T, C + 2 G D)
  Tensor y;                         // (B, T, C)
  if (reads_heads_in_place(cache)) y = attend_packed(qkv, mask);
  else y = attend_heads(qkv, mask, cache);
  return resid_dropout.forward(c_proj.forward(y));  // (B, T, C)
}

// The packed kernel reads the heads straight out of qkv. It needs what a training or scoring
// step of a plain model has: no cache, as many K/V heads as queries, no rotation of q and k, and
// no dropout on the weights (which needs the weights themselves, attend below).
bool MultiHeadAttention::reads_heads_in_place(const KVCache* cache) const {
  return !cache && n_kv_head() == config_.n_head && config_.pos != PosEncoding::rope &&
         !(training() && attn_dropout.p() > 0);
}

Tensor MultiHeadAttention::attend_packed(const Tensor& qkv, const AttentionMask& mask) {
  const int64_t B = qkv.size(0), T = qkv.size(1);
  AttentionOptions options = attention_options(mask, B, T, T, qkv.dtype());
  return attention_packed(qkv, config_.n_head, options, keep_attention_ ? &last_attention_ : nullptr);  // (B, T, C)
}

Tensor MultiHeadAttention::attend_heads(const Tensor& qkv, const AttentionMask& mask, KVCache* cache) {
  const int64_t C = config_.d_model, H = config_.n_head, G = n_kv_head(), D = head_size();
  Tensor q = slice_heads(qkv, 0, H, D);          // (B, H, T, D)
  Tensor k = slice_heads(qkv, C, G, D);          // (B, G, T, D)
  Tensor v = slice_heads(qkv, C + G * D, G, D);  // (B, G, T, D)
  const int64_t past = cache ? cache->length() : 0;
  if (config_.pos == PosEncoding::rope) {  // rotate by absolute position
    q = rope(q, past, config_.rope_base);
    k = rope(k, past, config_.rope_base);
  }
  if (cache) {  // append the new keys and values: (B, G, S, D) with S = past + T
    if (past > 0) {
      k = concat({cache->k, k}, 2);
      v = concat({cache->v, v}, 2);
    }
    cache->k = k.detach();
    cache->v = v.detach();
  }
  return merge_heads(attend(q, repeat_heads(k, H / G), repeat_heads(v, H / G), mask));  // (B, T, C)
}

Tensor MultiHeadAttention::forward_cross(const Tensor& x, const Tensor& memory, const Tensor& memory_padding,
                                         KVCache* cache) {
  if (!config_.cross) throw ConfigError("attention: a self-attention layer has no forward_cross");
  check_input(x, config_.d_model, "x");
  const int64_t H = config_.n_head;
  Tensor q = split_heads(c_q->forward(x), 1, 0, H);  // (B, H, T, D)
  Tensor k, v;                                       // (B, H, S, D)
  if (cache && cache->k.defined()) {
    k = cache->k;  // the memory does not change while decoding
    v = cache->v;
  } else {
    check_input(memory, config_.d_model, "memory");
    Tensor kv = c_kv->forward(memory);  // (B, S, 2C)
    k = split_heads(kv, 2, 0, H);
    v = split_heads(kv, 2, 1, H);
    if (cache) {
      cache->k = k.detach();
      cache->v = v.detach();
    }
  }
  AttentionMask mask;
  mask.key_padding = memory_padding;
  Tensor y = attend(q, k, v, mask);                              // (B, H, T, D)
  return resid_dropout.forward(c_proj.forward(merge_heads(y)));  // (B, T, C)
}

AttentionOptions MultiHeadAttention::attention_options(const AttentionMask& mask, int64_t B, int64_t T, int64_t S,
                                                       DType dtype) const {
  if (mask.key_padding.defined() && mask.key_padding.shape() != Shape{B, S})
    throw ShapeError("attention: key padding must be (B, S) = " + shape_str({B, S}) + ", got " +
                     shape_str(mask.key_padding.shape()));
  AttentionOptions options;
  static_cast<AttentionMask&>(options) = mask;
  options.kernel = config_.kernel;
  if (!alibi_slopes_.empty()) options.bias = alibi_bias(alibi_slopes_, T, S, dtype);  // (1, H, T, S)
  return options;
}

Tensor MultiHeadAttention::attend(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionMask& mask) {
  AttentionOptions options = attention_options(mask, q.size(0), q.size(2), k.size(2), q.dtype());
  if (training() && attn_dropout.p() > 0) {                  // composed path: dropout acts on the weights
    Tensor p = attention_weights(q, k, mask, options.bias);  // (B, H, T, S)
    if (keep_attention_) last_attention_ = p.detach();
    return matmul(attn_dropout.forward(p), v);  // (B, H, T, D)
  }
  return attention(q, k, v, options, keep_attention_ ? &last_attention_ : nullptr);  // fused
}

int64_t kv_cache_bytes_per_token(const AttentionConfig& config, DType dtype) {
  const int64_t G = config.n_kv_head > 0 ? config.n_kv_head : config.n_head;
  const int64_t D = config.d_model / config.n_head;
  return 2 * G * D * static_cast<int64_t>(dtype_size(dtype));  // one key and one value per head
}

std::string MultiHeadAttention::extra_repr() const {
  std::string s = "d_model=" + std::to_string(config_.d_model) + ", heads=" + std::to_string(config_.n_head);
  if (n_kv_head() != n_head()) s += ", kv_heads=" + std::to_string(n_kv_head());
  if (config_.pos == PosEncoding::rope || config_.pos == PosEncoding::alibi)
    s += std::string(", ") + pos_encoding_name(config_.pos);
  return s;
}

}  // namespace sf
