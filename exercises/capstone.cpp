// capstone.cpp: the capstone run: check the pieces, train a character-level GPT on Tiny
// Shakespeare with the learner's train_step, report the val loss and sample with their generate.
#include "exercises/capstone.h"

#include <chrono>
#include <ctime>
#include <cstdio>
#include <memory>
#include <ostream>

#include "data/char_tokenizer.h"
#include "data/file_io.h"
#include "data/lm_batches.h"
#include "data/tiny_shakespeare.h"
#include "exercises/check/checker.h"
#include "exercises/exercise.h"

namespace sf::exercise {

// The exercises whose functions the capstone runs, in course order.
static const int kPieces[] = {3, 5, 6, 7, 10, 11, 12, 13, 14, 15, 16, 17, 19, 20, 21, 22, 23};

static std::string scientific(double x) {  // 7.11e-04
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2e", x);
  return buf;
}

static std::string fixed(double x, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

// Runs every piece's checks: names the first failing check (of the first piece that fails) and
// lists every piece still a stub. Returns whether all pass.
static bool pieces_pass(std::ostream& out, const LessonLabel& lesson_label) {
  std::vector<const Exercise*> missing;
  const Exercise* failed = nullptr;
  Report failed_report;
  for (int n : kPieces) {
    const Exercise& e = find_exercise(std::to_string(n));
    Report r = run_exercise(e);
    if (r.outcome() == Outcome::not_implemented) {
      missing.push_back(&e);
    } else if (r.outcome() == Outcome::failed && failed == nullptr) {
      failed = &e;
      failed_report = r;
    }
  }
  if (failed != nullptr) {
    const Exercise& e = *failed;
    out << tr("capstone: exercise ", "结业项目：练习 ") << e.number << tr(" (", "（") << title_of(e)
        << tr(", exercises/", "，exercises/") << e.file
        << tr(".cpp) does not pass its checks yet; the first that fails:\n",
              ".cpp）还没有通过它的检查；第一个失败的是：\n");
    const std::string ok = tr("ok    ", "通过  ");
    for (const std::string& line : failed_report.lines())
      if (line.rfind(ok, 0) != 0) out << "  " << line << "\n";
    out << tr("Fix it (scratchformer exercise check ", "改好它（scratchformer exercise check ") << e.number
        << tr(", or ./run.sh exercise ", "，或 ./run.sh exercise ") << e.number
        << tr("), then run the capstone again.\n", "），然后再运行结业项目。\n");
  }
  if (missing.empty()) return failed == nullptr;
  out << tr("capstone: the GPT is trained with your code only, and ", "结业项目：这个 GPT 只用你的代码训练，而还有 ")
      << missing.size() << tr(missing.size() == 1 ? " piece is" : " pieces are", " 块")
      << tr(" still a stub:\n", "仍是存根：\n");
  for (const Exercise* e : missing)
    out << tr("  missing: exercise ", "  缺少：练习 ") << e->number << " " << title_of(*e)
        << tr(" (exercises/", "（exercises/") << e->file << tr(".cpp), taught in ", ".cpp），讲授它的是")
        << lesson_label(e->lesson) << "\n";
  out << tr("Write them in this order (./run.sh exercise N checks one), then run the capstone again.\n",
            "按这个顺序写好它们（./run.sh exercise N 检查其中一个），然后再运行结业项目。\n");
  return false;
}

// The mean loss of `iters` random val batches, through the learner's forward, without gradients.
static double estimate_val(const GPT& model, const data::Tokens& val, int64_t iters, uint64_t seed) {
  NoGradGuard no_grad;
  data::RandomWindows batches(val, model.config().block_size, 12, seed, "val split");
  double total = 0;
  for (int64_t i = 0; i < iters; ++i) {
    data::LmBatch b = batches.next();
    total += gpt_forward(model, b.inputs, &b.targets, nullptr).loss.item();
  }
  return total / static_cast<double>(iters);
}

CapstoneResult run_capstone(const CapstoneOptions& o, std::ostream& out, const LessonLabel& lesson_label) {
  CapstoneResult result;
  out << tr("capstone: checking your pieces (exercises", "结业项目：检查你写的各块（练习");
  for (int n : kPieces) out << " " << n;
  out << tr(")\n", "）\n") << std::flush;
  if (!pieces_pass(out, lesson_label)) return result;
  out << tr("capstone: every piece passes its checks\n", "结业项目：每一块都通过了它的检查\n");

  // Data: Tiny Shakespeare, one token per character, the last 10% for validation.
  const std::string text = data::read_text_file(data::ensure_tiny_shakespeare(data::default_cache_dir()));
  const data::CharTokenizer tokenizer = data::CharTokenizer::build(text);
  const std::vector<int32_t> ids = tokenizer.encode(text);
  const size_t n_train = ids.size() * 9 / 10;
  auto train = std::make_shared<const std::vector<int32_t>>(ids.begin(), ids.begin() + static_cast<ptrdiff_t>(n_train));
  auto val = std::make_shared<const std::vector<int32_t>>(ids.begin() + static_cast<ptrdiff_t>(n_train), ids.end());

  // The model: nanoGPT's CPU model of Tiny Shakespeare (configs/default.json), in the form the
  // assembly exercises assume (learned positions, Pre-LN, GELU with tanh, biases, tied head).
  GPTConfig c = assembly_gpt_config(tokenizer.vocab_size(), /*block_size=*/64, /*n_layer=*/4, /*n_head=*/4,
                                    /*n_embd=*/128);
  c.seed = o.seed;
  GPT model(c);
  TrainStepConfig step_config;
  step_config.schedule = {2e-3, 2e-4, std::min<int64_t>(100, o.steps / 10), std::max<int64_t>(o.steps, 1)};
  step_config.adamw.beta2 = 0.99;
  step_config.adamw.weight_decay = 0.1;
  step_config.max_norm = 1.0;
  out << tr("capstone: ", "结业项目：") << model.num_parameters()
      << tr(" parameters (4 layers, 4 heads, 128 wide, 64 characters of context), ",
            " 个参数（4 层、4 个头、宽 128、上下文 64 个字符），")
      << train->size() << tr(" training characters; ", " 个训练字符；") << o.steps
      << tr(" steps of 12 x 64 characters\n", " 步，每步 12 x 64 个字符\n") << std::flush;

  data::RandomWindows batches(train, c.block_size, 12, o.seed);
  TrainState state;
  const auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  auto cpu_seconds = [&] { return static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC; };
  for (int64_t step = 1; step <= o.steps; ++step) {
    data::LmBatch b = batches.next();
    StepResult r = train_step(model, b.inputs, b.targets, state, step_config);
    if (step % o.eval_interval == 0 || step == o.steps) {
      model.eval();
      result.val_loss = estimate_val(model, val, o.eval_iters, o.seed + 1);
      model.train();
      out << tr("step ", "第 ") << step << tr("  train loss ", " 步  训练损失 ") << fixed(r.loss, 4)
          << tr("  val loss ", "  验证损失 ") << fixed(result.val_loss, 4) << "  lr " << scientific(r.lr) << "  "
          << fixed(seconds(), 1) << tr(" s (", " 秒（CPU ") << fixed(cpu_seconds(), 1) << tr(" s of CPU)\n", " 秒）\n")
          << std::flush;
    }
  }
  result.seconds = seconds();
  result.cpu_seconds = cpu_seconds();

  if (o.sample_tokens > 0) {
    Generator gen(o.seed);
    GPTCache cache;
    SamplingConfig s;
    s.temperature = 0.8;
    s.top_p = 0.95;
    std::vector<int32_t> seq = generate(model, tokenizer.encode("\n"), o.sample_tokens, s, gen, cache);
    result.sample = tokenizer.decode(std::vector<int32_t>(seq.begin() + 1, seq.end()));
    out << tr("\nsample (your generate, temperature 0.8, top_p 0.95):\n",
              "\n样本（你的 generate，温度 0.8，top_p 0.95）：\n")
        << result.sample << "\n\n";
  }
  const bool reached = result.val_loss >= 0 && result.val_loss <= o.target;
  if (chinese())
    out << "结业项目：训练 " << o.steps << " 步后验证损失为 " << fixed(result.val_loss, 4) << "，用时 "
        << fixed(result.seconds, 1) << " 秒（CPU " << fixed(result.cpu_seconds, 1) << " 秒）："
        << (reached ? "达到了" : "没有达到") << "目标 " << fixed(o.target, 2)
        << (reached ? "。这个 GPT 是你的代码训练出来的。\n" : "\n");
  else
    out << "capstone: val loss " << fixed(result.val_loss, 4) << " after " << o.steps << " steps in "
        << fixed(result.seconds, 1) << " s (" << fixed(result.cpu_seconds, 1)
        << " s of CPU): " << (reached ? "reached" : "did NOT reach") << " the target " << fixed(o.target, 2)
        << (reached ? ". This GPT was trained by your code.\n" : "\n");
  result.exit_code = reached ? 0 : 1;
  return result;
}

}  // namespace sf::exercise
