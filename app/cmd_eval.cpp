// cmd_eval.cpp: `scratchformer eval RUN_OR_CHECKPOINT`: loss and perplexity on the whole val
// split (and exact-match accuracy for seq2seq tasks) of a run's best (else last) checkpoint.
#include <cmath>
#include <cstdio>
#include <filesystem>

#include <CLI/CLI.hpp>

#include "app/commands.h"
#include "app/number_options.h"
#include "autograd/cpu/lowp.h"
#include "autograd/errors.h"
#include "train/options.h"
#include "train/resume_checks.h"
#include "train/saved_run.h"

namespace sf {

void add_eval_command(CLI::App& app) {
  auto target = std::make_shared<std::string>();
  auto iters = std::make_shared<int64_t>(0);
  auto* cmd = app.add_subcommand("eval", "evaluate a run's checkpoint on the validation data");
  cmd->add_option("run", *target, "a run directory (uses checkpoints/best.json, else last.json) or a checkpoint .json")
      ->required();
  cmd->add_option("--iters", *iters, "also print nanoGPT's estimate over this many random val batches")
      ->transform(whole_number_in(0, 1000000));
  cmd->callback([target, iters] {
    SavedRun run = open_saved_run(*target);
    const Config& c = run.config;
    std::error_code ec;
    if (c.data.dataset == Dataset::text && !std::filesystem::exists(c.data.path, ec))
      throw DataError("eval: scoring the val split needs the run's training text, data.path = \"" + c.data.path +
                      "\", which is not there (moved, deleted, or a relative path from another working folder); "
                      "`scratchformer sample " +
                      *target + "` works without it");
    std::unique_ptr<Task> task = load_saved_task(run);
    // Refused, as train --resume refuses it: the numbers would be on other data than the run's, and
    // a learner would compare them with the run's own as if they were the same measurement.
    const std::string text = c.data.path.empty() ? "" : " (data.path = \"" + c.data.path + "\")";
    check_same_data(run.record, run.record_path, *target, task->data_sha256(),
                    "eval scores the val split of the text the run was trained on" + text +
                        ": restore that text, or train a new run on this one");
    std::printf("%s (step %lld)\n", run.record_path.c_str(), static_cast<long long>(run.record["step"].get<int64_t>()));
    AutocastGuard autocast(c.precision.dtype);
    if (*iters > 0) {
      double est = task->estimate_loss("val", *iters, static_cast<uint64_t>(c.train.seed));
      std::printf("val loss (estimate, %lld batches): %.4f\n", static_cast<long long>(*iters), est);
    }
    EvalReport r = task->full_eval();
    std::printf("val loss %.4f, perplexity %.3f", r.loss, r.perplexity);
    if (r.accuracy >= 0) std::printf(", exact match %.2f%%", 100 * r.accuracy);
    std::printf(" (%s)\n", r.detail.c_str());
    if (task->entropy_floor() >= 0)
      std::printf("entropy floor %.4f: %+.4f nats/token above it\n", task->entropy_floor(),
                  r.loss - task->entropy_floor());
  });
}

}  // namespace sf
