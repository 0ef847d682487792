// optimizer.cpp: parameter bookkeeping, merged update runs, and state save/load.
#include "optim/optimizer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "autograd/cpu/threads.h"
#include "autograd/json_int.h"

namespace sf {

bool DecayRule::applies(const std::string& name, const Tensor& param) const {
  if (param.dim() < min_dim) return false;
  for (const std::string& pattern : exclude)
    if (!pattern.empty() && name.find(pattern) != std::string::npos) return false;
  return true;
}

Optimizer::Optimizer(NamedParameters params, double lr) : params_(std::move(params)), lr_(0) {
  set_lr(lr);
  std::set<std::string> names;
  std::set<TensorImpl*> seen;
  for (const auto& [name, p] : params_) {
    if (!p.defined()) throw Error("optimizer: parameter '" + name + "' is an undefined tensor");
    if (p.dtype() != DType::f32)
      throw ShapeError("optimizer: parameter '" + name + "' is " + dtype_name(p.dtype()) +
                       ", optimizers update float32 parameters");
    if (!names.insert(name).second) throw Error("optimizer: two parameters are named '" + name + "'");
    if (!seen.insert(p.impl()).second)
      throw Error("optimizer: parameter '" + name + "' is listed twice (tied weights appear once)");
  }
  decay_.assign(params_.size(), true);
  param_steps_.assign(params_.size(), 0);
}

void Optimizer::set_lr(double lr) {
  if (!std::isfinite(lr) || lr < 0)
    throw ConfigError("optimizer: learning rate must be a finite number >= 0, got " + std::to_string(lr));
  lr_ = lr;
}

void Optimizer::add_buffers(const std::vector<std::string>& kinds) {
  int64_t total = 0;
  for (const auto& [name, p] : params_) total += p.numel();
  for (const std::string& kind : kinds) {
    auto storage = std::make_shared<Storage>(static_cast<size_t>(std::max<int64_t>(total, 1)) * 4);
    std::memset(storage->data(), 0, storage->nbytes());
    std::vector<Tensor> views;
    size_t offset = 0;
    for (const auto& [name, p] : params_) {
      views.push_back(Tensor::view_of(storage, offset, p.shape(), DType::f32));
      offset += static_cast<size_t>(p.numel());
    }
    buffer_kinds_.push_back(kind);
    buffers_.push_back(std::move(views));
  }
}

const Tensor& Optimizer::buffer(const std::string& kind, size_t i) const {
  for (size_t k = 0; k < buffer_kinds_.size(); ++k)
    if (buffer_kinds_[k] == kind) return buffers_[k].at(i);
  throw Error(std::string(name()) + ": no state buffer '" + kind + "'");
}

// One run per parameter with a gradient, merged with the previous run when parameter, gradient
// and state all continue exactly where the previous run's end (same decay flag and step count).
std::vector<Optimizer::Run> Optimizer::make_runs() {
  std::vector<Run> runs;
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor& p = params_[i].second;
    Tensor g = p.grad();
    if (!g.defined()) continue;
    Run r{p.data<float>(), g.data<float>(), {nullptr, nullptr}, p.numel(), decay_[i], ++param_steps_[i]};
    for (size_t k = 0; k < buffers_.size() && k < 2; ++k) r.buf[k] = buffers_[k][i].data<float>();
    if (!runs.empty()) {
      Run& last = runs.back();
      bool follows = last.p + last.n == r.p && last.g + last.n == r.g && last.decay == r.decay && last.step == r.step;
      for (size_t k = 0; k < buffers_.size() && k < 2; ++k) follows = follows && last.buf[k] + last.n == r.buf[k];
      if (follows) {
        last.n += r.n;
        continue;
      }
    }
    runs.push_back(r);
  }
  return runs;
}

void Optimizer::for_each_stretch(const std::vector<Run>& runs,
                                 const std::function<void(size_t, int64_t, int64_t)>& fn) {
  std::vector<int64_t> starts(runs.size() + 1, 0);  // run i covers [starts[i], starts[i + 1]) of the line
  for (size_t i = 0; i < runs.size(); ++i) starts[i + 1] = starts[i] + runs[i].n;
  parallel_for(starts.back(), kElementGrain, [&](int64_t begin, int64_t end) {
    size_t i = static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), begin) - starts.begin()) - 1;
    for (; i < runs.size() && starts[i] < end; ++i) {
      const int64_t lo = std::max(begin, starts[i]), hi = std::min(end, starts[i + 1]);
      if (lo < hi) fn(i, lo - starts[i], hi - starts[i]);
    }
  });
}

