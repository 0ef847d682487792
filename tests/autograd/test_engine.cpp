// The engine around the ops: anomaly mode, no_grad, detach, retain_graph, zero_grad, printing,
// DOT export, the seeded Generator, and dropout's mask.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <sstream>

#include "autograd/graph.h"
#include "autograd/ops.h"

using namespace sf;

static Tensor vec(std::vector<double> v, DType dtype = DType::f64) {
  Shape shape{static_cast<int64_t>(v.size())};
  return Tensor::from_vector(v, shape, dtype);
}

TEST_CASE("anomaly mode names the op whose forward makes a NaN") {
  Tensor x = vec({1.0, -1.0}).requires_grad_();
  CHECK_NOTHROW(log(x));  // off by default: NaN flows silently, as in PyTorch
  AnomalyGuard anomaly;
  CHECK(anomaly_mode());
  CHECK_THROWS_WITH_AS(log(x), "anomaly: forward of 'log' with inputs (2) produced NaN or Inf", NumericalError);
  CHECK_THROWS_WITH_AS(Tensor::ones({2, 2}) / Tensor::zeros({2}),
                       "anomaly: forward of 'div' with inputs (2, 2), (2) produced NaN or Inf", NumericalError);
}

TEST_CASE("anomaly mode names the op whose backward makes an Inf") {
  Tensor x = vec({0.0, 4.0}).requires_grad_();
  {
    AnomalyGuard anomaly;
    Tensor y = sum(sqrt(x) * 3.0);  // forward is finite: sqrt(0) = 0
    CHECK_THROWS_WITH_AS(y.backward(), "anomaly: backward of 'sqrt' with inputs (2) produced NaN or Inf",
                         NumericalError);
  }
  CHECK_FALSE(anomaly_mode());  // the guard restored the previous mode
  x.set_grad(Tensor());         // (the failed backward had already accumulated sqrt's gradient)
  Tensor y = sum(sqrt(x));
  y.backward();  // without anomaly mode the Inf just lands in .grad
  CHECK(std::isinf(x.grad().at({0})));
  CHECK(x.grad().at({1}) == 0.25);
}

TEST_CASE("no_grad records no graph, and restores grad mode afterwards") {
  Tensor x = vec({1, 2}).requires_grad_();
  {
    NoGradGuard no_grad;
    CHECK_FALSE(grad_enabled());
    Tensor y = x * x;
    CHECK_FALSE(y.requires_grad());
    CHECK(y.grad_fn() == nullptr);
    { NoGradGuard nested; }
    CHECK_FALSE(grad_enabled());
  }
  CHECK(grad_enabled());
  CHECK((x * x).requires_grad());
}

TEST_CASE("detach shares data but cuts the graph") {
  Tensor x = vec({1, 2, 3}).requires_grad_();
  Tensor y = x * 2.0;
  Tensor d = y.detach();
  CHECK_FALSE(d.requires_grad());
  CHECK(d.is_leaf());
  CHECK(d.storage() == y.storage());
  // A gradient does not flow through the detached branch: d/dx [x * stop(2x)] = 2x.
  sum(x * d).backward();
  CHECK(x.grad().to_vector() == std::vector<double>{2, 4, 6});
}

TEST_CASE("retain_graph: a second backward works and accumulates") {
  Tensor x = vec({1, 2, 3}).requires_grad_();
  Tensor y = sum(x * x);  // dy/dx = 2x
  y.backward(Tensor(), /*retain_graph=*/true);
  CHECK(x.grad().to_vector() == std::vector<double>{2, 4, 6});
  y.backward(Tensor(), true);
  CHECK(x.grad().to_vector() == std::vector<double>{4, 8, 12});
  y.backward();  // the last one frees the graph
  CHECK(x.grad().to_vector() == std::vector<double>{6, 12, 18});
  CHECK_THROWS_AS(y.backward(), Error);
  CHECK(x.grad().to_vector() == std::vector<double>{6, 12, 18});  // the failed call added nothing
}

