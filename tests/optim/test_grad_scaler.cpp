// GradScaler (growth, backoff, skipped steps, state) and the MixedPrecision recipe, including
// the reason loss scaling exists: small fp16 gradients underflow to zero without it.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "autograd/ops.h"
#include "optim/mixed_precision.h"
#include "optim/schedule.h"
#include "optim/sgd.h"

using namespace sf;

namespace {

struct OneParam {
  Tensor w = Tensor::from_vector({1, 2}, {2}).requires_grad_();
  NamedParameters params{{"w", w}};
  SGD opt{params, SGDOptions{}};
  void grad(double a, double b) { w.set_grad(Tensor::from_vector({a, b}, {2})); }
};

}  // namespace

TEST_CASE("GradScaler doubles the scale after 2000 consecutive finite steps") {
  OneParam m;
  GradScaler scaler;
  CHECK(scaler.scale() == 65536.0);
  for (int i = 0; i < 1999; ++i) {
    m.grad(1, 1);
    CHECK(scaler.step(m.opt));
    scaler.update();
  }
  CHECK(scaler.scale() == 65536.0);
  CHECK(scaler.growth_tracker() == 1999);
  m.grad(1, 1);
  scaler.step(m.opt);
  scaler.update();
  CHECK(scaler.scale() == 131072.0);
  CHECK(scaler.growth_tracker() == 0);
  CHECK(m.opt.step_count() == 2000);
}

TEST_CASE("an Inf or NaN gradient skips the step, halves the scale and resets growth") {
  for (double bad : {std::numeric_limits<double>::infinity(), std::nan("")}) {
    OneParam m;
    GradScaler scaler;
    for (int i = 0; i < 5; ++i) {
      m.grad(65536, 65536);
      scaler.step(m.opt);
      scaler.update();
    }
    CHECK(scaler.growth_tracker() == 5);
    const std::vector<double> before = m.w.to_vector();
    m.grad(bad, 65536);
    const UnscaleStats& stats = scaler.unscale(m.params);
    CHECK(stats.nonfinite == 1);
    CHECK(stats.found_inf());
    CHECK_FALSE(scaler.step(m.opt));
    scaler.update();
    CHECK(m.w.to_vector() == before);  // parameters untouched
    CHECK(m.opt.step_count() == 5);    // the optimizer did not count it
    CHECK(scaler.scale() == 32768.0);
    CHECK(scaler.growth_tracker() == 0);
  }
}

// Every scale the scaler can hold is one its checkpoint state loads back: a run must always resume
// from its own checkpoints. The smallest is 2^-126, where backing off stops (below it 1 / S, the
// unscale pass's factor, would not fit in a float, and a subnormal S could round to 0).
TEST_CASE("the loss scale stays a normal float32 and round-trips through its state") {
  OneParam m;
  GradScalerOptions o;
  GradScaler back(o);
  o.init_scale = std::numeric_limits<float>::min();
  GradScaler floor(o);
  for (int i = 0; i < 3; ++i) {
    m.grad(std::numeric_limits<double>::infinity(), 0);
    CHECK_FALSE(floor.step(m.opt));
    floor.update();
    CHECK(floor.scale() == std::numeric_limits<float>::min());
  }
  CHECK_NOTHROW(back.load_state_dict(nlohmann::json::parse(floor.state_dict().dump())));
  CHECK(back.scale() == std::numeric_limits<float>::min());
  // Outside [2^-126, float's largest]: refused, naming the value as given.
  for (double bad : {1e39, 1e-40, 0.0, -1.0}) {
    CAPTURE(bad);
    o.init_scale = bad;
    CHECK_THROWS_WITH_AS(
        GradScaler{o},
        ("grad_scaler: init_scale must be a float32 from 2^-126 to its largest, got " + nlohmann::json(bad).dump())
            .c_str(),
        ConfigError);
  }
  o.init_scale = 65536;
  o.growth_factor = 1;
  CHECK_THROWS_WITH_AS(GradScaler{o}, "grad_scaler: growth_factor must be a float32 > 1, got 1.0", ConfigError);
}

TEST_CASE("unscale divides by the scale exactly and is called once per iteration") {
  OneParam m;
  GradScaler scaler;
  m.grad(65536 * 0.25, -65536 * 3.0);
  scaler.unscale(m.params);
  CHECK(m.w.grad().to_vector() == std::vector<double>{0.25, -3.0});
  CHECK_THROWS_AS(scaler.unscale(m.params), Error);
  scaler.step(m.opt);  // uses the recorded check, does not unscale again
  CHECK(m.w.grad().to_vector() == std::vector<double>{0.25, -3.0});
  scaler.update();
  CHECK_THROWS_AS(scaler.update(), Error);  // no unscale/step since the last update
}

