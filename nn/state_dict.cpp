// state_dict.cpp: matching a file's named tensors to a module's parameters, checked before copying.
#include "nn/state_dict.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

namespace sf {

namespace {

// One distinct parameter tensor and every name it is registered under (several when tied).
struct ParamGroup {
  Tensor tensor;
  std::vector<std::string> names;
};

std::vector<ParamGroup> param_groups(const Module& module) {
  std::vector<ParamGroup> groups;
  for (const auto& [name, t] : module.named_parameters(/*remove_duplicate=*/false)) {
    auto it = std::find_if(groups.begin(), groups.end(), [&t = t](const ParamGroup& g) { return g.tensor.same(t); });
    if (it == groups.end()) groups.push_back({t, {name}});
    else it->names.push_back(name);
  }
  return groups;
}

const char* file_dtype(DType d) { return d == DType::f64 ? "F64" : "F32"; }

bool same_bytes(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  size_t n = static_cast<size_t>(a.numel()) * dtype_size(a.dtype());
  const void* pa =
      a.dtype() == DType::f64 ? static_cast<const void*>(a.data<double>()) : static_cast<const void*>(a.data<float>());
  const void* pb =
      b.dtype() == DType::f64 ? static_cast<const void*>(b.data<double>()) : static_cast<const void*>(b.data<float>());
  return n == 0 || std::memcmp(pa, pb, n) == 0;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) s += (i ? "', '" : "'") + names[i];
  return s + "'";
}

}  // namespace

NamedTensors state_dict(const Module& module) { return module.named_parameters(true); }

void save_state_dict(const Module& module, const std::string& path, const Metadata& metadata) {
  save_safetensors(path, state_dict(module), metadata);
}

namespace {

// load_state_dict's checks: every parameter's source tensor, as (parameter, source) pairs to copy.
std::vector<std::pair<Tensor, const Tensor*>> checked_copies(const Module& module, const NamedTensors& tensors,
                                                             const std::string& source) {
  auto fail = [&](const std::string& what) { throw CheckpointError(source + ": " + what); };

  std::map<std::string, const Tensor*> by_name;
  for (const auto& [name, t] : tensors)
    if (!by_name.emplace(name, &t).second) fail("tensor '" + name + "' appears twice");

  std::vector<std::pair<Tensor, const Tensor*>> copies;
  std::set<std::string> used;
  std::vector<std::string> missing;
  for (const ParamGroup& g : param_groups(module)) {
    std::vector<std::string> present;
    for (const auto& n : g.names)
      if (by_name.count(n)) present.push_back(n);
    if (present.empty()) {
      missing.push_back(g.names.size() == 1 ? "'" + g.names[0] + "'" : join_names(g.names) + " (tied)");
      continue;
    }
    const std::string& name = present[0];
    const Tensor& src = *by_name[name];
    for (size_t i = 1; i < present.size(); ++i)
      if (!same_bytes(src, *by_name[present[i]]))
        fail("tensors '" + name + "' and '" + present[i] + "' are tied in the model but differ in the file");
    if (src.shape() != g.tensor.shape())
      fail("tensor '" + name + "' has shape " + shape_str(src.shape()) +
           " in the file but the model's parameter has shape " + shape_str(g.tensor.shape()));
    if (src.dtype() != g.tensor.dtype())
      fail(std::string("tensor '") + name + "' is " + file_dtype(src.dtype()) +
           " in the file but the model's parameter is " + file_dtype(g.tensor.dtype()));
    used.insert(present.begin(), present.end());
    copies.emplace_back(g.tensor, &src);
  }
  if (!missing.empty())
    fail("missing tensor " + missing[0] +
         (missing.size() > 1 ? " (and " + std::to_string(missing.size() - 1) + " more)" : ""));
  std::vector<std::string> extra;
  for (const auto& [name, t] : tensors)
    if (!used.count(name)) extra.push_back(name);
  if (!extra.empty())
    fail("unexpected tensor '" + extra[0] + "' (the model has no parameter by that name" +
         (extra.size() > 1 ? "; " + std::to_string(extra.size() - 1) + " more unexpected" : "") + ")");
  return copies;
}

}  // namespace

void check_state_dict(const Module& module, const NamedTensors& tensors, const std::string& source) {
  checked_copies(module, tensors, source);
}

void load_state_dict(Module& module, const NamedTensors& tensors, const std::string& source) {
  // Everything is checked first; then the copies go in place, so modules, tying and flat buffers
  // keep seeing the same memory.
  for (auto& [dst, src] : checked_copies(module, tensors, source)) {
    size_t n = static_cast<size_t>(dst.numel()) * dtype_size(dst.dtype());
    if (n == 0) continue;
    if (dst.dtype() == DType::f64) std::memcpy(dst.data<double>(), src->data<double>(), n);
    else std::memcpy(dst.data<float>(), src->data<float>(), n);
  }
}

Metadata load_state_dict(Module& module, const std::string& path) {
  Metadata metadata;
  NamedTensors tensors = load_safetensors(path, &metadata);
  load_state_dict(module, tensors, path);
  return metadata;
}

}  // namespace sf
