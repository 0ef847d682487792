// check_basics.cpp: the checks of exercises 1-4 (lessons 2 autograd, 3 broadcasting, 4 embeddings and 8 positions): tanh backward, reducing a
// broadcast gradient, the embedding's scatter-add, sinusoidal positions.
#include <cmath>

#include "autograd/ops.h"
#include "exercises/check/checker.h"
#include "exercises/exercise.h"
#include "nn/positional.h"

namespace sf::exercise {

// ---- 01 tanh backward ----
// y = tanh(x) by the framework, dx by the learner's tanh_backward(y, dy).
static Tensor tanh_op(const Tensor& x) {
  return op_with_backward(
      {x}, [](const std::vector<Tensor>& in) { return sf::tanh(in[0]); },
      [](const std::vector<Tensor>&, const Tensor& y, const Tensor& dy) {
        return std::vector<Tensor>{tanh_backward(y, dy)};
      },
      {"x"});
}

void check_tanh_backward(Report& r) {
  const char* hint = "d tanh(x)/dx = 1 - tanh(x)^2 = 1 - y^2; multiply by dy elementwise: dy * (1 - y * y)";
  r.check(
      "values on (2, 3): tanh_backward(y, dy) = dy (1 - y^2)",
      [] {
        Tensor x = random_f64({2, 3}, 1), dy = random_f64({2, 3}, 2);
        Tensor y = sf::tanh(x);
        Tensor got = tanh_backward(y, dy);
        return diagnose(
            compare(dy * (1.0 - y * y), got), got,
            {{"you ignore dy: the gradient arriving from above multiplies the local derivative", 1.0 - y * y},
             {"the derivative is taken as 1 - y instead of 1 - y^2", dy * (1.0 - y)}});
      },
      hint);
  r.check(
      "float64 gradient check on (3, 4)",
      [] {
        Tensor x = random_f64({3, 4}, 3).requires_grad_();
        return gradient_check([](const std::vector<Tensor>& in) { return tanh_op(in[0]); }, {x}, {"x"});
      },
      hint);
  r.check(
      "edge: a scalar, shape ()",
      [] {
        Tensor x = Tensor::scalar(0.7, DType::f64).requires_grad_();
        return gradient_check([](const std::vector<Tensor>& in) { return tanh_op(in[0]); }, {x}, {"x"});
      },
      "the same formula works for any shape, even (): use tensor ops, not loops over a fixed rank");
  r.check(
      "float32: y and dy float32 (2, 3) give a float32 dx",
      [] {
        Tensor y = sf::tanh(random_f64({2, 3}, 14)).to(DType::f32), dy = random_f64({2, 3}, 15).to(DType::f32);
        Tensor got = tanh_backward(y, dy);
        std::string d = same_dtype(got, DType::f32);
        return d.empty() ? compare(dy * (1.0 - y * y), got, 1e-6, 1e-5) : d;
      },
      "keep the inputs' dtype: tensor ops on y and dy do (a std::vector<double> turned into a float64 tensor does not)");
  r.check(
      "edge: saturated inputs x = +-20 (y = +-1) give a zero gradient",
      [] {
        Tensor x = Tensor::from_vector({-20.0, 20.0}, {2}, DType::f64);
        Tensor y = sf::tanh(x), dy = Tensor::ones({2}, DType::f64);
        return compare(Tensor::zeros({2}, DType::f64), tanh_backward(y, dy), 1e-12, 0);
      },
      "compute the gradient from y (the saved output), which is exactly +-1 here, not from x");
}

// ---- 02 sum_to_shape ----
void check_sum_to_shape(Report& r) {
  const char* hint =
      "first sum away the leading axes that `shape` lacks (keepdim false), then sum with "
      "keepdim true over every axis where `shape` has 1 and g does not";
  struct Case {
    Shape from, to;
  };
  const std::vector<Case> cases = {{{2, 3, 4}, {3, 4}},    {{2, 3, 4}, {3, 1}}, {{2, 3, 4}, {1, 1, 4}},
                                   {{2, 3, 4}, {2, 3, 4}}, {{4, 1}, {1}},       {{2, 3}, {}}};
  for (const Case& c : cases)
    r.check(
        "sum_to_shape of " + shape_str(c.from) + " to " + shape_str(c.to),
        [c] {
          Tensor g = random_f64(c.from, 4);
          return compare(sf::sum_to(g, c.to), sum_to_shape(g, c.to));
        },
        hint);
  r.check(
      "float32: g (2, 3, 4) float32 to (3, 1) stays float32",
      [] {
        Tensor g = random_f64({2, 3, 4}, 16).to(DType::f32);
        Tensor got = sum_to_shape(g, {3, 1});
        std::string d = same_dtype(got, DType::f32);
        return d.empty() ? compare(sf::sum_to(g, {3, 1}), got, 1e-6, 1e-5) : d;
      },
      "use sf::sum on g itself: it keeps g's dtype");
  r.check(
      "out of range: reducing (3, 4) to the longer (2, 3, 4) is refused",
      [] {
        Tensor g = random_f64({3, 4}, 17);
        return refuses(
            [&] {
              (void)sum_to_shape(g, {2, 3, 4});
            },
            tr("sum_to_shape of (3, 4) to (2, 3, 4)", "把 (3, 4) 还原到 (2, 3, 4) 的 sum_to_shape"));
      },
      "a gradient can only be summed down to a shape with at most as many axes: throw sf::ShapeError naming both");
  // The backward of a broadcasting multiply built on the learner's reduction.
  r.check(
      "float64 gradient check of a * b with a (2, 1, 4), b (3, 1), backward via sum_to_shape",
      [] {
        Tensor a = random_f64({2, 1, 4}, 5).requires_grad_(), b = random_f64({3, 1}, 6).requires_grad_();
        auto f = [](const std::vector<Tensor>& in) {
          return op_with_backward(
              in, [](const std::vector<Tensor>& x) { return x[0] * x[1]; },
              [](const std::vector<Tensor>& x, const Tensor&, const Tensor& dout) {
                return std::vector<Tensor>{sum_to_shape(dout * x[1], x[0].shape()),
                                           sum_to_shape(dout * x[0], x[1].shape())};
              },
              {"a", "b"});
        };
        return gradient_check(f, {a, b}, {"a", "b"});
      },
      "each input's gradient is dout times the other input, summed back to the input's shape");
}

// ---- 03 embedding backward ----
static Tensor embedding_op(const Tensor& W, const IntTensor& ids) {
  return op_with_backward(
      {W}, [ids](const std::vector<Tensor>& in) { return sf::embedding(in[0], ids); },
      [ids](const std::vector<Tensor>& in, const Tensor&, const Tensor& dout) {
        return std::vector<Tensor>{embedding_backward(ids, dout, in[0].size(0))};
      },
      {"W"});
}

void check_embedding_backward(Report& r) {
  const char* hint = "dW starts at zeros (V, C); for each position i, add row i of dout into row ids[i] of dW";
  r.check(
      "values: ids (5) into W (5, 4), every id distinct",
      [] {
        IntTensor distinct({5}, {0, 4, 2, 1, 3});
        Tensor W = random_f64({5, 4}, 7).requires_grad_();
        Tensor dout = random_f64({5, 4}, 8);
        sf::embedding(W, distinct).backward(dout);
        return compare(W.grad(), embedding_backward(distinct, dout, 5));
      },
      hint);
  r.check(
      "edge: a repeated id sums its gradients (ids 2, 2, 2)",
      [] {
        IntTensor ids({3}, {2, 2, 2});
        Tensor W = random_f64({4, 3}, 9).requires_grad_();
        Tensor dout = random_f64({3, 3}, 10);
        sf::embedding(W, ids).backward(dout);
        return compare(W.grad(), embedding_backward(ids, dout, 4));
      },
      "add (+=) into dW, never assign: a token used twice receives both gradients");
  r.check(
      "edge: ids never used give zero rows (V 6, ids 1)",
      [] {
        IntTensor ids({1, 1}, {1});
        Tensor dout = random_f64({1, 1, 3}, 11);
        Tensor W = random_f64({6, 3}, 12).requires_grad_();
        sf::embedding(W, ids).backward(dout);
        return compare(W.grad(), embedding_backward(ids, dout, 6));
      },
      "dW has V rows whatever the ids; rows no id picks stay zero");
  r.check(
      "float32: dout float32 gives a float32 dW",
      [] {
        IntTensor ids({3}, {1, 0, 1});
        Tensor W = random_f64({2, 3}, 14).to(DType::f32).requires_grad_();
        Tensor dout = random_f64({3, 3}, 15).to(DType::f32);
        sf::embedding(W, ids).backward(dout);
        Tensor got = embedding_backward(ids, dout, 2);
        std::string d = same_dtype(got, DType::f32);
        return d.empty() ? compare(W.grad(), got, 1e-6, 1e-5) : d;
      },
      "make dW with dout's dtype: Tensor::from_vector(values, {V, C}, dout.dtype())");
  r.check(
      "out of range: an id of V or -1 is refused",
      [] {
        Tensor dout = random_f64({2, 3}, 18);
        std::string a = refuses(
            [&] {
              (void)embedding_backward(IntTensor({2}, {4, 1}), dout, 4);
            },
            tr("id 4 with V 4", "V 为 4 时的 id 4"));
        if (!a.empty()) return a;
        return refuses([&] { (void)embedding_backward(IntTensor({2}, {0, -1}), dout, 4); }, "id -1");
      },
      "an id outside [0, V) would write outside dW: check each id and throw sf::ShapeError naming it");
  r.check(
      "float64 gradient check, ids (2, 2) with a repeat",
      [] {
        IntTensor ids({2, 2}, {3, 0, 3, 1});
        Tensor W = random_f64({4, 3}, 13).requires_grad_();
        return gradient_check([ids](const std::vector<Tensor>& in) { return embedding_op(in[0], ids); }, {W}, {"W"});
      },
      hint);
}

// ---- 04 sinusoidal positions ----
void check_sinusoidal_positions(Report& r) {
  const char* hint =
      "PE[p, 2i] = sin(p / 10000^(2i/C)), PE[p, 2i+1] = cos(p / 10000^(2i/C)), p = offset + t: "
      "columns 2i and 2i+1 share one frequency";
  struct Case {
    int64_t T, C, offset;
  };
  for (Case c : {Case{6, 8, 0}, Case{4, 16, 0}, Case{3, 8, 100}, Case{1, 2, 0}, Case{1, 6, 7}})
    r.check(
        "PE for T " + std::to_string(c.T) + ", C " + std::to_string(c.C) + ", offset " + std::to_string(c.offset),
        [c] {
          Tensor got = sinusoidal_positions(c.T, c.C, c.offset);
          if (got.defined() && got.dtype() != DType::f64) got = got.to(DType::f64);
          return compare(sinusoidal_table(c.T, c.C, c.offset, DType::f64), got, 1e-12, 1e-9);
        },
        c.offset ? "the table for positions offset .. offset+T-1: row t is position offset + t" : hint);
}

}  // namespace sf::exercise