TEST_CASE("GradScaler state round-trips and bad state names the key") {
  OneParam m;
  GradScalerOptions o;
  o.growth_interval = 3;
  GradScaler a(o);
  m.grad(std::numeric_limits<double>::infinity(), 0);
  a.step(m.opt);
  a.update();
  m.grad(1, 1);
  a.step(m.opt);
  a.update();
  GradScaler b(o);
  b.load_state_dict(nlohmann::json::parse(a.state_dict().dump()));
  CHECK(b.scale() == 32768.0);
  CHECK(b.growth_tracker() == 1);
  for (GradScaler* s : {&a, &b}) {
    for (int i = 0; i < 2; ++i) {
      m.grad(1, 1);
      s->step(m.opt);
      s->update();
    }
  }
  CHECK(a.scale() == 65536.0);
  CHECK(b.scale() == a.scale());
  CHECK_THROWS_WITH_AS(b.load_state_dict({{"scale", 2.0}}), "grad_scaler state: missing integer 'growth_tracker'",
                       CheckpointError);
  // A scale beyond float32's range is refused before it is cast to float (undefined there), and
  // one that would round to a scale of 0.
  CHECK_THROWS_WITH_AS(b.load_state_dict({{"scale", 1e300}, {"growth_tracker", 0}}),
                       "grad_scaler state: 'scale' must be a float32 from 2^-126 to its largest, got 1e+300",
                       CheckpointError);
  CHECK_THROWS_WITH_AS(b.load_state_dict({{"scale", 1e-50}, {"growth_tracker", 0}}),
                       "grad_scaler state: 'scale' must be a float32 from 2^-126 to its largest, got 1e-50",
                       CheckpointError);
  CHECK_THROWS_WITH_AS(b.load_state_dict({{"scale", 0.0}, {"growth_tracker", 0}}),
                       "grad_scaler state: 'scale' must be a float32 from 2^-126 to its largest, got 0.0",
                       CheckpointError);
  // The tracker lies in [0, growth_interval), here [0, 3); the message shows the number as
  // saved, also one above INT64_MAX (read as a signed integer it would have shown as -1).
  for (const char* tracker : {"-1", "3", "18446744073709551615"})
    CHECK_THROWS_WITH_AS(
        b.load_state_dict(nlohmann::json::parse(std::string("{\"scale\": 2.0, \"growth_tracker\": ") + tracker + "}")),
        (std::string("grad_scaler state: 'growth_tracker' must be in [0, growth_interval), got ") + tracker).c_str(),
        CheckpointError);
  CHECK_NOTHROW(b.load_state_dict({{"scale", 2.0}, {"growth_tracker", 2}}));
  CHECK(b.growth_tracker() == 2);
}

// loss = c * sum(x W^T) with c = 2^-27 has dloss/dW[j][i] = c * sum_b x[b][i]. In fp16 the incoming
// gradient c of the matmul rounds to 0 (fp16's smallest subnormal is 2^-24); scaled by 2^16 it is
// 2^-11, exact in fp16, and unscaling gives back exactly the fp32 gradient.
TEST_CASE("fp16 without loss scaling loses small gradients that scaling by 65536 keeps") {
  const double c = std::ldexp(1.0, -27);
  Tensor x = Tensor::from_vector({1, 2, 3, 0, 1, -1, 2, 2, 2, 1, 0, 1}, {4, 3});  // column sums 4 5 5
  auto gradient = [&](Precision p, bool scaling, StepStats* stats) {
    Tensor w = Tensor::ones({2, 3}).requires_grad_();
    NamedParameters params{{"fc.weight", w}};
    GradScalerOptions so;
    so.enabled = scaling;
    MixedPrecision mp(p, so);
    Tensor loss = mp.forward([&] { return sum(linear(x, w)) * c; });
    mp.backward(loss);
    *stats = mp.unscale_and_check(params);
    return w.grad().to_vector();
  };
  const std::vector<double> expected{4 * c, 5 * c, 5 * c, 4 * c, 5 * c, 5 * c};
  StepStats s;

  CHECK(gradient(Precision::fp32, false, &s) == expected);
  CHECK(s.underflow_fraction == 0.0);

  CHECK(gradient(Precision::fp16, false, &s) == std::vector<double>(6, 0.0));  // all lost
  CHECK(s.zero_elements == 6);
  CHECK(s.underflow_fraction == 1.0);
  CHECK(s.loss_scale == 1.0);

  CHECK(gradient(Precision::fp16, true, &s) == expected);  // all kept, exactly
  CHECK(s.loss_scale == 65536.0);
  CHECK(s.underflow_fraction == 0.0);
  CHECK_FALSE(s.overflow);

  CHECK(gradient(Precision::bf16, false, &s) == expected);  // bf16 has fp32's exponent range
}

