// layers.h: the small layers every transformer is made of: Linear, Embedding, Dropout,
// LayerNorm and the position-wise FeedForward network. Each forward is one or two fused ops
// from autograd/ops.h; the parameters are laid out exactly as in PyTorch, so weights can be
// exchanged with torch.nn modules by name.
//
// Legend: B batch, T time, C channels (d_model), F hidden size of the FeedForward, V vocab.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "autograd/int_tensor.h"
#include "autograd/names.h"
#include "autograd/ops.h"
#include "nn/module.h"

namespace sf {

// y = x W^T + b, W (out, in) as torch.nn.Linear; bias optional.
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  // Wraps existing tensors: a tied LM head shares the token embedding's weight (V, C).
  explicit Linear(Tensor weight, Tensor bias = Tensor());
  Tensor forward(const Tensor& x) const;  // (..., in) -> (..., out)
  std::string extra_repr() const override;

  Tensor weight;  // (out, in)
  Tensor bias;    // (out) or undefined
};

// out[..., :] = W[id, :], a table lookup of token vectors; W (V, C) as torch.nn.Embedding.
class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t dim);
  Tensor forward(const IntTensor& ids) const;  // (B, T) -> (B, T, C)
  std::string extra_repr() const override;

  Tensor weight;  // (V, C)
};

// Inverted dropout: in training each element is zeroed with probability p and the survivors are
// scaled by 1/(1-p); in eval mode the identity. Draws from the Generator it is given (a model
// passes its own, so a run is reproducible), or from a private one seeded with 1337.
class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.0, Generator* gen = nullptr);
  Tensor forward(const Tensor& x) const;  // same shape
  std::string extra_repr() const override;
  double p() const { return p_; }

 private:
  double p_;
  mutable Generator own_gen_{1337};
  Generator* gen_;
};

// y = (x - mean) / sqrt(var + eps) * weight + bias over the last dimension (biased variance),
// as torch.nn.LayerNorm(C, eps, elementwise_affine=True, bias=...).
class LayerNorm : public Module {
 public:
  explicit LayerNorm(int64_t dim, double eps = 1e-5, bool bias = true);
  Tensor forward(const Tensor& x) const;  // (..., C) -> (..., C)
  std::string extra_repr() const override;

  Tensor weight;  // (C), ones
  Tensor bias;    // (C), zeros, or undefined
  double eps;
};

// The nonlinearity inside a FeedForward: GELU exact (x Phi(x), nn.GELU()), GELU tanh form, ReLU.
enum class Activation { gelu, gelu_tanh, relu };
inline constexpr std::array<Named<Activation>, 3> kActivations = {
    {{"gelu", Activation::gelu}, {"gelu_tanh", Activation::gelu_tanh}, {"relu", Activation::relu}}};
// The config reads model.activation through kActivations (train/options.h).
const char* activation_name(Activation a);
Tensor activate(const Tensor& x, Activation a);

// The position-wise feed-forward network, nanoGPT's MLP:
//   FFN(x) = dropout(c_proj(act(c_fc(x)))),  c_fc: C -> F, c_proj: F -> C, F = 4C by default.
class FeedForward : public Module {
 public:
  FeedForward(int64_t dim, int64_t hidden = 0, Activation act = Activation::gelu, bool bias = true,
              double dropout = 0.0, Generator* gen = nullptr);
  Tensor forward(const Tensor& x) const;  // (B, T, C) -> (B, T, C)
  std::string extra_repr() const override;

  Linear c_fc;    // (F, C)
  Linear c_proj;  // (C, F)
  Dropout drop;
  Activation act;
};

}  // namespace sf
