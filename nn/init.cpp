// init.cpp: GPT-2 and Xavier initialisation by parameter name.
#include "nn/init.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "autograd/errors.h"
#include "autograd/names.h"

namespace sf {

const char* init_name(InitScheme scheme) { return name_of(kInits, scheme); }

static bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void init_parameters(Module& model, InitScheme scheme, int64_t n_layer, Generator& gen) {
  if (n_layer <= 0) throw ConfigError("init: n_layer must be positive");
  for (auto& [name, p] : model.named_parameters()) {
    dispatch(p.dtype(), [&, &name = name, &p = p](auto tag) {
      using Tp = decltype(tag);
      Tp* w = p.template data<Tp>();
      const int64_t n = p.numel();
      if (ends_with(name, "bias")) {
        for (int64_t i = 0; i < n; ++i) w[i] = 0;
      } else if (p.dim() == 1) {  // a LayerNorm gain
        for (int64_t i = 0; i < n; ++i) w[i] = 1;
      } else if (scheme == InitScheme::gpt2) {
        double std = 0.02;
        if (ends_with(name, "c_proj.weight")) std /= std::sqrt(2.0 * static_cast<double>(n_layer));
        for (int64_t i = 0; i < n; ++i) w[i] = static_cast<Tp>(std * gen.normal());
      } else {  // xavier uniform on (fan_out, fan_in)
        double fan_out = static_cast<double>(p.size(0)), fan_in = static_cast<double>(n / p.size(0));
        double a = std::sqrt(6.0 / (fan_in + fan_out));
        for (int64_t i = 0; i < n; ++i) w[i] = static_cast<Tp>(a * (2.0 * gen.uniform() - 1.0));
      }
    });
  }
}

void init_parameters_like_torch(Module& gpt, int64_t n_layer, TorchGenerator& gen) {
  if (n_layer <= 0) throw ConfigError("init: n_layer must be positive");
  auto params = gpt.named_parameters();
  auto is_embedding = [](const std::string& n) { return ends_with(n, "wte.weight") || ends_with(n, "wpe.weight"); };
  auto is_layernorm = [](const std::string& n) { return n.find("ln_") != std::string::npos; };
  Tensor wte;
  bool untied_head = false;
  for (auto& [name, p] : params) {
    if (p.dtype() != DType::f32)
      throw ConfigError("init: PyTorch-generator init needs float32 parameters, " + name + " is not");
    if (ends_with(name, "wte.weight")) wte = p;
    if (ends_with(name, "lm_head.weight")) untied_head = true;
  }
  if (!wte.defined()) throw ConfigError("init: PyTorch-generator init needs a GPT (no transformer.wte.weight)");
  std::vector<float> scratch;
  auto draw_and_drop = [&](int64_t n, bool normal) {
    scratch.resize(static_cast<size_t>(n));
    if (normal) gen.normal_(scratch.data(), n, 0.0, 1.0);
    else gen.uniform_(scratch.data(), n, -1.0, 1.0);
  };

  // 1. construction: the defaults of nn.Embedding and nn.Linear, then the head
  for (auto& [name, p] : params) {
    if (is_layernorm(name)) continue;
    if (is_embedding(name)) draw_and_drop(p.numel(), true);
    else draw_and_drop(p.numel(), false);  // a Linear's weight or bias
  }
  if (!untied_head) draw_and_drop(wte.numel(), false);  // nn.Linear(C, V, bias=False), then tied

  // 2. _init_weights on every module, in construction order
  for (auto& [name, p] : params) {
    float* w = p.data<float>();
    const int64_t n = p.numel();
    if (is_layernorm(name)) std::fill(w, w + n, ends_with(name, "bias") ? 0.0f : 1.0f);
    else if (ends_with(name, "bias")) std::fill(w, w + n, 0.0f);
    else gen.normal_(w, n, 0.0, 0.02);
  }
  if (!untied_head) gen.normal_(wte.data<float>(), wte.numel(), 0.0, 0.02);

  // 3. GPT-2's scaled residual projections
  for (auto& [name, p] : params)
    if (ends_with(name, "c_proj.weight"))
      gen.normal_(p.data<float>(), p.numel(), 0.0, 0.02 / std::sqrt(2.0 * static_cast<double>(n_layer)));
}

}  // namespace sf
