// Lesson 20: what attention costs. The score matrix has T x T entries per head, so attention's
// time and memory grow with T^2 while the linear layers' grow with T. The lesson counts both,
// measures sf::attention's forward + backward against the block's linear layers at the default
// model's width, and finds where attention takes over; then what recomputing each block in
// backward saves, and what it costs. Text: attention_cost.md.
//
// Legend: T time (sequence length), C channels, H heads, D head size (C / H).
#include <cmath>
#include <map>
#include <ostream>
#include <sstream>

#include "autograd/ops.h"
#include "autograd/memory.h"
#include "autograd/ops_attention.h"
#include "lessons/common/cost_common.h"
#include "lessons/lesson.h"
#include "lessons/attention_cost.h"
#include "lessons/common/pictures.h"
#include "nn/gpt.h"

namespace sf::lessons {

namespace {

// [excerpt: counts]
// Multiply-adds of one layer's forward for one sequence of T tokens at width C (D = C / H).
// The linear layers: q, k, v (3C x C), the output projection (C x C), the MLP (4C x C, C x 4C).
double linear_macs(double T, double C) { return 12 * T * C * C; }
// Causal attention: query t scores t + 1 keys (Q K^T, D per key and head) and mixes t + 1 values
// (P V): sum over t of 2 (t + 1) C = T (T + 1) C.
double attention_macs(double T, double C) { return T * (T + 1) * C; }
// [/excerpt]

struct Measured {
  std::vector<double> attention_ms, linear_ms;
  std::vector<int64_t> p_entries;  // of the probabilities sf::attention keeps for backward
};

// Forward + backward of causal sf::attention, and of the block's four linear layers, at each T.
Measured measure(const AttentionCostOptions& o) {
  Measured m;
  Generator gen(19);
  const int64_t C = o.n_embd, H = o.n_head, D = C / H;
  for (int64_t T : o.lengths) {
    const int repeats = static_cast<int>(std::clamp<int64_t>(o.work_per_length / (T * T), 1, o.max_repeats));
    // [excerpt: measure]
    Tensor q = Tensor::randn({1, H, T, D}, gen), k = Tensor::randn({1, H, T, D}, gen),
           v = Tensor::randn({1, H, T, D}, gen);  // (B, H, T, D)
    for (Tensor* t : {&q, &k, &v}) t->requires_grad_();
    Tensor dy = Tensor::randn({1, H, T, D}, gen);
    AttentionOptions causal;
    causal.causal = true;
    Tensor P;  // (B, H, T, T): what the kernel keeps for backward
    double attention_s = fastest_seconds([&] { attention(q, k, v, causal, &P).backward(dy); }, repeats);

    Tensor x = Tensor::randn({1, T, C}, gen), h = Tensor::randn({1, T, 4 * C}, gen);  // (B, T, C), (B, T, 4C)
    Tensor w_qkv = Tensor::randn({3 * C, C}, gen, 0.02), w_o = Tensor::randn({C, C}, gen, 0.02),
           w_fc = Tensor::randn({4 * C, C}, gen, 0.02), w_proj = Tensor::randn({C, 4 * C}, gen, 0.02);
    for (Tensor* t : {&x, &h, &w_qkv, &w_o, &w_fc, &w_proj}) t->requires_grad_();
    double linear_s = fastest_seconds(
        [&] {
          Tensor y = sum(linear(x, w_qkv)) + sum(linear(x, w_o)) + sum(linear(x, w_fc)) + sum(linear(h, w_proj));
          y.backward();
        },
        repeats);
    // [/excerpt]
    m.attention_ms.push_back(attention_s * 1e3);
    m.linear_ms.push_back(linear_s * 1e3);
    m.p_entries.push_back(P.numel());
  }
  return m;
}

// Measured once per process: lesson_docs prints the lesson in two languages from one measurement.
const Measured& measured(const AttentionCostOptions& o) {
  static std::map<std::string, Measured> done;
  std::ostringstream key;
  for (int64_t T : o.lengths) key << T << " ";
  key << o.n_embd << " " << o.n_head << " " << o.work_per_length << " " << o.max_repeats;
  auto it = done.find(key.str());
  return it != done.end() ? it->second : done[key.str()] = measure(o);
}

// [excerpt: recompute]
// What a GPT's forward leaves in the graph for backward, in bytes (autograd/memory.h), with each
// block's activations kept or recomputed in backward (model.recompute, autograd/checkpoint.h).
double saved_for_backward(GPTConfig c, bool recompute, const IntTensor& x, const IntTensor& y) {
  c.recompute = recompute;
  GPT model(c);
  Tensor loss = model.loss(x, y);
  double bytes = 0;
  for (const SavedBytes& row : saved_by_op(loss)) bytes += static_cast<double>(row.bytes);
  return bytes;
}
// [/excerpt]

// Step 5: one GPT of the default width at T = 1024, its blocks' activations kept or recomputed
// (each sublayer, attention or MLP, on its own).
void recomputation(std::ostream& out, const AttentionCostOptions& o, AttentionCostResult& r) {
  heading(out, 5, "Keeping less: recompute each sublayer in backward", "少存一些：在反向中重算每个子层");
  GPTConfig c;
  c.vocab_size = 65;
  c.block_size = 1024;
  c.n_layer = 4;
  c.n_head = o.n_head;
  c.n_embd = o.n_embd;
  c.attention = AttentionKernel::stored;
  const int64_t T = c.block_size;
  Generator gen(23);
  IntTensor x({1, T}, std::vector<int32_t>(static_cast<size_t>(T))), y = x;
  for (int64_t i = 0; i < T; ++i) {
    x[i] = static_cast<int32_t>(gen.randint(c.vocab_size));
    y[i] = static_cast<int32_t>(gen.randint(c.vocab_size));
  }
  r.saved_bytes = saved_for_backward(c, false, x, y);
  r.saved_bytes_recompute = saved_for_backward(c, true, x, y);
  // Multiply-adds: the step is forward + backward, about 3 forwards; recomputation adds one more
  // forward of the blocks (not of the LM head).
  const double Td = static_cast<double>(T), C = static_cast<double>(c.n_embd);
  const double blocks = static_cast<double>(c.n_layer) * (linear_macs(Td, C) + attention_macs(Td, C));
  const double forward = blocks + Td * C * static_cast<double>(c.vocab_size);
  r.recompute_extra_work = blocks / (3 * forward);
  out << tr(out, "a GPT of this width, ", "这个宽度的 GPT，") << c.n_layer
      << tr(out, " layers, one sequence of T = ", " 层，一条 T = ") << T
      << tr(out, " tokens; kept for backward after the forward:\n", " 的序列；前向之后为反向保存的：\n");
  out << tr(out, "  every activation (the default):   ", "  保存全部激活（默认）：     ") << fmt_bytes(r.saved_bytes)
      << "\n";
  out << tr(out, "  only each sublayer's input:       ", "  只保存每个子层的输入：     ")
      << fmt_bytes(r.saved_bytes_recompute) << tr(out, "  (", "（前者是它的 ")
      << fmt(r.saved_bytes / r.saved_bytes_recompute, 1) << tr(out, "x less)\n", " 倍）\n");
  out << tr(out, "the price: one more forward of the blocks, +", "代价：块的前向再算一次，多 ")
      << fmt(100 * r.recompute_extra_work, 1)
      << tr(out, "% multiply-adds on a step of forward + backward\n", "% 的乘加（相对一步前向 + 反向）\n");
}

}  // namespace

AttentionCostResult run_lesson_attention_cost(std::ostream& out, const AttentionCostOptions& o) {
  AttentionCostResult r;
  const double C = static_cast<double>(o.n_embd);
  const int64_t H = o.n_head;

  heading(out, 1, "The score matrix: T x T entries per head", "分数矩阵：每个头 T x T 个元素");
  r.entries_2048 = 2048LL * 2048;
  r.entries_32768 = 32768LL * 32768;
  out << "  T = 2048:  T^2 = " << fmt_count(r.entries_2048) << "  (~" << fmt_sci(static_cast<double>(r.entries_2048), 1)
      << ")\n  T = 32768: T^2 = " << fmt_count(r.entries_32768) << "  (~"
      << fmt_sci(static_cast<double>(r.entries_32768), 2) << ")\n";
  out << tr(out, "as float32 (4 bytes), for one head of one layer: ", "按 float32（4 字节）计，一层的一个头：")
      << fmt_bytes(4.0 * static_cast<double>(r.entries_2048)) << tr(out, " and ", " 和 ")
      << fmt_bytes(4.0 * static_cast<double>(r.entries_32768)) << "\n";
  r.gpt2_probabilities_bytes_2048 = 12.0 * 12.0 * 4.0 * static_cast<double>(r.entries_2048);
  out << tr(out, "a GPT-2-small forward (12 layers x 12 heads) keeps 144 such matrices for backward:\n  ",
            "GPT-2 small 的一次前向（12 层 x 12 个头）要为反向保存 144 个这样的矩阵：\n  ")
      << fmt_bytes(r.gpt2_probabilities_bytes_2048)
      << tr(out, " per sequence at T = 2048, ", "（T = 2048，每条序列），")
      << fmt_bytes(144.0 * 4.0 * static_cast<double>(r.entries_32768)) << tr(out, " at T = 32768\n", "（T = 32768）\n");

  heading(out, 2, "Counting the work of one layer", "数一数一层的计算量");
  out << tr(out, "width C = ", "宽度 C = ") << o.n_embd << ", H = " << H << ", D = " << o.n_embd / H
      << tr(out, " (the default model's); multiply-adds of the forward:\n", "（默认模型的尺寸）；前向的乘加次数：\n");
  out << "       T     linear 12 T C^2   attention T (T+1) C   attention / linear\n";
  for (int64_t T : o.lengths) {
    const double lin = linear_macs(static_cast<double>(T), C), att = attention_macs(static_cast<double>(T), C);
    r.count_ratio.push_back(att / lin);
    out << "  " << std::string(6 - std::to_string(T).size(), ' ') << T << "  "
        << std::string(16 - fmt_count(static_cast<int64_t>(lin)).size(), ' ') << fmt_count(static_cast<int64_t>(lin))
        << "  " << std::string(20 - fmt_count(static_cast<int64_t>(att)).size(), ' ')
        << fmt_count(static_cast<int64_t>(att)) << "  " << std::string(19 - fmt(att / lin, 3).size(), ' ')
        << fmt(att / lin, 3) << "\n";
  }
  r.count_crossover = 12 * o.n_embd - 1;  // T + 1 = 12 C
  out << tr(out, "the counts are equal where T + 1 = 12 C: T = ", "两者相等的地方是 T + 1 = 12 C：T = ")
      << r.count_crossover << tr(out, " (at GPT-2's width C = 768: T = ", "（GPT-2 的宽度 C = 768 时：T = ")
      << 12 * 768 - 1 << tr(out, ")", "）")
      << tr(out,
            "; the backward does about twice the forward's work\nfor both, so the ratio holds for forward + backward too\n",
            "；两者的反向都大约是前向的两倍，\n所以这个比例对前向 + 反向同样成立\n");

  heading(out, 3, "Memory kept for backward", "为反向保存的内存");
  const Measured& m = measured(o);
  out << tr(out, "       T   P (H, T, T) from sf::attention   linear inputs 7 T C   P / linear\n",
            "       T   sf::attention 的 P (H, T, T)    线性层输入 7 T C      P / 线性层\n");
  for (size_t i = 0; i < o.lengths.size(); ++i) {
    const int64_t T = o.lengths[i];
    const double p_bytes = 4.0 * static_cast<double>(m.p_entries[i]),
                 lin_bytes = 4.0 * 7.0 * static_cast<double>(T) * C;
    r.p_bytes.push_back(p_bytes);
    r.linear_bytes.push_back(lin_bytes);
    std::string a = fmt_bytes(p_bytes), b = fmt_bytes(lin_bytes), c = fmt(p_bytes / lin_bytes, 2);
    out << "  " << std::string(6 - std::to_string(T).size(), ' ') << T << "  " << std::string(31 - a.size(), ' ') << a
        << "  " << std::string(19 - b.size(), ' ') << b << "  " << std::string(11 - c.size(), ' ') << c << "\n";
  }
  out << tr(out,
            "P grows 4x when T doubles; the linear layers' inputs (ln_1(x), the attention output,\n"
            "ln_2(x): C each, the GELU output: 4C) grow 2x. They are equal at T = 7 C / H = ",
            "T 翻倍，P 变成 4 倍；线性层的输入（ln_1(x)、注意力输出、ln_2(x) 各 C，GELU 输出 4C）\n"
            "只变成 2 倍。两者在 T = 7 C / H = ")
      << 7 * o.n_embd / H << tr(out, "\n", " 处相等\n");
  std::vector<double> Ts(o.lengths.begin(), o.lengths.end());
  std::vector<double> p_mib, lin_mib;
  for (size_t i = 0; i < Ts.size(); ++i)
    p_mib.push_back(r.p_bytes[i] / 1048576), lin_mib.push_back(r.linear_bytes[i] / 1048576);
  draw_gnuplot(out, "attention_cost_memory.png",
               curves_plot("memory kept for backward, one layer, C = " + std::to_string(o.n_embd), "T", "MiB", Ts,
                           {{"attention probabilities P", p_mib}, {"linear layers' inputs", lin_mib}}, true, true));

  heading(out, 4, "Measured: forward + backward on this machine", "实测：本机上的前向 + 反向");
  out << tr(out, "the fastest of a few runs (more at small T); yours will differ:\n",
            "取几次运行中最快的一次（T 小时多跑几次）；你的机器上数字会不同：\n");
  out << tr(out, "       T   attention ms   linear ms   attention share\n",
            "       T   注意力 ms     线性层 ms   注意力占比\n");
  r.measured_crossover = 0;
  for (size_t i = 0; i < o.lengths.size(); ++i) {
    const double a = m.attention_ms[i], l = m.linear_ms[i];
    r.attention_ms.push_back(a);
    r.linear_ms.push_back(l);
    if (r.measured_crossover == 0 && a > l) r.measured_crossover = o.lengths[i];
    std::string as = fmt(a, 2), ls = fmt(l, 2), sh = fmt(a / (a + l), 2);
    out << "  " << std::string(6 - std::to_string(o.lengths[i]).size(), ' ') << o.lengths[i] << "  "
        << std::string(13 - as.size(), ' ') << as << "  " << std::string(10 - ls.size(), ' ') << ls << "  "
        << std::string(16 - sh.size(), ' ') << sh << "\n";
  }
  if (r.measured_crossover > 0)
    out << tr(out, "attention took longer than the linear layers from T = ", "从 T = ") << r.measured_crossover
        << tr(out, " on\n", " 起，注意力比线性层更慢\n");
  else
    out << tr(out, "attention stayed below the linear layers at every T measured\n",
              "在测过的每个 T 上，注意力都比线性层快\n");
  draw_gnuplot(
      out, "attention_cost_time.png",
      curves_plot("forward + backward of one layer, C = " + std::to_string(o.n_embd) + ", measured", "T", "ms", Ts,
                  {{"causal attention (sf::attention)", r.attention_ms}, {"linear layers", r.linear_ms}}, true, true));
  recomputation(out, o, r);
  return r;
}

AttentionCostResult run_lesson_attention_cost(std::ostream& out) { return run_lesson_attention_cost(out, {}); }

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_attention_cost() {
  return {"attention-cost", "What attention costs: T x T scores, memory and time against T, measured",
          "注意力的代价：T x T 的分数矩阵，内存和时间随 T 的变化，实测",
          printing([](std::ostream& out) { return run_lesson_attention_cost(out); }),
          /*slow=*/true};
}

}  // namespace sf::lessons
