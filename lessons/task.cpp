// Lesson 1: the task. A language model reads text one character at a time and gives each next
// character a probability; its loss is cross-entropy, -ln p(the right character). A model that
// knows nothing scores ln V. A bigram table (one row of next-character logits per character)
// learns the task in seconds, is sampled with temperature, top-k and top-p, and, trained on a
// small slice of text, overfits. Text: task.md.
//
// Legend: B batch, T time, V vocab.
#include "lessons/task.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <memory>
#include <numeric>
#include <ostream>
#include <set>
#include <sstream>

#include "lessons/common/cost_common.h"
#include "lessons/lesson.h"
#include "lessons/common/pictures.h"
#include "lessons/common/stage_model.h"
#include "optim/adam.h"
#include "optim/clip.h"

namespace sf::lessons {

std::vector<double> sampling_distribution(const std::vector<float>& logits, const SampleOptions& o) {
  const size_t V = logits.size();
  std::vector<double> p(V, 0.0);
  if (o.temperature <= 0) {
    p[static_cast<size_t>(std::max_element(logits.begin(), logits.end()) - logits.begin())] = 1.0;
    return p;
  }
  // Candidates sorted by logit, most likely first (ties by index, as the sampler does).
  std::vector<size_t> order(V);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return logits[a] > logits[b]; });
  size_t keep = o.top_k > 0 ? std::min(V, static_cast<size_t>(o.top_k)) : V;
  std::vector<double> w(keep);
  double total = 0;
  for (size_t i = 0; i < keep; ++i)
    total += (w[i] = std::exp((static_cast<double>(logits[order[i]]) - logits[order[0]]) / o.temperature));
  if (o.top_p < 1.0) {  // the smallest prefix whose probability reaches top_p
    double mass = 0;
    size_t n = 0;
    while (n < keep && mass < o.top_p * total) mass += w[n++];
    keep = std::max<size_t>(n, 1);
    total = std::accumulate(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(keep), 0.0);
  }
  for (size_t i = 0; i < keep; ++i) p[order[i]] = w[i] / total;
  return p;
}

double entropy_of(const std::vector<double>& p) {
  double h = 0;
  for (double x : p)
    if (x > 0) h -= x * std::log(x);
  return h;
}

// A setting as the tables name it: "temperature 0.5", "top-k 3", "top-p 0.9", "greedy (temperature 0)".
static std::string setting_name(const SampleOptions& o, Lang lang) {
  const bool zh = lang == Lang::zh;
  std::ostringstream s;
  if (o.temperature <= 0) s << (zh ? "贪心（温度 0）" : "greedy (temperature 0)");
  else if (o.top_k > 0) s << "top-k " << o.top_k;
  else if (o.top_p < 1) s << "top-p " << o.top_p;
  else s << (zh ? "温度 " : "temperature ") << o.temperature;
  return s.str();
}

// `s` padded with spaces to `width` terminal columns (a CJK character or full-width mark takes two).
static std::string padded(const std::string& s, size_t width) {
  size_t columns = s.size();
  for (unsigned char c : s) columns -= (c & 0xF0) == 0xE0 ? 1 : 0;  // 3 bytes, 2 columns
  return s + std::string(width > columns ? width - columns : 0, ' ');
}

// How the text shows one character: "\n" for a newline, "' '" for a space.
static std::string shown(const std::string& c) { return c == "\n" ? "\\n" : c == " " ? "' '" : c; }

// Mean cross-entropy of `model` over every full window of `tokens`, in order.
static double mean_loss(StageModel& model, const data::Tokens& tokens, int64_t T, int64_t max_batches = 0) {
  NoGradGuard no_grad;
  data::SequentialWindows windows(tokens, T, 64);
  const int64_t n_batches = max_batches > 0 ? std::min(max_batches, windows.num_batches()) : windows.num_batches();
  double total = 0;
  int64_t count = 0;
  for (int64_t i = 0; i < n_batches; ++i) {
    data::LmBatch b = windows.batch(i);
    const int64_t n = static_cast<int64_t>(b.targets.data.size());
    total += model.loss(b.inputs, b.targets).item() * static_cast<double>(n);
    count += n;
  }
  return total / static_cast<double>(count);
}

