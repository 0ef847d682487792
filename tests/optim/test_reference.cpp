// The fused AdamW loop (optim/adam.cpp) against the formula in xtensor (optim/reference.h),
// over several steps, for a decaying matrix and a non-decaying bias.
//
// The fused loop runs in float32 (like torch's CPU kernel) and the reference in float64 on the
// same gradients: after 5 steps of size about lr the two stay within 1e-6 relative to the
// parameter (float32 keeps 6e-8 per operation, a few operations a step).
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/xtensor.h"
#include "optim/adam.h"
#include "optim/reference.h"

using namespace sf;

TEST_CASE("AdamW's fused update follows the formula, step after step") {
  Generator gen(7);
  Tensor w = Tensor::randn({5, 7}, gen, 1.0).requires_grad_();  // dim 2: decays
  Tensor b = Tensor::randn({7}, gen, 1.0).requires_grad_();     // dim 1: no decay
  AdamOptions o;
  o.lr = 1e-2;
  o.weight_decay = 0.1;
  AdamW opt({{"w", w}, {"b", b}}, o);
  CHECK(opt.decays(0));
  CHECK_FALSE(opt.decays(1));
  const xt::xarray<double> w0 = as_xtensor<float>(w);
  reference::AdamWState rw{as_xtensor<float>(w), xt::zeros<double>({5, 7}), xt::zeros<double>({5, 7})};
  reference::AdamWState rb{as_xtensor<float>(b), xt::zeros<double>({7}), xt::zeros<double>({7})};
  for (int t = 1; t <= 5; ++t) {
    Tensor gw = Tensor::randn({5, 7}, gen, 1.0), gb = Tensor::randn({7}, gen, 1.0);
    w.set_grad(gw);
    b.set_grad(gb);
    opt.step();
    reference::adamw_step(rw, as_xtensor<float>(gw), t, o.lr, o.beta1, o.beta2, o.eps, o.weight_decay);
    reference::adamw_step(rb, as_xtensor<float>(gb), t, o.lr, o.beta1, o.beta2, o.eps, 0.0);
    auto pw = as_xtensor<float>(w);
    auto pb = as_xtensor<float>(b);
    INFO("step " << t);
    for (size_t i = 0; i < pw.size(); ++i)
      REQUIRE(std::fabs(pw.flat(i) - rw.p.flat(i)) <= 1e-6 * std::max(1.0, std::fabs(rw.p.flat(i))));
    for (size_t i = 0; i < pb.size(); ++i)
      REQUIRE(std::fabs(pb.flat(i) - rb.p.flat(i)) <= 1e-6 * std::max(1.0, std::fabs(rb.p.flat(i))));
  }
  // the comparison means something only if the steps moved the parameters: about lr per step
  xt::xarray<double> moved = as_xtensor<float>(w);
  CHECK(xt::amax(xt::abs(moved - w0))() > 0.02);
}
