// Lesson 22: sliding-window attention. Each query sees only the last w keys (itself included),
// so attention's cost grows with T w instead of T^2. The same small GPT is trained on Tiny
// Shakespeare with model.window 4, 8, 16 and full attention, with one budget; the lesson prints
// the val loss, the keys each query attends to, and the measured time of attention against the
// window. Text: windows.md.
//
// Legend: T time, w window, C channels, H heads, D head size.
#include <cmath>
#include <iostream>
#include <map>
#include <ostream>
#include <sstream>

#include "autograd/ops_attention.h"
#include "lessons/common/cost_common.h"
#include "lessons/lesson.h"
#include "lessons/windows.h"
#include "lessons/common/pictures.h"

namespace sf::lessons {

namespace {

// [excerpt: model]
GPTConfig window_model(int64_t vocab_size, int64_t block_size, int64_t window) {
  GPTConfig c;
  c.vocab_size = vocab_size;
  c.block_size = block_size;
  c.n_layer = 2;
  c.n_head = 4;
  c.n_embd = 128;
  c.bias = false;
  c.window = window;  // 0: full causal attention; w > 0: keys t - w + 1 .. t only
  return c;
}
// [/excerpt]

// Keys a query sees on average in a causal window of w over T positions (w = 0: all of them).
double keys_per_query(int64_t T, int64_t w) {
  double total = 0;
  for (int64_t t = 0; t < T; ++t) total += static_cast<double>(w > 0 ? std::min(t + 1, w) : t + 1);
  return total / static_cast<double>(T);
}

struct Trained {
  std::vector<double> val_loss, first_loss, last_loss;
  int64_t params = 0;
};

const Trained& trained(const WindowsOptions& o) {
  static std::map<std::string, Trained> done;
  std::ostringstream key;
  key << o.training.steps << " " << o.training.batch_size << " " << o.val_windows;
  for (int64_t w : o.windows) key << " " << w;
  if (auto it = done.find(key.str()); it != done.end()) return it->second;
  const CharCorpus& corpus = shakespeare_chars();
  Trained r;
  std::cerr << "lesson windows: training " << o.windows.size() << " GPTs, one per window (" << o.training.steps
            << " steps each)\n";
  Progress progress = lesson_progress(static_cast<int64_t>(o.windows.size()) * o.training.steps);
  for (size_t i = 0; i < o.windows.size(); ++i) {
    GPT model(window_model(corpus.vocab_size, o.training.block_size, o.windows[i]));
    r.params = model.num_parameters();
    std::vector<double> losses =
        train_small(model, corpus, o.training, progress, static_cast<int64_t>(i) * o.training.steps);
    r.first_loss.push_back(losses.front());
    r.last_loss.push_back(losses.back());
    r.val_loss.push_back(val_loss_of(model, corpus, o.training.block_size, o.val_windows));
  }
  progress.finish();
  return done[key.str()] = r;
}

// Forward + backward of causal sf::attention at T keys per window, in ms (once per process).
const std::vector<double>& attention_times(const WindowsOptions& o) {
  static std::map<std::string, std::vector<double>> done;
  std::ostringstream key;
  key << o.timed_length;
  for (int64_t w : o.windows) key << " " << w;
  if (auto it = done.find(key.str()); it != done.end()) return it->second;
  std::vector<double> ms;
  Generator gen(22);
  const int64_t T = o.timed_length;
  Tensor q = Tensor::randn({1, 4, T, 32}, gen), k = Tensor::randn({1, 4, T, 32}, gen),
         v = Tensor::randn({1, 4, T, 32}, gen);
  for (Tensor* t : {&q, &k, &v}) t->requires_grad_();
  Tensor dy = Tensor::randn({1, 4, T, 32}, gen);
  for (int64_t w : o.windows) {
    // [excerpt: timed]
    AttentionOptions mask;
    mask.causal = true;
    mask.window = w;  // the same rule GPTConfig::window sets in every block
    ms.push_back(1e3 * fastest_seconds([&] { attention(q, k, v, mask).backward(dy); }, 3));
    // [/excerpt]
  }
  return done[key.str()] = ms;
}

std::string window_name(int64_t w, std::ostream& out) { return w > 0 ? std::to_string(w) : tr(out, "full", "全部"); }

}  // namespace

WindowsResult run_lesson_windows(std::ostream& out, const WindowsOptions& o) {
  WindowsResult r;
  const Trained& t = trained(o);
  const int64_t T = o.training.block_size;
  heading(out, 1, "One model, four windows", "一个模型，四种窗口");
  out << tr(out, "a GPT of 2 layers, 4 heads, C = 128, ", "一个 GPT：2 层、4 个头、C = 128，") << t.params
      << tr(out, " parameters, trained on windows of T = ", " 个参数，在 Tiny Shakespeare 上用长度 T = ") << T
      << tr(out, " characters of Tiny Shakespeare:\n", " 个字符的窗口训练：\n") << "  " << o.training.steps
      << tr(out, " steps of ", " 步，每步 ") << o.training.batch_size << " x " << T
      << tr(out, " characters, AdamW lr ", " 个字符，AdamW 学习率 ") << fmt_sci(o.training.lr, 0)
      << tr(out, ", the same batches for every window\n", "，每种窗口用同样的批次\n");
  out << tr(out, "windows (model.window): ", "窗口（model.window）：");
  for (size_t i = 0; i < o.windows.size(); ++i) out << (i ? tr(out, ", ", "，") : "") << window_name(o.windows[i], out);
  out << "\n";

  heading(out, 2, "What each query attends to", "每个查询关注多少个键");
  out << tr(out, "  window   keys per query at T = ", "  窗口     每个查询的键数 T = ") << T
      << tr(out, "   at T = ", "   T = ") << o.timed_length
      << tr(out, "   share of full at T = ", "   占全部的比例 T = ") << o.timed_length << "\n";
  for (int64_t w : o.windows) {
    const double a = keys_per_query(T, w), b = keys_per_query(o.timed_length, w),
                 full = keys_per_query(o.timed_length, 0);
    r.keys_per_query.push_back(a);
    r.keys_per_query_long.push_back(b);
    std::string n = window_name(w, out), as = fmt(a, 2), bs = fmt(b, 2), cs = fmt(b / full, 3);
    out << "  " << pad_right(n, 7) << ' ' << std::string(24 + std::to_string(T).size() - as.size(), ' ') << as
        << std::string(9 + std::to_string(o.timed_length).size() - bs.size(), ' ') << bs
        << std::string(23 + std::to_string(o.timed_length).size() - cs.size(), ' ') << cs << "\n";
  }
  out << tr(out,
            "a window of w costs about T w score entries instead of T (T + 1) / 2: at short T the\n"
            "saving is small (most queries are near the start anyway), at long T it is the whole point\n",
            "窗口为 w 时，分数矩阵大约只有 T w 个元素，而不是 T (T + 1) / 2：T 短时省得不多（反正大多数查询\n"
            "都离开头不远），T 长时省下的才是关键\n");

  heading(out, 3, "Val loss against the window", "验证损失与窗口大小");
  out << tr(out, "  window   first step   last step   val loss (", "  窗口     第一步       最后一步    验证损失（")
      << o.val_windows << tr(out, " val windows)\n", " 个验证窗口）\n");
  for (size_t i = 0; i < o.windows.size(); ++i) {
    std::string n = window_name(o.windows[i], out);
    out << "  " << pad_right(n, 8) << ' ' << fmt(t.first_loss[i], 2) << "         " << fmt(t.last_loss[i], 2)
        << "        " << fmt(t.val_loss[i], 2) << "\n";
  }
  r.val_loss = t.val_loss;
  // The differences are those of the printed losses (rounded to 2 decimals), so that a reader who
  // subtracts the table's numbers gets the same.
  auto printed = [](double loss) { return std::round(loss * 100.0) / 100.0; };
  const double full = t.val_loss.back();
  out << tr(out, "against full attention (", "与全注意力（") << fmt(full, 2) << tr(out, "): ", "）相比：");
  for (size_t i = 0; i + 1 < o.windows.size(); ++i) {
    const double d = printed(t.val_loss[i]) - printed(full);
    out << (i ? tr(out, ", ", "，") : "") << "w = " << o.windows[i] << " " << (d >= 0 ? "+" : "") << fmt(d, 2);
  }
  out << "\n";
  std::vector<double> x;
  for (int64_t w : o.windows) x.push_back(static_cast<double>(w > 0 ? w : T));
  draw_gnuplot(out, "windows_loss.png",
               curves_plot("val loss against the attention window (full = " + std::to_string(T) + ")", "window (keys)",
                           "val loss (nats/char)", x, {{"val loss", t.val_loss}}, true, false));

  heading(out, 4, "Measured: attention forward + backward against the window", "实测：注意力前向 + 反向与窗口大小");
  const std::vector<double>& ms = attention_times(o);
  out << "T = " << o.timed_length << tr(out, ", H = 4, D = 32", "，H = 4，D = 32")
      << tr(out, "; yours will differ:\n", "；你的机器上数字会不同：\n");
  for (size_t i = 0; i < o.windows.size(); ++i) {
    out << "  " << tr(out, "window ", "窗口 ") << window_name(o.windows[i], out) << tr(out, ": ", "：") << fmt(ms[i], 2)
        << " ms\n";
  }
  r.attention_ms = ms;
  return r;
}

WindowsResult run_lesson_windows(std::ostream& out) { return run_lesson_windows(out, {}); }

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_windows() {
  return {"windows", "Sliding windows: one GPT trained with windows 4, 8, 16 and full; val loss and cost",
          "滑动窗口：同一个 GPT 分别用窗口 4、8、16 和全注意力训练；验证损失与代价",
          printing([](std::ostream& out) { return run_lesson_windows(out); }),
          /*slow=*/true};
}

}  // namespace sf::lessons
