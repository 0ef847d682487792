// sgd.h: stochastic gradient descent with momentum, Nesterov momentum and weight decay,
// with torch.optim.SGD's exact semantics.
#pragma once
#include "optim/optimizer.h"

namespace sf {

struct SGDOptions {
  double lr = 0.01;
  double momentum = 0.0;      // mu
  double dampening = 0.0;     // tau
  double weight_decay = 0.0;  // lambda (L2, added to the gradient)
  bool nesterov = false;      // needs momentum > 0 and dampening 0
};

// Per parameter p with gradient g, at its t-th update (t = 1 first):
//   d = g + lambda p
//   with momentum:  b = d if t == 1 else mu b + (1 - tau) d    (buffer "momentum_buffer")
//                   d = d + mu b (Nesterov) or d = b
//   p = p - lr d
class SGD : public Optimizer {
 public:
  SGD(NamedParameters params, const SGDOptions& options);
  const char* name() const override { return "sgd"; }
  const SGDOptions& options() const { return options_; }

 protected:
  void update(const std::vector<Run>& runs) override;
  nlohmann::json hyperparameters() const override;

 private:
  SGDOptions options_;
};

}  // namespace sf