// The next-character logits of a bigram table for the character `id` (one row of the table).
static std::vector<float> row_logits(StageModel& model, int32_t id) {
  NoGradGuard no_grad;
  std::vector<double> row = model.forward(IntTensor({1, 1}, {id})).to_vector();  // (1, 1, V)
  return std::vector<float>(row.begin(), row.end());
}

// The budgets: the whole lesson trains 1100 small steps (a few seconds on two cores).
constexpr int64_t kBatch = 32, kBlock = 64, kSteps = 500, kEvery = 10;
constexpr double kLr = 0.1;
constexpr int64_t kSliceChars = 2000, kOverfitSteps = 600, kOverfitEvery = 10;
constexpr int64_t kSampleChars = 2000, kShownChars = 160;

// Trains a fresh bigram table on `train` with Adam for `steps` steps, measuring the loss on the
// whole of `train` and `val` every `every` steps (and before the first).
static std::unique_ptr<StageModel> train_bigram(const data::Tokens& train, const data::Tokens& val, int64_t V,
                                                int64_t steps, int64_t every, Progress& progress, int64_t first_step,
                                                std::vector<double>& at, std::vector<double>& train_curve,
                                                std::vector<double>& val_curve) {
  StageConfig cfg;
  cfg.stage = Stage::bigram;
  cfg.vocab_size = V;
  cfg.block_size = kBlock;
  auto table = std::make_unique<StageModel>(cfg);
  StageModel& model = *table;
  // [excerpt: train]
  AdamOptions adam;
  adam.lr = kLr;  // a table of logits tolerates a large step
  Adam optimizer(model.named_parameters(), adam);
  data::RandomWindows batches(train, kBlock, kBatch, /*seed=*/1337);
  for (int64_t step = 0; step <= steps; ++step) {
    if (step % every == 0) {  // the whole of both splits, not one batch
      at.push_back(static_cast<double>(step));
      train_curve.push_back(mean_loss(model, train, kBlock));
      val_curve.push_back(mean_loss(model, val, kBlock));
    }
    if (step == steps) break;
    data::LmBatch batch = batches.next();  // (B, T) inputs and the same shifted by one
    optimizer.zero_grad();
    Tensor loss = model.loss(batch.inputs, batch.targets);  // mean -ln p(next character)
    loss.backward();
    optimizer.step();
    // [/excerpt]
    const double done = static_cast<double>(first_step + step + 1);
    progress.update({first_step + step + 1, loss.item(), kLr, grad_norm(model.named_parameters()),
                     done * kBatch * kBlock / std::max(1e-9, progress.elapsed()), 0});
  }
  return table;
}

// Samples kSampleChars characters from the bigram table after a 'T', and what the knob did.
static TaskSample sample_with(StageModel& model, const data::Tokenizer& tok, const SampleOptions& o) {
  TaskSample s;
  s.options = o;
  Generator gen(7);
  int32_t prev = tok.encode("T")[0];
  std::vector<int32_t> ids;
  double entropy = 0, kept = 0;
  for (int64_t i = 0; i < kSampleChars; ++i) {
    std::vector<float> logits = row_logits(model, prev);
    std::vector<double> p = sampling_distribution(logits, o);
    entropy += entropy_of(p);
    kept += static_cast<double>(std::count_if(p.begin(), p.end(), [](double x) { return x > 0; }));
    prev = sample_from_logits(logits.data(), static_cast<int64_t>(logits.size()), o, gen);
    ids.push_back(prev);
  }
  s.mean_entropy = entropy / kSampleChars;
  s.mean_kept = kept / kSampleChars;
  s.distinct = static_cast<int64_t>(std::set<int32_t>(ids.begin(), ids.end()).size());
  s.text = "T" + tok.decode(std::vector<int32_t>(ids.begin(), ids.begin() + kShownChars));
  return s;
}

