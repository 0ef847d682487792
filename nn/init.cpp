// init.cpp: GPT-2 and Xavier initialisation by parameter name.
#include "nn/init.h"

#include <cmath>

#include "autograd/errors.h"

namespace sf {

InitScheme parse_init(const std::string& name) {
  if (name == "gpt2") return InitScheme::gpt2;
  if (name == "xavier") return InitScheme::xavier;
  throw ConfigError("init: unknown '" + name + "' (valid: gpt2, xavier)");
}

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

}  // namespace sf
