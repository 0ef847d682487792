// checkpoint.h: activation recomputation (gradient checkpointing, Chen et al. 2016). A
// checkpointed piece of the model keeps only its input for backward: forward runs it without
// recording a graph, so none of its inner activations stay alive; backward runs it once more,
// this time recording, and backpropagates through that fresh graph. Memory for the piece's
// activations is traded for a second forward pass (about a third more compute for a whole
// transformer, whose backward costs about twice its forward).
//
//   y = checkpoint(f, x, params)    same y and the same gradients as y = f(x)
//
// f must compute the same thing both times (no random draws, or draws replayed from the same
// state) and read no tensor requiring grad except x and `params`, whose gradients the second
// run accumulates into their .grad as the first would have.
#pragma once
#include <functional>
#include <vector>

#include "autograd/tensor.h"

namespace sf {

// f(x), keeping only x (and f) for backward. Without grad mode, or when neither x nor any of
// `params` requires grad, it is simply f(x).
Tensor checkpoint(const std::function<Tensor(const Tensor&)>& f, const Tensor& x, const std::vector<Tensor>& params);

}  // namespace sf
