// Parity with PyTorch 1.13 on the same weights and inputs: LayerNorm, MultiheadAttention,
// grouped-query and multi-query self-attention (tests/reference/gen_gqa_ref.py),
// TransformerEncoderLayer / TransformerDecoderLayer (norm_first true and false) and a
// nanoGPT-layout GPT, outputs and ALL parameter (and input) gradients.
//
// Reference data: tests/reference/gen_nn_ref.py writes tests/reference/nn/*.safetensors (exact
// float32 bits, torch weights already renamed to our parameter names); this test never needs torch.
// The loss is sum(output * W) for a fixed random W, so every output element gets a gradient.
//
// Criterion (float32), for every element:  |ours - torch| <= 1e-5 * max(1, |torch|)
// (absolute below magnitude 1, relative above). Each check prints its worst error
// max |ours - torch| / max(1, |torch|), which the closing note lists.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "nn/blocks.h"
#include "nn/gpt.h"
#include "nn/state_dict.h"

using namespace sf;
using json = nlohmann::json;

namespace {

constexpr double kTol = 1e-5;

struct Case {
  std::map<std::string, Tensor> t;
  json config;
  Metadata meta;

  const Tensor& at(const std::string& name) const {
    auto it = t.find(name);
    if (it == t.end()) throw CheckpointError("reference file lacks tensor '" + name + "'");
    return it->second;
  }
  bool has(const std::string& name) const { return t.count(name) > 0; }
  // The tensors named "<prefix>..." with the prefix removed (e.g. param.* -> our names).
  NamedTensors with_prefix(const std::string& prefix) const {
    NamedTensors out;
    for (const auto& [name, tensor] : t)
      if (name.rfind(prefix, 0) == 0) out.emplace_back(name.substr(prefix.size()), tensor);
    return out;
  }
};

Case load_case(const std::string& file) {
  Case c;
  for (auto& [name, tensor] : load_safetensors(std::string(SF_SOURCE_DIR) + "/tests/reference/nn/" + file, &c.meta))
    c.t[name] = tensor;
  if (c.meta.count("config")) c.config = json::parse(c.meta.at("config"));
  return c;
}

// max |a - b| / max(1, |b|) over all elements; shapes must match.
double worst_error(const Tensor& ours, const Tensor& ref, const std::string& what) {
  REQUIRE_MESSAGE(ours.defined(), what << ": no value (gradient never reached?)");
  REQUIRE_MESSAGE(ours.shape() == ref.shape(),
                  what << ": shape " << shape_str(ours.shape()) << " vs " << shape_str(ref.shape()));
  std::vector<double> a = ours.to_vector(), b = ref.to_vector();
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double e = std::fabs(a[i] - b[i]) / std::max(1.0, std::fabs(b[i]));
    if (!(e <= worst)) worst = std::isnan(e) ? INFINITY : e;
  }
  return worst;
}

// Checks one tensor against the criterion; returns its worst error.
double check(const Tensor& ours, const Tensor& ref, const std::string& what, double tol = kTol) {
  double w = worst_error(ours, ref, what);
  CHECK_MESSAGE(w <= tol, what << ": worst error " << w << " > " << tol);
  return w;
}

// Runs backward with the case's out_weight and checks output, input grads and every parameter's
// grad (every parameter of the module must have a reference gradient). Prints the worst errors.
void check_all(const std::string& name, Module& m, const Case& c, const Tensor& out,
               const std::map<std::string, Tensor>& inputs, double extra_worst = -1) {
  double out_err = check(out, c.at("output"), name + " output");
  out.backward(c.at("out_weight"));
  double grad_err = 0;
  for (const auto& [in_name, x] : inputs)
    grad_err = std::max(grad_err, check(x.grad(), c.at("grad.input." + in_name), name + " d" + in_name));
  int n_params = 0;
  for (const auto& [pname, p] : m.named_parameters()) {
    grad_err = std::max(grad_err, check(p.grad(), c.at("grad.param." + pname), name + " d" + pname));
    ++n_params;
  }
  CHECK(n_params == static_cast<int>(c.with_prefix("grad.param.").size()));
  std::printf("parity %-28s output %.2e  grads (%d params + inputs) %.2e", name.c_str(), out_err, n_params, grad_err);
  if (extra_worst >= 0) std::printf("  attention weights %.2e", extra_worst);
  std::printf("\n");
}

Tensor input(const Case& c, const std::string& name) { return c.at("input." + name).clone().requires_grad_(); }

}  // namespace