TEST_CASE("gradients accumulate across graphs until zero_grad") {
  Tensor w = vec({1, -1}).requires_grad_();
  sum(w * 3.0).backward();
  sum(w * w).backward();
  CHECK(w.grad().to_vector() == std::vector<double>{3 + 2, 3 - 2});
  w.zero_grad();
  CHECK(w.grad().to_vector() == std::vector<double>{0, 0});
  sum(w * 5.0).backward();
  CHECK(w.grad().to_vector() == std::vector<double>{5, 5});
  Tensor fresh = vec({1}).requires_grad_();
  fresh.zero_grad();  // no .grad yet: stays undefined
  CHECK_FALSE(fresh.grad().defined());
}

TEST_CASE("non-leaf gradients are temporary unless retain_grad") {
  Tensor x = vec({1, 2}).requires_grad_();
  Tensor h = x * 3.0;
  Tensor k = h * 1.0;
  k.retain_grad();
  sum(h * k).backward();
  CHECK_FALSE(h.grad().defined());
  CHECK(k.grad().to_vector() == std::vector<double>{3, 6});
  CHECK(x.grad().to_vector() == std::vector<double>{18 * 1, 18 * 2});  // d/dx 9x^2
}

TEST_CASE("backward with an explicit upstream gradient") {
  Tensor x = vec({1, 2, 3}).requires_grad_();
  (x * x).backward(vec({1, 0, -1}));
  CHECK(x.grad().to_vector() == std::vector<double>{2, 0, -6});
  Tensor z = vec({1, 2}, DType::f32).requires_grad_();
  (z * 2.0).backward(vec({1, 1}, DType::f64));  // a float64 seed is cast to the output's dtype
  CHECK(z.grad().dtype() == DType::f32);
  CHECK(z.grad().to_vector() == std::vector<double>{2, 2});
}

TEST_CASE("a gradient never aliases the upstream gradient buffer") {
  // y = a + b: both receive dout; each .grad must be its own buffer, else a later
  // accumulation into one would change the other.
  Tensor a = vec({1, 2}).requires_grad_(), b = vec({3, 4}).requires_grad_();
  sum(a + b).backward();
  CHECK(a.grad().storage() != b.grad().storage());
  sum(a * 10.0).backward();
  CHECK(a.grad().to_vector() == std::vector<double>{11, 11});
  CHECK(b.grad().to_vector() == std::vector<double>{1, 1});
  Tensor seed = vec({1, 1});
  Tensor c = vec({0, 0}).requires_grad_();
  (c * 1.0).backward(seed);
  sum(c * 2.0).backward();
  CHECK(seed.to_vector() == std::vector<double>{1, 1});  // the caller's seed is untouched
}

TEST_CASE("printing shows shape, dtype, grad state and values, long tensors are elided") {
  Tensor x = Tensor::from_vector({1, -2.5, 3, 4}, {2, 2}).requires_grad_();
  std::string s = to_string(x);
  CHECK(s.find("Tensor(shape=(2, 2), dtype=float32, requires_grad)") == 0);
  CHECK(s.find("-2.5000") != std::string::npos);
  CHECK(to_string(x * 2.0).find("grad_fn=mul") != std::string::npos);
  CHECK(to_string(Tensor::scalar(1.5, DType::f64)).find("Tensor(shape=(), dtype=float64)\n1.5000") == 0);
  Tensor big = Tensor::arange(2000, DType::f64);
  std::string b = to_string(big);
  CHECK(b.find("...") != std::string::npos);
  CHECK(b.find("1999.0000") != std::string::npos);
  CHECK(b.find("1000.0000") == std::string::npos);  // the middle is not printed
  CHECK(b.size() < 200);
  Tensor wide = reshape(Tensor::arange(1200), {40, 30});
  std::string w = to_string(wide);
  CHECK(w.find("...") != std::string::npos);
  CHECK(w.size() < 1000);
  std::ostringstream os;
  os << x;
  CHECK(os.str() == s);
  CHECK(to_string(Tensor()) == "Tensor(undefined)");
}

