// Lesson 26, steps 8-10 (the model and its training loop are in errata.cpp, whose excerpts
// the text shows): article 004's mask snippet `scores.masked_fill(mask == 0, -inf)` throws
// its result away, so the causal mask is never applied. Two small GPTs train on Tiny
// Shakespeare with the same weights, batches and optimizer: one with the causal mask, one with
// exactly that bug. The buggy one sees each position's next character while it trains.
// Text: errata.md, zh/errata.md.
#include <cmath>
#include <iostream>
#include <ostream>
#include <set>

#include "autograd/ops.h"
#include "data/char_tokenizer.h"
#include "data/file_io.h"
#include "data/lm_batches.h"
#include "data/tiny_shakespeare.h"
#include "lessons/errata.h"
#include "lessons/lesson.h"
#include "nn/gpt.h"

namespace sf::lessons {

namespace {

// The budget: small enough for the tests (a few seconds per model), long enough for the leak.
constexpr int64_t kSteps = 400, kBatch = 16, kBlock = 32, kEvalWindows = 16;

GPTConfig model_config(int64_t vocab) {
  GPTConfig c;
  c.vocab_size = vocab;
  c.block_size = kBlock;
  c.n_layer = 1;
  c.n_head = 4;
  c.n_embd = 64;
  c.seed = 17;
  return c;
}

Tensor logits_of(GPT& model, bool leaky, const IntTensor& idx) {
  return leaky ? errata::leaky_forward(model, idx) : model.forward(idx);
}

// Mean cross-entropy of the prediction of each window's last target from every prefix: the
// model predicts token t + 1 from tokens 0..t only, as when it generates.
double generation_loss(GPT& model, bool leaky, const std::vector<int32_t>& tokens) {
  NoGradGuard no_grad;
  double total = 0;
  int64_t count = 0;
  for (int64_t w = 0; w < kEvalWindows; ++w) {
    int64_t start = w * (kBlock + 1);
    for (int64_t t = 1; t <= kBlock; ++t) {
      std::vector<int32_t> prefix(tokens.begin() + start, tokens.begin() + start + t);
      IntTensor idx({1, t}, prefix);
      Tensor logits = logits_of(model, leaky, idx);  // (1, t, V)
      Tensor last = slice(logits, 1, t - 1, t);      // (1, 1, V)
      IntTensor target({1, 1}, {tokens[static_cast<size_t>(start + t)]});
      total += cross_entropy(last, target).item();
      ++count;
    }
  }
  return total / static_cast<double>(count);
}

// Mean cross-entropy over the same windows, each scored in one forward as in training.
double teacher_forced_loss(GPT& model, bool leaky, const std::vector<int32_t>& tokens) {
  NoGradGuard no_grad;
  double total = 0;
  for (int64_t w = 0; w < kEvalWindows; ++w) {
    data::LmBatch b{IntTensor({1, kBlock}, std::vector<int32_t>(kBlock)),
                    IntTensor({1, kBlock}, std::vector<int32_t>(kBlock))};
    data::fill_row(tokens, w * (kBlock + 1), kBlock, 0, b);
    total += cross_entropy(logits_of(model, leaky, b.inputs), b.targets).item();
  }
  return total / kEvalWindows;
}

// n characters after `prompt`, drawn from softmax(logits / 0.8), re-running the whole (cropped)
// context for every token, as a generate() without a KV cache does.
std::string sample(GPT& model, bool leaky, const data::CharTokenizer& tok, const std::string& prompt, int64_t n) {
  NoGradGuard no_grad;
  Generator gen(1234);
  std::vector<int32_t> ids = tok.encode(prompt);
  for (int64_t i = 0; i < n; ++i) {
    int64_t t = std::min<int64_t>(static_cast<int64_t>(ids.size()), kBlock);
    IntTensor idx({1, t}, std::vector<int32_t>(ids.end() - t, ids.end()));
    Tensor last = slice(logits_of(model, leaky, idx), 1, t - 1, t);       // (1, 1, V)
    std::vector<double> p = softmax(last * (1.0 / 0.8), -1).to_vector();  // (V)
    double u = gen.uniform(), acc = 0;
    size_t next = 0;
    while (next + 1 < p.size() && (acc += p[next]) <= u) ++next;
    ids.push_back(static_cast<int32_t>(next));
  }
  return tok.decode(std::vector<int32_t>(ids.begin() + static_cast<int64_t>(tok.encode(prompt).size()), ids.end()));
}

// The share of the sample's words (runs of letters) that occur as words in the corpus.
double known_word_share(const std::string& sample, const std::set<std::string>& words) {
  int64_t known = 0, total = 0;
  std::string w;
  for (size_t i = 0; i <= sample.size(); ++i) {
    if (i < sample.size() && std::isalpha(static_cast<unsigned char>(sample[i]))) {
      w += sample[i];
      continue;
    }
    if (!w.empty()) known += words.count(w), ++total;
    w.clear();
  }
  return total ? static_cast<double>(known) / static_cast<double>(total) : 0.0;
}

struct Trained {
  std::vector<double> losses;  // training loss at every step
  double train_tf = 0, val_tf = 0, val_gen = 0;
  std::string sample;
  double word_share = 0;
};

struct LeakRun {
  Trained correct, leaky;
  int64_t params = 0;
};

// Trains one model (progress on stderr) and measures it.
Trained train_one(bool leaky, const std::vector<int32_t>& train, const std::vector<int32_t>& val,
                  const data::CharTokenizer& tok, const std::set<std::string>& words, int64_t* params) {
  GPT model(model_config(tok.vocab_size()));
  *params = model.num_parameters();
  data::RandomWindows batches(std::make_shared<const std::vector<int32_t>>(train), kBlock, kBatch, 1717);
  Trained r;
  r.losses = errata::train(model, leaky, batches, kSteps);
  r.train_tf = teacher_forced_loss(model, leaky, train);
  r.val_tf = teacher_forced_loss(model, leaky, val);
  r.val_gen = generation_loss(model, leaky, val);
  r.sample = sample(model, leaky, tok, "ROMEO:\n", 200);
  r.word_share = known_word_share(r.sample, words);
  return r;
}

// Both runs, once per process: the lesson prints the same numbers in both languages, and
// training them again for the second one would only cost time.
const LeakRun& leak_run() {
  static const LeakRun run = [] {
    data::ShakespeareOptions o;
    o.cache_dir = data::default_cache_dir();
    o.download = false;
    std::string text = data::read_text_file(data::ensure_tiny_shakespeare(o));
    data::CharTokenizer tok = data::CharTokenizer::build(text);
    std::vector<int32_t> ids = tok.encode(text);
    size_t n_train = ids.size() * 9 / 10;
    std::vector<int32_t> train(ids.begin(), ids.begin() + static_cast<int64_t>(n_train));
    std::vector<int32_t> val(ids.begin() + static_cast<int64_t>(n_train), ids.end());
    std::set<std::string> words;
    std::string w;
    for (char c : text) {
      if (std::isalpha(static_cast<unsigned char>(c))) w += c;
      else if (!w.empty()) words.insert(w), w.clear();
    }
    LeakRun r;
    std::cerr << "lesson errata: training a GPT with the causal mask, then one without it (" << kSteps
              << " steps each)\n";
    r.correct = train_one(false, train, val, tok, words, &r.params);
    r.leaky = train_one(true, train, val, tok, words, &r.params);
    return r;
  }();
  return run;
}

}  // namespace

void errata_mask_training(std::ostream& out, ErrataResult& r) {
  const LeakRun& run = leak_run();
  heading(out, 8, "Training with that bug on Tiny Shakespeare", "带着这个错误在 Tiny Shakespeare 上训练");
  out << tr(out, "two GPTs, ", "两个 GPT，") << run.params
      << tr(out,
            " parameters each (1 layer, 4 heads, C = 64, T = 32), the same initial weights,\n"
            "batches and AdamW (lr 3e-3, 400 steps of 16 x 32 characters); one with the mask, one\n"
            "without. Losses after training are shown to one decimal: on another CPU the float\n"
            "sums round differently and they may differ in that digit.\n",
            " 个参数（1 层、4 个头、C = 64、T = 32），初始权重、批次和 AdamW（学习率 3e-3，400 步，\n"
            "每步 16 x 32 个字符）完全相同；一个有掩码，一个没有。训练后的损失只保留一位小数：换一种\n"
            "CPU，浮点求和的舍入不同，这一位可能不一样。\n");
  out << tr(out, "training loss    step 1   step 100  step 300  step 400\n",
            "训练损失         第 1 步  第 100 步 第 300 步 第 400 步\n");
  auto row = [&](const char* en, const char* zh, const Trained& t) {
    out << "  " << tr(out, en, zh);
    for (int64_t s : {0, 99, 299, 399}) out << (s ? "      " : "  ") << fmt(t.losses[static_cast<size_t>(s)], 1);
    out << "\n";
  };
  row("with the mask ", "有掩码        ", run.correct);
  row("without (004) ", "无掩码（004）", run.leaky);
  out << tr(out, "The first losses agree (ln 65 = ", "第一步的损失两者一致（ln 65 = ") << fmt(std::log(65.0), 2)
      << tr(out,
            ", a uniform guess); then the model without the mask\n"
            "falls far below: it reads each target from the next input position.\n",
            "，即均匀猜测）；之后没有掩码的模型远远低于\n"
            "另一个：它直接从下一个输入位置读出了答案。\n");

  heading(out, 9, "What the leak does when the model generates", "生成时，泄漏带来了什么");
  out << tr(out, "loss over 16 held-out windows of 32 characters   with the mask   without (004)\n",
            "在 16 段各 32 个字符的验证文本上的损失             有掩码          无掩码（004）\n");
  out << tr(out, "  scored as in training (one forward per window)   ",
            "  按训练时的方式（每段一次前向）                ")
      << fmt(run.correct.val_tf, 1) << "             " << fmt(run.leaky.val_tf, 1) << "\n"
      << tr(out, "  predicting from the prefix only, as generation    ",
            "  只看前缀来预测（生成时的情形）                ")
      << fmt(run.correct.val_gen, 1) << "             " << fmt(run.leaky.val_gen, 1) << "\n";
  out << tr(out,
            "With the mask, both ways of scoring agree: each position only ever saw its past.\n"
            "Without it, the low loss exists only while the answer is in the input; from a prefix\n"
            "alone, as in generation, the model does worse than ln 65, a uniform guess.\n",
            "有掩码时，两种算法结果一致：每个位置本来就只看得到过去。没有掩码时，低损失只在答案\n"
            "就摆在输入里的时候才有；像生成时那样只给前缀，模型还不如 ln 65 的均匀猜测。\n");

  heading(out, 10, "Samples (temperature 0.8, after \"ROMEO:\")", "样本（温度 0.8，接在“ROMEO:”之后）");
  out << tr(out, "with the mask:\n", "有掩码：\n") << run.correct.sample << "\n"
      << tr(out, "without (004):\n", "无掩码（004）：\n") << run.leaky.sample << "\n";
  out << tr(out, "share of the sampled words that are words of the corpus: ", "样本中的词属于语料词汇的比例：")
      << fmt(run.correct.word_share, 2) << tr(out, " with the mask, ", "（有掩码），") << fmt(run.leaky.word_share, 2)
      << tr(out, " without\n", "（无掩码）\n");

  r.leak_params = run.params;
  r.correct_losses = run.correct.losses, r.leaky_losses = run.leaky.losses;
  r.correct_train = run.correct.train_tf, r.leaky_train = run.leaky.train_tf;
  r.correct_val = run.correct.val_tf, r.leaky_val = run.leaky.val_tf;
  r.correct_generation = run.correct.val_gen, r.leaky_generation = run.leaky.val_gen;
  r.correct_word_share = run.correct.word_share, r.leaky_word_share = run.leaky.word_share;
}

}  // namespace sf::lessons