TEST_CASE("parity LayerNorm (with and without bias) vs torch.nn.functional.layer_norm") {
  for (bool bias : {true, false}) {
    Case c = load_case(bias ? "layernorm.safetensors" : "layernorm_nobias.safetensors");
    LayerNorm ln(c.config["dim"].get<int64_t>(), c.config["eps"].get<double>(), bias);
    load_state_dict(ln, c.with_prefix("param."), "layernorm reference");
    Tensor x = input(c, "x");
    check_all(bias ? "LayerNorm" : "LayerNorm (no bias)", ln, c, ln.forward(x), {{"x", x}});
  }
}

TEST_CASE("parity MultiHeadAttention vs torch.nn.MultiheadAttention") {
  for (const char* file : {"mha_self_causal", "mha_self_causal_nobias", "mha_self_padding", "mha_cross"}) {
    CAPTURE(file);
    Case c = load_case(std::string(file) + ".safetensors");
    AttentionConfig ac;
    ac.d_model = c.config["d_model"];
    ac.n_head = c.config["n_head"];
    ac.bias = c.config["bias"];
    ac.cross = c.config["cross"];
    MultiHeadAttention mha(ac);
    load_state_dict(mha, c.with_prefix("param."), file);  // in_proj split into c_attn / c_q, c_kv
    mha.keep_attention(true);
    Tensor x = input(c, "x");
    std::map<std::string, Tensor> inputs = {{"x", x}};
    Tensor padding = c.has("mask.key_padding") ? c.at("mask.key_padding") : Tensor();
    Tensor out;
    if (ac.cross) {
      Tensor memory = input(c, "memory");
      inputs["memory"] = memory;
      out = mha.forward_cross(x, memory, padding);
    } else {
      AttentionMask mask;
      mask.causal = c.config["causal"];
      mask.key_padding = padding;
      out = mha.forward(x, mask);
    }
    double attn_err = check(mha.last_attention(), c.at("attn_weights"), std::string(file) + " weights");
    check_all(file, mha, c, out, inputs, attn_err);
  }
}

// PyTorch 1.13 has no GQA: tests/reference/gen_gqa_ref.py writes the torch side out, repeating
// each of the G K/V heads H / G times before plain softmax attention.
TEST_CASE("parity grouped-query and multi-query self-attention vs torch with repeated K/V heads") {
  for (const char* file : {"gqa_self_causal", "mqa_self_padding"}) {
    CAPTURE(file);
    Case c = load_case(std::string(file) + ".safetensors");
    AttentionConfig ac;
    ac.d_model = c.config["d_model"];
    ac.n_head = c.config["n_head"];
    ac.n_kv_head = c.config["n_kv_head"];
    MultiHeadAttention mha(ac);
    load_state_dict(mha, c.with_prefix("param."), file);
    Tensor x = input(c, "x");
    AttentionMask mask;
    mask.causal = c.config["causal"];
    if (c.has("mask.key_padding")) mask.key_padding = c.at("mask.key_padding");
    check_all(file, mha, c, mha.forward(x, mask), {{"x", x}});
  }
}

TEST_CASE("parity SelfAttentionBlock vs torch.nn.TransformerEncoderLayer (norm_first false/true)") {
  for (const char* file : {"encoder_layer_post_ln", "encoder_layer_pre_ln"}) {
    CAPTURE(file);
    Case c = load_case(std::string(file) + ".safetensors");
    BlockConfig bc;
    bc.d_model = c.config["d_model"];
    bc.n_head = c.config["n_head"];
    bc.d_ff = c.config["d_ff"];
    bc.norm = c.config["norm_first"] ? NormPlacement::pre : NormPlacement::post;
    bc.activation = parse_named(kActivations, c.config["activation"], "activation");
    SelfAttentionBlock block(bc);
    load_state_dict(block, c.with_prefix("param."), file);
    Tensor x = input(c, "x");
    AttentionMask mask;
    mask.key_padding = c.at("mask.key_padding");
    check_all(file, block, c, block.forward(x, mask), {{"x", x}});
  }
}

TEST_CASE("parity DecoderBlock vs torch.nn.TransformerDecoderLayer (norm_first false/true)") {
  for (const char* file : {"decoder_layer_post_ln", "decoder_layer_pre_ln"}) {
    CAPTURE(file);
    Case c = load_case(std::string(file) + ".safetensors");
    BlockConfig bc;
    bc.d_model = c.config["d_model"];
    bc.n_head = c.config["n_head"];
    bc.d_ff = c.config["d_ff"];
    bc.norm = c.config["norm_first"] ? NormPlacement::pre : NormPlacement::post;
    bc.activation = parse_named(kActivations, c.config["activation"], "activation");
    DecoderBlock block(bc);
    load_state_dict(block, c.with_prefix("param."), file);
    Tensor x = input(c, "x"), memory = input(c, "memory");
    Tensor out = block.forward(x, memory, c.at("mask.tgt_padding"), c.at("mask.memory_padding"));
    check_all(file, block, c, out, {{"x", x}, {"memory", memory}});
  }
}
