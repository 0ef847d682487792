// check_util.cpp: comparing values, wrapping a learner's backward as an op, and the float64
// gradient check, each reporting in words a learner can act on.
#include <cmath>
#include <cstdio>

#include "autograd/gradcheck.h"
#include "autograd/graph.h"
#include "exercises/check/checker.h"
#include "exercises/exercise.h"

namespace sf::exercise {

static bool chinese_ = false;
void set_chinese(bool zh) { chinese_ = zh; }
bool chinese() { return chinese_; }
std::string tr(const std::string& en, const std::string& zh) { return chinese_ ? zh : en; }

static std::string empty_result() {
  return tr("your function returned an empty (undefined) Tensor", "你的函数返回了一个空的（未定义的）Tensor");
}

static std::string num(double x) {
  if (std::isnan(x)) return "nan";  // printf's "-nan" would only confuse
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

static bool close(double e, double g, double atol, double rtol) {
  if (std::isnan(e) || std::isnan(g)) return std::isnan(e) && std::isnan(g);
  if (e == g) return true;  // equal infinities
  return std::fabs(e - g) <= atol + rtol * std::fabs(e);
}

// "(1, 2)" for flat element `flat` of a row-major `shape`.
static std::string index_str(int64_t flat, const Shape& shape) {
  Shape index(shape.size(), 0);
  for (size_t k = shape.size(); k-- > 0;) {
    index[k] = shape[k] ? flat % shape[k] : 0;
    flat = shape[k] ? flat / shape[k] : 0;
  }
  return shape_str(index);
}

// The first difference between two flat value lists; `where` turns a flat index into words.
static std::string first_difference(const std::vector<double>& e, const std::vector<double>& g, double atol,
                                    double rtol, const std::function<std::string(int64_t)>& where) {
  int64_t first = -1, differ = 0;
  for (size_t i = 0; i < e.size(); ++i)
    if (!close(e[i], g[i], atol, rtol)) {
      if (first < 0) first = static_cast<int64_t>(i);
      ++differ;
    }
  if (first < 0) return "";
  if (chinese())
    return "在 " + where(first) + "：应为 " + num(e[first]) + "，得到 " + num(g[first]) + "（" +
           std::to_string(e.size()) + " 个值中有 " + std::to_string(differ) + " 个不同）";
  return "at " + where(first) + ": expected " + num(e[first]) + ", got " + num(g[first]) + " (" +
         std::to_string(differ) + " of " + std::to_string(e.size()) + " values differ)";
}

std::string compare(const Tensor& expected, const Tensor& got, double atol, double rtol) {
  if (!got.defined()) return empty_result();
  if (got.shape() != expected.shape())
    return tr("shape: expected ", "形状：应为 ") + shape_str(expected.shape()) + tr(", got ", "，得到 ") +
           shape_str(got.shape());
  const Shape shape = expected.shape();
  return first_difference(expected.to_vector(), got.to_vector(), atol, rtol,
                          [&](int64_t i) { return index_str(i, shape); });
}

std::string compare(const std::vector<double>& expected, const std::vector<double>& got, double atol, double rtol) {
  if (got.size() != expected.size())
    return tr("size: expected ", "大小：应为 ") + std::to_string(expected.size()) +
           tr(" values, got ", " 个值，得到 ") + std::to_string(got.size()) + tr("", " 个");
  return first_difference(expected, got, atol, rtol, [](int64_t i) {
    std::string s = "[";  // (not "[" + to_string: GCC 12 warns falsely)
    return s + std::to_string(i) + "]";
  });
}

std::string compare(double expected, double got, double atol, double rtol) {
  if (close(expected, got, atol, rtol)) return "";
  return tr("expected ", "应为 ") + num(expected) + tr(", got ", "，得到 ") + num(got);
}

std::string diagnose(std::string problem, const Tensor& got, const std::vector<Mistake>& mistakes, double atol,
                     double rtol) {
  if (problem.empty() || !got.defined()) return problem;
  for (const Mistake& m : mistakes)
    if (m.value.defined() && compare(m.value, got, atol, rtol).empty()) return with_cause(problem, m.what);
  return problem;
}

std::string with_cause(const std::string& problem, const std::string& what) {
  return problem + tr("; this is exactly what you get when ", "；这正是下面这个错误得到的结果：") +
         (chinese() ? zh_text_if_known(what) : what);
}

std::string same_dtype(const Tensor& got, DType dtype) {
  if (!got.defined()) return empty_result();
  if (got.dtype() == dtype) return "";
  return tr(std::string("the result is ") + dtype_name(got.dtype()) + " for " + dtype_name(dtype) +
                " inputs: a float32 model needs float32 gradients (build every tensor you create with the inputs' "
                "dtype, e.g. Tensor::from_vector(values, shape, x.dtype()))",
            std::string("输入是 ") + dtype_name(dtype) + "，结果却是 " + dtype_name(got.dtype()) +
                "：float32 的模型需要 float32 的梯度（你新建的每个张量都用输入的 dtype，例如 "
                "Tensor::from_vector(values, shape, x.dtype())）");
}

std::string refuses(const std::function<void()>& f, const std::string& what) {
  try {
    f();
  } catch (const NotImplemented&) { throw; } catch (const std::exception&) {
    return "";
  }
  return what + tr(" was accepted; it must throw (sf::ShapeError naming the bad value)",
                   " 被接受了；它必须抛出异常（sf::ShapeError，并指出错误的值）");
}

Tensor random_f64(const Shape& shape, uint64_t seed, double stddev) {
  Generator gen(seed);
  return Tensor::randn(shape, gen, stddev, DType::f64);
}

Tensor op_with_backward(const std::vector<Tensor>& inputs,
                        const std::function<Tensor(const std::vector<Tensor>&)>& forward,
                        const LearnerBackward& backward, const std::vector<std::string>& input_names) {
  Tensor out;
  {
    NoGradGuard no_grad;
    out = forward(inputs);
  }
  // The closure keeps a detached handle on the output: the output itself would hold its own node.
  Tensor saved = out.detach();
  return record(out, "exercise", inputs, [inputs, saved, backward, input_names](const Tensor& dout) {
    std::vector<Tensor> grads;
    {
      NoGradGuard no_grad;
      grads = backward(inputs, saved, dout);
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].requires_grad()) continue;
      const std::string& name = input_names.at(i);
      if (i >= grads.size() || !grads[i].defined())
        throw CheckFailed(tr("your backward returned no gradient for ", "你的反向传播没有返回这个输入的梯度：") + name);
      if (grads[i].shape() != inputs[i].shape())
        throw CheckFailed(tr("your backward returned d" + name + " of shape " + shape_str(grads[i].shape()) + ", but " +
                                 name + " is " + shape_str(inputs[i].shape()) + " (a gradient has its input's shape)",
                             "你的反向传播返回的 d" + name + " 形状是 " + shape_str(grads[i].shape()) + "，而 " + name +
                                 " 是 " + shape_str(inputs[i].shape()) + "（梯度和它的输入形状相同）"));
      accumulate_grad(inputs[i], grads[i].to(inputs[i].dtype()));
    }
  });
}

std::string gradient_check(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                           const std::vector<Tensor>& inputs, const std::vector<std::string>& input_names) {
  Tensor probe = f(inputs);
  if (!probe.defined()) return empty_result();
  if (!probe.requires_grad())
    return tr(
        "the result has no gradient history, so backward() cannot reach the inputs (build it "
        "from sf ops on the input tensors, without detach() or copying values out)",
        "结果没有梯度记录，backward() 到不了输入（用 sf 的运算在输入张量上算出它，不要 detach()，"
        "也不要把值拷出来）");
  if (probe.dtype() != DType::f64)
    return tr("the result is float32 for float64 inputs; keep the inputs' dtype",
              "输入是 float64，结果却是 float32；保持输入的 dtype");
  GradcheckResult r = gradcheck(f, inputs);
  if (r.ok) return "";
  const std::string name = r.worst_input >= 0 ? input_names.at(static_cast<size_t>(r.worst_input)) : "?";
  return "d out" + shape_str(r.worst_output) + " / d " + name + shape_str(r.worst_index) +
         tr(": backward gives ", "：反向传播给出 ") + num(r.analytic) +
         tr(", finite differences give ", "，有限差分给出 ") + num(r.numeric);
}

}  // namespace sf::exercise