void Optimizer::step() {
  JobLabel label("optimizer step");
  std::vector<Run> runs = make_runs();
  update(runs);
  ++step_;
}

void Optimizer::zero_grad() {
  JobLabel label("zero_grad");
  for (auto& [name, p] : params_) p.zero_grad();
}

OptimizerState Optimizer::state_dict() const {
  OptimizerState state;
  for (size_t k = 0; k < buffer_kinds_.size(); ++k)
    for (size_t i = 0; i < params_.size(); ++i)
      state.tensors.emplace_back(buffer_kinds_[k] + "." + params_[i].first, buffers_[k][i]);
  nlohmann::json param_steps = nlohmann::json::object();
  for (size_t i = 0; i < params_.size(); ++i) param_steps[params_[i].first] = param_steps_[i];
  state.scalars = {{"optimizer", name()},
                   {"step", step_},
                   {"lr", lr_},
                   {"param_steps", param_steps},
                   {"hyperparameters", hyperparameters()}};
  return state;
}

void Optimizer::load_state_dict(const OptimizerState& state) {
  const std::string where = "optimizer state: ";
  const nlohmann::json& s = state.scalars;
  auto need = [&](const char* key) -> const nlohmann::json& {
    if (!s.is_object() || !s.contains(key)) throw CheckpointError(where + "missing scalar '" + key + "'");
    return s.at(key);
  };
  const nlohmann::json& kind = need("optimizer");
  if (!kind.is_string() || kind.get<std::string>() != name())
    throw CheckpointError(where + "the checkpoint holds '" + kind.dump() + "' state but the optimizer is '" + name() +
                          "'");
  const nlohmann::json& step_json = need("step");
  const std::optional<int64_t> step = json_int(step_json, 0);
  if (!step) throw CheckpointError(where + "'step' must be an integer >= 0, got " + step_json.dump());
  // A parameter's count is the number of steps that updated it, so it lies in [0, step]; Adam's
  // bias correction divides by 1 - beta^count, and a negative count would make it NaN.
  const nlohmann::json& steps = need("param_steps");
  std::vector<int64_t> param_steps(params_.size());
  for (size_t i = 0; i < params_.size(); ++i) {
    const std::string& pname = params_[i].first;
    if (!steps.is_object() || !steps.contains(pname))
      throw CheckpointError(where + "missing the step count of parameter '" + pname + "'");
    const std::optional<int64_t> count = json_int(steps.at(pname), 0, *step);
    if (!count)
      throw CheckpointError(where + "the step count of parameter '" + pname + "' must be an integer in [0, " +
                            std::to_string(*step) + "] (the optimizer's step), got " + steps.at(pname).dump());
    param_steps[i] = *count;
  }

  // Check every tensor before touching anything.
  std::map<std::string, const Tensor*> given;
  for (const auto& [tname, t] : state.tensors) given[tname] = &t;
  std::vector<std::pair<const Tensor*, Tensor>> copies;  // (source, destination)
  for (size_t k = 0; k < buffer_kinds_.size(); ++k) {
    for (size_t i = 0; i < params_.size(); ++i) {
      std::string tname = buffer_kinds_[k] + "." + params_[i].first;
      auto it = given.find(tname);
      if (it == given.end()) throw CheckpointError(where + "missing tensor '" + tname + "'");
      const Tensor& src = *it->second;
      const Tensor& dst = buffers_[k][i];
      if (!src.defined() || src.shape() != dst.shape() || src.dtype() != DType::f32)
        throw CheckpointError(
            where + "tensor '" + tname + "' is " +
            (src.defined() ? shape_str(src.shape()) + " " + dtype_name(src.dtype()) : std::string("undefined")) +
            ", expected " + shape_str(dst.shape()) + " float32");
      copies.emplace_back(&src, dst);
      given.erase(it);
    }
  }
  if (!given.empty())
    throw CheckpointError(where + "unexpected tensor '" + given.begin()->first +
                          "' (no parameter of that name, or a different optimizer)");

  for (auto& [src, dst] : copies)
    std::memmove(dst.data<float>(), src->data<float>(), static_cast<size_t>(dst.numel()) * 4);
  param_steps_ = param_steps;
  step_ = *step;
  if (s.contains("lr") && s.at("lr").is_number()) lr_ = s.at("lr").get<double>();
}

}  // namespace sf
