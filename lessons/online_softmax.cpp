// Lesson 21: the online softmax, step by step. A row of scores is read tile by tile, keeping
// only a running maximum m, a running sum l of e^(s - m) and a running weighted sum of values;
// when a tile raises the maximum, what was summed so far is rescaled by e^(m_old - m_new). At the
// end acc / l is softmax(s) V exactly, without ever holding the whole row. This is how tiled
// (FlashAttention-style) kernels avoid storing the T x T matrix. Text: online_softmax.md.
//
// Legend: T time (queries and keys), D head size, B_k keys per tile.
#include <cmath>
#include <ostream>

#include "autograd/ops.h"
#include "autograd/ops_attention.h"
#include "lessons/common/cost_common.h"
#include "lessons/lesson.h"
#include "lessons/online_softmax.h"

namespace sf::lessons {

namespace {

// [excerpt: state]
// What a query row keeps while it reads its keys tile by tile.
struct OnlineRow {
  double m = -INFINITY;     // the largest score seen so far
  double l = 0;             // sum of e^(s - m) over the keys seen so far
  std::vector<double> acc;  // sum of e^(s - m) v over the keys seen so far (D values)

  // Reads one tile: scores s[j] and their values v[j] (D each).
  void read(const std::vector<double>& s, const std::vector<std::vector<double>>& v) {
    double m_new = m;
    for (double x : s) m_new = std::max(m_new, x);
    const double rescale = std::exp(m - m_new);  // e^-inf = 0 on the first tile
    l *= rescale;
    for (double& a : acc) a *= rescale;
    for (size_t j = 0; j < s.size(); ++j) {
      const double e = std::exp(s[j] - m_new);
      l += e;
      for (size_t d = 0; d < acc.size(); ++d) acc[d] += e * v[j][d];
    }
    m = m_new;
  }
};
// [/excerpt]

// Causal attention of q, k, v (T, D) computed row by row with OnlineRow over tiles of
// `tile` keys: the output (T, D), and nothing of size T x T.
std::vector<double> tiled_attention(const std::vector<double>& q, const std::vector<double>& k,
                                    const std::vector<double>& v, int64_t T, int64_t D, int64_t tile) {
  std::vector<double> out(static_cast<size_t>(T * D));
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  for (int64_t t = 0; t < T; ++t) {
    OnlineRow row;
    row.acc.assign(static_cast<size_t>(D), 0.0);
    for (int64_t start = 0; start <= t; start += tile) {  // causal: keys 0 .. t
      std::vector<double> s;
      std::vector<std::vector<double>> vs;
      for (int64_t j = start; j < std::min(start + tile, t + 1); ++j) {
        double dot = 0;
        for (int64_t d = 0; d < D; ++d) dot += q[static_cast<size_t>(t * D + d)] * k[static_cast<size_t>(j * D + d)];
        s.push_back(dot * scale);
        vs.emplace_back(v.begin() + j * D, v.begin() + (j + 1) * D);
      }
      row.read(s, vs);
    }
    for (int64_t d = 0; d < D; ++d) out[static_cast<size_t>(t * D + d)] = row.acc[static_cast<size_t>(d)] / row.l;
  }
  return out;
}

}  // namespace

OnlineSoftmaxResult run_lesson_online_softmax(std::ostream& out) {
  OnlineSoftmaxResult r;
  heading(out, 1, "A row of 10 scores, cut into tiles of 4", "一行 10 个分数，切成每块 4 个");
  // [excerpt: row]
  const std::vector<double> scores = {1.0, 3.0, 0.5, 2.0, 5.0, 1.5, 4.0, 0.0, 2.5, 6.0};
  const std::vector<std::vector<double>> values = {{1, 0}, {0, 1}, {1, 1}, {2, 0}, {0, 2},
                                                   {1, 2}, {2, 1}, {3, 0}, {0, 3}, {1, -1}};  // D = 2
  const size_t tile = 4;
  // [/excerpt]
  out << "  s = " << fmt_vec(scores, 1) << "\n";
  out << tr(out, "  tiles: ", "  分块：") << "[1.0, 3.0, 0.5, 2.0] [5.0, 1.5, 4.0, 0.0] [2.5, 6.0]\n";

  heading(out, 2, "Reading tile by tile: running max, rescaling, running sum",
          "逐块读取：当前最大值、重新缩放、累加和");
  OnlineRow row;
  row.acc.assign(2, 0.0);
  for (size_t start = 0, n = 1; start < scores.size(); start += tile, ++n) {
    const size_t end = std::min(start + tile, scores.size());
    std::vector<double> s(scores.begin() + static_cast<std::ptrdiff_t>(start),
                          scores.begin() + static_cast<std::ptrdiff_t>(end));
    std::vector<std::vector<double>> v(values.begin() + static_cast<std::ptrdiff_t>(start),
                                       values.begin() + static_cast<std::ptrdiff_t>(end));
    const double m_old = row.m;
    row.read(s, v);
    out << tr(out, "  tile ", "  第 ") << n << tr(out, ": max so far ", " 块：此前最大值 ") << fmt(m_old, 1) << " -> "
        << fmt(row.m, 1) << tr(out, ", rescale by e^(", "，乘以 e^(") << fmt(m_old, 1) << " - " << fmt(row.m, 1)
        << ") = " << fmt(std::exp(m_old - row.m), 4) << ", l = " << fmt(row.l, 4) << ", acc = " << fmt_vec(row.acc, 4)
        << "\n";
    r.running_max.push_back(row.m);
    r.running_sum.push_back(row.l);
  }
  out << tr(out, "  (on the first tile the old max is -inf and e^-inf = 0: nothing to rescale)\n",
            "  （第一块之前最大值是 -inf，e^-inf = 0：没有东西需要缩放）\n");

  heading(out, 3, "The same weights and output as softmax", "与 softmax 相同的权重和输出");
  std::vector<double> online;
  for (double s : scores) online.push_back(std::exp(s - row.m) / row.l);
  Tensor S = Tensor::from_vector(scores, {1, 10}, DType::f64);
  r.softmax_weights = softmax(S, -1).to_vector();
  r.online_weights = online;
  out << tr(out, "  e^(s - m) / l       = ", "  e^(s - m) / l       = ") << fmt_vec(online, 4) << "\n"
      << "  sf::softmax(s)      = " << fmt_vec(r.softmax_weights, 4) << "\n";
  r.weight_diff = max_abs_diff(online, r.softmax_weights);
  out << tr(out, "  largest difference below 1e-15: ", "  最大差小于 1e-15：")
      << (r.weight_diff < 1e-15 ? tr(out, "yes", "是") : tr(out, "no", "否")) << "\n";
  std::vector<double> flat;
  for (const auto& v : values) flat.insert(flat.end(), v.begin(), v.end());
  std::vector<double> direct = matmul(softmax(S, -1), Tensor::from_vector(flat, {10, 2}, DType::f64)).to_vector();
  r.online_output = {row.acc[0] / row.l, row.acc[1] / row.l};
  out << "  acc / l             = " << fmt_vec(r.online_output, 6) << "\n"
      << "  softmax(s) V        = " << fmt_vec(direct, 6) << "\n";
  r.output_diff = max_abs_diff(r.online_output, direct);
  out << tr(out, "the final max is ", "最终的最大值是 ") << fmt(row.m, 1)
      << tr(out,
            ", the largest score: every e^(s - m) is at most 1, so nothing overflows,\n"
            "and the row was never held whole: m, l and acc (D = 2 numbers) were enough.\n",
            "，也就是最大的分数：每个 e^(s - m) 都不超过 1，所以不会溢出，\n"
            "而且整行从未同时放在内存里：只要 m、l 和 acc（D = 2 个数）就够了。\n");

  heading(out, 4, "A whole causal attention, tiled, against sf::attention",
          "整个因果注意力按块计算，与 sf::attention 对比");
  const int64_t T = 256, D = 16, key_tile = 64;
  Generator gen(21);
  Tensor q = Tensor::randn({1, 1, T, D}, gen, 1.0, DType::f64), k = Tensor::randn({1, 1, T, D}, gen, 1.0, DType::f64),
         v = Tensor::randn({1, 1, T, D}, gen, 1.0, DType::f64);
  AttentionOptions causal;
  causal.causal = true;
  Tensor P;
  std::vector<double> stored = attention(q, k, v, causal, &P).to_vector();
  // [excerpt: tiled]
  std::vector<double> tiled = tiled_attention(q.to_vector(), k.to_vector(), v.to_vector(), T, D, key_tile);
  // [/excerpt]
  r.tiled_diff = max_abs_diff(tiled, stored);
  r.stored_entries = P.numel();
  // The engine's own tiled kernel (model.attention = "tiled") does the same in C++, forward and
  // backward: its gradients must match the stored-probabilities kernel's.
  auto grads = [&](AttentionKernel kernel) {
    Tensor qg = q.detach().requires_grad_(), kg = k.detach().requires_grad_(), vg = v.detach().requires_grad_();
    AttentionOptions o = causal;
    o.kernel = kernel;
    Tensor y = attention(qg, kg, vg, o);
    sum(y * y).backward();
    std::vector<double> all = y.to_vector();
    for (Tensor* t : {&qg, &kg, &vg}) {
      std::vector<double> g = t->grad().to_vector();
      all.insert(all.end(), g.begin(), g.end());
    }
    return all;
  };
  r.engine_tiled_diff = max_abs_diff(grads(AttentionKernel::tiled), grads(AttentionKernel::stored));
  out << "T = " << T << tr(out, ", D = ", "，D = ") << D << tr(out, ", tiles of ", "，每块 ") << key_tile
      << tr(out, " keys, float64:\n  largest |tiled - sf::attention| below 1e-13: ",
            " 个键，float64：\n  |按块 - sf::attention| 的最大值小于 1e-13：")
      << (r.tiled_diff < 1e-13 ? tr(out, "yes", "是") : tr(out, "no", "否")) << "\n"
      << tr(out, "  sf::attention keeps P for backward: ", "  sf::attention 为反向保存 P：")
      << fmt_count(r.stored_entries)
      << tr(out, " numbers (T x T); the tiled rows kept ", " 个数（T × T）；按块计算的各行只保存了 ") << 2 * T
      << tr(out, " (m and l per row)\n", " 个（每行的 m 和 l）\n")
      << tr(out,
            "  the engine's tiled kernel (model.attention = \"tiled\"), output and the gradients of q, k, v\n"
            "  against the stored kernel's, largest difference below 1e-12: ",
            "  引擎自带的分块核函数（配置 model.attention = \"tiled\" 时）：输出以及 q、k、v 的梯度\n"
            "  与保存 P 的核函数相比，最大差小于 1e-12：")
      << (r.engine_tiled_diff < 1e-12 ? tr(out, "yes", "是") : tr(out, "no", "否")) << "\n";

  heading(out, 5, "Memory: the T x T matrix against per-row statistics", "内存：T × T 矩阵与逐行统计量");
  out << tr(out, "  one head of one layer, float32:\n         T    P (T x T)     m and l (2 T)\n",
            "  一层中的一个头，float32：\n         T   P（T × T）     m 和 l（2 T）\n");
  for (int64_t n : {256, 1024, 4096, 32768}) {
    std::string a = fmt_bytes(4.0 * static_cast<double>(n) * static_cast<double>(n)),
                b = fmt_bytes(8.0 * static_cast<double>(n));
    std::string ns = std::to_string(n);
    out << "  " << std::string(8 - ns.size(), ' ') << ns << "  " << std::string(11 - a.size(), ' ') << a << "  "
        << std::string(16 - b.size(), ' ') << b << "\n";
    r.matrix_bytes.push_back(4.0 * static_cast<double>(n) * static_cast<double>(n));
    r.row_stat_bytes.push_back(8.0 * static_cast<double>(n));
  }
  out << tr(out,
            "a tiled backward recomputes each tile's probabilities from q, k and the saved\n"
            "log-sum-exp m + ln l of each row, trading arithmetic for memory.\n",
            "按块的反向传播用 q、k 和每行保存的 log-sum-exp（m + ln l）重新算出每块的概率，\n"
            "用计算换内存。\n");
  return r;
}

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_online_softmax() {
  return {"online-softmax", "The online softmax: running max and rescaling, tile by tile; no T x T matrix",
          "在线 softmax：逐块更新当前最大值并重新缩放；不需要 T × T 矩阵", printing(run_lesson_online_softmax)};
}

}  // namespace sf::lessons
