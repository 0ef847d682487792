// gradcheck_modules.cpp: the registry of module and model gradient checks.
//
// Each case builds its module, converts it to float64 with Module::to, and hands gradcheck the
// module's inputs followed by every parameter, so the check covers d out / d x and d out / d W.
// Whole models are reduced to one number sum(logits * R) with a fixed random R: one backward
// gives every gradient, and central differences check a subset (see model_subset).
//
// Legend: B batch, T time, S keys/memory, C channels, H heads, D head size, V vocab.
#include "nn/gradcheck_modules.h"

#include <memory>

#include "nn/attention.h"
#include "nn/blocks.h"
#include "nn/gpt.h"
#include "nn/layers.h"
#include "nn/transformer.h"

namespace sf {
namespace {

using Inputs = std::vector<Tensor>;

Tensor input(const Shape& shape, uint64_t seed) {  // float64 in [-1, 1), requires grad
  Generator gen(seed);
  return Tensor::rand(shape, gen, -1.0, 1.0, DType::f64).requires_grad_();
}

Tensor constant(const Shape& shape, uint64_t seed) {  // float64 in [-1, 1), no grad
  Generator gen(seed);
  return Tensor::rand(shape, gen, -1.0, 1.0, DType::f64);
}

// gradcheck over `inputs` followed by m's parameters (m converted to float64 first); `keep`
// chooses which parameters get the (costly) finite differences, all of them by default.
template <class F>
GradcheckResult check(Module& m, Inputs inputs, F f,
                      const std::function<bool(const std::string&, const Tensor&)>& keep = nullptr) {
  m.to(DType::f64);
  const size_t n_inputs = inputs.size();
  for (const auto& [name, p] : m.named_parameters())
    if (!keep || keep(name, p)) inputs.push_back(p);
  return gradcheck([&](const Inputs& in) { return f(Inputs(in.begin(), in.begin() + static_cast<long>(n_inputs))); },
                   inputs);
}

// For whole models: every embedding, LayerNorm and bias, and the weight matrices of the first
// layer of each stack. The deeper layers run the same code (each module is checked in full on
// its own above); skipping their matrices keeps the model checks fast, also under ASan.
bool model_subset(const std::string& name, const Tensor& p) {
  if (p.dim() < 2) return true;
  bool in_layer = name.find(".h.") != std::string::npos || name.find(".layers.") != std::string::npos;
  return !in_layer || name.find(".h.0.") != std::string::npos || name.find(".layers.0.") != std::string::npos;
}

// Key padding (B, S) with the last `pad` positions of batch element 1 padded.
Tensor padding(int64_t B, int64_t S, int64_t pad) {
  std::vector<double> m(static_cast<size_t>(B * S), 0.0);
  for (int64_t s = S - pad; s < S; ++s) m[static_cast<size_t>(1 * S + s)] = 1.0;
  return Tensor::from_vector(m, {B, S}, DType::f64);
}

IntTensor ids(int64_t B, int64_t T, int64_t V, uint64_t seed) {
  Generator gen(seed);
  IntTensor t({B, T}, std::vector<int32_t>(static_cast<size_t>(B * T)));
  for (int64_t i = 0; i < B * T; ++i) t[i] = static_cast<int32_t>(gen.randint(V));
  return t;
}

GPTConfig tiny_gpt(PosEncoding pos, NormPlacement norm) {
  GPTConfig c;
  c.vocab_size = 11;
  c.block_size = 8;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_embd = 8;
  c.d_ff = 16;
  c.pos_encoding = pos;
  c.norm = norm;
  c.seed = 7;
  return c;
}

TransformerConfig tiny_transformer(PosEncoding pos, NormPlacement norm) {
  TransformerConfig c;
  c.src_vocab_size = 9;
  c.tgt_vocab_size = 10;
  c.max_len = 8;
  c.n_encoder_layers = 2;
  c.n_decoder_layers = 2;
  c.n_head = 2;
  c.d_model = 8;
  c.d_ff = 8;
  c.dropout = 0.0;
  c.pos_encoding = pos;
  c.norm = norm;
  c.seed = 7;
  return c;
}

AttentionConfig attn_config(PosEncoding pos = PosEncoding::none, bool cross = false) {
  AttentionConfig a;
  a.d_model = 8;
  a.n_head = 2;
  a.pos = pos;
  a.cross = cross;
  return a;
}

// "pre-LN rope": a whole-model case's name.
std::string variant_name(NormPlacement norm, PosEncoding pos) {
  return std::string(norm_name(norm)) + "-LN " + pos_encoding_name(pos);
}

BlockConfig block_config(NormPlacement norm) {
  BlockConfig b;
  b.d_model = 8;
  b.n_head = 2;
  b.d_ff = 12;
  b.norm = norm;
  return b;
}

}  // namespace

std::vector<GradcheckCase> module_gradcheck_cases() {
  std::vector<GradcheckCase> cases;
  auto add = [&](const std::string& group, const std::string& name, std::function<GradcheckResult()> run) {
    cases.push_back({group, name, std::move(run)});
  };

  // ---- layers ----
  for (bool bias : {true, false})
    add("nn.layers", bias ? "Linear" : "Linear no bias", [bias] {
      Linear m(5, 3, bias);
      return check(m, {input({2, 4, 5}, 1)}, [&](const Inputs& x) { return m.forward(x[0]); });
    });
  add("nn.layers", "Embedding (repeated ids)", [] {
    Embedding m(6, 4);
    IntTensor idx({2, 3}, {1, 5, 1, 0, 1, 5});
    return check(m, {}, [&](const Inputs&) { return m.forward(idx); });
  });
  for (bool bias : {true, false})
    add("nn.layers", bias ? "LayerNorm" : "LayerNorm no bias", [bias] {
      LayerNorm m(6, 1e-5, bias);
      Generator gen(3);  // non-trivial gain and bias
      m.to(DType::f64);
      for (const Tensor& p : m.parameters()) {
        double* w = const_cast<Tensor&>(p).data<double>();
        for (int64_t i = 0; i < p.numel(); ++i) w[i] += 0.5 * (gen.uniform() - 0.5);
      }
      return check(m, {input({2, 3, 6}, 2)}, [&](const Inputs& x) { return m.forward(x[0]); });
    });
  for (Activation act : {Activation::gelu, Activation::gelu_tanh, Activation::relu})
    add("nn.layers", std::string("FeedForward ") + activation_name(act), [act] {
      FeedForward m(4, 10, act);
      return check(m, {input({2, 3, 4}, 4)}, [&](const Inputs& x) { return m.forward(x[0]); });
    });

  // ---- attention pieces ----
  add("nn.attention", "split_heads chunk 1 of 3", [] {
    return gradcheck([](const Inputs& x) { return split_heads(x[0], 3, 1, 2); }, {input({2, 3, 12}, 5)});
  });
  add("nn.attention", "merge_heads", [] {
    return gradcheck([](const Inputs& x) { return merge_heads(x[0]); }, {input({2, 2, 3, 4}, 6)});
  });
  add("nn.attention", "rope with offset", [] {
    return gradcheck([](const Inputs& x) { return rope(x[0], 3); }, {input({2, 2, 3, 4}, 7)});
  });
  add("nn.attention", "attention_weights composed, causal + padding + alibi bias", [] {
    AttentionMask mask;
    mask.causal = true;
    mask.key_padding = padding(2, 4, 2);
    Tensor bias = alibi_bias(alibi_slopes(2), 4, 4, DType::f64);
    return gradcheck([&](const Inputs& x) { return attention_weights(x[0], x[1], mask, bias); },
                     {input({2, 2, 4, 4}, 8), input({2, 2, 4, 4}, 9)});
  });

  // ---- MultiHeadAttention, one case per mask and positional encoding ----
  struct SelfCase {
    std::string name;
    PosEncoding pos;
    bool causal;
    int64_t window;
    int64_t pad;  // padded keys in batch element 1
  };
  for (const SelfCase& c : std::vector<SelfCase>{{"no mask", PosEncoding::none, false, 0, 0},
                                                 {"causal", PosEncoding::none, true, 0, 0},
                                                 {"key padding", PosEncoding::none, false, 0, 2},
                                                 {"fully padded row", PosEncoding::none, false, 0, 5},
                                                 {"sliding window 2", PosEncoding::none, true, 2, 0},
                                                 {"causal rope", PosEncoding::rope, true, 0, 0},
                                                 {"causal alibi", PosEncoding::alibi, true, 0, 0},
                                                 {"alibi + padding", PosEncoding::alibi, false, 0, 1}})
    add("nn.attention", "self-attention " + c.name, [c] {
      MultiHeadAttention m(attn_config(c.pos));
      AttentionMask mask;
      mask.causal = c.causal;
      mask.window = c.window;
      if (c.pad > 0) mask.key_padding = padding(2, 5, c.pad);
      return check(m, {input({2, 5, 8}, 10)}, [&](const Inputs& x) { return m.forward(x[0], mask); });
    });
  // Grouped-query (2 K/V heads for 4 query heads) and multi-query (1) self-attention, on the
  // split path: narrower c_attn, K/V heads repeated (repeat_heads) for each group.
  for (int64_t kv : {2, 1})
    add("nn.attention", std::string(kv == 1 ? "multi-query" : "grouped-query") + " self-attention, causal + padding",
        [kv] {
          AttentionConfig config = attn_config(PosEncoding::none);
          config.n_head = 4;
          config.n_kv_head = kv;
          MultiHeadAttention m(config);
          AttentionMask mask;
          mask.causal = true;
          mask.key_padding = padding(2, 5, 1);
          return check(m, {input({2, 5, 8}, 30 + kv)}, [&](const Inputs& x) { return m.forward(x[0], mask); });
        });
  add("nn.attention", "slice_heads of unequal chunks", [] {
    return gradcheck([](const Inputs& x) { return slice_heads(x[0], 4, 2, 2); }, {input({2, 3, 10}, 33)});
  });
  add("nn.attention", "repeat_heads 3 times", [] {
    return gradcheck([](const Inputs& x) { return repeat_heads(x[0], 3); }, {input({2, 2, 3, 2}, 34)});
  });
  add("nn.attention", "cross-attention with padded memory", [] {
    MultiHeadAttention m(attn_config(PosEncoding::none, true));
    Tensor pad = padding(2, 4, 2);
    return check(m, {input({2, 3, 8}, 11), input({2, 4, 8}, 12)},
                 [&](const Inputs& x) { return m.forward_cross(x[0], x[1], pad); });
  });

  // ---- blocks ----
  for (NormPlacement norm : {NormPlacement::pre, NormPlacement::post}) {
    const std::string name = norm == NormPlacement::pre ? "Pre-LN" : "Post-LN";
    add("nn.blocks", "SelfAttentionBlock " + name + " with key padding", [norm] {
      SelfAttentionBlock m(block_config(norm));
      AttentionMask mask;
      mask.key_padding = padding(2, 4, 1);
      return check(m, {input({2, 4, 8}, 13)}, [&](const Inputs& x) { return m.forward(x[0], mask); });
    });
    add("nn.blocks", "DecoderBlock " + name + " with padded memory", [norm] {
      DecoderBlock m(block_config(norm));
      Tensor pad = padding(2, 5, 2);
      return check(m, {input({2, 3, 8}, 14), input({2, 5, 8}, 15)},
                   [&](const Inputs& x) { return m.forward(x[0], x[1], Tensor(), pad); });
    });
  }

  // ---- whole models ----
  // Every positional encoding with Pre-LN, two of them with Post-LN (keeps the suite fast).
  using N = NormPlacement;
  using P = PosEncoding;
  const std::vector<std::pair<N, P>> gpt_variants = {
      {N::pre, P::learned}, {N::pre, P::sinusoidal}, {N::pre, P::rope}, {N::pre, P::alibi},
      {N::pre, P::none},    {N::post, P::learned},   {N::post, P::rope}};
  for (const auto& [norm, pos] : gpt_variants)
    add("nn.gpt", "GPT " + variant_name(norm, pos), [norm = norm, pos = pos] {
      auto m = std::make_unique<GPT>(tiny_gpt(pos, norm));
      IntTensor idx = ids(2, 4, 11, 16);
      Tensor r = constant({2, 4, 11}, 17);
      return check(
          *m, {}, [&](const Inputs&) { return sum(m->forward(idx) * r); }, model_subset);
    });
  add("nn.gpt", "GPT pre-LN rope, grouped-query (n_kv_head 2 of 4), tiled attention", [] {
    GPTConfig c = tiny_gpt(P::rope, N::pre);
    c.n_head = 4;
    c.n_kv_head = 2;
    c.attention = AttentionKernel::tiled;
    auto m = std::make_unique<GPT>(c);
    IntTensor idx = ids(2, 4, 11, 35);
    Tensor r = constant({2, 4, 11}, 36);
    return check(
        *m, {}, [&](const Inputs&) { return sum(m->forward(idx) * r); }, model_subset);
  });
  add("nn.gpt", "GPT untied, no bias, window 2, gelu_tanh", [] {
    GPTConfig c = tiny_gpt(P::learned, N::pre);
    c.tied_head = false;
    c.bias = false;
    c.window = 2;
    c.activation = Activation::gelu_tanh;
    auto m = std::make_unique<GPT>(c);
    IntTensor idx = ids(2, 4, 11, 18);
    Tensor r = constant({2, 4, 11}, 19);
    return check(
        *m, {}, [&](const Inputs&) { return sum(m->forward(idx) * r); }, model_subset);
  });
  add("nn.gpt", "GPT post-LN as Xiong et al.: scaled embeddings, sinusoidal, relu, xavier, untied", [] {
    GPTConfig c = tiny_gpt(P::sinusoidal, N::post);
    c.scale_embeddings = true;
    c.activation = Activation::relu;
    c.init = InitScheme::xavier;
    c.tied_head = false;
    auto m = std::make_unique<GPT>(c);
    IntTensor idx = ids(2, 4, 11, 22);
    Tensor r = constant({2, 4, 11}, 23);
    return check(
        *m, {}, [&](const Inputs&) { return sum(m->forward(idx) * r); }, model_subset);
  });
  add("nn.gpt", "GPT pre-LN learned, recomputed half-blocks (activation recomputation)", [] {
    GPTConfig c = tiny_gpt(P::learned, N::pre);
    c.recompute = true;
    auto m = std::make_unique<GPT>(c);
    IntTensor idx = ids(2, 4, 11, 37);
    Tensor r = constant({2, 4, 11}, 38);
    return check(
        *m, {}, [&](const Inputs&) { return sum(m->forward(idx) * r); }, model_subset);
  });
  add("nn.gpt", "GPT post-LN sinusoidal, recomputed half-blocks (activation recomputation)", [] {
    GPTConfig c = tiny_gpt(P::sinusoidal, N::post);
    c.recompute = true;
    auto m = std::make_unique<GPT>(c);
    IntTensor idx = ids(2, 4, 11, 39);
    Tensor r = constant({2, 4, 11}, 40);
    return check(
        *m, {}, [&](const Inputs&) { return sum(m->forward(idx) * r); }, model_subset);
  });
  add("nn.gpt", "GPT pre-LN, scaled embeddings, tied head", [] {
    GPTConfig c = tiny_gpt(P::sinusoidal, N::pre);
    c.scale_embeddings = true;
    auto m = std::make_unique<GPT>(c);
    IntTensor idx = ids(2, 4, 11, 24);
    Tensor r = constant({2, 4, 11}, 25);
    return check(
        *m, {}, [&](const Inputs&) { return sum(m->forward(idx) * r); }, model_subset);
  });
  const std::vector<std::pair<N, P>> transformer_variants = {
      {N::pre, P::sinusoidal}, {N::post, P::learned}, {N::pre, P::rope}, {N::post, P::alibi}};
  for (const auto& [norm, pos] : transformer_variants)
    add("nn.transformer", "Transformer " + variant_name(norm, pos) + " with src/tgt padding", [norm = norm, pos = pos] {
      auto m = std::make_unique<Transformer>(tiny_transformer(pos, norm));
      IntTensor src = ids(2, 4, 9, 20), tgt = ids(2, 4, 10, 21);
      Tensor src_pad = padding(2, 4, 2), tgt_pad = padding(2, 4, 1);
      Tensor r = constant({2, 4, 10}, 22);
      return check(
          *m, {}, [&](const Inputs&) { return sum(m->forward(src, tgt, src_pad, tgt_pad) * r); }, model_subset);
    });
  add("nn.transformer", "Transformer shared embeddings, tied head", [] {
    TransformerConfig c = tiny_transformer(P::sinusoidal, N::pre);
    c.tgt_vocab_size = c.src_vocab_size;
    c.shared_embeddings = true;
    c.tied_head = true;
    auto m = std::make_unique<Transformer>(c);
    IntTensor src = ids(2, 4, 9, 23), tgt = ids(2, 4, 9, 24);
    Tensor r = constant({2, 4, 9}, 25);
    return check(
        *m, {}, [&](const Inputs&) { return sum(m->forward(src, tgt) * r); }, model_subset);
  });
  return cases;
}

}  // namespace sf