// Runs the lesson's training once per process: lesson_docs prints it in two languages.
static const TaskResult& compute() {
  static const TaskResult r = [] {
    TaskResult r;
    const CharCorpus& c = shakespeare_chars();
    const int64_t V = c.vocab_size;
    r.vocab_size = V;
    r.train_chars = static_cast<int64_t>(c.train->size());
    r.val_chars = static_cast<int64_t>(c.val->size());
    r.ln_vocab = std::log(static_cast<double>(V));

    StageConfig fresh;
    fresh.vocab_size = V;
    fresh.block_size = kBlock;
    fresh.stage = Stage::bigram;
    StageModel untrained_bigram(fresh);
    r.untrained_bigram_val = mean_loss(untrained_bigram, c.val, kBlock);
    for (double w : untrained_bigram.parameters()[0].to_vector())
      r.untrained_max_logit = std::max(r.untrained_max_logit, std::fabs(w));
    fresh.stage = Stage::blocks;  // C 64, 4 heads, 4 blocks: the GPT of lesson build-gpt
    StageModel untrained_gpt(fresh);
    untrained_gpt.eval();
    r.untrained_gpt_val = mean_loss(untrained_gpt, c.val, kBlock, 8);

    // The best bigram table there is for the train split: counts, each plus one, as probabilities.
    std::vector<double> counts(static_cast<size_t>(V * V), 1.0);
    for (size_t i = 0; i + 1 < c.train->size(); ++i)
      counts[static_cast<size_t>((*c.train)[i] * V + (*c.train)[i + 1])] += 1;
    double nll = 0;
    for (size_t i = 0; i + 1 < c.val->size(); ++i) {
      const size_t a = static_cast<size_t>((*c.val)[i]), b = static_cast<size_t>((*c.val)[i + 1]);
      double row = std::accumulate(counts.begin() + static_cast<std::ptrdiff_t>(a * V),
                                   counts.begin() + static_cast<std::ptrdiff_t>((a + 1) * V), 0.0);
      nll -= std::log(counts[a * static_cast<size_t>(V) + b] / row);
    }
    r.counts_val = nll / static_cast<double>(c.val->size() - 1);

    Progress progress = lesson_progress(kSteps + kOverfitSteps);
    std::unique_ptr<StageModel> trained =
        train_bigram(c.train, c.val, V, kSteps, kEvery, progress, 0, r.curve_steps, r.train_curve, r.val_curve);
    r.final_train = r.train_curve.back();
    r.final_val = r.val_curve.back();

    const SampleOptions settings[] = {
        {kSampleChars, 0.0, 0, 1.0, nullptr, true}, {kSampleChars, 0.5, 0, 1.0, nullptr, true},
        {kSampleChars, 1.0, 0, 1.0, nullptr, true}, {kSampleChars, 2.0, 0, 1.0, nullptr, true},
        {kSampleChars, 1.0, 3, 1.0, nullptr, true}, {kSampleChars, 1.0, 0, 0.5, nullptr, true},
        {kSampleChars, 1.0, 0, 0.9, nullptr, true}};
    StageModel& bigram = *trained;
    for (const SampleOptions& o : settings) r.samples.push_back(sample_with(bigram, *c.tokenizer, o));
    r.row_t = row_logits(bigram, c.tokenizer->encode("t")[0]);

    r.slice_chars = kSliceChars;
    auto slice = std::make_shared<const std::vector<int32_t>>(c.train->begin(), c.train->begin() + kSliceChars);
    (void)train_bigram(slice, c.val, V, kOverfitSteps, kOverfitEvery, progress, kSteps, r.overfit_steps,
                       r.overfit_train, r.overfit_val);
    progress.finish();
    const size_t best =
        static_cast<size_t>(std::min_element(r.overfit_val.begin(), r.overfit_val.end()) - r.overfit_val.begin());
    r.overfit_best_val = r.overfit_val[best];
    r.overfit_best_step = r.overfit_steps[best];
    r.overfit_final_train = r.overfit_train.back();
    r.overfit_final_val = r.overfit_val.back();
    return r;
  }();
  return r;
}

