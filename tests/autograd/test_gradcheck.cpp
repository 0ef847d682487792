// Float64 gradient checks: every case of the op registry (autograd/gradcheck_ops.cpp), one
// SUBCASE each so a failure names the op, and checks that gradcheck itself catches wrong
// gradients (a checker that passes everything would prove nothing).
#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <set>
#include <string>

#include "autograd/gradcheck.h"
#include "autograd/graph.h"
#include "autograd/ops.h"

using namespace sf;

static const char* const kGroups[] = {"elementwise", "broadcast", "repeated input", "reduce",    "shape",
                                      "matmul",      "nn",        "attention",      "checkpoint"};

static void run_group(const std::string& group) {
  int ran = 0;
  for (const GradcheckCase& c : op_gradcheck_cases()) {
    if (c.group != group) continue;
    ++ran;
    SUBCASE(c.name.c_str()) {
      GradcheckResult r = c.run();
      INFO(group << " / " << c.name << ": " << r.describe());
      CHECK(r.checked > 0);
      CHECK(r.ok);
    }
  }
  CHECK(ran > 0);
}

TEST_CASE("gradcheck elementwise") { run_group("elementwise"); }
TEST_CASE("gradcheck broadcast") { run_group("broadcast"); }
TEST_CASE("gradcheck repeated input") { run_group("repeated input"); }
TEST_CASE("gradcheck reduce") { run_group("reduce"); }
TEST_CASE("gradcheck shape") { run_group("shape"); }
TEST_CASE("gradcheck matmul") { run_group("matmul"); }
TEST_CASE("gradcheck nn") { run_group("nn"); }
TEST_CASE("gradcheck attention") { run_group("attention"); }
TEST_CASE("gradcheck checkpoint") { run_group("checkpoint"); }

TEST_CASE("every registry case belongs to a tested group and has a unique name") {
  std::set<std::string> groups(std::begin(kGroups), std::end(kGroups)), names;
  for (const GradcheckCase& c : op_gradcheck_cases()) {
    INFO(c.group << " / " << c.name);
    CHECK(groups.count(c.group) == 1);
    CHECK(names.insert(c.group + "/" + c.name).second);
  }
  CHECK(names.size() >= 100);
}

// A deliberately wrong op: forward x^2, backward claims 3x instead of 2x.
static Tensor bad_square(const Tensor& x) {
  Tensor out = x.detach() * x.detach();
  return record(out, "bad_square", {x}, [x](const Tensor& dout) { accumulate_grad(x, dout * x.detach() * 3.0); });
}

TEST_CASE("gradcheck finds a wrong backward and names the worst element") {
  Tensor x = Tensor::from_vector({0.1, -0.2, 0.3, 2.0, 0.5, -0.4}, {2, 3}, DType::f64).requires_grad_();
  GradcheckResult r = gradcheck([](const std::vector<Tensor>& in) { return bad_square(in[0]); }, {x});
  CHECK_FALSE(r.ok);
  CHECK(r.checked == 36);  // the full (6 x 6) Jacobian
  // The largest error is at the largest |x|: element (1, 0) = 2.0, analytic 6 vs numeric 4.
  CHECK(r.worst_input == 0);
  CHECK(r.worst_index == Shape{1, 0});
  CHECK(r.worst_output == Shape{1, 0});
  CHECK(r.analytic == doctest::Approx(6.0));
  CHECK(r.numeric == doctest::Approx(4.0).epsilon(1e-6));
  CHECK(r.describe().find("FAIL: input 0 at (1, 0), output (1, 0)") == 0);
  // The input was restored exactly and its .grad left undefined.
  CHECK(x.to_vector() == std::vector<double>{0.1, -0.2, 0.3, 2.0, 0.5, -0.4});
  CHECK_FALSE(x.grad().defined());
}

TEST_CASE("gradcheck finds an error in one off-diagonal Jacobian entry") {
  // out[0] = a0 * a1 with a backward that drops the contribution to a1.
  Tensor a = Tensor::from_vector({1.5, 2.0}, {2}, DType::f64).requires_grad_();
  auto f = [](const std::vector<Tensor>& in) {
    Tensor x = in[0];
    Tensor out = Tensor::from_vector({x.at({0}) * x.at({1}), x.at({1})}, {2}, DType::f64);
    return record(out, "half_wrong", {x}, [x](const Tensor& dout) {
      std::vector<double> g = dout.to_vector();
      accumulate_grad(x, Tensor::from_vector({g[0] * x.at({1}), g[1]}, {2}, DType::f64));
    });
  };
  GradcheckResult r = gradcheck(f, {a});
  CHECK_FALSE(r.ok);
  CHECK(r.worst_index == Shape{1});
  CHECK(r.worst_output == Shape{0});
  CHECK(r.analytic == 0.0);
  CHECK(r.numeric == doctest::Approx(1.5).epsilon(1e-6));
}

TEST_CASE("gradcheck passes a correct op and reports where it came closest to the tolerance") {
  Tensor x = Tensor::from_vector({0.5, 1.0, 2.0}, {3}, DType::f64).requires_grad_();
  Tensor w = Tensor::from_vector({1.0, -1.0, 3.0}, {3}, DType::f64);  // no grad: not checked
  GradcheckResult r = gradcheck([](const std::vector<Tensor>& in) { return sum(exp(in[0]) * in[1]); }, {x, w});
  CHECK(r.ok);
  CHECK(r.checked == 3);
  CHECK(r.worst_input == 0);
  CHECK(r.worst_ratio < 1.0);
  CHECK(r.describe().rfind("ok: 3 Jacobian entries", 0) == 0);
}

TEST_CASE("gradcheck refuses float32 inputs and inputs without requires_grad") {
  Tensor x32 = Tensor::ones({2}, DType::f32).requires_grad_();
  auto f = [](const std::vector<Tensor>& in) { return in[0] * 2.0; };
  CHECK_THROWS_WITH_AS(gradcheck(f, {x32}), "gradcheck: input 0 (2) is float32; finite differences need float64 inputs",
                       ShapeError);
  Tensor x64 = Tensor::ones({2}, DType::f64);
  CHECK_THROWS_WITH_AS(gradcheck(f, {x64}), "gradcheck: no input requires grad, nothing to check", Error);
}

// Adding an op means adding its gradient check (README, "Adding an op"): this test reads the
// public op headers and fails for any op whose name appears in no case of the registry.
TEST_CASE("every op declared in ops.h and attention.h has a gradcheck case") {
  std::set<std::string> ops;
  for (const char* header : {"/autograd/ops.h", "/autograd/ops_attention.h"}) {
    std::ifstream in(std::string(SF_SOURCE_DIR) + header);
    REQUIRE(in);
    std::string line;
    std::regex declaration(R"(^(Tensor|std::vector<Tensor>) ([a-z_0-9]+)\()");
    for (std::smatch m; std::getline(in, line);)
      if (std::regex_search(line, m, declaration)) ops.insert(m[2]);
  }
  CHECK(ops.size() >= 30);  // the parse found the declarations
  std::vector<GradcheckCase> cases = op_gradcheck_cases();
  for (const std::string& op : ops) {
    std::regex word("(^|[^a-z_])" + op + "([^a-z_]|$)");
    bool covered = false;
    for (const GradcheckCase& c : cases) covered = covered || std::regex_search(c.group + ": " + c.name, word);
    INFO("op " << op << " has no case in autograd/gradcheck_ops.cpp whose name contains it");
    CHECK(covered);
  }
}
