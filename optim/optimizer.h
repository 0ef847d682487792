// optimizer.h: what every optimizer shares: the named parameters, the learning rate, the step
// count, per-parameter state buffers, and saving/loading that state for checkpoints.
//
// An optimizer is built from (name, parameter) pairs, as nn's Module::named_parameters() returns
// them. step() reads each parameter's .grad and updates the parameter in place; a parameter
// whose .grad is undefined is skipped (like torch.optim with grad None). Parameters and state are
// float32. The update is one fused loop per parameter over raw pointers; when neighbouring
// parameters (and their gradients) sit next to each other in one buffer, their loops are merged,
// so a model whose parameters live in one contiguous block is updated in one pass (as in llm.c).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "autograd/tensor.h"

namespace sf {

// (name, parameter) pairs, e.g. {"h.0.attn.c_attn.weight", W}: NamedTensors (tensor.h).
using NamedParameters = NamedTensors;

// Everything an optimizer needs to continue bit for bit: tensors named "<buffer>.<param name>"
// (e.g. "exp_avg.wte.weight"), ready to be written as safetensors, plus a small JSON of scalars
// ({"optimizer": "adamw", "step": 120, "param_steps": {"wte.weight": 120, ...}}).
struct OptimizerState {
  NamedTensors tensors;
  nlohmann::json scalars;
};

// Which parameters receive weight decay. Decay a parameter when dim() >= min_dim and its name
// contains none of the `exclude` substrings. The default decays matrices (linear weights) but
// not biases, LayerNorm weights (1-D) or embeddings, found by name (substring match): GPT's
// transformer.wte / wpe, the encoder-decoder's src_embed / tgt_embed / src_pos / tgt_pos.
// nanoGPT's recipe, which decays every 2-D parameter including the embeddings (and so the tied
// lm_head), is DecayRule::all_matrices().
struct DecayRule {
  int64_t min_dim = 2;
  std::vector<std::string> exclude = {"wte", "wpe", "embed", "tok_emb", "pos_emb", "src_pos", "tgt_pos"};

  bool applies(const std::string& name, const Tensor& param) const;
  static DecayRule all_matrices() { return {2, {}}; }  // nanoGPT: every param with dim >= 2
  static DecayRule everything() { return {0, {}}; }    // like torch's single param group
};

class Optimizer {
 public:
  Optimizer(NamedParameters params, double lr);
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every parameter that has a gradient; counts one step.
  void step();
  // Fills every existing .grad with zeros (torch's zero_grad(set_to_none=False)).
  void zero_grad();

  virtual const char* name() const = 0;  // "sgd", "adam", "adamw"
  double lr() const { return lr_; }
  void set_lr(double lr);                       // the schedule calls this before each step
  int64_t step_count() const { return step_; }  // updates done so far (skipped steps excluded)
  const NamedParameters& params() const { return params_; }
  // The state buffer `kind` ("exp_avg", ...) of parameter i (a view into one contiguous block).
  const Tensor& buffer(const std::string& kind, size_t i) const;

  // The state as named tensors (views: copy them if you need a snapshot) + scalars.
  OptimizerState state_dict() const;
  // Restores state saved by state_dict(). Checks optimizer kind, every name and every shape
  // first and throws CheckpointError naming the first mismatch; on error nothing is changed.
  void load_state_dict(const OptimizerState& state);

 protected:
  // A stretch of floats updated by one loop: one parameter, or several neighbours merged.
  struct Run {
    float* p;
    const float* g;
    float* buf[2];  // state buffers in the order of buffer_kinds_ (unused slots null)
    int64_t n;
    bool decay;    // weight decay applies
    int64_t step;  // this parameter's update count, including the current one (1 on first)
  };
  // Allocates one zero-filled float32 block per kind, with a view per parameter.
  void add_buffers(const std::vector<std::string>& kinds);
  // Updates the runs of one step (the hyperparameters are the subclass's members).
  virtual void update(const std::vector<Run>& runs) = 0;
  // Calls fn(i, begin, end) for stretches [begin, end) of runs[i] that together cover every
  // element of every run once, as one job on the thread pool: the runs are laid end to end and
  // that line is cut evenly. A small model's parameters are many short runs (biases, LayerNorm
  // weights), each too short to split alone. For updates where each element stands on its own.
  static void for_each_stretch(const std::vector<Run>& runs, const std::function<void(size_t, int64_t, int64_t)>& fn);
  virtual nlohmann::json hyperparameters() const = 0;  // saved for reading, not restored

  NamedParameters params_;
  std::vector<bool> decay_;  // per parameter; subclasses set it (default: all true)
  double lr_;

 private:
  std::vector<Run> make_runs();

  int64_t step_ = 0;
  std::vector<int64_t> param_steps_;  // per parameter: updates it took part in
  std::vector<std::string> buffer_kinds_;
  std::vector<std::vector<Tensor>> buffers_;  // [kind][param]
};

}  // namespace sf
