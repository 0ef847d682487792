// Reference solution of exercise 22 (spoiler): one training step.
#include "exercises/exercise.h"

namespace sf::exercise {

StepResult train_step(GPT& model, const IntTensor& x, const IntTensor& y, TrainState& state,
                      const TrainStepConfig& config) {
  std::vector<Tensor> params = model.parameters();
  if (state.m.empty()) {  // the moments start at zero
    for (const Tensor& p : params) {
      state.m.emplace_back(static_cast<size_t>(p.numel()), 0.0);
      state.v.emplace_back(static_cast<size_t>(p.numel()), 0.0);
    }
  }
  StepResult r;
  // zero the gradients, forward, loss, backward
  model.zero_grad();
  Tensor loss = gpt_forward(model, x, &y, nullptr).loss;
  loss.backward();
  r.loss = loss.item();
  // clip the global norm
  std::vector<std::vector<double>> grads;
  for (const Tensor& p : params) grads.push_back(values_of(p.grad()));
  r.grad_norm = clip_grad_norm(grads, config.max_norm);
  // the rate of this step, then AdamW on every parameter
  r.lr = warmup_cosine_lr(config.schedule, state.step);
  for (size_t i = 0; i < params.size(); ++i) {
    AdamWConfig c = config.adamw;
    c.lr = r.lr;
    if (params[i].dim() < 2) c.weight_decay = 0.0;  // no decay for biases and LayerNorm weights
    std::vector<double> p = values_of(params[i]);
    adamw_step(p, grads[i], state.m[i], state.v[i], state.step + 1, c);
    set_values(params[i], p);
  }
  ++state.step;
  return r;
}

}  // namespace sf::exercise
