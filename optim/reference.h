// reference.h: AdamW's update as the formula reads, in xtensor expressions. The fused loop in
// adam.cpp is checked against it (tests/optim/test_reference.cpp); a learner can read it first.
#pragma once
#include <cmath>

#include "autograd/quiet_xsimd.h"  // before any xtensor header: see there

#include <xtensor/xarray.hpp>
#include <xtensor/xmath.hpp>

namespace sf::reference {

struct AdamWState {
  xt::xarray<double> p, m, v;  // parameter, first and second moment (m, v start at zero)
};

// One AdamW step t (t = 1 first) with gradient g (Loshchilov & Hutter; torch.optim.AdamW):
//   p = p (1 - lr wd)                     (decoupled weight decay, when the parameter decays)
//   m = beta1 m + (1 - beta1) g,          v = beta2 v + (1 - beta2) g^2
//   m_hat = m / (1 - beta1^t),            v_hat = v / (1 - beta2^t)
//   p = p - lr m_hat / (sqrt(v_hat) + eps)
inline void adamw_step(AdamWState& s, const xt::xarray<double>& g, int t, double lr, double beta1, double beta2,
                       double eps, double weight_decay) {
  s.p = s.p * (1 - lr * weight_decay);
  s.m = beta1 * s.m + (1 - beta1) * g;
  s.v = beta2 * s.v + (1 - beta2) * g * g;
  xt::xarray<double> m_hat = s.m / (1 - std::pow(beta1, t));
  xt::xarray<double> v_hat = s.v / (1 - std::pow(beta2, t));
  s.p = s.p - lr * m_hat / (xt::sqrt(v_hat) + eps);
}

}  // namespace sf::reference
