// Lesson 14: a GPT built up stage by stage on real text (Tiny Shakespeare, or the Tang poems),
// every stage trained with the same step budget from each of two seeds: bigram table, one causal
// self-attention head, several heads, plus the feed-forward layer, plus residual connections,
// plus LayerNorm, then N blocks; and then one block against N blocks on a budget four times as
// large, where depth pays. Each stage is made from the nn modules' public pieces (Embedding,
// MultiHeadAttention, FeedForward, LayerNorm, SelfAttentionBlock, Linear). Text: build_gpt.md.
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

#include "nn/sampling.h"
#include "autograd/errors.h"
#include "lessons/common/cost_common.h"
#include "lessons/lesson.h"
#include "lessons/build_gpt.h"
#include "lessons/common/diagrams.h"
#include "lessons/common/pictures.h"
#include "lessons/common/stage_model.h"
#include "nn/gpt.h"
#include "nn/init.h"
#include "optim/adam.h"
#include "optim/clip.h"
#include "optim/schedule.h"
#include "train/progress.h"

namespace sf::lessons {

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
    if (c.stage == Stage::one_head || c.stage == Stage::heads || c.stage == Stage::feed_forward ||
        c.stage == Stage::residual)
      register_module("attn", attn.emplace(attention_of(c)));
    if (c.stage == Stage::feed_forward || c.stage == Stage::residual)
      register_module("mlp", mlp.emplace(C, 4 * C, Activation::gelu, /*bias=*/false));
    if (c.stage == Stage::layernorm || c.stage == Stage::blocks) {
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
  causal.causal = true;  // a character sees only the ones before it
  if (config_.stage == Stage::residual) {
    x = x + attn->forward(x, causal);  // the input kept beside what attention gathered
    x = x + mlp->forward(x);
  } else {
    if (attn) x = attn->forward(x, causal);  // (B, T, C): replaces x
    if (mlp) x = mlp->forward(x);            // (B, T, C)
  }
  for (size_t i = 0; i < h.size(); ++i) x = h[i].forward(x, causal);  // (B, T, C)
  if (ln_f) x = ln_f->forward(x);
  return lm_head->forward(x);  // (B, T, V)
}
// [/excerpt]

static const char* stage_title(Stage s, Lang lang) {
  static const char* en[] = {"bigram table", "one attention head", "four heads", "+ feed-forward",
                             "+ residual",   "+ LayerNorm",        "N blocks"};
  static const char* zh[] = {"二元语法表", "一个注意力头", "四个头", "+ 前馈网络", "+ 残差", "+ 层归一化", "N 个块"};
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

// The seeds' values, separated by sep (", " in English, "，" in Chinese).
static std::string seed_list(const std::vector<double>& per_seed, int decimals, const char* sep) {
  std::string s;
  for (size_t i = 0; i < per_seed.size(); ++i) s += (i ? sep : "") + fmt(per_seed[i], decimals);
  return s;
}

// "+0.03", "-0.41", "0.00": a difference with its sign (a rounded zero has none).
static std::string signed_fmt(double x, int decimals) {
  const double scale = std::pow(10.0, decimals);
  const double rounded = std::round(x * scale) / scale;
  if (rounded == 0) return fmt(0.0, decimals);
  return (rounded > 0 ? "+" : "") + fmt(rounded, decimals);
}

static double mean_of(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

// The gnuplot script of the picture: the val loss of every stage (mean over the seeds) as a bar.
static std::string stages_plot(const BuildGptResult& r) {
  std::ostringstream s;
  s << "set title 'val loss per stage, " << r.corpus << ", mean of " << r.val_loss_per_seed[0].size()
    << " seeds' noenhanced\nset ylabel 'val loss (nats/char)'\n"
    << "set grid ytics\nset style fill solid 0.6\nset boxwidth 0.6\nset xtics rotate by -20 noenhanced\n"
    << "set yrange [0:*]\n$d << EOD\n";
  for (size_t i = 0; i < r.val_loss.size(); ++i)
    s << i << " " << r.val_loss[i] << " \"" << stage_title(static_cast<Stage>(i), Lang::en) << "\"\n";
  s << "EOD\nplot $d using 1:2:xtic(3) with boxes lc rgb '#4271ae' notitle, "
    << "$d using 1:2:(sprintf('%.2f', $2)) with labels offset 0,1 notitle\n";
  return s.str();
}

// Training-loss curves (one point per bin of steps) against the step at the end of each bin.
static std::string loss_curves_plot(const std::string& title, const std::vector<std::string>& names,
                                    const std::vector<std::vector<double>>& curves, int64_t bin) {
  std::vector<double> x;
  for (size_t i = 0; i < curves[0].size(); ++i) x.push_back(static_cast<double>((static_cast<int64_t>(i) + 1) * bin));
  std::vector<Curve> c;
  for (size_t i = 0; i < curves.size(); ++i) c.push_back({names[i], curves[i]});
  return curves_plot(title, "step", "train loss (mean of each " + std::to_string(bin) + " steps and the seeds)", x, c,
                     false, false);
}

// Seconds of one training step (forward, backward, clipping and the AdamW update) of each stage's
// model, timed on a throwaway copy before training, so the progress bar's ETA weighs each stage
// by its cost.
static std::vector<double> stage_step_seconds(StageConfig cfg, const StageData& d, const BuildGptOptions& opt) {
  std::vector<double> seconds;
  data::RandomWindows batches(d.train, opt.block_size, opt.batch_size, opt.seeds[0]);
  data::LmBatch batch = batches.next();
  for (int s = 0; s < kStages; ++s) {
    cfg.stage = static_cast<Stage>(s);
    StageModel model(cfg);
    AdamW optimizer(model.named_parameters(), AdamOptions{});
    double best = 1e30;
    for (int repeat = 0; repeat < 3; ++repeat) {  // the first call also allocates: keep the fastest
      auto t0 = std::chrono::steady_clock::now();
      optimizer.zero_grad();
      model.loss(batch.inputs, batch.targets).backward();
      clip_grad_norm(model.named_parameters(), 1.0);
      optimizer.step();
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    seconds.push_back(best);
  }
  return seconds;
}

// One model trained from one seed: its val loss, its training-loss curve, and (when asked) a sample.
struct StageRun {
  int64_t params = 0;
  double val_loss = 0;
  std::vector<double> curve;  // mean train loss of each bin of steps
  std::string sample;
};

static StageRun train_stage(StageConfig cfg, int64_t steps, uint64_t seed, const BuildGptOptions& opt,
                            const StageData& d, Progress& progress, int64_t first_step, bool want_sample) {
  cfg.seed = seed;
  StageModel model(cfg);
  StageRun run;
  const int64_t bin = std::max<int64_t>(1, steps / 30);
  double bin_sum = 0;
  // [excerpt: train]
  AdamOptions adam;
  adam.lr = opt.lr;
  adam.beta2 = 0.99;
  adam.weight_decay = 0.1;
  AdamW optimizer(model.named_parameters(), adam);
  ScheduleOptions schedule{ScheduleKind::cosine, opt.lr, opt.lr / 10, steps / 10, steps};
  data::RandomWindows batches(d.train, opt.block_size, opt.batch_size, seed);
  for (int64_t step = 0; step < steps; ++step) {
    optimizer.set_lr(lr_at(schedule, step));
    data::LmBatch batch = batches.next();  // (B, T) inputs and targets
    optimizer.zero_grad();
    Tensor loss = model.loss(batch.inputs, batch.targets);  // mean cross-entropy
    loss.backward();
    double norm = clip_grad_norm(model.named_parameters(), 1.0);
    optimizer.step();
    // [/excerpt]
    bin_sum += loss.item();
    if ((step + 1) % bin == 0) run.curve.push_back(bin_sum / static_cast<double>(bin)), bin_sum = 0;
    double tokens = static_cast<double>((first_step + step + 1) * opt.batch_size * opt.block_size);
    progress.update({first_step + step + 1, loss.item(), optimizer.lr(), norm, tokens / progress.elapsed(), 0});
  }
  run.params = model.num_parameters();
  run.val_loss = val_loss(model, d.val, opt.block_size, opt.val_batches);
  if (want_sample) run.sample = sample(model, *d.tokenizer, opt.sample_chars, seed);
  return run;
}

// The element-wise mean of equally long curves.
static std::vector<double> mean_curve(const std::vector<std::vector<double>>& curves) {
  std::vector<double> mean(curves[0].size(), 0.0);
  for (const auto& c : curves)
    for (size_t i = 0; i < mean.size(); ++i) mean[i] += c[i] / static_cast<double>(curves.size());
  return mean;
}

// Trains the seven stages from every seed, then the depth runs (progress on stderr). A second
// call with the same options in one process (lesson_docs prints the lesson in two languages)
// returns the first call's result.
static const BuildGptResult& train_stages(const BuildGptOptions& opt) {
  static std::map<std::string, BuildGptResult> done;
  if (opt.seeds.empty()) throw ConfigError("lesson build-gpt: at least one seed is needed");
  std::ostringstream key;
  key << opt.corpus << " " << opt.steps << " " << opt.batch_size << " " << opt.block_size << " " << opt.n_embd << " "
      << opt.n_head << " " << opt.n_layer << " " << opt.lr << " " << opt.depth_factor << " " << opt.sample_chars << " "
      << opt.val_batches;
  for (uint64_t seed : opt.seeds) key << " " << seed;
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
  const int64_t n_seeds = static_cast<int64_t>(opt.seeds.size());
  // The work in segments of opt.steps: every stage from every seed, then the two depth models.
  const std::vector<double> cost = stage_step_seconds(cfg, d, opt);
  std::vector<double> segments;
  for (int s = 0; s < kStages; ++s)
    for (int64_t i = 0; i < n_seeds; ++i) segments.push_back(cost[static_cast<size_t>(s)]);
  for (Stage s : {Stage::layernorm, Stage::blocks})
    for (int64_t i = 0; i < n_seeds * opt.depth_factor; ++i) segments.push_back(cost[static_cast<size_t>(s)]);
  Progress progress(static_cast<int64_t>(segments.size()) * opt.steps, opt.steps, std::cerr,
                    ::isatty(STDERR_FILENO) == 1);
  progress.set_segment_costs(segments, opt.steps);
  int64_t done_steps = 0;
  for (int s = 0; s < kStages; ++s) {
    cfg.stage = static_cast<Stage>(s);
    std::vector<double> losses;
    std::vector<std::vector<double>> curves;
    for (int64_t i = 0; i < n_seeds; ++i) {
      StageRun run =
          train_stage(cfg, opt.steps, opt.seeds[static_cast<size_t>(i)], opt, d, progress, done_steps, i == 0);
      done_steps += opt.steps;
      losses.push_back(run.val_loss);
      curves.push_back(run.curve);
      if (i == 0) r.params.push_back(run.params), r.samples.push_back(run.sample);
    }
    r.formula.push_back(stage_parameter_formula(cfg));
    r.formula_text.push_back(stage_formula_text(cfg));
    r.val_loss.push_back(mean_of(losses));
    r.val_loss_per_seed.push_back(losses);
    r.curves.push_back(mean_curve(curves));
  }
  if (opt.depth_factor > 0) {
    for (Stage s : {Stage::layernorm, Stage::blocks}) {
      cfg.stage = s;
      std::vector<double> losses;
      std::vector<std::vector<double>> curves;
      for (int64_t i = 0; i < n_seeds; ++i) {
        const bool deep_first = s == Stage::blocks && i == 0;
        StageRun run = train_stage(cfg, opt.steps * opt.depth_factor, opt.seeds[static_cast<size_t>(i)], opt, d,
                                   progress, done_steps, deep_first);
        done_steps += opt.steps * opt.depth_factor;
        losses.push_back(run.val_loss);
        curves.push_back(run.curve);
        if (i == 0) r.depth_params.push_back(run.params);
        if (deep_first) r.depth_sample = run.sample;
      }
      r.depth_layers.push_back(s == Stage::blocks ? opt.n_layer : 1);
      r.depth_val_loss.push_back(mean_of(losses));
      r.depth_val_loss_per_seed.push_back(losses);
      r.depth_curves.push_back(mean_curve(curves));
    }
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
  const std::string suffix = opt.corpus == "tang" ? "_tang" : "";
  std::string seeds;
  for (size_t i = 0; i < opt.seeds.size(); ++i) seeds += (i ? tr(out, ", ", "，") : "") + std::to_string(opt.seeds[i]);
  heading(out, 1, "The text and the budget", "文本与训练预算");
  out << tr(out, "corpus: ", "语料：") << r.corpus << "\n"
      << tr(out, "characters in the vocabulary V = ", "词表中的字符数 V = ") << r.vocab_size << "\n"
      << tr(out, "train / val characters: ", "训练 / 验证字符数：") << r.train_chars << " / " << r.val_chars << "\n"
      << tr(out, "every stage: ", "每个阶段：") << opt.steps << tr(out, " steps of ", " 步，每步 ") << opt.batch_size
      << " x " << opt.block_size << tr(out, " characters, AdamW lr ", " 个字符，AdamW 学习率 ") << fmt_sci(opt.lr, 0)
      << tr(out, " (cosine to a tenth)\nsizes: C = ", "（余弦衰减到十分之一）\n尺寸：C = ") << opt.n_embd
      << tr(out, ", H = ", "，H = ") << opt.n_head << tr(out, ", N = ", "，N = ") << opt.n_layer << "\n"
      << tr(out, "seeds (initial weights and batches): ", "种子（初始权重和批次）：") << seeds
      << tr(out, "; a val loss below is their mean, each seed's in brackets\n",
            "；下面的验证损失是各种子的平均，括号里是每个种子的值\n")
      << tr(out, "a model that knows nothing scores ln V = ", "什么都不懂的模型，损失是 ln V = ")
      << fmt(std::log(static_cast<double>(r.vocab_size)), 2) << "\n";
  for (int s = 0; s < kStages; ++s) {
    const Stage stage = static_cast<Stage>(s);
    const size_t i = static_cast<size_t>(s);
    heading(out, 2 + s, (std::string("Stage ") + std::to_string(s + 1) + ": " + stage_title(stage, Lang::en)).c_str(),
            (std::string("阶段 ") + std::to_string(s + 1) + "：" + stage_title(stage, Lang::zh)).c_str());
    out << stage_explanation(stage, lang) << "\n"
        << tr(out, "parameters: ", "参数：") << r.params[i] << " = " << r.formula_text[i] << "\n"
        << tr(out, "val loss: ", "验证损失：") << fmt(r.val_loss[i], 2) << tr(out, " (", "（")
        << seed_list(r.val_loss_per_seed[i], 2, tr(out, ", ", "，")) << tr(out, ")\n", "）\n")
        << tr(out, "sample (seed ", "样本（种子 ") << opt.seeds[0] << tr(out, "):", "）：") << "\n"
        << r.samples[i] << "\n";
  }
  out << tr(out, "sf::GPT with the same sizes (untied head, no biases) has ",
            "同样尺寸的 sf::GPT（输出层不共享权重、无偏置）有 ")
      << r.gpt_params << tr(out, " parameters\n", " 个参数\n");

  heading(out, 2 + kStages, "Val loss, stage by stage", "逐阶段的验证损失");
  for (int s = 0; s < kStages; ++s) {
    const size_t i = static_cast<size_t>(s);
    out << "  " << s + 1 << ". " << stage_title(static_cast<Stage>(s), lang) << tr(out, ": ", "：")
        << fmt(r.val_loss[i], 2) << tr(out, " (", "（") << seed_list(r.val_loss_per_seed[i], 2, tr(out, ", ", "，"))
        << tr(out, "), ", "），") << r.params[i] << tr(out, " parameters\n", " 个参数\n");
  }
  out << tr(out, "change from the stage before, seed by seed (negative: better):\n",
            "相对前一阶段的变化，逐个种子（负数：更好）：\n");
  for (size_t s = 1; s < static_cast<size_t>(kStages); ++s) {
    out << "  " << s + 1 << ". " << stage_title(static_cast<Stage>(s), lang) << tr(out, ":", "：");
    for (size_t k = 0; k < opt.seeds.size(); ++k)
      out << (k == 0 ? tr(out, " ", "") : " ")
          << signed_fmt(r.val_loss_per_seed[s][k] - r.val_loss_per_seed[s - 1][k], 2);
    out << "\n";
  }
  draw_gnuplot(out, "build_gpt_stages" + suffix + ".png", stages_plot(r));
  std::vector<std::string> names;
  for (int s = 0; s < kStages; ++s)
    names.push_back(std::to_string(s + 1) + ". " + stage_title(static_cast<Stage>(s), Lang::en));
  draw_gnuplot(
      out, "build_gpt_curves" + suffix + ".png",
      loss_curves_plot("training loss per stage, " + r.corpus, names, r.curves, std::max<int64_t>(1, opt.steps / 30)));
  if (suffix.empty()) draw_gpt_stack(out, "gpt_stack.png", r.vocab_size);  // the default model and GPT-2 small

  if (opt.depth_factor > 0) {
    const int64_t steps = opt.steps * opt.depth_factor;
    heading(out, 3 + kStages, "Depth on a larger budget", "更大的预算下的深度");
    out << tr(out, "one block and ", "一个块和 ") << opt.n_layer << tr(out, " blocks, each trained ", " 个块，各训练 ")
        << steps << tr(out, " steps (", " 步（") << opt.depth_factor
        << tr(out, " x the stages' budget) of ", " 倍于各阶段的预算），每步 ") << opt.batch_size << " x "
        << opt.block_size << tr(out, " characters: ", " 个字符：")
        << fmt(static_cast<double>(steps * opt.batch_size * opt.block_size) / static_cast<double>(r.train_chars), 1)
        << tr(out, " passes over the training text\n", " 遍训练文本\n");
    for (size_t m = 0; m < r.depth_layers.size(); ++m)
      out << "  " << r.depth_layers[m] << tr(out, r.depth_layers[m] == 1 ? " block: " : " blocks: ", " 个块：")
          << r.depth_params[m] << tr(out, " parameters, val loss ", " 个参数，验证损失 ") << fmt(r.depth_val_loss[m], 2)
          << tr(out, " (", "（") << seed_list(r.depth_val_loss_per_seed[m], 2, tr(out, ", ", "，"))
          << tr(out, ")\n", "）\n");
    out << "  " << opt.n_layer << tr(out, " blocks against one, seed by seed:", " 个块减一个块，逐个种子：");
    for (size_t k = 0; k < opt.seeds.size(); ++k)
      out << (k == 0 ? tr(out, " ", "") : " ")
          << signed_fmt(r.depth_val_loss_per_seed[1][k] - r.depth_val_loss_per_seed[0][k], 2);
    out << "\n"
        << tr(out, "sample of the ", "") << opt.n_layer << tr(out, "-block model (seed ", " 个块的模型的样本（种子 ")
        << opt.seeds[0] << tr(out, "):", "）：") << "\n"
        << r.depth_sample << "\n";
    const std::vector<std::string> depth_names = {"1 block", std::to_string(opt.n_layer) + " blocks"};
    draw_gnuplot(out, "build_gpt_depth" + suffix + ".png",
                 loss_curves_plot("one block against " + std::to_string(opt.n_layer) + " blocks, " + r.corpus,
                                  depth_names, r.depth_curves, std::max<int64_t>(1, steps / 30)));
  }
  return r;
}

BuildGptResult run_lesson_build_gpt(std::ostream& out) {
  BuildGptOptions opt;
  if (const char* corpus = std::getenv("SF_LESSON_CORPUS"); corpus && *corpus) opt.corpus = corpus;
  return run_lesson_build_gpt(out, opt);
}

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_build_gpt() {
  return {"build-gpt", "Let's build a GPT: bigram, heads, FFN, residual, LayerNorm, N blocks, depth; two seeds",
          "一步步搭出 GPT：二元语法表、多个头、前馈网络、残差、层归一化、N 个块、深度；两个种子",
          printing([](std::ostream& out) { return run_lesson_build_gpt(out); }),
          /*slow=*/true};
}

}  // namespace sf::lessons
