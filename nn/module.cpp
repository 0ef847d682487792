// module.cpp: the parameter tree, modes, the contiguous parameter buffer and the summary.
#include "nn/module.h"

#include <cstring>
#include <unordered_set>

#include "autograd/cpu/threads.h"
#include "autograd/errors.h"

namespace sf {

// ---- the tree ----

Tensor Module::register_parameter(const std::string& name, Tensor t) {
  if (!t.defined()) throw ConfigError("register_parameter: '" + name + "' is an undefined tensor");
  for (auto& [n, p] : params_)
    if (n == name) throw ConfigError("register_parameter: '" + name + "' registered twice");
  if (t.is_leaf() && !t.requires_grad()) t.requires_grad_(true);
  params_.emplace_back(name, t);
  return t;
}

void Module::add_child(const std::string& name, Module* child) {
  for (auto& [n, c] : children_)
    if (n == name) throw ConfigError("register_module: '" + name + "' registered twice");
  children_.emplace_back(name, child);
}

void Module::collect(const std::string& prefix, std::vector<std::pair<std::string, Tensor>>& out) const {
  for (const auto& [name, t] : params_) out.emplace_back(prefix + name, t);
  for (const auto& [name, child] : children_) child->collect(prefix + name + ".", out);
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters(bool remove_duplicate) const {
  std::vector<std::pair<std::string, Tensor>> all;
  collect("", all);
  if (!remove_duplicate) return all;
  std::vector<std::pair<std::string, Tensor>> unique;
  std::unordered_set<const TensorImpl*> seen;
  for (auto& entry : all)
    if (seen.insert(entry.second.impl()).second) unique.push_back(std::move(entry));
  return unique;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto& [name, t] : named_parameters()) out.push_back(t);
  return out;
}

Tensor Module::parameter(const std::string& dotted_name) const {
  for (auto& [name, t] : named_parameters(false))
    if (name == dotted_name) return t;
  throw ConfigError("no parameter named '" + dotted_name + "' in " + type_name_);
}

// ---- modes ----

void Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->train(on);
}

// ---- parameters ----

int64_t Module::num_parameters() const {
  int64_t n = 0;
  for (auto& [name, t] : named_parameters()) n += t.numel();
  return n;
}

DType Module::dtype() const {
  auto params = named_parameters();
  return params.empty() ? DType::f32 : params.front().second.dtype();
}

void Module::zero_grad() {
  if (!is_flat()) {
    for (auto& [name, t] : named_parameters()) t.zero_grad();  // in place: keeps flat views valid
    return;
  }
  // A large buffer is replaced by a fresh zeroed one, whose memory goes back to the system: its
  // pages take memory only as backward writes them, so the gradients cost nothing during the
  // forward (torch's zero_grad(set_to_none=True) has the same effect), and every parameter's .grad
  // is marked as not yet written (the first gradient to arrive faults its pages in for writing:
  // see TensorImpl::pages_unwritten). A small one (kFreshGradBytes) is cleared where it is, both
  // threads at it. Then every parameter's .grad is a view into the buffer.
  const size_t bytes = flat_grads_.storage()->nbytes();
  const bool fresh = bytes >= kFreshGradBytes;
  if (fresh) {
    flat_grads_ = Tensor::view_of(std::make_shared<Storage>(bytes, Storage::Zeroed{}), 0, flat_grads_.shape(),
                                  flat_grads_.dtype());
  } else {
    parallel_zero(flat_grads_.storage()->data(), bytes);
  }
  for (auto& [name, t] : named_parameters()) {
    auto& g = t.impl()->grad;
    if (!g || g->storage != flat_grads_.storage() || g->offset != t.impl()->offset)
      g = Tensor::view_of(flat_grads_.storage(), t.impl()->offset, t.shape(), t.dtype()).impl_ptr();
    g->pages_unwritten = fresh;
  }
}

