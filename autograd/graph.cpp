// graph.cpp: recording ops, accumulating gradients, the backward pass, anomaly mode, DOT export.
#include "autograd/graph.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "autograd/cpu/threads.h"

namespace sf {

// ---- anomaly mode ----

static thread_local bool g_anomaly = false;
bool anomaly_mode() { return g_anomaly; }
AnomalyGuard::AnomalyGuard(bool on) : previous_(g_anomaly) { g_anomaly = on; }
AnomalyGuard::~AnomalyGuard() { g_anomaly = previous_; }

bool all_finite(const Tensor& t) {
  return dispatch(t.dtype(), [&](auto tag) {
    const auto* p = t.data<decltype(tag)>();
    for (int64_t i = 0, n = t.numel(); i < n; ++i)
      if (!std::isfinite(p[i])) return false;
    return true;
  });
}

static std::string shapes_of(const std::vector<Tensor>& inputs) {
  std::string s;
  for (const Tensor& t : inputs) {
    if (!t.defined()) continue;
    if (!s.empty()) s += ", ";
    s += shape_str(t.shape());
  }
  return s;
}

// ---- releasing ----

Node::~Node() {
  // Take over every parent node that only this graph keeps alive, then free them one by one,
  // each with its inputs already moved out, so no destructor recurses more than one level.
  std::vector<std::shared_ptr<Node>> pending;
  auto take_parents = [&pending](Node& node) {
    node.backward = nullptr;  // the closure's copies of the inputs go first
    node.saved.clear();
    for (Tensor& t : node.inputs) {
      if (!t.defined() || t.impl_ptr().use_count() != 1) continue;
      std::shared_ptr<Node>& parent = t.impl()->grad_fn;
      if (parent && parent.use_count() == 1) pending.push_back(std::move(parent));
    }
    node.inputs.clear();
  };
  take_parents(*this);
  while (!pending.empty()) {
    std::shared_ptr<Node> node = std::move(pending.back());
    pending.pop_back();
    take_parents(*node);
  }
}

// ---- recording ----

Tensor record(Tensor out, const char* op, std::vector<Tensor> inputs, BackwardFn backward, std::vector<Tensor> saved) {
  if (g_anomaly && !all_finite(out))
    throw NumericalError(std::string("anomaly: forward of '") + op + "' with inputs " + shapes_of(inputs) +
                         " produced NaN or Inf");
  if (!grad_enabled()) return out;
  bool needs_grad = false;
  for (const Tensor& t : inputs) needs_grad = needs_grad || (t.defined() && t.requires_grad());
  if (!needs_grad) return out;
  auto node = std::make_shared<Node>();
  node->op = op;
  node->inputs = std::move(inputs);
  node->backward = std::move(backward);
  node->saved = std::move(saved);
  out.impl()->requires_grad = true;
  out.impl()->grad_fn = std::move(node);
  return out;
}

// Module::zero_grad gives a flat model's gradients fresh pages that are not mapped yet. A kernel
// that adds into .grad reads each value before it writes it, and reading an unmapped page maps the
// kernel's shared zero page, which the write then has to replace on every core that may have seen
// it (a TLB shootdown: an interrupt to each core, costly under a hypervisor most of all). Clearing
// the slice before the first gradient lands faults each page in once, for writing.
static void ready_to_add(const Tensor& t) {
  TensorImpl* grad = t.impl()->grad.get();
  if (!grad || !grad->pages_unwritten) return;
  grad->pages_unwritten = false;
  Tensor(t).zero_grad();
}

void accumulate_grad(const Tensor& t, Tensor g) {
  if (!t.defined() || !t.requires_grad()) return;
  if (g.shape() != t.shape() || g.dtype() != t.dtype())
    throw ShapeError("backward: gradient of shape " + shape_str(g.shape()) + " " + dtype_name(g.dtype()) +
                     " for a tensor of shape " + shape_str(t.shape()) + " " + dtype_name(t.dtype()));
  TensorImpl* impl = t.impl();
  if (!impl->grad) {
    // First contribution: take g itself when nobody else can see it, else a private copy (an add
    // hands its dout to both inputs, which the graph still holds).
    bool sole_owner = g.impl_ptr().use_count() == 1 && g.storage().use_count() == 1;
    impl->grad = sole_owner ? g.impl_ptr() : g.clone().impl_ptr();
    return;
  }
  // Later contributions add in, long gradients over the thread pool (elementwise: the same bits
  // for any split; a call from inside a pool task runs inline).
  ready_to_add(t);
  Tensor acc(impl->grad);
  dispatch(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* a = acc.data<T>();
    const T* b = g.data<T>();
    parallel_for(acc.numel(), kElementGrain, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) a[i] += b[i];
    });
  });
}

Tensor leaf_grad(const Tensor& t) {
  if (!t.defined() || !t.requires_grad() || !t.is_leaf() || !t.impl()->grad) return Tensor();
  ready_to_add(t);
  return Tensor(t.impl()->grad);
}

Tensor grad_so_far(const Tensor& t) {
  if (!t.defined() || !t.requires_grad() || !t.impl()->grad) return Tensor();
  ready_to_add(t);
  return Tensor(t.impl()->grad);
}

// ---- backward ----