TEST_CASE("DOT export contains every op and the tensor shapes") {
  Tensor x = Tensor::ones({2, 3}).requires_grad_().set_name("x");
  Tensor w = Tensor::ones({3, 4}).requires_grad_().set_name("w");
  Tensor loss = mean(relu(matmul(x, w)));
  std::string dot = to_dot(loss);
  CHECK(dot.rfind("digraph autograd {", 0) == 0);
  for (const char* op : {"\"matmul\"", "\"relu\"", "\"sum\"", "\"mul\""})
    CHECK_MESSAGE(dot.find(op) != std::string::npos, op);
  for (const char* label : {"x\\n(2, 3)", "w\\n(3, 4)", "(2, 4)", "()"})
    CHECK_MESSAGE(dot.find(label) != std::string::npos, label);
  CHECK(dot.find("->") != std::string::npos);
  CHECK(dot.substr(dot.size() - 2) == "}\n");
}

TEST_CASE("Generator: same seed, same numbers, state saves and restores") {
  Generator a(42), b(42), c(43);
  std::vector<uint64_t> ra, rb, rc;
  for (int i = 0; i < 5; ++i) {
    ra.push_back(a.next_u64());
    rb.push_back(b.next_u64());
    rc.push_back(c.next_u64());
  }
  CHECK(ra == rb);
  CHECK(ra != rc);
  std::vector<uint64_t> saved = a.state();
  std::vector<double> first;
  for (int i = 0; i < 4; ++i) first.push_back(a.normal());
  Generator restored(7);
  restored.set_state(saved);
  for (int i = 0; i < 4; ++i) CHECK(restored.normal() == first[i]);
  // uniform in [0, 1), randint in [0, n), normal roughly standard
  Generator g(1);
  double s = 0, s2 = 0;
  std::set<int64_t> seen;
  for (int i = 0; i < 20000; ++i) {
    double u = g.uniform();
    CHECK_UNARY(u >= 0.0 && u < 1.0);
    seen.insert(g.randint(7));
    double z = g.normal();
    s += z;
    s2 += z * z;
  }
  CHECK(seen == std::set<int64_t>{0, 1, 2, 3, 4, 5, 6});
  CHECK(std::fabs(s / 20000) < 0.05);
  CHECK(std::fabs(s2 / 20000 - 1) < 0.05);
  Generator t1(5), t2(5);
  CHECK(Tensor::randn({3, 3}, t1).to_vector() == Tensor::randn({3, 3}, t2).to_vector());
}

TEST_CASE("dropout: survivors scaled by 1/(1-p), the gradient uses the same mask, eval is identity") {
  Tensor x = Tensor::full({1000}, 2.0, DType::f64).requires_grad_();
  Generator gen(3);
  Tensor y = dropout(x, 0.25, true, gen);
  std::vector<double> v = y.to_vector();
  int zeros = 0;
  for (double e : v) {
    CHECK_UNARY(e == 0.0 || std::fabs(e - 2.0 / 0.75) < 1e-12);
    zeros += e == 0.0;
  }
  CHECK(zeros > 200);
  CHECK(zeros < 300);
  sum(y).backward();
  std::vector<double> g = x.grad().to_vector();
  for (size_t i = 0; i < v.size(); ++i) CHECK(g[i] == doctest::Approx(v[i] / 2.0));
  Generator gen2(3);
  CHECK(dropout(x, 0.25, false, gen2).same(x));
  CHECK(dropout(x, 0.0, true, gen2).same(x));
}

TEST_CASE("a very deep graph is released and differentiated without recursion") {
  // 200k chained ops: recursive destructors or a recursive topological sort would overflow
  // the stack here (it crashed at 200k before Node got its iterative destructor).
  const int n = 200000;
  Tensor x = Tensor::ones({1}, DType::f64).requires_grad_();
  {
    Tensor total = Tensor::zeros({1}, DType::f64);
    for (int i = 0; i < n; ++i) total = total + x;
  }  // dropped without backward
  Tensor total = Tensor::zeros({1}, DType::f64);
  for (int i = 0; i < n; ++i) total = total + x;
  sum(total).backward();
  CHECK(x.grad().item() == n);
}

