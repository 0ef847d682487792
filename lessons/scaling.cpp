// Lesson 6: why attention divides the scores by sqrt(d_k). For random queries and keys with
// unit-variance entries, q . k has variance d_k; without the scale the softmax over the keys
// saturates as d_k grows (one weight near 1, entropy near 0) and passes almost no gradient. The
// lesson measures the largest weight, the entropy and the gradient norm through softmax against
// d_k, with and without the scale. Text: scaling.md.
//
// Legend: R rows (queries), S keys, d_k the size of a query and a key.
#include <cmath>
#include <ostream>

#include "autograd/ops.h"
#include "lessons/common/cost_common.h"
#include "lessons/lesson.h"
#include "lessons/scaling.h"
#include "lessons/common/pictures.h"

namespace sf::lessons {

namespace {

constexpr int64_t kRows = 256, kKeys = 64;

struct RowStats {
  double score_std = 0;   // of the scores that enter softmax
  double max_weight = 0;  // mean over rows of the largest weight
  double entropy = 0;     // mean over rows of -sum w ln w (nats)
  double grad_norm = 0;   // mean over rows of |d loss / d scores| for a random upstream gradient
  double saturated = 0;   // share of rows whose largest weight is above 0.99
};

// [excerpt: stats]
// scores (R, S) -> the statistics of softmax over each row, and the gradient that flows back
// through it: for an upstream gradient g, d scores = w * (g - sum(w * g)) (the softmax Jacobian).
RowStats softmax_stats(const Tensor& raw_scores, const Tensor& upstream) {
  Tensor scores = raw_scores.detach().requires_grad_();  // a leaf, so its .grad is kept
  Tensor w = softmax(scores, -1);                        // (R, S)
  w.backward(upstream);
  std::vector<double> s = scores.to_vector(), wv = w.to_vector(), ds = scores.grad().to_vector();
  RowStats r;
  double sum_sq = 0;
  for (int64_t i = 0; i < kRows; ++i) {
    double max_w = 0, h = 0, g2 = 0;
    for (int64_t j = 0; j < kKeys; ++j) {
      const size_t at = static_cast<size_t>(i * kKeys + j);
      max_w = std::max(max_w, wv[at]);
      if (wv[at] > 0) h -= wv[at] * std::log(wv[at]);
      g2 += ds[at] * ds[at];
      sum_sq += s[at] * s[at];
    }
    r.max_weight += max_w / kRows, r.entropy += h / kRows, r.grad_norm += std::sqrt(g2) / kRows;
    r.saturated += max_w > 0.99 ? 1.0 / kRows : 0.0;
  }
  r.score_std = std::sqrt(sum_sq / (kRows * kKeys));
  return r;
}
// [/excerpt]

}  // namespace

ScalingResult run_lesson_scaling(std::ostream& out) {
  ScalingResult r;
  r.rows = kRows, r.keys = kKeys;
  r.uniform_entropy = std::log(static_cast<double>(kKeys));

  heading(out, 1, "The setup: random queries and keys", "设置：随机的查询和键");
  out << tr(out, "for each d_k: ", "对每个 d_k：") << kRows << tr(out, " queries and ", " 个查询和 ") << kKeys
      << tr(out,
            " keys, every entry drawn from N(0, 1); one softmax over the keys per query.\n"
            "A uniform row has largest weight 1/",
            " 个键，每个元素都取自 N(0, 1)；每个查询对所有键做一次 softmax。\n"
            "均匀的一行，最大权重是 1/")
      << kKeys << " = " << fmt(1.0 / kKeys, 4) << tr(out, " and entropy ln ", "，熵为 ln ") << kKeys << " = "
      << fmt(r.uniform_entropy, 3)
      << tr(out, " nats; a one-hot row has 1 and 0.\n", " 奈特；独热的一行分别是 1 和 0。\n");

  heading(out, 2, "The spread of q . k grows like sqrt(d_k)", "q . k 的离散程度按 sqrt(d_k) 增长");
  Generator gen(20);
  for (int64_t d = 4; d <= 1024; d *= 2) {
    // [excerpt: scores]
    Tensor q = Tensor::randn({kRows, d}, gen, 1.0, DType::f64);      // (R, d_k)
    Tensor k = Tensor::randn({kKeys, d}, gen, 1.0, DType::f64);      // (S, d_k)
    Tensor g = Tensor::randn({kRows, kKeys}, gen, 1.0, DType::f64);  // upstream gradient (R, S)
    Tensor scores = matmul_bt(q, k);                                 // (R, S), variance d_k
    RowStats plain = softmax_stats(scores, g);
    RowStats scaled = softmax_stats(scores / std::sqrt(static_cast<double>(d)), g);
    // [/excerpt]
    r.d_k.push_back(d);
    r.score_std.push_back(plain.score_std), r.scaled_score_std.push_back(scaled.score_std);
    r.max_weight.push_back(plain.max_weight), r.scaled_max_weight.push_back(scaled.max_weight);
    r.entropy.push_back(plain.entropy), r.scaled_entropy.push_back(scaled.entropy);
    r.grad_norm.push_back(plain.grad_norm), r.scaled_grad_norm.push_back(scaled.grad_norm);
    r.saturated.push_back(plain.saturated), r.scaled_saturated.push_back(scaled.saturated);
  }
  out << tr(out, "   d_k  sqrt(d_k)  std of q.k  std of q.k / sqrt(d_k)\n",
            "   d_k  sqrt(d_k)  q.k 的标准差  q.k / sqrt(d_k) 的标准差\n");
  for (size_t i = 0; i < r.d_k.size(); ++i) {
    std::string d = std::to_string(r.d_k[i]), s = fmt(std::sqrt(static_cast<double>(r.d_k[i])), 2),
                a = fmt(r.score_std[i], 2), b = fmt(r.scaled_score_std[i], 3);
    out << "  " << std::string(4 - d.size(), ' ') << d << "  " << std::string(9 - s.size(), ' ') << s << "  "
        << std::string(10 - a.size(), ' ') << a << "  " << std::string(22 - b.size(), ' ') << b << "\n";
  }

  heading(out, 3, "Without the scale the softmax saturates", "不缩放，softmax 就饱和了");
  out << tr(out,
            "         largest weight    rows above 0.99   entropy (nats)    |gradient| through softmax\n"
            "   d_k   plain   scaled    plain   scaled    plain   scaled    plain       scaled\n",
            "         最大权重          超过 0.99 的行    熵（奈特）        穿过 softmax 的梯度范数\n"
            "   d_k   不缩放  缩放      不缩放  缩放      不缩放  缩放      不缩放      缩放\n");
  for (size_t i = 0; i < r.d_k.size(); ++i) {
    std::string d = std::to_string(r.d_k[i]);
    out << "  " << std::string(4 - d.size(), ' ') << d << "   " << fmt(r.max_weight[i], 3) << "   "
        << fmt(r.scaled_max_weight[i], 3) << "     " << fmt(r.saturated[i], 2) << "    "
        << fmt(r.scaled_saturated[i], 2) << "      " << fmt(r.entropy[i], 3) << "   " << fmt(r.scaled_entropy[i], 3)
        << "     " << fmt_sci(r.grad_norm[i], 2) << "    " << fmt_sci(r.scaled_grad_norm[i], 2) << "\n";
  }
  const size_t last = r.d_k.size() - 1;
  out << tr(out, "at d_k = ", "在 d_k = ") << r.d_k[last]
      << tr(out, " without the scale the largest weight is ", " 时，不缩放的最大权重是 ") << fmt(r.max_weight[last], 3)
      << tr(out, " and the entropy ", "，熵是 ") << fmt(r.entropy[last], 3) << tr(out, "; ", "；")
      << fmt(100 * r.saturated[last], 0)
      << tr(out, "% of the rows are\nnearly one-hot (above 0.99); the gradient through softmax is ",
            "% 的行\n几乎是独热的（超过 0.99）；穿过 softmax 的梯度只有缩放时的 ")
      << fmt(r.grad_norm[last] / r.scaled_grad_norm[last], 3)
      << tr(out, " of the scaled one's.\nWith the scale every d_k looks alike: largest weight ",
            "。\n缩放之后，每个 d_k 看起来都差不多：最大权重在 ");
  double lo = 1, hi = 0;
  for (double w : r.scaled_max_weight) lo = std::min(lo, w), hi = std::max(hi, w);
  out << fmt(lo, 3) << " - " << fmt(hi, 3) << tr(out, ".\n", " 之间。\n");
  std::vector<double> x(r.d_k.begin(), r.d_k.end());
  draw_gnuplot(
      out, "scaling_saturation.png",
      curves_plot("softmax over 64 random keys: the largest weight", "d_k", "largest weight (mean over queries)", x,
                  {{"q.k (no scale)", r.max_weight}, {"q.k / sqrt(d_k)", r.scaled_max_weight}}, true, false));
  draw_gnuplot(out, "scaling_gradient.png",
               curves_plot("gradient norm through softmax", "d_k", "|d loss / d scores| (mean over queries)", x,
                           {{"q.k (no scale)", r.grad_norm}, {"q.k / sqrt(d_k)", r.scaled_grad_norm}}, true, true));

  heading(out, 4, "Why a saturated softmax passes no gradient", "为什么饱和的 softmax 传不回梯度");
  // [excerpt: jacobian]
  Tensor row = Tensor::from_vector({8.0, 1.0, 0.0, -1.0}, {1, 4}, DType::f64);  // one score far ahead
  Tensor w = softmax(row, -1);
  std::vector<double> wv = w.to_vector();
  // d w_i / d s_j = w_i (delta_ij - w_j): every entry has a factor that is near 0 when w is one-hot.
  // [/excerpt]
  out << "  softmax([8, 1, 0, -1]) = " << fmt_vec(wv, 4) << "\n";
  double max_entry = 0;
  for (size_t i = 0; i < 4; ++i)
    for (size_t j = 0; j < 4; ++j) max_entry = std::max(max_entry, std::fabs(wv[i] * ((i == j ? 1.0 : 0.0) - wv[j])));
  r.saturated_jacobian_max = max_entry;
  out << tr(out, "  the largest entry of its Jacobian w_i (delta_ij - w_j): ",
            "  它的雅可比矩阵 w_i (delta_ij - w_j) 的最大元素：")
      << fmt(max_entry, 4) << tr(out, " (a uniform row of 4 has 0.1875)\n", "（4 个元素的均匀行是 0.1875）\n");
  return r;
}

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_scaling() {
  return {"scaling", "Why divide by sqrt(d_k): the largest weight, entropy and gradient against d_k",
          "为什么要除以 √d_k：最大权重、熵和梯度随 d_k 的变化", printing(run_lesson_scaling)};
}

}  // namespace sf::lessons