TEST_CASE("fp16 overflow: skipped steps halve the scale until the gradients fit") {
  // dloss/dW = S * column sums (1000): fp16 overflows (> 65504) while S * 1000 does; S = 64 fits.
  Tensor x = Tensor::from_vector({500, 500, 500, 500}, {2, 2});
  Tensor w = Tensor::ones({1, 2}).requires_grad_();
  NamedParameters params{{"fc.weight", w}};
  SGD opt(params, SGDOptions{});
  ScheduleOptions sched;
  sched.kind = ScheduleKind::linear;
  sched.lr = 1e-3;
  sched.decay_steps = 20;
  MixedPrecision mp(Precision::fp16);
  for (int64_t iter = 0; iter < 12; ++iter) {
    opt.zero_grad();
    Tensor loss = mp.forward([&] { return sum(linear(x, w)); });
    mp.backward(loss);
    const StepStats& stats = mp.unscale_and_check(params);
    CHECK(stats.overflow == (iter < 10));
    opt.set_lr(lr_at(sched, iter));  // the schedule follows the iteration, skipped or not
    mp.step(opt);
    CHECK(mp.last().skipped == (iter < 10));
    mp.update();
  }
  CHECK(mp.overflow_events() == 10);
  CHECK(mp.skipped_steps() == 10);
  CHECK(mp.loss_scale() == 64.0);  // 65536 / 2^10
  CHECK(opt.step_count() == 2);    // iterations 10 and 11
  CHECK(opt.lr() == lr_at(sched, 11));
  // Two SGD steps with the true gradient (1000, 1000) at the lrs of iterations 10 and 11
  // (p - lr g as one fused multiply-add, like SGD and torch).
  const float w1 = std::fma(-static_cast<float>(lr_at(sched, 10)), 1000.0f, 1.0f);
  const float w2 = std::fma(-static_cast<float>(lr_at(sched, 11)), 1000.0f, w1);
  CHECK(w.to_vector() == std::vector<double>{w2, w2});

  nlohmann::json saved = nlohmann::json::parse(mp.state_dict().dump());
  MixedPrecision resumed(Precision::fp16);
  resumed.load_state_dict(saved);
  CHECK(resumed.loss_scale() == 64.0);
  CHECK(resumed.skipped_steps() == 10);
  MixedPrecision other(Precision::bf16);
  CHECK_THROWS_WITH_AS(other.load_state_dict(saved),
                       "mixed precision state: the checkpoint was trained in \"fp16\", the config asks for \"bf16\"",
                       CheckpointError);
}

TEST_CASE("mixed precision's saved counts must be integers >= 0 that fit") {
  MixedPrecision mp(Precision::fp16);
  const nlohmann::json good = nlohmann::json::parse(mp.state_dict().dump());
  for (const char* key : {"overflow_events", "skipped_steps"}) {
    CAPTURE(key);
    nlohmann::json bad = good;
    bad[key] = std::numeric_limits<uint64_t>::max();  // get<int64_t>() would give -1
    MixedPrecision resumed(Precision::fp16);
    CHECK_THROWS_WITH_AS(
        resumed.load_state_dict(bad),
        (std::string("mixed precision state: '") + key + "' must be an integer >= 0, got 18446744073709551615").c_str(),
        CheckpointError);
    bad[key] = -2;
    CHECK_THROWS_WITH_AS(resumed.load_state_dict(bad),
                         (std::string("mixed precision state: '") + key + "' must be an integer >= 0, got -2").c_str(),
                         CheckpointError);
    bad[key] = 3.0;
    CHECK_THROWS_AS(resumed.load_state_dict(bad), CheckpointError);
    CHECK(resumed.skipped_steps() == 0);
    CHECK(resumed.overflow_events() == 0);
  }
}