void Module::clear_flat() {
  flat_params_ = Tensor();
  flat_grads_ = Tensor();
  for (auto& [name, child] : children_) child->clear_flat();
}

void Module::to(DType dtype) {
  bool was_flat = is_flat();
  for (auto& [name, t] : named_parameters()) {
    if (t.dtype() == dtype) continue;
    Tensor converted;
    {
      NoGradGuard no_grad;
      converted = t.detach().to(dtype);
    }
    TensorImpl* impl = t.impl();  // swap the memory under the same handle
    impl->storage = converted.storage();
    impl->offset = 0;
    impl->dtype = dtype;
    impl->grad.reset();
  }
  if (was_flat) {
    clear_flat();
    flatten_parameters();
  }
}

void Module::flatten_parameters() {
  auto params = named_parameters();
  clear_flat();
  if (params.empty()) return;
  DType dtype = params.front().second.dtype();
  int64_t total = 0;
  for (auto& [name, t] : params) {
    if (t.dtype() != dtype)
      throw ShapeError("flatten_parameters: '" + name + "' is " + dtype_name(t.dtype()) + ", others are " +
                       dtype_name(dtype));
    total += t.numel();
  }
  size_t bytes = static_cast<size_t>(total) * dtype_size(dtype);
  auto data = std::make_shared<Storage>(bytes);
  auto grads = std::make_shared<Storage>(bytes, Storage::Zeroed{});
  size_t offset = 0;
  for (auto& [name, t] : params) {
    TensorImpl* impl = t.impl();
    size_t nbytes = static_cast<size_t>(t.numel()) * dtype_size(dtype);
    std::memcpy(static_cast<char*>(data->data()) + offset * dtype_size(dtype),
                static_cast<const char*>(impl->storage->data()) + impl->offset * dtype_size(dtype), nbytes);
    Tensor grad_view = Tensor::view_of(grads, offset, t.shape(), dtype);
    if (impl->grad)  // keep a gradient that already exists
      std::memcpy(static_cast<char*>(grads->data()) + offset * dtype_size(dtype),
                  static_cast<const char*>(impl->grad->storage->data()) + impl->grad->offset * dtype_size(dtype),
                  nbytes);
    grad_view.impl()->pages_unwritten = !impl->grad;
    impl->storage = data;
    impl->offset = offset;
    impl->grad = grad_view.impl_ptr();
    offset += static_cast<size_t>(t.numel());
  }
  flat_params_ = Tensor::view_of(data, 0, {total}, dtype);
  flat_grads_ = Tensor::view_of(grads, 0, {total}, dtype);
}

Generator& init_generator() {
  static Generator gen(1337);
  return gen;
}
void manual_seed(uint64_t seed) { init_generator() = Generator(seed); }

// ---- printing ----

std::string format_count(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

void Module::summary_lines(const std::string& name, int depth, std::string& out) const {
  std::string line(static_cast<size_t>(2 * depth), ' ');
  if (!name.empty()) line += "(" + name + "): ";
  line += type_name_;
  std::string extra = extra_repr();
  if (!extra.empty()) line += "(" + extra + ")";
  for (size_t i = 0; i < params_.size(); ++i)
    line += (i == 0 ? "  " : ", ") + params_[i].first + " " + shape_str(params_[i].second.shape());
  line += "  [" + format_count(num_parameters()) + "]\n";
  out += line;
  for (const auto& [child_name, child] : children_) child->summary_lines(child_name, depth + 1, out);
}

std::string Module::summary() const {
  std::string out;
  summary_lines("", 0, out);
  auto all = named_parameters(false);
  auto unique = named_parameters(true);
  out += "parameters: " + format_count(num_parameters()) + " in " + std::to_string(unique.size()) + " tensors";
  if (all.size() != unique.size()) out += " (" + std::to_string(all.size() - unique.size()) + " tied, counted once)";
  out += ", " + std::string(dtype_name(dtype())) + "\n";
  return out;
}

}  // namespace sf
