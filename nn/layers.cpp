// layers.cpp: Linear, Embedding, Dropout, LayerNorm, FeedForward.
//
// Legend: B batch, T time, C channels (d_model), F hidden size of the FeedForward, V vocab.
#include "nn/layers.h"

#include <cmath>

#include "autograd/errors.h"
#include "autograd/names.h"

namespace sf {

static void require_positive(int64_t value, const char* what, const char* module) {
  if (value <= 0)
    throw ConfigError(std::string(module) + ": " + what + " must be positive, got " + std::to_string(value));
}

// ---- Linear ----
// Initialised like torch.nn.Linear: U(-1/sqrt(in), 1/sqrt(in)); the model's init scheme
// (nn/init.h) usually overwrites this.
Linear::Linear(int64_t in_features, int64_t out_features, bool with_bias) : Module("Linear") {
  require_positive(in_features, "in_features", "Linear");
  require_positive(out_features, "out_features", "Linear");
  Generator& gen = init_generator();
  double bound = 1.0 / std::sqrt(static_cast<double>(in_features));
  weight = register_parameter("weight", Tensor::rand({out_features, in_features}, gen, -bound, bound));
  if (with_bias) bias = register_parameter("bias", Tensor::rand({out_features}, gen, -bound, bound));
}

Linear::Linear(Tensor w, Tensor b) : Module("Linear") {
  if (!w.defined() || w.dim() != 2) throw ShapeError("Linear: weight must be (out, in)");
  if (b.defined() && b.shape() != Shape{w.size(0)})
    throw ShapeError("Linear: bias " + shape_str(b.shape()) + " does not match weight " + shape_str(w.shape()));
  weight = register_parameter("weight", w);
  if (b.defined()) bias = register_parameter("bias", b);
}

Tensor Linear::forward(const Tensor& x) const {
  return linear(x, weight, bias);  // (..., in) @ (in, out) + (out) -> (..., out)
}

std::string Linear::extra_repr() const {
  return "in=" + std::to_string(weight.size(1)) + ", out=" + std::to_string(weight.size(0)) +
         (bias.defined() ? ", bias" : ", no bias");
}

// ---- Embedding ----
Embedding::Embedding(int64_t num_embeddings, int64_t dim) : Module("Embedding") {
  require_positive(num_embeddings, "num_embeddings", "Embedding");
  require_positive(dim, "dim", "Embedding");
  Generator& gen = init_generator();
  weight = register_parameter("weight", Tensor::randn({num_embeddings, dim}, gen));  // N(0, 1)
}

Tensor Embedding::forward(const IntTensor& ids) const {
  return embedding(weight, ids);  // (B, T) -> (B, T, C)
}

std::string Embedding::extra_repr() const {
  return std::to_string(weight.size(0)) + ", " + std::to_string(weight.size(1));
}

// ---- Dropout ----
Dropout::Dropout(double p, Generator* gen) : Module("Dropout"), p_(p), gen_(gen) {
  if (!(p >= 0.0 && p < 1.0)) throw ConfigError("Dropout: p must be in [0, 1), got " + std::to_string(p));
}

Tensor Dropout::forward(const Tensor& x) const {
  return dropout(x, p_, training(), gen_ ? *gen_ : own_gen_);  // same shape
}

std::string Dropout::extra_repr() const {
  std::string s = std::to_string(p_);
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s += '0';
  return "p=" + s;
}

// ---- LayerNorm ----
LayerNorm::LayerNorm(int64_t dim, double eps_, bool with_bias) : Module("LayerNorm"), eps(eps_) {
  require_positive(dim, "dim", "LayerNorm");
  if (!(eps_ > 0)) throw ConfigError("LayerNorm: eps must be positive");
  weight = register_parameter("weight", Tensor::ones({dim}));
  if (with_bias) bias = register_parameter("bias", Tensor::zeros({dim}));
}

Tensor LayerNorm::forward(const Tensor& x) const {
  return layer_norm(x, weight, bias, eps);  // (..., C) -> (..., C)
}

std::string LayerNorm::extra_repr() const {
  return std::to_string(weight.size(0)) + (bias.defined() ? "" : ", no bias");
}

// ---- activations ----
const char* activation_name(Activation a) { return name_of(kActivations, a); }

Tensor activate(const Tensor& x, Activation a) {
  switch (a) {
    case Activation::gelu: return gelu(x, GeluApprox::none);
    case Activation::gelu_tanh: return gelu(x, GeluApprox::tanh);
    case Activation::relu: return relu(x);
  }
  return x;
}

// ---- FeedForward ----
FeedForward::FeedForward(int64_t dim, int64_t hidden, Activation act_, bool bias, double p, Generator* gen)
    : Module("FeedForward"),
      c_fc(dim, hidden > 0 ? hidden : 4 * dim, bias),
      c_proj(hidden > 0 ? hidden : 4 * dim, dim, bias),
      drop(p, gen),
      act(act_) {
  register_module("c_fc", c_fc);
  register_module("c_proj", c_proj);
  register_module("dropout", drop);
}

Tensor FeedForward::forward(const Tensor& x) const {
  // GELU fused with c_fc (the same numbers as activate(c_fc.forward(x), act), one pass fewer)
  Tensor h = act == Activation::relu ? activate(c_fc.forward(x), act)  // (B, T, F)
                                     : linear_gelu(x, c_fc.weight, c_fc.bias,
                                                   act == Activation::gelu_tanh ? GeluApprox::tanh : GeluApprox::none);
  return drop.forward(c_proj.forward(h));  // (B, T, C)
}

std::string FeedForward::extra_repr() const { return activation_name(act); }

}  // namespace sf