TEST_CASE("sum, mean and max take one axis the same way: as an int, or as {axis} for sum and mean") {
  Generator gen(7);
  Tensor x = Tensor::randn({2, 3, 4}, gen, 1.0, DType::f64);
  for (int64_t axis : {0, 1, -1}) {
    CHECK(sum(x, axis, true).to_vector() == sum(x, {axis}, true).to_vector());
    CHECK(sum(x, axis).shape() == sum(x, {axis}).shape());
    CHECK(mean(x, axis, true).to_vector() == mean(x, {axis}, true).to_vector());
    CHECK(max(x, axis, true).shape() == sum(x, axis, true).shape());
  }
  Tensor y = x.clone().requires_grad_();
  sum(y * y, -1).backward(Tensor::ones({2, 3}, DType::f64));
  CHECK(y.grad().to_vector() == (2.0 * x).to_vector());
}

TEST_CASE("reductions without keepdim drop every reduced axis, also those of size 1") {
  Tensor x = Tensor::ones({1, 3, 1}, DType::f64).requires_grad_();
  CHECK(sum(x).shape() == Shape{});
  CHECK(sum(x, {0}).shape() == Shape{3, 1});
  CHECK(sum(x, {0, 2}).shape() == Shape{3});
  CHECK(sum(x, {-1}, true).shape() == Shape{1, 3, 1});
  CHECK(mean(x).shape() == Shape{});
  CHECK(mean(x, {2}).shape() == Shape{1, 3});
  CHECK(max(x, 0).shape() == Shape{3, 1});
  CHECK(max(x, 2, true).shape() == Shape{1, 3, 1});
  CHECK(sum(Tensor::ones({1})).shape() == Shape{});
  Tensor loss = sum(x * x);
  loss.backward();
  CHECK(loss.shape() == Shape{});
  CHECK(x.grad().shape() == Shape{1, 3, 1});
}

TEST_CASE("DOT export after backward says the graph was freed") {
  Tensor x = Tensor::ones({2}).requires_grad_();
  Tensor loss = sum(exp(x));
  std::string before = to_dot(loss);
  CHECK(before.find("\"exp\"") != std::string::npos);
  loss.backward();
  std::string after = to_dot(loss);
  CHECK(after.find("sum\\n(freed by backward)") != std::string::npos);
  CHECK(after.find("exp") == std::string::npos);
}

TEST_CASE("backward frees each activation once the nodes that need it are done") {
  // A chain x -> probe -> h1 -> ... -> h8 -> sum of 1 MiB tensors; an add's backward needs none
  // of its inputs, so when the probe's backward runs (last), h1 ... h8 must be gone already.
  const int64_t n = int64_t(1) << 18;  // 1 MiB of float32
  Tensor x = Tensor::ones({n}).requires_grad_();
  size_t live_in_probe = 0;
  Tensor probe = record(x.detach().clone(), "probe", {x}, [x, &live_in_probe](Tensor dout) {
    live_in_probe = tensor_memory().live;
    accumulate_grad(x, std::move(dout));
  });
  Tensor h = probe;
  for (int i = 0; i < 8; ++i) h = h + 1.0;
  probe = Tensor();  // only the graph holds it now
  Tensor loss = sum(h);
  h = Tensor();
  const size_t live_before = tensor_memory().live;  // x, the probe's output, h1 ... h8, the loss
  loss.backward();
  // At the probe: x, its .grad coming in, the probe's own output, not the 8 MiB of h1 ... h8.
  CHECK(live_in_probe + 6 * (size_t(1) << 20) < live_before);
  CHECK(x.grad().to_vector() == std::vector<double>(static_cast<size_t>(n), 1.0));
}