TaskResult run_lesson_task(std::ostream& out) {
  const TaskResult& r = compute();
  const CharCorpus& c = shakespeare_chars();
  const data::Tokenizer& tok = *c.tokenizer;

  heading(out, 1, "The task: read characters, predict the next one", "任务：读入字符，预测下一个字符");
  out << tr(out, "corpus: Tiny Shakespeare, ", "语料：Tiny Shakespeare，") << r.train_chars + r.val_chars
      << tr(out, " characters; the first 90% train, the last 10% val\n", " 个字符；前 90% 用于训练，后 10% 用于验证\n")
      << tr(out, "train / val characters: ", "训练 / 验证字符数：") << r.train_chars << " / " << r.val_chars << "\n"
      << tr(out, "vocabulary: V = ", "词表：V = ") << r.vocab_size
      << tr(out, " characters, ids 0..", " 个字符，编号 0..") << r.vocab_size - 1 << tr(out, ":\n", "：\n") << " ";
  for (int32_t id = 0; id < r.vocab_size; ++id) out << " " << shown(tok.decode({id}));
  out << "\n";
  // [excerpt: pairs]
  const int64_t n = 8;
  std::vector<int32_t> inputs(c.train->begin(), c.train->begin() + n);           // the model reads these
  std::vector<int32_t> targets(c.train->begin() + 1, c.train->begin() + n + 1);  // and scores these
  // [/excerpt]
  out << tr(out, "the text begins: ", "文本开头：") << "\""
      << tok.decode(std::vector<int32_t>(c.train->begin(), c.train->begin() + 14)) << "\"\n"
      << tr(out, "one window of T = 8 holds 8 questions:\n", "一个 T = 8 的窗口里有 8 道题：\n");
  for (int64_t t = 0; t < n; ++t)
    out << "  \"" << tok.decode(std::vector<int32_t>(inputs.begin(), inputs.begin() + t + 1)) << "\" -> "
        << shown(tok.decode({targets[static_cast<size_t>(t)]})) << "\n";

  heading(out, 2, "Cross-entropy: -ln of the probability given to the right character",
          "交叉熵：给正确字符的概率取 -ln");
  for (double p : {0.9, 0.5, 1.0 / static_cast<double>(r.vocab_size), 0.01})
    out << "  p = " << fmt(p, 4) << "  ->  -ln p = " << fmt(-std::log(p), 4) << "\n";
  out << tr(out,
            "the largest |logit| in a freshly initialised bigram table: ", "刚初始化的二元语法表里最大的 |logit|：")
      << fmt(r.untrained_max_logit, 4) << "\n";
  out << tr(out, "a uniform guess gives every character p = 1/", "均匀猜测给每个字符 p = 1/") << r.vocab_size
      << tr(out, ", so its loss is ln ", "，所以它的损失是 ln ") << r.vocab_size << " = " << fmt(r.ln_vocab, 4) << "\n"
      << tr(out, "a freshly initialised bigram table, on all of val: ", "刚初始化的二元语法表，在整个验证集上：")
      << fmt(r.untrained_bigram_val, 4) << "\n"
      << tr(out, "a freshly initialised 4-block GPT, on 32768 val characters: ",
            "刚初始化的 4 层 GPT，在 32768 个验证字符上：")
      << fmt(r.untrained_gpt_val, 4) << "\n";

  heading(out, 3, "The best bigram table: counts", "最好的二元语法表：计数");
  out << tr(out, "count every pair (a, b) of neighbours in train, add 1, divide by the row's sum:\n",
            "数出训练集里每一对相邻字符 (a, b)，每个计数加 1，再除以该行的总和：\n")
      << tr(out, "val loss of the counted table: ", "计数得到的表的验证损失：") << fmt(r.counts_val, 4) << "\n";

  heading(out, 4, "Training the bigram table", "训练二元语法表");
  out << tr(out, "Adam, lr ", "Adam，学习率 ") << kLr << tr(out, ", ", "，") << kSteps
      << tr(out, " steps of ", " 步，每步 ") << kBatch << tr(out, " x ", " × ") << kBlock
      << tr(out, " characters; the loss on all of train and val:\n", " 个字符；整个训练集和验证集上的损失：\n")
      << tr(out, "  step   train    val\n", "  步数   训练     验证\n");
  for (size_t i = 0; i < r.curve_steps.size(); i += 10)
    out << std::setw(6) << static_cast<int64_t>(r.curve_steps[i]) << "   " << fmt(r.train_curve[i], 4) << "  "
        << fmt(r.val_curve[i], 4) << "\n";
  out << tr(out, "after ", "训练 ") << kSteps << tr(out, " steps: train ", " 步后：训练 ") << fmt(r.final_train, 4)
      << tr(out, ", val ", "，验证 ") << fmt(r.final_val, 4) << tr(out, " (the counted table: ", "（计数得到的表：")
      << fmt(r.counts_val, 4) << tr(out, ")\n", "）\n");
  draw_gnuplot(out, "task_curves.png",
               curves_plot("bigram table on Tiny Shakespeare", "step", "loss (nats per character)", r.curve_steps,
                           {{"train", r.train_curve}, {"val", r.val_curve}}, false, false));

  heading(out, 5, "Three knobs on one row: the character after 't'", "一行上的三个旋钮：'t' 之后的字符");
  out << tr(out, "setting                  kept  entropy  most likely\n",
            "设置                     保留  熵       最可能的字符\n");
  for (const TaskSample& s : r.samples) {
    std::vector<double> p = sampling_distribution(r.row_t, s.options);
    std::vector<size_t> order(p.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] > p[b]; });
    const auto kept = std::count_if(p.begin(), p.end(), [](double x) { return x > 0; });
    out << "  " << padded(setting_name(s.options, language(out)), 23) << std::setw(4) << kept << "  "
        << fmt(entropy_of(p), 3) << "   ";
    for (size_t k = 0; k < 3 && p[order[k]] > 0; ++k)
      out << (k ? ", " : "") << shown(tok.decode({static_cast<int32_t>(order[k])})) << " " << fmt(p[order[k]], 3);
    out << "\n";
  }

  heading(out, 6, "Samples: what each knob does to the text", "样本：每个旋钮对文本的影响");
  out << tr(out, "each setting draws ", "每种设置从 'T' 开始抽取 ") << kSampleChars
      << tr(out, " characters after a 'T' (the first ", " 个字符（下面只印出前 ") << kShownChars
      << tr(out, " shown);\nentropy and kept are averaged over the draws, distinct counts characters\n",
            " 个）；\n熵和保留数是所有抽取的平均值，不同字符数统计整段样本\n");
  for (const TaskSample& s : r.samples) {
    out << "-- " << setting_name(s.options, language(out)) << tr(out, ": entropy ", "：熵 ") << fmt(s.mean_entropy, 3)
        << tr(out, ", kept ", "，保留 ") << fmt(s.mean_kept, 1) << tr(out, ", distinct characters ", "，不同字符 ")
        << s.distinct << "\n";
    std::string text = s.text;
    for (size_t p = 0; (p = text.find('\n', p)) != std::string::npos; p += 3) text.replace(p, 1, "\n  ");
    out << "  " << text << "\n";
  }

  heading(out, 7, "Overfitting: the same table on a small slice", "过拟合：同一张表只用一小段文本训练");
  out << tr(out, "train on the first ", "只用训练集的前 ") << r.slice_chars
      << tr(out, " characters of train only; val as before\n", " 个字符训练；验证集不变\n")
      << tr(out, "  step   slice    val\n", "  步数   小段     验证\n");
  for (size_t i = 0; i < r.overfit_steps.size(); i += 5)
    out << std::setw(6) << static_cast<int64_t>(r.overfit_steps[i]) << "   " << fmt(r.overfit_train[i], 4) << "  "
        << fmt(r.overfit_val[i], 4) << "\n";
  out << tr(out, "val is lowest at step ", "验证损失在第 ") << static_cast<int64_t>(r.overfit_best_step)
      << tr(out, ": ", " 步最低：") << fmt(r.overfit_best_val, 4) << tr(out, "; at the end slice ", "；最后小段 ")
      << fmt(r.overfit_final_train, 4) << tr(out, ", val ", "，验证 ") << fmt(r.overfit_final_val, 4) << "\n";
  draw_gnuplot(
      out, "task_overfit.png",
      curves_plot("bigram table on a 2000-character slice", "step", "loss (nats per character)", r.overfit_steps,
                  {{"train (the slice)", r.overfit_train}, {"val", r.overfit_val}}, false, false));
  return r;
}

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_task() {
  return {"task", "The task: next-character prediction, cross-entropy, a bigram table trained and sampled",
          "任务：预测下一个字符、交叉熵、训练并采样一张二元语法表", printing(run_lesson_task),
          /*slow=*/true};
}

}  // namespace sf::lessons
