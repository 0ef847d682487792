// Lesson 8: positional encoding. Attention is blind to order; the sinusoidal table, learned
// positions, RoPE and ALiBi each tell it where tokens are, in different ways.
// Text: positions.md.
#include <cmath>
#include <ostream>

#include "autograd/ops.h"
#include "lessons/lesson.h"
#include "lessons/positions.h"
#include "lessons/common/pictures.h"
#include "nn/attention.h"
#include "nn/layers.h"
#include "nn/module.h"
#include "nn/positional.h"

namespace sf::lessons {

// The picture: a 64 x 64 sinusoidal table as a heat map (positions down, dimensions across).
static std::string sinusoid_plot() {
  const int64_t T = 64, C = 64;
  std::vector<double> pe = sinusoidal_table(T, C, 0, DType::f64).to_vector();
  std::string s =
      "set title 'sinusoidal positional encoding, C = 64' noenhanced\n"
      "set xlabel 'dimension (sin, cos pairs; frequency falls to the right)'\nset ylabel 'position'\n"
      "set palette defined (-1 '#2166ac', 0 'white', 1 '#b2182b')\nset cbrange [-1:1]\n"
      "set xrange [-0.5:63.5]\nset yrange [63.5:-0.5]\n$pe << EOD\n";
  for (int64_t p = 0; p < T; ++p) {
    for (int64_t c = 0; c < C; ++c) s += (c ? " " : "") + fmt(pe[static_cast<size_t>(p * C + c)], 4);
    s += "\n";
  }
  return s + "EOD\nplot $pe matrix with image notitle\n";
}

PositionsResult run_lesson_positions(std::ostream& out) {
  PositionsResult r;
  manual_seed(4);

  heading(out, 1, "The sinusoidal table, C = 8", "正弦位置编码表，C = 8");
  // [excerpt: table]
  const int64_t T = 8, C = 8;
  Tensor PE = sinusoidal_table(T, C, 0, DType::f64);  // (T, C): PE[p, 2i] = sin(p w_i),
                                                      //         PE[p, 2i+1] = cos(p w_i)
  // [/excerpt]
  std::vector<double> freqs;
  for (int64_t i = 0; i < C / 2; ++i) freqs.push_back(std::pow(10000.0, -2.0 * static_cast<double>(i) / C));
  out << tr(out, "frequencies w_i = 10000^(-2i/C) = ", "频率 w_i = 10000^(-2i/C) = ") << fmt_vec(freqs, 4) << "\n";
  show(out, tr(out, "PE (rows: positions 0..7)", "PE（每行一个位置：0..7）"), PE, 3);
  r.pe_row1 = slice(PE, 0, 1, 2).to_vector();
  draw_gnuplot(out, "positions_sinusoids.png", sinusoid_plot(), 700, 620);

  heading(out, 2, "PE(p + k) is a fixed rotation of PE(p)", "PE(p + k) 是 PE(p) 的一个固定旋转");
  // [excerpt: shift]
  const int64_t k = 3;
  std::vector<double> m(static_cast<size_t>(C * C), 0.0);  // block diagonal, one 2x2 per frequency
  for (int64_t i = 0; i < C / 2; ++i) {
    double c = std::cos(k * freqs[static_cast<size_t>(i)]), s = std::sin(k * freqs[static_cast<size_t>(i)]);
    int64_t a = 2 * i, b = 2 * i + 1;  // (sin, cos) of one frequency
    m[static_cast<size_t>(a * C + a)] = c;
    m[static_cast<size_t>(a * C + b)] = s;  // sin(x+y) = sin x cos y + cos x sin y
    m[static_cast<size_t>(b * C + a)] = -s;
    m[static_cast<size_t>(b * C + b)] = c;  // cos(x+y) = cos x cos y - sin x sin y
  }
  Tensor M = Tensor::from_vector(m, {C, C}, DType::f64);
  Tensor shifted = matmul_bt(slice(PE, 0, 0, T - k), M);                           // rows p: M PE(p)
  double err = max_abs_diff(shifted.to_vector(), slice(PE, 0, k, T).to_vector());  // vs PE(p + k)
  // [/excerpt]
  show(out, tr(out, "M_3 (the same matrix for every p)", "M_3（对所有 p 都是同一个矩阵）"), M, 3);
  r.shift_error = err;
  out << tr(out, "largest |M_3 PE(p) - PE(p + 3)| over p = 0..4: ", "|M_3 PE(p) - PE(p + 3)| 在 p = 0..4 上的最大值：")
      << (err < 1e-12 ? tr(out, "below 1e-12", "小于 1e-12") : fmt(err, 14))
      << tr(out, "\nso 'three tokens later' is a linear map a layer can learn, whatever p is.\n",
            "\n所以“往后三个词元”是一个线性映射，与 p 无关，网络层可以学会它。\n");

  heading(out, 3, "Learned positions: a table trained like the token embeddings",
          "可学习的位置嵌入：一张像词嵌入一样训练的表");
  // [excerpt: learned]
  Embedding wpe(T, C);               // (block_size, C), GPT-2's wpe
  IntTensor pos({4}, {0, 1, 2, 3});  // the positions of 4 tokens
  Tensor P = wpe.forward(pos);       // (4, C), added to the token vectors
  // [/excerpt]
  show(out, "wpe(0..3)", P.detach(), 3);
  try {
    wpe.forward(IntTensor({1}, {static_cast<int32_t>(T)}));
    r.learned_error = tr(out, "(no error)", "（没有报错）");
  } catch (const ShapeError& e) { r.learned_error = e.what(); }
  out << tr(out, "a learned table has no row for position ", "可学习的表里没有位置 ") << T
      << tr(out, ":\n  ", " 这一行（错误信息保持英文）：\n  ") << r.learned_error << "\n";

  heading(out, 4, "RoPE: rotate q and k by their positions; q . k sees only the distance",
          "RoPE：按位置旋转 q 和 k；q . k 只看得到两者的距离");
  // [excerpt: rope]
  Tensor q = Tensor::from_vector({0.1, 0.3, 0.9, 0.4}, {1, 1, 1, 4}, DType::f64);   // Q(苹果)
  Tensor kk = Tensor::from_vector({0.9, 0.2, 0.1, 0.3}, {1, 1, 1, 4}, DType::f64);  // K(我)
  auto score = [&](int64_t m_pos, int64_t n_pos) {                                  // q at position m, k at position n
    return sum(rope(q, m_pos) * rope(kk, n_pos)).item();
  };
  // [/excerpt]
  out << tr(out, "q . k without positions = ", "不加位置时 q . k = ") << fmt(sum(q * kk).item(), 4) << "\n";
  for (auto [mp, np] : std::vector<std::pair<int64_t, int64_t>>{{2, 0}, {5, 3}, {12, 10}, {3, 0}, {10, 7}}) {
    double s = score(mp, np);
    out << tr(out, "  q at ", "  q 在 ") << mp << tr(out, ", k at ", "，k 在 ") << np
        << tr(out, " (distance ", "（距离 ") << mp - np << tr(out, "): ", "）：") << fmt(s, 6) << "\n";
    r.rope_scores.push_back(s);
  }
  r.rope_norm_ratio = std::sqrt(sum(rope(q, 7) * rope(q, 7)).item() / sum(q * q).item());
  out << "|rope(q, 7)| / |q| = " << fmt(r.rope_norm_ratio, 6)
      << tr(out, ": a rotation keeps lengths\n", "：旋转不改变长度\n");

  heading(out, 5, "ALiBi: no embedding, a penalty on distance in every head", "ALiBi：不加位置嵌入，每个头按距离扣分");
  // [excerpt: alibi]
  std::vector<double> slopes = alibi_slopes(4);        // one slope m_h per head
  Tensor bias = alibi_bias(slopes, 5, 5, DType::f64);  // (1, H, T, S): -m_h |t - s|
  // [/excerpt]
  r.alibi_slopes = slopes;
  out << tr(out, "slopes for 4 heads: ", "4 个头的斜率：") << fmt_vec(slopes, 6) << "\n";
  show(out, tr(out, "head 0 bias (added to the scores before softmax)", "头 0 的偏置（在 softmax 之前加到分数上）"),
       reshape(slice(bias, 1, 0, 1), {5, 5}), 2);
  show(out, tr(out, "head 3 bias", "头 3 的偏置"), reshape(slice(bias, 1, 3, 4), {5, 5}), 4);
  r.alibi_head0 = reshape(slice(bias, 1, 0, 1), {25}).to_vector();
  out << tr(out,
            "steep heads look locally, shallow heads far; nothing is learned, so it extends past\n"
            "the training length.\n",
            "斜率大的头看近处，斜率小的头看远处；这里没有要学习的参数，所以能外推到\n"
            "比训练时更长的序列。\n");

  heading(out, 6, "Why order matters: 我喜欢苹果 and 我苹果喜欢", "为什么顺序重要：“我喜欢苹果”与“我苹果喜欢”");
  // [excerpt: order]
  AttentionConfig cfg;
  cfg.d_model = 8;
  cfg.n_head = 2;
  MultiHeadAttention attn(cfg);  // random weights, no positions
  attn.to(DType::f64);
  Generator gen(44);
  Tensor wo = Tensor::randn({1, 1, C}, gen, 1.0, DType::f64);     // 我
  Tensor like = Tensor::randn({1, 1, C}, gen, 1.0, DType::f64);   // 喜欢
  Tensor apple = Tensor::randn({1, 1, C}, gen, 1.0, DType::f64);  // 苹果
  Tensor a = attn.forward(concat({wo, like, apple}, 1));          // 我 喜欢 苹果  (1, 3, C)
  Tensor b = attn.forward(concat({wo, apple, like}, 1));          // 我 苹果 喜欢
  // [/excerpt]
  auto row = [](const Tensor& t, int64_t i) { return reshape(slice(t, 1, i, i + 1), {-1}).to_vector(); };
  auto first4 = [](const Tensor& t, int64_t i) {  // channels 0..3 of token i
    return fmt_vec(reshape(slice(slice(t, 1, i, i + 1), 2, 0, 4), {-1}).to_vector(), 4);
  };
  out << tr(out, "without positions (first 4 of 8 channels):\n", "不加位置（前 4 个通道，共 8 个）：\n");
  out << tr(out, "  苹果 in 我喜欢苹果: ", "  “我喜欢苹果”中的“苹果”：") << first4(a, 2) << "\n";
  out << tr(out, "  苹果 in 我苹果喜欢: ", "  “我苹果喜欢”中的“苹果”：") << first4(b, 1) << "\n";
  r.order_blind_diff = std::max(
      {max_abs_diff(row(a, 0), row(b, 0)), max_abs_diff(row(a, 1), row(b, 2)), max_abs_diff(row(a, 2), row(b, 1))});
  out << tr(out, "  largest difference per token between the two orders: ", "  两种顺序下同一词元的最大差值：")
      << (r.order_blind_diff < 1e-12 ? tr(out, "below 1e-12", "小于 1e-12") : fmt(r.order_blind_diff, 14))
      << tr(out,
            "\n  (each token attends to the same set of keys, so it gets the same output: the model\n"
            "   cannot tell who likes what)\n",
            "\n  （每个词元关注的是同一组键，得到的输出也就一样：模型分不清\n"
            "   谁喜欢什么）\n");
  Tensor pe3 = reshape(sinusoidal_table(3, C, 0, DType::f64), {1, 3, C});
  Tensor a2 = attn.forward(concat({wo, like, apple}, 1) + pe3);
  Tensor b2 = attn.forward(concat({wo, apple, like}, 1) + pe3);
  r.order_aware_diff = max_abs_diff(row(a2, 2), row(b2, 1));
  out << tr(out, "with sinusoidal positions added:\n", "加上正弦位置编码之后：\n");
  out << tr(out, "  苹果 in 我喜欢苹果: ", "  “我喜欢苹果”中的“苹果”：") << first4(a2, 2) << "\n";
  out << tr(out, "  苹果 in 我苹果喜欢: ", "  “我苹果喜欢”中的“苹果”：") << first4(b2, 1) << "\n";
  out << tr(out, "  largest difference for 苹果: ", "  “苹果”的最大差值：") << fmt(r.order_aware_diff, 4) << "\n";
  return r;
}

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_positions() {
  return {"positions", "Positional encoding: sinusoids, learned, RoPE, ALiBi; why order matters",
          "位置编码：正弦、可学习、RoPE、ALiBi；顺序为什么重要", printing(run_lesson_positions)};
}

}  // namespace sf::lessons
