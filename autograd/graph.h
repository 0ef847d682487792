// graph.h: the autograd graph. Every op ends with `return record(out, "name", {inputs}, backward)`,
// which (when an input requires grad) attaches a Node holding the inputs and a backward closure
// that turns d(loss)/d(out) into contributions to each input's .grad.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "autograd/tensor.h"

namespace sf {

// Receives dout (same shape as the op's output) and calls accumulate_grad for each input. dout
// comes by value: unless the output retains its gradient (retain_grad), the engine hands over
// its own reference, so a closure that takes `Tensor dout` and moves it into accumulate_grad
// passes the buffer on instead of a copy (add does). Closures that take `const Tensor&` work too.
using BackwardFn = std::function<void(Tensor dout)>;

struct Node {
  std::string op;              // "matmul", "add", ...
  std::vector<Tensor> inputs;  // the parents in the graph
  // What the backward closure keeps besides the inputs (softmax's output, attention's P, a
  // LayerNorm's statistics), listed again here because a closure's captures cannot be seen from
  // outside: memory accounting (saved_by_op) reads them. Released with the closure.
  std::vector<Tensor> saved;
  BackwardFn backward;  // null once the graph is freed
  bool freed = false;
  // Releases the graph below iteratively: a chain of 100k+ ops (say, a running loss summed over
  // steps without detach()) would otherwise overflow the stack in nested destructors.
  ~Node();
};

// Finishes an op: checks the output in anomaly mode and, if grad mode is on and any input
// requires grad, attaches a Node so backward() can reach the inputs.
// `saved` lists the tensors the closure keeps besides the inputs (see Node::saved).
Tensor record(Tensor out, const char* op, std::vector<Tensor> inputs, BackwardFn backward,
              std::vector<Tensor> saved = {});

// Adds g into t.grad; does nothing if t does not require grad. The first contribution becomes
// t.grad itself when nobody else holds g, else a copy of it. Backward always accumulates: a tensor
// used twice receives the sum of both contributions. Long gradients are added (and cloned, see
// Tensor::clone) over the thread pool, elementwise: the same bits for any thread count.
void accumulate_grad(const Tensor& t, Tensor g);

// The existing .grad of a leaf that requires grad, or an undefined Tensor. Fused backward
// kernels may add straight into it (e.g. gemm with beta = 1) instead of building a temporary
// and calling accumulate_grad: the same accumulation, one pass and one allocation fewer.
Tensor leaf_grad(const Tensor& t);

// The .grad that t (a leaf or not, requiring grad) has gathered so far, or an undefined Tensor
// when nothing has reached it yet. A fused backward may add its contribution straight into it, as
// accumulate_grad would: a gathered gradient is nobody else's (accumulate_grad keeps a copy of a
// gradient another still holds).
Tensor grad_so_far(const Tensor& t);

// Anomaly mode: the first op whose forward or backward produces NaN/Inf throws NumericalError
// naming the op and its input shapes (like torch.autograd.set_detect_anomaly(True)).
bool anomaly_mode();
class AnomalyGuard {
 public:
  explicit AnomalyGuard(bool on = true);
  ~AnomalyGuard();
  AnomalyGuard(const AnomalyGuard&) = delete;
  AnomalyGuard& operator=(const AnomalyGuard&) = delete;

 private:
  bool previous_;
};
bool all_finite(const Tensor& t);

// The tensors of the graph below `root` in topological order (inputs before outputs).
std::vector<Tensor> topological_order(const Tensor& root);

// What the graph below `root` keeps alive for backward, by the op that made each buffer: the
// output of every op that an op above it holds as an input (a linear's output held by the GELU
// after it counts under "linear"), and what each op saved besides (Node::saved, under the op
// itself), plus root's own buffer. Each buffer is counted once however many nodes hold it (views
// share one buffer). Leaves are left out: parameters are counted as parameters, and the inputs
// a caller passes in are the caller's. Sorted by bytes, largest first.
struct SavedBytes {
  std::string op;
  size_t bytes = 0;     // as allocated (see TensorMemory)
  int64_t buffers = 0;  // distinct buffers
};
std::vector<SavedBytes> saved_by_op(const Tensor& root);

// Graphviz DOT text of the graph that produced `root`: one box per tensor (name, shape),
// one ellipse per op. Render with `dot -Tpng graph.dot -o graph.png`. Call it before
// backward(), which frees the graph (or pass retain_graph=true): afterwards only the last op
// is left, marked "(freed by backward)".
std::string to_dot(const Tensor& root);

}  // namespace sf
