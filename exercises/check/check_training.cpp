// check_training.cpp: the checks of exercises 15-18 (lessons 13 training and 16 mixed-precision): the warmup + cosine
// schedule, global-norm clipping, the AdamW update, dynamic loss scaling.
#include <cmath>
#include <limits>

#include "exercises/check/checker.h"
#include "exercises/exercise.h"
#include "optim/adam.h"
#include "optim/clip.h"
#include "optim/grad_scaler.h"
#include "optim/schedule.h"
#include "optim/sgd.h"

namespace sf::exercise {

// Values exactly representable in float32, so the float32 reference sees the same numbers.
static std::vector<double> random_f32_values(int64_t n, uint64_t seed, double stddev = 1.0) {
  Generator gen(seed);
  return Tensor::randn({n}, gen, stddev, DType::f32).to_vector();
}

static Tensor f32(const std::vector<double>& values) {
  return Tensor::from_vector(values, {static_cast<int64_t>(values.size())}, DType::f32);
}

// ---- 15 warmup + cosine ----
void check_warmup_cosine(Report& r) {
  const char* hint =
      "step < W: lr (step + 1) / (W + 1); then q = min(1, (step - W) / (S - W)) and "
      "lr_t = min_lr + (lr - min_lr) (1 + cos(pi q)) / 2";
  struct Case {
    CosineSchedule s;
    std::string name, hint;
  };
  const std::vector<Case> cases = {
      {{1e-3, 1e-4, 10, 100}, "lr 1e-3 -> 1e-4, W 10, S 100, steps 0 to 110", hint},
      {{6e-4, 0.0, 0, 50},
       "edge: no warmup (W 0), min_lr 0",
       "with W = 0 there is no warmup: step 0 is at the peak lr"},
      {{1.0, 0.5, 1, 2},
       "edge: W 1, S 2 (one warmup step, one decay step)",
       "warmup starts above zero: step 0 gets lr * 1 / (W + 1), and from step S on the rate stays at min_lr"}};
  for (const Case& c : cases)
    r.check(
        c.name,
        [c] {
          ScheduleOptions ref;
          ref.kind = ScheduleKind::cosine;
          ref.lr = c.s.lr;
          ref.min_lr = c.s.min_lr;
          ref.warmup_steps = c.s.warmup_steps;
          ref.decay_steps = c.s.decay_steps;
          for (int64_t step = 0; step <= c.s.decay_steps + 10; ++step) {
            std::string d = compare(lr_at(ref, step), warmup_cosine_lr(c.s, step), 1e-15, 1e-12);
            if (!d.empty()) return tr("step ", "第 ") + std::to_string(step) + tr(": ", " 步：") + d;
          }
          return std::string();
        },
        c.hint);
}

// ---- 16 global-norm clipping ----
void check_clip_grad_norm(Report& r) {
  const char* hint =
      "norm = sqrt(sum of g^2 over every element of every gradient); c = max_norm / (norm + 1e-6); "
      "multiply every gradient by c only when c < 1; return the norm before clipping";
  struct Case {
    std::vector<std::vector<double>> grads;
    double max_norm;
    std::string name, hint;
  };
  std::vector<double> big = random_f32_values(12, 141, 3.0), small = random_f32_values(5, 142, 0.01);
  const std::vector<Case> cases = {
      {{big, random_f32_values(5, 143, 3.0)}, 1.0, "two gradients (12 and 5 values), norm above max_norm 1", hint},
      {{small, random_f32_values(3, 144, 0.01)},
       1.0,
       "norm below max_norm: nothing changes",
       "clip only when the norm exceeds max_norm: the scale is min(1, max_norm / (norm + 1e-6))"},
      {{std::vector<double>(4, 0.0)},
       0.5,
       "edge: all-zero gradients (norm 0)",
       "a zero norm must not divide by zero: with the 1e-6 in the denominator c is huge, so no clipping happens"},
      {{{0.0, 1e20, 0.0}},
       1.0,
       "edge: one huge element (1e20)",
       "sum the squares in double: 1e40 overflows float but not double; the result is (0, ~1, 0)"}};
  for (const Case& c : cases)
    r.check(
        c.name,
        [c] {
          NamedParameters params;
          for (size_t i = 0; i < c.grads.size(); ++i) {
            Tensor p = Tensor::zeros({static_cast<int64_t>(c.grads[i].size())}).requires_grad_();
            p.set_grad(f32(c.grads[i]));
            std::string name = "g";
            name += std::to_string(i);  // (not "g" + to_string: GCC 12 warns falsely, -Wrestrict)
            params.push_back({name, p});
          }
          double expected_norm = sf::clip_grad_norm(params, c.max_norm);
          std::vector<std::vector<double>> grads = c.grads;
          double norm = exercise::clip_grad_norm(grads, c.max_norm);
          std::string d = compare(expected_norm, norm, 1e-12, 1e-6);
          if (!d.empty()) return tr("returned norm: ", "返回的范数：") + d;
          if (grads.size() != c.grads.size()) return tr("the number of gradients changed", "梯度的个数变了");
          for (size_t i = 0; i < grads.size(); ++i) {
            std::string g = compare(params[i].second.grad().to_vector(), grads[i], 1e-12, 1e-6);
            if (!g.empty()) return tr("gradient ", "梯度 ") + std::to_string(i) + " " + g;
          }
          return std::string();
        },
        c.hint);
}

// ---- 17 AdamW ----
void check_adamw_step(Report& r) {
  const char* hint =
      "p *= 1 - lr wd; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2; p -= lr / (1 - b1^t) * m / "
      "(sqrt(v) / sqrt(1 - b2^t) + eps)";
  struct Case {
    AdamWConfig config;
    bool zero_first_grad;
    std::string name, hint;
  };
  const std::vector<Case> cases = {
      {{1e-2, 0.9, 0.999, 1e-8, 0.1},
       false,
       "5 steps on 12 weights, lr 1e-2, wd 0.1: p, m and v after each step",
       hint},
      {{1e-3, 0.8, 0.99, 1e-8, 0.0},
       false,
       "betas 0.8 and 0.99, no weight decay",
       "use the config's beta1 and beta2 everywhere, including the bias corrections 1 - beta^t"},
      {{1e-2, 0.9, 0.999, 1e-3, 0.0},
       false,
       "eps 1e-3 (not the default 1e-8)",
       "use the config's eps, added to sqrt(v_hat) (the bias-corrected second moment), not to v"},
      {{1e-2, 0.9, 0.999, 1e-8, 0.5},
       true,
       "edge: a zero gradient at step 1 (only the decay moves p)",
       "with g = 0, m and v stay 0: the update is 0 / (0 + eps) = 0 and only p *= 1 - lr wd remains; "
       "decay is decoupled, never added to g"}};
  for (const Case& c : cases)
    r.check(
        c.name,
        [c] {
          const int64_t n = 12;
          std::vector<double> p = random_f32_values(n, 151), m(n, 0.0), v(n, 0.0);
          Tensor P = f32(p).requires_grad_();
          AdamOptions options;
          options.lr = c.config.lr;
          options.beta1 = c.config.beta1;
          options.beta2 = c.config.beta2;
          options.eps = c.config.eps;
          options.weight_decay = c.config.weight_decay;
          options.decay_rule = DecayRule::everything();
          AdamW reference({{"w", P}}, options);
          for (int64_t t = 1; t <= 5; ++t) {
            std::vector<double> g = random_f32_values(n, 151 + t);
            if (c.zero_first_grad && t == 1) g.assign(n, 0.0);
            P.set_grad(f32(g));
            reference.step();
            adamw_step(p, g, m, v, t, c.config);
            std::string at = tr("after step ", "第 ") + std::to_string(t) + tr(", ", " 步之后，");
            std::string dm = compare(reference.buffer("exp_avg", 0).to_vector(), m, 1e-9, 1e-5);
            if (!dm.empty()) return at + "m " + dm;
            std::string dv = compare(reference.buffer("exp_avg_sq", 0).to_vector(), v, 1e-12, 1e-5);
            if (!dv.empty()) return at + "v " + dv;
            std::string dp = compare(P.to_vector(), p, 1e-7, 1e-5);
            if (!dp.empty()) return at + "p " + dp;
          }
          return std::string();
        },
        c.hint);
}

// ---- 18 dynamic loss scaling ----
void check_loss_scaler(Report& r) {
  const char* hint =
      "divide every gradient by scale; if any is inf or nan: scale *= backoff_factor, good_steps = 0, "
      "return false; else good_steps += 1 and when it reaches growth_interval: scale *= growth_factor, "
      "good_steps = 0; return true";
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  // Ten iterations of a scaled backward; the iterations in `bad` overflow (inf when even, nan when odd).
  auto run = [=](const std::vector<int>& bad, int64_t interval, double growth = 2.0, double backoff = 0.5) {
    GradScalerOptions options;
    options.init_scale = 1024;
    options.growth_interval = interval;
    options.growth_factor = growth;
    options.backoff_factor = backoff;
    GradScaler reference(options);
    Tensor P = Tensor::zeros({6}).requires_grad_();
    SGDOptions sgd;
    sgd.lr = 1e-3;  // the step itself is not what is checked
    SGD opt({{"w", P}}, sgd);
    LossScaler mine;
    mine.scale = 1024;
    mine.growth_interval = interval;
    mine.growth_factor = growth;
    mine.backoff_factor = backoff;
    for (int it = 0; it < 10; ++it) {
      std::vector<double> g = random_f32_values(6, 161 + it, 1e-3);
      for (double& x : g) x *= reference.scale();  // the backward of a scaled loss
      for (int b : bad)
        if (b == it) g[static_cast<size_t>(it % 6)] = it % 2 ? nan : inf;
      P.set_grad(f32(g));
      reference.unscale(opt.params());
      bool ref_step = reference.step(opt);
      reference.update();
      std::vector<std::vector<double>> grads = {g};
      bool stepped = loss_scaler_update(mine, grads);
      std::string at = tr("iteration ", "第 ") + std::to_string(it) + tr(": ", " 次迭代：");
      if (stepped != ref_step)
        return at + (ref_step ? "returned false (skip), expected true: every gradient is finite"
                              : "returned true (step), expected false: a gradient is inf or nan");
      std::string s = compare(reference.scale(), mine.scale, 0, 0);
      if (!s.empty()) return at + "scale " + s;
      if (mine.good_steps != reference.growth_tracker())
        return at + tr("good_steps is ", "good_steps 是 ") + std::to_string(mine.good_steps) +
               tr(", expected ", "，应为 ") + std::to_string(reference.growth_tracker());
      if (ref_step) {
        std::string u = compare(P.grad().to_vector(), grads.at(0), 0, 1e-6);
        if (!u.empty()) return at + tr("unscaled gradient ", "还原后的梯度 ") + u;
      }
    }
    return std::string();
  };
  r.check(
      "ten finite iterations, growth_interval 3: the scale doubles every 3 steps", [=] { return run({}, 3); }, hint);
  r.check(
      "overflows at iterations 2 (inf), 7 (nan) and 8 (inf in a row), growth_interval 3",
      [=] {
        return run({2, 7, 8}, 3);
      },
      "an overflow halves the scale and restarts the count of good steps; nan counts as an overflow "
      "too (std::isfinite is false for both)");
  r.check(
      "growth_factor 4 and backoff_factor 0.25 (not the defaults), overflow at iteration 5",
      [=] { return run({5}, 2, 4.0, 0.25); }, "use the scaler's growth_factor and backoff_factor, not 2 and 0.5");
  r.check(
      "edge: growth_interval 1 (grow after every good step)", [=] { return run({4}, 1); },
      "compare the count with growth_interval after incrementing it");
}

}  // namespace sf::exercise
