// Lesson 24: positions past the training length. Small GPTs with learned, sinusoidal, RoPE and
// ALiBi positions train on windows of 64 characters and are then scored on windows of 256: the
// loss at every position shows which position encodings carry over to positions never seen in
// training. A learned table has no row past its length; the engine says so. Text: extrapolation.md.
//
// Legend: T time (positions), C channels, V vocab.
#include <cmath>
#include <iostream>
#include <map>
#include <ostream>
#include <sstream>

#include "autograd/errors.h"
#include "autograd/ops.h"
#include "lessons/common/cost_common.h"
#include "lessons/lesson.h"
#include "lessons/extrapolation.h"
#include "lessons/common/pictures.h"

namespace sf::lessons {

namespace {

struct Variant {
  const char* name;  // printed
  PosEncoding pos_encoding;
  int64_t block_size;  // positions the model accepts
};

// [excerpt: model]
GPTConfig position_model(int64_t vocab_size, PosEncoding pos_encoding, int64_t block_size) {
  GPTConfig c;
  c.vocab_size = vocab_size;
  c.block_size = block_size;  // the longest input forward() accepts (and the learned table's rows)
  c.n_layer = 2;
  c.n_head = 4;
  c.n_embd = 128;
  c.bias = false;
  c.pos_encoding = pos_encoding;  // learned | sinusoidal | rope | alibi
  // Token vectors start N(0, 0.02^2); a sinusoidal table adds values of size 1 to them and
  // drowns them, so that model multiplies them by sqrt(C) first (token vectors then start
  // N(0, 1/C) and reach unit size), as Vaswani et al. do. Without it, it hardly learns.
  c.scale_embeddings = pos_encoding == PosEncoding::sinusoidal;
  return c;
}
// [/excerpt]

// [excerpt: per_position]
// The mean cross-entropy at each position 0 .. T-1 over `windows` val windows of length T.
std::vector<double> loss_per_position(GPT& model, const CharCorpus& corpus, int64_t T, int64_t windows) {
  NoGradGuard no_grad;
  model.eval();
  data::SequentialWindows all(corpus.val, T, 8);
  std::vector<double> total(static_cast<size_t>(T), 0.0);
  int64_t seen = 0;
  for (int64_t i = 0; i < all.num_batches() && seen < windows; ++i) {
    data::LmBatch b = all.batch(i);
    const int64_t B = b.inputs.shape[0], V = corpus.vocab_size;
    std::vector<double> logp = log_softmax(model.forward(b.inputs), -1).to_vector();  // (B, T, V)
    for (int64_t r = 0; r < B && seen < windows; ++r, ++seen)
      for (int64_t t = 0; t < T; ++t)
        total[static_cast<size_t>(t)] -=
            logp[static_cast<size_t>((r * T + t) * V + b.targets.data[static_cast<size_t>(r * T + t)])];
  }
  for (double& x : total) x /= static_cast<double>(seen);
  model.train();
  return total;
}
// [/excerpt]

double mean_of(const std::vector<double>& v, int64_t a, int64_t b) {
  double s = 0;
  for (int64_t i = a; i < b; ++i) s += v[static_cast<size_t>(i)];
  return s / static_cast<double>(b - a);
}

struct Trained {
  std::vector<std::vector<double>> per_position;  // per variant
  std::string learned_error;
};

const std::vector<Variant>& variants(int64_t long_length) {
  static std::map<int64_t, std::vector<Variant>> all;
  auto& v = all[long_length];
  if (v.empty())
    v = {{"learned (table of 256)", PosEncoding::learned, long_length},
         {"sinusoidal (x sqrt C)", PosEncoding::sinusoidal, long_length},
         {"rope", PosEncoding::rope, long_length},
         {"alibi", PosEncoding::alibi, long_length}};
  return v;
}

// A variant's name as the tables print it. The pictures keep the English names; the Chinese tables
// say in Chinese what the parentheses say.
std::string variant_label(std::ostream& out, const Variant& v) {
  if (language(out) == Lang::en) return v.name;
  if (v.pos_encoding == PosEncoding::learned) return "learned（" + std::to_string(v.block_size) + " 行的表）";
  if (v.pos_encoding == PosEncoding::sinusoidal) return "sinusoidal（x sqrt C）";
  return v.name;
}

const Trained& trained(const ExtrapolationOptions& o) {
  static std::map<std::string, Trained> done;
  std::ostringstream key;
  key << o.training.steps << " " << o.training.batch_size << " " << o.training.block_size << " " << o.long_length << " "
      << o.eval_windows;
  if (auto it = done.find(key.str()); it != done.end()) return it->second;
  const CharCorpus& corpus = shakespeare_chars();
  Trained r;
  const auto& vs = variants(o.long_length);
  const int64_t total_steps = static_cast<int64_t>(vs.size() + 1) * o.training.steps;
  std::cerr << "lesson extrapolation: training " << vs.size() + 1 << " GPTs on windows of " << o.training.block_size
            << " (" << o.training.steps << " steps each)\n";
  Progress progress = lesson_progress(total_steps);
  {  // learned positions with a table as long as the training windows, then asked for more
    GPT model(position_model(corpus.vocab_size, PosEncoding::learned, o.training.block_size));
    train_small(model, corpus, o.training, progress, 0);
    // [excerpt: learned]
    try {
      loss_per_position(model, corpus, o.long_length, 1);
    } catch (const Error& e) {
      r.learned_error = e.what();  // no row of the table for position 64 and beyond
    }
    // [/excerpt]
  }
  for (size_t i = 0; i < vs.size(); ++i) {
    GPT model(position_model(corpus.vocab_size, vs[i].pos_encoding, vs[i].block_size));
    train_small(model, corpus, o.training, progress, static_cast<int64_t>(i + 1) * o.training.steps);
    r.per_position.push_back(loss_per_position(model, corpus, o.long_length, o.eval_windows));
  }
  progress.finish();
  return done[key.str()] = r;
}

}  // namespace

ExtrapolationResult run_lesson_extrapolation(std::ostream& out, const ExtrapolationOptions& o) {
  ExtrapolationResult r;
  const Trained& t = trained(o);
  const int64_t T = o.training.block_size, L = o.long_length;
  const auto& vs = variants(L);

  heading(out, 1, "Trained on 64, scored on 256", "在 64 上训练，在 256 上评估");
  out << tr(out, "five GPTs (2 layers, 4 heads, C = 128), each ", "五个 GPT（2 层、4 个头、C = 128），每个训练 ")
      << o.training.steps << tr(out, " steps on windows of T = ", " 步，窗口长度 T = ") << T
      << tr(out, " characters;\nthen the loss at every position of ", " 个字符；\n然后在 ") << o.eval_windows
      << tr(out, " val windows of ", " 个长度为 ") << L
      << tr(out, " characters\n", " 个字符的验证窗口上逐位置计算损失\n");

  heading(out, 2, "Learned positions: no row past the table", "可学习的位置嵌入：表外没有行");
  r.learned_error = t.learned_error;
  out << tr(out, "a learned table of ", "一张 ") << T
      << tr(out, " rows, asked for ", " 行的可学习位置嵌入表，要它处理 ") << L
      << tr(out, " positions:\n  ", " 个位置：\n  ") << (t.learned_error.empty() ? "(no error)" : t.learned_error)
      << "\n"
      << tr(out,
            "position 64 has no vector to add. A table of 256 rows accepts the input, but rows 64-255\n"
            "never receive a gradient while training on windows of 64: they stay as initialised.\n",
            "位置 64 没有可加的向量。256 行的表能接受这个输入，但第 64-255 行在长度 64 的窗口上训练时\n"
            "从来得不到梯度：它们一直是初始化时的样子。\n");

  heading(out, 3, "Loss per position", "逐位置的损失");
  out << tr(out, "  positions:                  0-63     64-127   128-255   (128-255) - (0-63)\n",
            "  位置：                      0-63     64-127   128-255   (128-255) - (0-63)\n");
  for (size_t i = 0; i < vs.size(); ++i) {
    const std::vector<double>& p = t.per_position[i];
    const double in = mean_of(p, 0, T), mid = mean_of(p, T, 2 * T), far = mean_of(p, 2 * T, L);
    r.names.push_back(pos_encoding_name(vs[i].pos_encoding));
    r.in_range.push_back(in), r.middle.push_back(mid), r.far.push_back(far);
    const std::string n = variant_label(out, vs[i]);
    out << "  " << pad_right(n, 26) << "  " << fmt(in, 2) << "     " << fmt(mid, 2) << "     " << fmt(far, 2)
        << "      " << (far >= in ? "+" : "") << fmt(far - in, 2) << "\n";
  }
  r.per_position = t.per_position;
  std::vector<double> x;
  std::vector<Curve> curves;
  for (int64_t b = 0; b < L / 8; ++b) x.push_back(static_cast<double>(b * 8 + 4));
  for (size_t i = 0; i < vs.size(); ++i) {
    Curve c{vs[i].name, {}};
    for (int64_t b = 0; b < L / 8; ++b) c.y.push_back(mean_of(t.per_position[i], b * 8, b * 8 + 8));
    curves.push_back(c);
  }
  draw_gnuplot(out, "extrapolation_loss.png",
               curves_plot("loss per position, trained on windows of " + std::to_string(T) + " (mean of 8 positions)",
                           "position", "val loss (nats/char)", x, curves, false, false));

  heading(out, 4, "Which extrapolate", "哪些能外推");
  out << tr(out, "criterion: the loss at positions 128-255 is at most ", "判据：位置 128-255 上的损失最多高出 ")
      << fmt(o.tolerance, 2) << tr(out, " above the loss at 0-63\n", "（与 0-63 上的损失相比）\n");
  for (size_t i = 0; i < vs.size(); ++i) {
    const bool ok = r.far[i] <= r.in_range[i] + o.tolerance;
    r.extrapolates.push_back(ok);
    out << "  " << variant_label(out, vs[i]) << tr(out, ": ", "：")
        << (ok ? tr(out, "extrapolates", "能外推") : tr(out, "does not", "不能")) << tr(out, " (", "（")
        << fmt(r.far[i], 2) << (ok ? " <= " : " > ") << fmt(r.in_range[i] + o.tolerance, 2) << tr(out, ")\n", "）\n");
  }
  out << tr(out, "  learned (table of 64): cannot run at all past position 63\n",
            "  learned（64 行的表）：过了位置 63 根本无法运行\n");
  return r;
}

ExtrapolationResult run_lesson_extrapolation(std::ostream& out) { return run_lesson_extrapolation(out, {}); }

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_extrapolation() {
  return {"extrapolation",
          "Positions past the training length: learned, sinusoidal, RoPE, ALiBi trained on 64, scored to 256",
          "超出训练长度的位置：可学习、正弦、RoPE、ALiBi 在 64 上训练，在 256 上评估",
          printing([](std::ostream& out) { return run_lesson_extrapolation(out); }),
          /*slow=*/true};
}

}  // namespace sf::lessons
