// your_ops.cpp: your forward and backward functions (exercises 3, 5-7, 11-13) as autograd ops.
// Given, not an exercise: this file is the one way your pieces enter a model. The assembly
// exercises (19-23) build attention, the block and the GPT from these ops, and the capstone
// trains that GPT, so every gradient it follows is one your backward functions computed.
//
// Each op runs your forward without recording a graph (the framework would otherwise
// differentiate your forward by itself) and records one node whose backward calls yours.
#include "autograd/graph.h"
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

// The gradients a backward returns for `inputs` (entries for inputs without gradients may be
// undefined), added to the inputs' .grad; `piece` names the function in errors.
using Backward = std::function<std::vector<Tensor>(const Tensor& dout)>;

static Tensor your_op(const char* piece, Tensor out, const std::vector<Tensor>& inputs, Backward backward) {
  return record(std::move(out), piece, inputs, [piece, inputs, backward](const Tensor& dout) {
    std::vector<Tensor> grads;
    {
      NoGradGuard no_grad;
      grads = backward(dout);
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].requires_grad()) continue;
      if (i >= grads.size() || !grads[i].defined() || grads[i].shape() != inputs[i].shape())
        throw ShapeError(std::string(piece) + ": your backward returned a gradient of the wrong shape for input " +
                         std::to_string(i) + " " + shape_str(inputs[i].shape()) +
                         " (run its exercise's check: scratchformer exercise check N)");
      accumulate_grad(inputs[i], grads[i].to(inputs[i].dtype()));
    }
  });
}

Tensor your_softmax(const Tensor& x) {
  Tensor y;
  {
    NoGradGuard no_grad;
    y = softmax_forward(x);
  }
  Tensor saved = y.detach();  // the closure holds the values, not the node (no cycle)
  return your_op("your_softmax (exercises 5, 6)", y, {x},
                 [saved](const Tensor& dy) { return std::vector<Tensor>{softmax_backward(saved, dy)}; });
}

Tensor your_cross_entropy(const Tensor& logits, const IntTensor& targets) {
  Tensor loss;
  {
    NoGradGuard no_grad;
    loss = cross_entropy_forward(logits, targets);
  }
  Tensor x = logits.detach();
  return your_op("your_cross_entropy (exercise 7)", loss, {logits}, [x, targets](const Tensor& dloss) {
    return std::vector<Tensor>{cross_entropy_backward(x, targets, dloss)};
  });
}

Tensor your_layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, double eps) {
  Tensor y;
  {
    NoGradGuard no_grad;
    y = layer_norm_forward(x, w, b, eps);
  }
  Tensor xs = x.detach(), ws = w.detach();
  return your_op("your_layer_norm (exercises 11, 12)", y, {x, w, b}, [xs, ws, eps](const Tensor& dy) {
    LayerNormGrads g = layer_norm_backward(xs, ws, dy, eps);
    return std::vector<Tensor>{g.dx, g.dw, g.db};
  });
}

Tensor your_gelu(const Tensor& x) {
  Tensor y;
  {
    NoGradGuard no_grad;
    y = gelu_forward(x);
  }
  Tensor xs = x.detach();
  return your_op("your_gelu (exercise 13)", y, {x},
                 [xs](const Tensor& dy) { return std::vector<Tensor>{gelu_backward(xs, dy)}; });
}

Tensor your_embedding(const Tensor& W, const IntTensor& ids) {
  Tensor out;
  {
    NoGradGuard no_grad;
    out = embedding(W, ids);  // the lookup itself is the framework's (lesson 4 embeddings)
  }
  const int64_t V = W.size(0);
  return your_op("your_embedding (exercise 3)", out, {W},
                 [ids, V](const Tensor& dout) { return std::vector<Tensor>{embedding_backward(ids, dout, V)}; });
}

std::vector<double> values_of(const Tensor& t) { return t.to_vector(); }

void set_values(Tensor& t, const std::vector<double>& values) {
  if (static_cast<int64_t>(values.size()) != t.numel())
    throw ShapeError("set_values: " + std::to_string(values.size()) + " values for a tensor of shape " +
                     shape_str(t.shape()));
  dispatch(t.dtype(), [&](auto tag) {
    using F = decltype(tag);
    F* p = t.data<F>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = static_cast<F>(values[i]);
  });
}

}  // namespace sf::exercise
