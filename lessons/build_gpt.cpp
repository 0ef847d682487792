// Lesson 14: a GPT built up stage by stage on real text (Tiny Shakespeare, or the Tang poems),
// every stage trained with the same step budget: bigram table, one causal self-attention head,
// several heads, plus the feed-forward layer, plus residual connections and LayerNorm, then N
// blocks. Each stage is made from the nn modules' public pieces (Embedding, MultiHeadAttention,
// FeedForward, LayerNorm, SelfAttentionBlock, Linear). Text: build_gpt.md.
//
// Legend: B batch, T time, C channels, H heads, N blocks, V vocab.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "experiments/progress.h"
#include "nn/sampling.h"
#include "lessons/lesson.h"
#include "lessons/build_gpt.h"
#include "lessons/common/pictures.h"
#include "lessons/common/stage_model.h"
#include "nn/gpt.h"
#include "nn/init.h"
#include "optim/adam.h"
#include "optim/clip.h"
#include "optim/schedule.h"

namespace sf::lessons {

constexpr int kStages = 6;

static AttentionConfig attention_of(const StageConfig& c) {
  AttentionConfig a;
  a.d_model = c.n_embd;
  a.n_head = c.stage == Stage::one_head ? 1 : c.n_head;
  a.bias = false;
  return a;
}

// [excerpt: stages]
StageModel::StageModel(const StageConfig& c) : Module("StageModel"), config_(c) {
  const int64_t V = c.vocab_size, T = c.block_size, C = c.n_embd;
  if (c.stage == Stage::bigram) {  // the next character's logits are one row of a (V, V) table
    register_module("wte", wte.emplace(V, V));
  } else {
    register_module("wte", wte.emplace(V, C));  // what the character is
    register_module("wpe", wpe.emplace(T, C));  // where it stands
    if (c.stage == Stage::one_head || c.stage == Stage::heads || c.stage == Stage::feed_forward)
      register_module("attn", attn.emplace(attention_of(c)));
    if (c.stage == Stage::feed_forward) register_module("mlp", mlp.emplace(C, 4 * C, Activation::gelu, /*bias=*/false));
    if (c.stage == Stage::residual || c.stage == Stage::blocks) {
      BlockConfig b;  // x = x + attn(ln_1(x)); x = x + mlp(ln_2(x))
      b.d_model = C;
      b.n_head = c.n_head;
      b.bias = false;
      register_module("h", h);
      for (int64_t i = 0; i < (c.stage == Stage::blocks ? c.n_layer : 1); ++i)
        h.append(std::make_unique<SelfAttentionBlock>(b));
      register_module("ln_f", ln_f.emplace(C, 1e-5, /*bias=*/false));
    }
    register_module("lm_head", lm_head.emplace(C, V, /*bias=*/false));
  }
  Generator gen(c.seed);
  init_parameters(*this, InitScheme::gpt2, std::max<int64_t>(1, static_cast<int64_t>(h.size())), gen);
  flatten_parameters();
}

Tensor StageModel::forward(const IntTensor& idx) {
  if (config_.stage == Stage::bigram) return wte->forward(idx);  // (B, T, V)
  const int64_t T = idx.shape[1];
  IntTensor pos({T}, std::vector<int32_t>(static_cast<size_t>(T)));
  for (int64_t t = 0; t < T; ++t) pos[t] = static_cast<int32_t>(t);
  Tensor x = wte->forward(idx) + wpe->forward(pos);  // (B, T, C) + (T, C)
  AttentionMask causal;
  causal.causal = true;                                               // a character sees only the ones before it
  if (attn) x = attn->forward(x, causal);                             // (B, T, C)
  if (mlp) x = mlp->forward(x);                                       // (B, T, C)
  for (size_t i = 0; i < h.size(); ++i) x = h[i].forward(x, causal);  // (B, T, C)
  if (ln_f) x = ln_f->forward(x);
  return lm_head->forward(x);  // (B, T, V)
}
// [/excerpt]

static const char* stage_title(Stage s, Lang lang) {
  static const char* en[] = {"bigram table",   "one attention head",       "four heads",
                             "+ feed-forward", "+ residual and LayerNorm", "N blocks"};
  static const char* zh[] = {"二元组表", "一个注意力头", "四个头", "+ 前馈层", "+ 残差与 LayerNorm", "N 个块"};
  return (lang == Lang::zh ? zh : en)[static_cast<int>(s)];
}

// Mean cross-entropy over every full window of the val split, in order (the same for every stage).
static double val_loss(StageModel& model, const data::Tokens& val, int64_t T, int64_t max_batches) {
  NoGradGuard no_grad;
  model.eval();
  data::SequentialWindows windows(val, T, 64);
  double total = 0;
  int64_t count = 0;
  const int64_t n_batches = max_batches > 0 ? std::min(max_batches, windows.num_batches()) : windows.num_batches();
  for (int64_t i = 0; i < n_batches; ++i) {
    data::LmBatch b = windows.batch(i);
    int64_t n = static_cast<int64_t>(b.targets.data.size());
    total += model.loss(b.inputs, b.targets).item() * static_cast<double>(n);
    count += n;
  }
  model.train();
  return total / static_cast<double>(count);
}

// `length` characters sampled after a newline at temperature 1 (seeded: the same every run).
static std::string sample(StageModel& model, const data::Tokenizer& tok, int64_t length, uint64_t seed) {
  NoGradGuard no_grad;
  model.eval();
  Generator gen(seed);
  SampleOptions o;
  std::vector<int32_t> ids = tok.encode("\n");
  const int64_t T = model.config().block_size, V = tok.vocab_size();
  for (int64_t i = 0; i < length; ++i) {
    int64_t start = std::max<int64_t>(0, static_cast<int64_t>(ids.size()) - T);
    std::vector<int32_t> context(ids.begin() + start, ids.end());
    IntTensor idx({1, static_cast<int64_t>(context.size())}, context);
    std::vector<double> logits = model.forward(idx).to_vector();  // (1, t, V)
    std::vector<float> last(logits.end() - V, logits.end());
    ids.push_back(sample_from_logits(last.data(), V, o, gen));
  }
  model.train();
  return tok.decode(std::vector<int32_t>(ids.begin() + 1, ids.end()));
}

// The gnuplot script of the picture: the val loss of every stage as a bar.
static std::string stages_plot(const BuildGptResult& r) {
  std::ostringstream s;
  s << "set title 'val loss per stage, " << r.corpus << "' noenhanced\nset ylabel 'val loss (nats/char)'\n"
    << "set grid ytics\nset style fill solid 0.6\nset boxwidth 0.6\nset xtics rotate by -20 noenhanced\n"
    << "set yrange [0:*]\n$d << EOD\n";
  for (size_t i = 0; i < r.val_loss.size(); ++i)
    s << i << " " << r.val_loss[i] << " \"" << stage_title(static_cast<Stage>(i), Lang::en) << "\"\n";
  s << "EOD\nplot $d using 1:2:xtic(3) with boxes lc rgb '#4271ae' notitle, "
    << "$d using 1:2:(sprintf('%.2f', $2)) with labels offset 0,1 notitle\n";
  return s.str();
}

// Seconds of one training step (forward + backward) of each stage's model, timed on a
// throwaway copy before training, so the progress bar's ETA weighs each stage by its cost.
static std::vector<double> stage_step_seconds(StageConfig cfg, const StageData& d, const BuildGptOptions& opt) {
  std::vector<double> seconds;
  data::RandomWindows batches(d.train, opt.block_size, opt.batch_size, opt.seed);
  data::LmBatch batch = batches.next();
  for (int s = 0; s < kStages; ++s) {
    cfg.stage = static_cast<Stage>(s);
    StageModel model(cfg);
    double best = 1e30;
    for (int repeat = 0; repeat < 2; ++repeat) {  // the first call also allocates: keep the faster
      auto t0 = std::chrono::steady_clock::now();
      model.loss(batch.inputs, batch.targets).backward();
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    seconds.push_back(best);
  }
  return seconds;
}

// Trains the six stages (progress on stderr). A second call with the same options in one process
// (lesson_docs prints the lesson in two languages) returns the first call's result.
static const BuildGptResult& train_stages(const BuildGptOptions& opt) {
  static std::map<std::string, BuildGptResult> done;
  std::ostringstream key;
  key << opt.corpus << " " << opt.steps << " " << opt.batch_size << " " << opt.block_size << " " << opt.n_embd << " "
      << opt.n_head << " " << opt.n_layer << " " << opt.lr << " " << opt.sample_chars << " " << opt.val_batches << " "
      << opt.seed;
  if (auto it = done.find(key.str()); it != done.end()) return it->second;
  BuildGptResult r;
  StageData d = load_stage_data(opt.corpus);
  r.corpus = d.description;
  r.vocab_size = d.tokenizer->vocab_size();
  r.train_chars = static_cast<int64_t>(d.train->size());
  r.val_chars = static_cast<int64_t>(d.val->size());
  StageConfig cfg;
  cfg.vocab_size = r.vocab_size;
  cfg.block_size = opt.block_size;
  cfg.n_embd = opt.n_embd;
  cfg.n_head = opt.n_head;
  cfg.n_layer = opt.n_layer;
  Progress progress(kStages * opt.steps, opt.steps, std::cerr, ::isatty(STDERR_FILENO) == 1);
  progress.set_segment_costs(stage_step_seconds(cfg, d, opt), opt.steps);  // later stages cost more
  for (int s = 0; s < kStages; ++s) {
    cfg.stage = static_cast<Stage>(s);
    StageModel model(cfg);
    // [excerpt: train]
    AdamOptions adam;
    adam.lr = opt.lr;
    adam.beta2 = 0.99;
    adam.weight_decay = 0.1;
    AdamW optimizer(model.named_parameters(), adam);
    ScheduleOptions schedule{ScheduleKind::cosine, opt.lr, opt.lr / 10, opt.steps / 10, opt.steps};
    data::RandomWindows batches(d.train, opt.block_size, opt.batch_size, opt.seed);
    for (int64_t step = 0; step < opt.steps; ++step) {
      optimizer.set_lr(lr_at(schedule, step));
      data::LmBatch batch = batches.next();  // (B, T) inputs and targets
      optimizer.zero_grad();
      Tensor loss = model.loss(batch.inputs, batch.targets);  // mean cross-entropy
      loss.backward();
      double norm = clip_grad_norm(model.named_parameters(), 1.0);
      optimizer.step();
      double tokens = static_cast<double>((s * opt.steps + step + 1) * opt.batch_size * opt.block_size);
      progress.update({s * opt.steps + step + 1, loss.item(), optimizer.lr(), norm, tokens / progress.elapsed(), 0});
    }
    // [/excerpt]
    r.params.push_back(model.num_parameters());
    r.formula.push_back(stage_parameter_formula(cfg));
    r.formula_text.push_back(stage_formula_text(cfg));
    r.val_loss.push_back(val_loss(model, d.val, opt.block_size, opt.val_batches));
    r.samples.push_back(sample(model, *d.tokenizer, opt.sample_chars, opt.seed));
  }
  progress.finish();
  GPTConfig g;  // the last stage is the GPT class's own layout
  g.vocab_size = cfg.vocab_size, g.block_size = cfg.block_size, g.n_layer = cfg.n_layer;
  g.n_head = cfg.n_head, g.n_embd = cfg.n_embd, g.bias = false, g.tied_head = false;
  r.gpt_params = GPT(g).num_parameters();
  return done[key.str()] = r;
}

BuildGptResult run_lesson_build_gpt(std::ostream& out, const BuildGptOptions& opt) {
  const Lang lang = language(out);
  const BuildGptResult& r = train_stages(opt);
  heading(out, 1, "The text and the budget", "文本与训练预算");
  out << tr(out, "corpus: ", "语料：") << r.corpus << "\n"
      << tr(out, "characters in the vocabulary V = ", "词表中的字符数 V = ") << r.vocab_size << "\n"
      << tr(out, "train / val characters: ", "训练 / 验证字符数：") << r.train_chars << " / " << r.val_chars << "\n"
      << tr(out, "every stage: ", "每个阶段：") << opt.steps << tr(out, " steps of ", " 步，每步 ") << opt.batch_size
      << " x " << opt.block_size << tr(out, " characters, AdamW lr ", " 个字符，AdamW 学习率 ") << fmt_sci(opt.lr, 0)
      << tr(out, " (cosine to a tenth)\nsizes: C = ", "（余弦衰减到十分之一）\n尺寸：C = ") << opt.n_embd
      << ", H = " << opt.n_head << ", N = " << opt.n_layer << "\n"
      << tr(out, "a model that knows nothing scores ln V = ", "什么都不懂的模型得分为 ln V = ")
      << fmt(std::log(static_cast<double>(r.vocab_size)), 2) << "\n";
  for (int s = 0; s < kStages; ++s) {
    const Stage stage = static_cast<Stage>(s);
    const size_t i = static_cast<size_t>(s);
    heading(out, 2 + s, (std::string("Stage ") + std::to_string(s + 1) + ": " + stage_title(stage, Lang::en)).c_str(),
            (std::string("阶段 ") + std::to_string(s + 1) + "：" + stage_title(stage, Lang::zh)).c_str());
    out << stage_explanation(stage, lang) << "\n"
        << tr(out, "parameters: ", "参数：") << r.params[i] << " = " << r.formula_text[i] << "\n"
        << tr(out, "val loss: ", "验证损失：") << fmt(r.val_loss[i], 2) << "\n"
        << tr(out, "sample:", "样本：") << "\n"
        << r.samples[i] << "\n";
  }
  out << tr(out, "sf::GPT with the same sizes (untied head, no biases) has ",
            "同样尺寸的 sf::GPT（输出层不共享权重、无偏置）有 ")
      << r.gpt_params << tr(out, " parameters\n", " 个参数\n");

  heading(out, 8, "Val loss, stage by stage", "逐阶段的验证损失");
  for (int s = 0; s < kStages; ++s)
    out << "  " << s + 1 << ". " << stage_title(static_cast<Stage>(s), lang) << ": "
        << fmt(r.val_loss[static_cast<size_t>(s)], 2) << "  (" << r.params[static_cast<size_t>(s)]
        << tr(out, " parameters)\n", " 个参数）\n");
  draw_gnuplot(out, opt.corpus == "tang" ? "14_build_gpt_tang.png" : "14_build_gpt.png", stages_plot(r));
  return r;
}

BuildGptResult run_lesson_build_gpt(std::ostream& out) {
  BuildGptOptions opt;
  if (const char* corpus = std::getenv("SF_LESSON_CORPUS"); corpus && *corpus) opt.corpus = corpus;
  return run_lesson_build_gpt(out, opt);
}

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_build_gpt() {
  return {"build-gpt", "Let's build a GPT: bigram, one head, heads, FFN, residual+LN, N blocks, trained",
          "一步一步搭出 GPT：二元组表、一个头、多个头、前馈、残差与 LN、N 个块，逐个训练",
          printing([](std::ostream& out) { return run_lesson_build_gpt(out); }),
          /*slow=*/true};
}

}  // namespace sf::lessons