std::vector<Tensor> topological_order(const Tensor& root) {
  std::vector<Tensor> order;
  std::unordered_set<TensorImpl*> visited;
  // Iterative post-order DFS: (tensor, index of the next input to visit).
  std::vector<std::pair<Tensor, size_t>> stack;
  stack.emplace_back(root, 0);
  visited.insert(root.impl());
  while (!stack.empty()) {
    auto& [t, next] = stack.back();
    Node* node = t.grad_fn().get();
    if (node && next < node->inputs.size()) {
      const Tensor& input = node->inputs[next++];
      if (input.defined() && !visited.count(input.impl())) {
        visited.insert(input.impl());
        stack.emplace_back(input, 0);
      }
      continue;
    }
    order.push_back(t);
    stack.pop_back();
  }
  return order;
}

void Tensor::backward(const Tensor& grad, bool retain_graph) const {
  if (!requires_grad()) throw Error("backward: this tensor does not require grad (no input had requires_grad set)");
  Tensor seed = grad;
  if (!seed.defined()) {
    if (numel() != 1)
      throw ShapeError("backward: output of shape " + shape_str(shape()) +
                       " is not a scalar; pass a gradient of the same shape");
    seed = Tensor::ones(shape(), dtype());
  } else if (seed.shape() != shape()) {
    throw ShapeError("backward: gradient of shape " + shape_str(seed.shape()) + " for an output of shape " +
                     shape_str(shape()));
  }
  // Each entry of `order` holds its tensor; an entry is released once its node has run, so an
  // activation's buffer is freed as soon as the last node that needs it is done, not at the end.
  std::vector<Tensor> order = topological_order(*this);
  NoGradGuard no_grad;                 // backward closures build no graph of their own
  JobLabel engine("autograd engine");  // job timing: the seed's copy; each node below has its own label
  accumulate_grad(*this, seed.dtype() == dtype() ? seed : seed.to(dtype()));
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    TensorImpl* t = it->impl();
    Node* node = t->grad_fn.get();
    if (!node) continue;  // a leaf: its .grad is the result
    if (node->freed)
      throw Error("backward: the graph through '" + node->op +
                  "' was freed by an earlier backward(); pass retain_graph=true to the first call");
    if (t->grad) {
      JobLabel label(node->op.c_str(), /*backward=*/true);  // for job timing (cpu/threads.h)
      // A temporary gradient is handed over (the engine keeps no reference); a retained one is shared.
      node->backward(t->retains_grad ? Tensor(t->grad) : Tensor(std::move(t->grad)));
      if (g_anomaly)
        for (const Tensor& input : node->inputs)
          if (input.defined() && input.impl()->grad && !all_finite(input.grad()))
            throw NumericalError("anomaly: backward of '" + node->op + "' with inputs " + shapes_of(node->inputs) +
                                 " produced NaN or Inf");
    }
    if (!t->retains_grad) t->grad.reset();  // non-leaf gradients are temporary
    if (!retain_graph) {
      node->backward = nullptr;  // releases what the closure captured (activations)
      node->saved.clear();
      node->inputs.clear();
      node->freed = true;
    }
    *it = Tensor();  // the engine's own handle on this op's output
  }
}

// ---- memory accounting ----

std::vector<SavedBytes> saved_by_op(const Tensor& root) {
  std::unordered_map<std::string, SavedBytes> by_op;
  std::unordered_set<const Storage*> counted;
  auto count = [&](const Tensor& t, const std::string& op) {
    if (!t.defined() || !t.storage() || !counted.insert(t.storage().get()).second) return;
    const size_t n = t.storage()->nbytes();
    SavedBytes& row = by_op[op];
    row.op = op;
    row.bytes += n <= 64 ? 64 : (n + 63) / 64 * 64;  // as Storage allocates it
    row.buffers += 1;
  };
  const std::vector<Tensor> order = topological_order(root);
  for (const Tensor& t : order)  // leaves' buffers first, so that a saved view of one is not counted
    if (!t.grad_fn() && t.defined() && t.storage()) counted.insert(t.storage().get());
  for (const Tensor& t : order) {
    Node* node = t.grad_fn().get();
    if (!node) continue;  // a leaf: a parameter or the caller's input
    count(t, node->op);   // its output, held by the nodes above it (or the caller, for root)
    for (const Tensor& s : node->saved) count(s, node->op);
  }
  std::vector<SavedBytes> rows;
  for (auto& [op, row] : by_op) rows.push_back(row);
  std::sort(rows.begin(), rows.end(), [](const SavedBytes& a, const SavedBytes& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.op < b.op;
  });
  return rows;
}

// ---- DOT export ----

std::string to_dot(const Tensor& root) {
  std::ostringstream os;
  os << "digraph autograd {\n  rankdir=BT;\n  node [fontname=\"Helvetica\", fontsize=10];\n";
  std::unordered_map<TensorImpl*, int> id;
  std::vector<Tensor> order = topological_order(root);
  for (const Tensor& t : order) {
    int i = static_cast<int>(id.size());
    id[t.impl()] = i;
    std::string label = t.name().empty() ? "" : t.name() + "\\n";
    label += shape_str(t.shape());
    const char* fill = t.is_leaf() ? (t.requires_grad() ? "lightblue" : "lightgray") : "white";
    os << "  t" << i << " [shape=box, style=filled, fillcolor=" << fill << ", label=\"" << label << "\"];\n";
    if (Node* node = t.grad_fn().get()) {
      os << "  op" << i << " [shape=ellipse, label=\"" << node->op << (node->freed ? "\\n(freed by backward)" : "")
         << "\"];\n";
      os << "  op" << i << " -> t" << i << ";\n";
      for (const Tensor& input : node->inputs)
        if (input.defined()) os << "  t" << id.at(input.impl()) << " -> op" << i << ";\n";
    }
  }
  os << "}\n";
  return os.str();
}

}  // namespace sf
