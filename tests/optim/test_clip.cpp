// Gradient clipping against torch.nn.utils.clip_grad_norm_ / clip_grad_value_.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "autograd/cpu/threads.h"
#include "optim/clip.h"
#include "optim_test_util.h"

using namespace sf;
using sf::test::doubles;

namespace {

NamedParameters params_with_grads(const nlohmann::json& ref) {
  NamedParameters params;
  for (size_t i = 0; i < ref["shapes"].size(); ++i) {
    Shape shape = ref["shapes"][i].get<Shape>();
    Tensor p = Tensor::zeros(shape).requires_grad_();
    p.set_grad(Tensor::from_vector(doubles(ref["grads"][i]), shape));
    params.emplace_back("p" + std::to_string(i), p);
  }
  return params;
}

double worst_error(const NamedParameters& params, const nlohmann::json& clipped) {
  double worst = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    std::vector<double> got = params[i].second.grad().to_vector(), want = doubles(clipped[i]);
    for (size_t k = 0; k < got.size(); ++k) worst = std::max(worst, std::abs(got[k] - want[k]));
  }
  return worst;
}

}  // namespace

TEST_CASE("clip_grad_norm matches torch: the pre-clip norm and the scaled gradients") {
  nlohmann::json ref = sf::test::load_reference("clip_ref.json");
  for (const auto& c : ref["cases"]) {
    if (c["kind"] != "norm") continue;
    const double max_norm = c["max_norm"];
    CAPTURE(max_norm);
    NamedParameters params = params_with_grads(ref);
    const double norm = clip_grad_norm(params, max_norm);
    CHECK(std::abs(norm - c["total_norm"].get<double>()) <= 1e-6);
    const double worst = worst_error(params, c["clipped"]);
    MESSAGE("clip_grad_norm max_norm=" << max_norm << ": worst |ours - torch| = " << worst);
    CHECK(worst <= 1e-6);  // our norm is summed in double, torch's in float32: 1 ulp apart at most here
  }
}

TEST_CASE("clip_grad_norm: coefficient max_norm / (norm + 1e-6), clamped to 1") {
  Tensor p = Tensor::zeros({2}).requires_grad_();
  p.set_grad(Tensor::from_vector({3, 4}, {2}));  // norm 5
  NamedParameters params{{"p", p}};
  CHECK(clip_grad_norm(params, 10.0) == 5.0);  // below max_norm: untouched
  CHECK(p.grad().to_vector() == std::vector<double>{3, 4});
  CHECK(clip_grad_norm(params, 1.0) == 5.0);  // returns the norm before clipping
  const float c = 1.0f / (5.0f + 1e-6f);      // in float32, as torch
  CHECK(p.grad().to_vector() == std::vector<double>{3.0f * c, 4.0f * c});
  CHECK(grad_norm(params) < 1.0);
  CHECK(grad_norm(params) > 1.0 - 1e-6);
  // A parameter without a gradient is skipped; the norm is computed in double.
  params.emplace_back("no_grad", Tensor::zeros({3}).requires_grad_());
  Tensor big = Tensor::zeros({1}).requires_grad_();
  big.set_grad(Tensor::full({1}, 3e19));  // squares overflow float32, not double
  NamedParameters big_params{{"big", big}};
  CHECK(grad_norm(big_params) == doctest::Approx(3e19).epsilon(1e-7));
  CHECK_THROWS_AS(clip_grad_norm(params, 0.0), ConfigError);
}

TEST_CASE("clip_grad_value matches torch") {
  nlohmann::json ref = sf::test::load_reference("clip_ref.json");
  for (const auto& c : ref["cases"]) {
    if (c["kind"] != "value") continue;
    NamedParameters params = params_with_grads(ref);
    clip_grad_value(params, c["clip_value"].get<double>());
    CHECK(worst_error(params, c["clipped"]) == 0.0);
  }
  CHECK_THROWS_AS(clip_grad_value({}, -1.0), ConfigError);
}

// A gradient longer than grad_norm's chunk of 2^16 elements goes over the thread pool in chunks
// fixed by its size: 1 and 2 threads give the same bits, both within double rounding of a plain
// sum, and clipping scales every element (also over the pool) by the same float coefficient.
TEST_CASE("grad_norm and clip_grad_norm over several chunks: the same bits on 1 and 2 threads") {
  Generator gen(3);
  const int64_t n = 3 * (int64_t(1) << 16) + 1234;
  Tensor g = Tensor::randn({n}, gen, 1.0);
  const std::vector<double> values = g.to_vector();
  double plain = 0;
  for (double v : values) plain += v * v;
  std::vector<double> norms, clipped_first, clipped_last;
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    Tensor p = Tensor::zeros({n}).requires_grad_();
    p.set_grad(g.clone());
    NamedParameters params{{"p", p}};
    norms.push_back(grad_norm(params));
    CHECK(clip_grad_norm(params, 1.0) == norms.back());
    const std::vector<double> clipped = p.grad().to_vector();
    const float c = 1.0f / (static_cast<float>(norms.back()) + 1e-6f);
    CHECK(clipped.front() == static_cast<double>(static_cast<float>(values.front()) * c));
    CHECK(clipped.back() == static_cast<double>(static_cast<float>(values.back()) * c));
    clipped_first.push_back(clipped[70000]);
    clipped_last.push_back(clipped[static_cast<size_t>(n - 1)]);
  }
  set_num_threads(0);
  CHECK(norms[0] == norms[1]);
  CHECK(clipped_first[0] == clipped_first[1]);
  CHECK(clipped_last[0] == clipped_last[1]);
  CHECK(norms[0] == doctest::Approx(std::sqrt(plain)).epsilon(1e-12));
}
