// gradcheck.cpp: the full Jacobian from backward() against central differences in float64.
#include "autograd/gradcheck.h"

#include <cmath>
#include <cstdio>

#include "autograd/graph.h"

namespace sf {

// The multi-index of flat element `flat` in a row-major tensor of `shape`.
static Shape unravel(int64_t flat, const Shape& shape) {
  Shape index(shape.size(), 0);
  for (size_t k = shape.size(); k-- > 0;) {
    index[k] = shape[k] ? flat % shape[k] : 0;
    flat = shape[k] ? flat / shape[k] : 0;
  }
  return index;
}

std::string GradcheckResult::describe() const {
  char buf[512];
  if (worst_input < 0) {
    std::snprintf(buf, sizeof buf, "%s: %lld Jacobian entries compared", ok ? "ok" : "FAIL",
                  static_cast<long long>(checked));
    return buf;
  }
  std::string where =
      "input " + std::to_string(worst_input) + " at " + shape_str(worst_index) + ", output " + shape_str(worst_output);
  if (ok) {
    std::snprintf(buf, sizeof buf,
                  "ok: %lld Jacobian entries within tolerance; worst at %s: analytic %.9g, "
                  "numeric %.9g (%.2g of the tolerance)",
                  static_cast<long long>(checked), where.c_str(), analytic, numeric, worst_ratio);
  } else {
    std::snprintf(buf, sizeof buf,
                  "FAIL: %s: analytic %.9g vs numeric %.9g (|diff| %.3g is %.3g times atol + "
                  "rtol*|numeric|; %lld entries compared)",
                  where.c_str(), analytic, numeric, std::fabs(analytic - numeric), worst_ratio,
                  static_cast<long long>(checked));
  }
  return buf;
}

GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f, std::vector<Tensor> inputs,
                          GradcheckOptions opt) {
  std::vector<size_t> checked_inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    if (!x.defined()) continue;
    if (x.dtype() != DType::f64)
      throw ShapeError("gradcheck: input " + std::to_string(i) + " " + shape_str(x.shape()) + " is " +
                       dtype_name(x.dtype()) + "; finite differences need float64 inputs");
    if (x.requires_grad()) checked_inputs.push_back(i);
  }
  if (checked_inputs.empty()) throw Error("gradcheck: no input requires grad, nothing to check");

  // ---- analytic: one backward per output element o, seeded with the one-hot e_o ----
  // jac_a[i][k * n_out + o] = d out[o] / d inputs[i][k]
  Tensor out = f(inputs);
  const Shape out_shape = out.shape();
  const int64_t n_out = out.numel();
  std::vector<std::vector<double>> jac_a(inputs.size());
  for (size_t i : checked_inputs) jac_a[i].assign(static_cast<size_t>(inputs[i].numel() * n_out), 0.0);
  if (out.requires_grad()) {
    for (int64_t o = 0; o < n_out; ++o) {
      for (size_t i : checked_inputs) inputs[i].set_grad(Tensor());
      Tensor seed = Tensor::zeros(out_shape, out.dtype());
      dispatch(seed.dtype(), [&](auto tag) { seed.data<decltype(tag)>()[o] = 1; });
      out.backward(seed, /*retain_graph=*/o + 1 < n_out);
      for (size_t i : checked_inputs) {
        Tensor g = inputs[i].grad();
        if (!g.defined()) continue;  // not reached by the graph: zero
        std::vector<double> gv = g.to_vector();
        for (size_t k = 0; k < gv.size(); ++k) jac_a[i][k * n_out + o] = gv[k];
      }
    }
  }
  for (size_t i : checked_inputs) inputs[i].set_grad(Tensor());

  // ---- numeric: central differences, one input element at a time, compared as we go ----
  GradcheckResult result;
  NoGradGuard no_grad;
  auto evaluate = [&]() {
    std::vector<double> v = f(inputs).to_vector();
    if (static_cast<int64_t>(v.size()) != n_out)
      throw ShapeError("gradcheck: f returned " + std::to_string(v.size()) + " elements, first " +
                       std::to_string(n_out));
    return v;
  };
  for (size_t i : checked_inputs) {
    double* x = inputs[i].data<double>();
    for (int64_t k = 0, n = inputs[i].numel(); k < n; ++k) {
      const double saved = x[k];
      x[k] = saved + opt.eps;
      std::vector<double> plus = evaluate();
      x[k] = saved - opt.eps;
      std::vector<double> minus = evaluate();
      x[k] = saved;
      for (int64_t o = 0; o < n_out; ++o) {
        double numeric = (plus[o] - minus[o]) / (2 * opt.eps);
        double analytic = jac_a[i][k * n_out + o];
        double ratio = std::fabs(analytic - numeric) / (opt.atol + opt.rtol * std::fabs(numeric));
        if (std::isnan(ratio)) ratio = INFINITY;  // a NaN on either side always fails
        ++result.checked;
        if (result.worst_input < 0 || ratio > result.worst_ratio) {
          result.worst_input = static_cast<int64_t>(i);
          result.worst_index = unravel(k, inputs[i].shape());
          result.worst_output = unravel(o, out_shape);
          result.analytic = analytic;
          result.numeric = numeric;
          result.worst_ratio = ratio;
        }
      }
    }
  }
  result.ok = result.worst_ratio <= 1.0;
  return result;
}

}  // namespace sf
