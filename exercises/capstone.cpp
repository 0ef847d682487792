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

static std::string fixed(double x, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

// Runs every piece's checks: lists the missing ones, or names the first failing check. Returns
// whether all pass.
static bool pieces_pass(std::ostream& out, const LessonLabel& lesson_label) {
  std::vector<const Exercise*> missing;
  for (int n : kPieces) {
    const Exercise& e = find_exercise(std::to_string(n));
    Report r = run_exercise(e);
    if (r.outcome() == Outcome::not_implemented) {
      missing.push_back(&e);
    } else if (r.outcome() == Outcome::failed && missing.empty()) {
      out << "capstone: exercise " << e.number << " (" << e.title << ", exercises/" << e.file
          << ".cpp) does not pass its checks yet; the first that fails:\n";
      for (const std::string& line : r.lines())
        if (line.rfind("ok", 0) != 0) out << "  " << line << "\n";
      out << "Fix it (scratchformer exercise check " << e.number << ", or ./run.sh exercise " << e.number
          << "), then run the capstone again.\n";
      return false;
    }
  }
  if (missing.empty()) return true;
  out << "capstone: the GPT is trained with your code only, and " << missing.size()
      << (missing.size() == 1 ? " piece is" : " pieces are") << " still a stub:\n";
  for (const Exercise* e : missing)
    out << "  missing: exercise " << e->number << " " << e->title << " (exercises/" << e->file << ".cpp), taught in "
        << lesson_label(e->lesson) << "\n";
  out << "Write them in this order (./run.sh exercise N checks one), then run the capstone again.\n";
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
  out << "capstone: checking your pieces (exercises";
  for (int n : kPieces) out << " " << n;
  out << ")\n" << std::flush;
  if (!pieces_pass(out, lesson_label)) return result;
  out << "capstone: every piece passes its checks\n";

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
  out << "capstone: " << model.num_parameters() << " parameters (4 layers, 4 heads, 128 wide, 64 characters of "
      << "context), " << train->size() << " training characters; " << o.steps << " steps of 12 x 64 characters\n"
      << std::flush;

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
      out << "step " << step << "  train loss " << fixed(r.loss, 4) << "  val loss " << fixed(result.val_loss, 4)
          << "  lr " << fixed(r.lr * 1e3, 3) << "e-3  " << fixed(seconds(), 1) << " s (" << fixed(cpu_seconds(), 1)
          << " s of CPU)\n"
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
    out << "\nsample (your generate, temperature 0.8, top_p 0.95):\n" << result.sample << "\n\n";
  }
  const bool reached = result.val_loss >= 0 && result.val_loss <= o.target;
  out << "capstone: val loss " << fixed(result.val_loss, 4) << " after " << o.steps << " steps in "
      << fixed(result.seconds, 1) << " s (" << fixed(result.cpu_seconds, 1)
      << " s of CPU): " << (reached ? "reached" : "did NOT reach") << " the target " << fixed(o.target, 2)
      << (reached ? ". This GPT was trained by your code.\n" : "\n");
  result.exit_code = reached ? 0 : 1;
  return result;
}

}  // namespace sf::exercise
