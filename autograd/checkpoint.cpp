// checkpoint.cpp: activation recomputation (checkpoint.h).
#include "autograd/checkpoint.h"

#include "autograd/graph.h"

namespace sf {

Tensor checkpoint(const std::function<Tensor(const Tensor&)>& f, const Tensor& x, const std::vector<Tensor>& params) {
  bool needs_grad = x.requires_grad();
  for (const Tensor& p : params) needs_grad = needs_grad || p.requires_grad();
  if (!grad_enabled() || !needs_grad) return f(x);
  Tensor out;
  {
    NoGradGuard no_grad;  // the inner activations are made and dropped as f goes
    out = f(x);
  }
  // The node's inputs are x and the parameters: backward reaches x's own graph through it, and
  // record() sees that something below requires grad.
  std::vector<Tensor> inputs = {x};
  inputs.insert(inputs.end(), params.begin(), params.end());
  return record(out, "checkpoint", std::move(inputs), [f, x](const Tensor& dout) {
    // Recompute f on a leaf holding x's values, with a graph this time, and backpropagate dout
    // through it: the parameters' gradients accumulate into their .grad directly (they are
    // leaves of this graph too), x's arrive on the leaf and are passed on.
    Tensor leaf = x.detach().requires_grad_(x.requires_grad());
    Tensor again;
    {
      EnableGradGuard grad_mode;
      again = f(leaf);
    }
    if (again.requires_grad()) again.backward(dout);
    Tensor dx = leaf.grad();
    if (!dx.defined()) return;
    leaf.impl()->grad.reset();  // dx is then ours alone: accumulate_grad takes it without a copy
    accumulate_grad(x, std::move(dx));
  });
}

}  // namespace sf
