// module.h: the Module base class, the tree that every layer and model is built from.
//
// A Module owns named parameters (leaf Tensors that require grad) and named child modules, so
// every parameter has a dotted path like PyTorch's state_dict: "transformer.h.0.attn.c_attn.weight".
// Children are members of the parent (registered by pointer), so a Module is neither copied nor
// moved: build models with std::make_unique.
//
// Speed: flatten_parameters() moves every parameter into ONE contiguous buffer and pre-attaches
// its gradient as a view into ONE contiguous gradient buffer (as llm.c does). The parameter
// Tensors keep their identity (the handles modules hold see the new memory), so the optimizer and
// gradient clipping can each run as a single loop over flat_parameters() / flat_grads().
// zero_grad() gives a large gradient buffer a fresh zeroed one, which takes memory only as
// backward writes it, and clears a small one in place. GPT and Transformer flatten themselves
// when constructed.
//
// Legend: B batch, T time, C channels, H heads, D head size, V vocab.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/tensor.h"

namespace sf {

class Module {
 public:
  explicit Module(std::string type_name) : type_name_(std::move(type_name)) {}
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  Module(Module&&) = delete;
  Module& operator=(Module&&) = delete;

  // ---- the tree ----
  // Every parameter with its dotted name, depth first in registration order. A tensor registered
  // twice (a tied LM head) is listed once under its first name, as torch's named_parameters();
  // remove_duplicate = false lists every name (as torch's state_dict() does).
  std::vector<std::pair<std::string, Tensor>> named_parameters(bool remove_duplicate = true) const;
  std::vector<Tensor> parameters() const;  // the same tensors, without names
  // The direct children and their names, in registration order.
  const std::vector<std::pair<std::string, Module*>>& children() const { return children_; }
  // The parameter with this dotted name; throws ConfigError naming it if there is none.
  Tensor parameter(const std::string& dotted_name) const;

  // ---- modes ----
  // Training mode switches dropout on; eval() switches it off. Both recurse into children.
  void train(bool on = true);
  void eval() { train(false); }
  bool training() const { return training_; }

  // ---- parameters ----
  int64_t num_parameters() const;  // counted once per distinct tensor (tied weights once)
  // Zeroes every gradient. Flattened, with a gradient buffer over kFreshGradBytes: a fresh zeroed
  // buffer replaces the old one (whose memory is released), so until backward writes them the
  // gradients take no memory, like torch's zero_grad(set_to_none=True); flat_grads() is the new
  // buffer. Else each .grad is filled with zeros where it is.
  void zero_grad();
  // From this size (4M float parameters) zero_grad maps the gradient buffer afresh. Below it the
  // memory saved during the forward is small, and a fresh buffer would cost a page fault per 4 KiB
  // in every backward: bench_gpt's small shape (a 3 MiB buffer) ran 2% faster cleared in place.
  static constexpr size_t kFreshGradBytes = size_t(16) << 20;
  // Converts every parameter in place to `dtype` (float64 for gradient checks). Names, tying and
  // the identity of the Tensor handles are kept; gradients are dropped; a flat module stays flat.
  void to(DType dtype);
  DType dtype() const;  // the dtype of the parameters (float32 if there are none)

  // Moves all parameters into one contiguous buffer and their gradients into another.
  void flatten_parameters();
  bool is_flat() const { return flat_params_.defined(); }
  // 1-D views of all parameters / all gradients (undefined unless flattened). Each parameter's
  // slice is at the offset of its position in named_parameters().
  Tensor flat_parameters() const { return flat_params_; }
  Tensor flat_grads() const { return flat_grads_; }

  // ---- printing ----
  // The module tree, one line per module, with each parameter's shape and the counts, like
  // printing a PyTorch model:  "(c_attn): Linear(in=64, out=192, bias)  weight (192, 64) ..."
  std::string summary() const;
  const std::string& type_name() const { return type_name_; }
  // The part in brackets after the type name in summary(), e.g. "in=64, out=192".
  virtual std::string extra_repr() const { return ""; }

 protected:
  // Registers a leaf tensor as a parameter (sets requires_grad) and returns it.
  Tensor register_parameter(const std::string& name, Tensor t);
  // Registers a child owned by this module (a member) or elsewhere; it must outlive this module.
  template <class M>
  M& register_module(const std::string& name, M& child) {
    add_child(name, &child);
    return child;
  }

 private:
  void add_child(const std::string& name, Module* child);
  void collect(const std::string& prefix, std::vector<std::pair<std::string, Tensor>>& out) const;
  void summary_lines(const std::string& name, int depth, std::string& out) const;
  void clear_flat();  // recursively forgets flat buffers (after to() or a re-flatten)

  std::string type_name_;
  bool training_ = true;
  std::vector<std::pair<std::string, Tensor>> params_;
  std::vector<std::pair<std::string, Module*>> children_;
  Tensor flat_params_, flat_grads_;  // set on the module that was flattened
};

// A list of modules of one type, named "0", "1", ... (torch.nn.ModuleList).
template <class M>
class ModuleList : public Module {
 public:
  ModuleList() : Module("ModuleList") {}
  M& append(std::unique_ptr<M> m) {
    M& ref = *m;
    register_module(std::to_string(items_.size()), ref);
    items_.push_back(std::move(m));
    return ref;
  }
  size_t size() const { return items_.size(); }
  M& operator[](size_t i) { return *items_.at(i); }
  const M& operator[](size_t i) const { return *items_.at(i); }

 private:
  std::vector<std::unique_ptr<M>> items_;
};

// A plain named container of children (torch.nn.ModuleDict), e.g. nanoGPT's `transformer`.
class ModuleDict : public Module {
 public:
  ModuleDict() : Module("ModuleDict") {}
  template <class M>
  M& add(const std::string& name, M& child) {
    return register_module(name, child);
  }
};

// The generator that layers draw their default initial weights from (like torch's global RNG).
// Models re-initialise with their own seeded Generator (nn/init.h), so this only matters for
// layers built on their own; manual_seed makes those reproducible too.
Generator& init_generator();
void manual_seed(uint64_t seed);

// "1,234,567": a count with thousands separators, as summaries print them.
std::string format_count(int64_t n);

}  // namespace sf
