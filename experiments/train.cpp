// train.cpp: the training loop. Reads top to bottom like nanoGPT's train.py:
//
//   setup      threads, data + model (the task), optimizer, schedule, mixed precision
//   run dir    created only now, after everything above succeeded; resolved config saved
//   resume     weights, optimizer, loss scaler, RNG and data position from checkpoint `last`
//   loop       evaluate/checkpoint -> stop? -> lr -> forward/backward/step -> log
//   finish     final evaluation, loss plot, samples, summary.json
//
// Ctrl-C (or SIGTERM) does not kill a run: the step in progress finishes, checkpoint `last` is
// written, and one line says how to continue (`scratchformer train --resume RUN_DIR`).
#include "experiments/train.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "autograd/errors.h"
#include "autograd/cpu/threads.h"
#include "experiments/atomic_file.h"
#include "experiments/checkpoint.h"
#include "experiments/metrics.h"
#include "experiments/progress.h"
#include "experiments/run_dir.h"
#include "experiments/stop_signal.h"
#include "optim/adam.h"
#include "optim/clip.h"
#include "optim/mixed_precision.h"
#include "optim/schedule.h"
#include "optim/sgd.h"

namespace sf {

using json = nlohmann::json;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// ---- setup helpers: config sections -> optim objects ----

static std::unique_ptr<Optimizer> make_optimizer(const OptimConfig& o, Module& model) {
  NamedParameters params = model.named_parameters();
  if (o.name == "sgd") {
    SGDOptions s;
    s.lr = o.lr, s.momentum = o.momentum, s.weight_decay = o.weight_decay, s.nesterov = o.nesterov;
    return std::make_unique<SGD>(params, s);
  }
  AdamOptions a;
  a.lr = o.lr, a.beta1 = o.beta1, a.beta2 = o.beta2, a.eps = o.eps, a.weight_decay = o.weight_decay;
  a.decay_rule = o.decay == "all" ? DecayRule::everything()
               : o.decay == "all_matrices" ? DecayRule::all_matrices() : DecayRule{};
  if (o.name == "adam") return std::make_unique<Adam>(params, a);
  return std::make_unique<AdamW>(params, a);
}

static ScheduleOptions make_schedule(const Config& c) {
  ScheduleOptions s;
  s.kind = parse_schedule_kind(c.schedule.name);
  s.lr = c.optim.lr;
  s.min_lr = c.schedule.min_lr;
  s.warmup_steps = c.schedule.warmup_steps;
  s.decay_steps = c.schedule.decay_steps ? c.schedule.decay_steps : c.train.steps;
  s.d_model = c.model.n_embd;
  validate(s);
  return s;
}

static Precision parse_precision(const std::string& p) {
  return p == "fp16" ? Precision::fp16 : p == "bf16" ? Precision::bf16 : Precision::fp32;
}

static MixedPrecision make_mixed_precision(const PrecisionConfig& p) {
  GradScalerOptions s;
  s.init_scale = p.init_scale;
  s.growth_factor = p.growth_factor;
  s.backoff_factor = p.backoff_factor;
  s.growth_interval = p.growth_interval;
  s.enabled = p.dtype == "fp16" && p.loss_scaling;
  return MixedPrecision(parse_precision(p.dtype), s);
}

// ---- resume: what may change, and what must not ----

// Keys that may differ between the config a run was trained with (its checkpoint's) and the one
// it is resumed with ("section.*": the whole section). Everything else must match: it would
// silently change the experiment. (The top-level description is free too: it is not a section.)
static const std::vector<std::string> kMayChangeOnResume = {
    "train.steps",     "train.threads",   "train.log_interval",        "train.samples",
    "train.sample_tokens", "train.reference", "train.reference_val_loss", "output.*"};

static bool may_change_on_resume(const std::string& section, const std::string& key) {
  for (const std::string& k : kMayChangeOnResume)
    if (k == section + "." + key || k == section + ".*") return true;
  return false;
}

static std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& item : items) s += (s.empty() ? "" : ", ") + item;
  return s;
}

// Compares the config of this session with the one the checkpoint was trained with. The saved
// config is read back through config_from_json, so a key added to scratchformer since the run
// was trained compares as its default (which keeps the old behaviour) instead of as missing.
static void check_resume_config(const Config& config, const json& saved_record_config, const std::string& record_path) {
  json saved_json;
  try {
    saved_json = config_to_json(config_from_json(saved_record_config));
  } catch (const ConfigError& e) {
    throw CheckpointError(record_path + ": its config: " + e.what());
  }
  json now_json = config_to_json(config);
  for (const auto& [section, obj] : now_json.items()) {
    if (!obj.is_object()) continue;
    for (const auto& [key, value] : obj.items()) {
      const json& saved = saved_json[section][key];
      if (saved != value && !may_change_on_resume(section, key))
        throw ConfigError(section + "." + key + ": differs from the run being resumed (" + saved.dump() + " in " +
                          record_path + ", now " + value.dump() +
                          "; was config.json edited?); a resumed run keeps its config except " + join(kMayChangeOnResume));
    }
  }
}

Config load_run_config(const std::string& run_dir) {
  std::string path = (fs::path(run_dir) / "config.json").string();
  if (!fs::is_regular_file(path)) throw CheckpointError(run_dir + ": not a run directory (no config.json)");
  return load_config(path);
}

static std::string fmt(const char* format, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, x);
  return buf;
}

TrainResult train(const Config& config, const TrainOptions& options) {
  std::ostream& out = options.out ? *options.out : std::cout;
  const TrainConfig& tc = config.train;
  const std::string& run_dir = config.output.run_dir;
  TrainResult result;
  auto wall_start = Clock::now();

  // ---------------------------------------------------------------- setup
  if (tc.threads > 0) set_num_threads(static_cast<int>(tc.threads));
  json saved_record, tokenizer = nullptr;
  std::string record_path, run_id;
  std::optional<RunLock> lock;  // one writer per run folder, from before the first check to the end
  if (options.resume) {
    lock.emplace(run_dir);
    record_path = checkpoint_record_path(run_dir, "last");
    saved_record = read_checkpoint_record(record_path);
    check_resumable(record_path, saved_record);
    run_id = saved_record.value("run", json::object()).value("run_id", "");
    std::string folder_id = read_run_id(run_dir);
    if (!run_id.empty() && !folder_id.empty() && run_id != folder_id)
      throw CheckpointError(record_path + ": belongs to another run (run_id " + run_id + ", but " + run_dir +
                            "/run.json says " + folder_id + "); resume the run it came from");
    if (run_id.empty()) run_id = folder_id;
    check_resume_config(config, saved_record.at("config"), record_path);
    const int64_t at = saved_record.at("step").get<int64_t>();
    if (tc.steps < at)
      throw ConfigError("train.steps: " + std::to_string(tc.steps) + " is below the step " + run_dir +
                        " has reached (" + std::to_string(at) + "); a run cannot go back (to train further, give more steps)");
    if (tc.steps == at) {  // nothing to do, and nothing is touched
      out << run_dir << " is finished (step " << at << "/" << tc.steps << "); to train further, resume with "
          << "--set train.steps=N where N > " << at << "\n";
      result.first_step = result.steps_done = at;
      return result;
    }
    tokenizer = saved_record.at("tokenizer");  // the saved vocabulary, so token ids mean what they meant
  } else {
    check_fresh_run_dir(run_dir, config.output.overwrite);  // before a download or a long data load
  }
  std::unique_ptr<Task> task = make_task(config, tokenizer);  // data + model (size checked first)
  const std::string data_sha = task->data_sha256();
  if (options.resume) {
    std::string saved_sha = saved_record.value("run", json::object()).value("data_sha256", "");
    if (!saved_sha.empty() && saved_sha != data_sha)
      throw DataError("data: the training tokens differ from those " + run_dir + " was trained on (sha256 " +
                      data_sha.substr(0, 12) + "... now, " + saved_sha.substr(0, 12) + "... in " + record_path +
                      "); the text was changed or replaced: resume needs the same data, or start a new run");
  }
  Module& model = task->model();
  std::unique_ptr<Optimizer> optimizer = make_optimizer(config.optim, model);
  NamedParameters params = model.named_parameters();
  ScheduleOptions schedule = make_schedule(config);
  MixedPrecision mp = make_mixed_precision(config.precision);

  // ---------------------------------------------------------------- run directory
  json config_json = config_to_json(config);
  if (!options.resume) {
    try {
      fs::create_directories(run_dir);
    } catch (const fs::filesystem_error& e) {  // read-only, a file in the way, no permission, ...
      throw Error("output.run_dir: cannot create or clear " + run_dir + " (" + e.code().message() + ")");
    }
    lock.emplace(run_dir);
    run_id = start_fresh_run(run_dir, config.output.overwrite);
    atomic_write_file((fs::path(run_dir) / "tokenizer.json").string(), task->tokenizer_json().dump() + "\n");
  }
  // The resolved config of this session (a resume may have raised train.steps).
  atomic_write_file((fs::path(run_dir) / "config.json").string(), config_json.dump(2) + "\n");
  const json run_info = {{"run_id", run_id}, {"data_sha256", data_sha}};
  // From here on, Ctrl-C / SIGTERM means "stop after this step" (while the data loaded, it
  // simply ended the process: nothing had been written yet).
  StopOnSignal stop(options.stop_on_signal);

  // ---------------------------------------------------------------- resume
  int64_t start = 0, clipped = 0;
  double best_val = INFINITY;
  if (options.resume) {
    restore_checkpoint(record_path, saved_record, *task, optimizer.get(), &mp);
    LoopState loop = loop_state_from_json(saved_record.at("loop"));
    start = saved_record.at("step").get<int64_t>();
    best_val = loop.best_val_loss;
    clipped = loop.clipped_steps;
  }
  result.first_step = start;
  MetricsLog metrics(run_dir, options.resume ? start + 1 : -1);  // a resumed run redoes steps > start

  out << (options.resume ? "resuming " : "training ") << run_dir << " from step " << start << "/" << tc.steps << "\n";
  if (!config.description.empty()) out << "  " << config.description << "\n";
  out << "  data: " << task->describe_data() << "\n";
  out << "  model: " << config.model.type << ", " << format_count(model.num_parameters()) << " parameters, "
      << config.model.n_layer << " layers, " << config.model.n_head << " heads, n_embd " << config.model.n_embd
      << ", " << config.precision.dtype << "\n";
  bool bar = options.progress_bar && options.out == nullptr && Progress::stdout_is_terminal();
  Progress progress(tc.steps, tc.log_interval, out, bar, start);

  auto loop_state = [&] { return loop_state_to_json({best_val, clipped}); };
  int64_t last_saved = options.resume ? start : -1;  // the step checkpoint `last` holds
  auto save_last = [&](int64_t step) {
    save_checkpoint(run_dir, "last", step, *task, *optimizer, mp, config_json, loop_state(), run_info);
    last_saved = step;
  };
  auto eval_seed = [&](int64_t step, int split) {  // evaluation draws its own batches
    return static_cast<uint64_t>(tc.seed) * 1000003ull + static_cast<uint64_t>(step) * 2ull + split;
  };

  // ---------------------------------------------------------------- the loop
  model.train();
  for (int64_t step = start;; ++step) {
    const bool final_step = step == tc.steps;

    // -- evaluate and checkpoint (at step 0, every eval_interval steps, and at the end) --
    if ((step % tc.eval_interval == 0 || final_step) && !(options.resume && step == start)) {
      double train_loss = mp.forward([&] { return task->estimate_loss("train", tc.eval_iters, eval_seed(step, 0)); });
      double val_loss = mp.forward([&] { return task->estimate_loss("val", tc.eval_iters, eval_seed(step, 1)); });
      result.val_loss = val_loss;
      metrics.write({{"kind", "eval"}, {"step", step}, {"time_s", progress.elapsed()}, {"train_loss", train_loss},
                     {"val_loss", val_loss}, {"val_ppl", std::exp(val_loss)}});
      progress.line("step " + std::to_string(step) + ": train loss " + fmt("%.4f", train_loss) + ", val loss " +
                    fmt("%.4f", val_loss));
      if (val_loss < best_val) {
        best_val = val_loss;
        if (config.output.save_best && step > 0)
          save_checkpoint(run_dir, "best", step, *task, *optimizer, mp, config_json, loop_state(), run_info);
      }
      if (config.output.checkpoint_interval == 0 && step > 0) save_last(step);
    }
    if (config.output.checkpoint_interval > 0 && step > start &&
        (step % config.output.checkpoint_interval == 0 || final_step))
      save_last(step);

    // -- stop? (the end of the run, stop_after, or Ctrl-C / SIGTERM during the last step) --
    if (final_step || step == options.stop_after || stop.signal() != 0) {
      if (!final_step && last_saved != step) save_last(step);  // --resume continues from here
      result.steps_done = step;
      result.stopped_by_signal = final_step ? 0 : stop.signal();
      break;
    }
    auto t0 = Clock::now();

    // -- learning rate for this step --
    double lr = lr_at(schedule, step);
    optimizer->set_lr(lr);

    // -- forward, backward, update --
    model.zero_grad();
    Tensor loss = mp.forward([&] { return task->train_loss(); });
    mp.backward(loss);
    const StepStats& stats = mp.unscale_and_check(params);
    double norm = config.optim.grad_clip > 0 ? clip_grad_norm(params, config.optim.grad_clip) : grad_norm(params);
    if (config.optim.clip_value > 0) clip_grad_value(params, config.optim.clip_value);
    bool was_clipped = config.optim.grad_clip > 0 && norm > config.optim.grad_clip;
    clipped += was_clipped ? 1 : 0;
    mp.step(*optimizer);
    mp.update();

    // -- log --
    // The logged loss is this one batch's, before the update, in training mode (dropout and
    // label smoothing on): far noisier than an evaluation (the mean over eval_iters batches, with
    // neither), but the same quantity on average when both are 0.
    double loss_value = loss.item();
    if (!std::isfinite(loss_value) || loss_value > tc.max_loss)
      throw NumericalError("training diverged at step " + std::to_string(step + 1) + ": loss " + fmt("%g", loss_value) +
                           " (lr " + fmt("%.3g", lr) + "); lower optim.lr, raise schedule.warmup_steps or set optim.grad_clip");
    result.losses.push_back(loss_value);
    double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    double tok_per_s = static_cast<double>(task->tokens_per_step()) / std::max(dt, 1e-9);
    json row = {{"kind", "train"}, {"step", step + 1}, {"time_s", progress.elapsed()}, {"loss", loss_value},
                {"lr", lr}, {"grad_norm", norm}, {"clipped", was_clipped}, {"tok_per_s", tok_per_s}};
    if (mp.precision() != Precision::fp32) {
      row["loss_scale"] = stats.loss_scale;
      row["skipped"] = stats.skipped;
      row["underflow"] = stats.underflow_fraction;
    }
    metrics.write(row);
    progress.update({step + 1, loss_value, lr, norm, tok_per_s, mp.scaler().enabled() ? stats.loss_scale : 0.0});
  }
  progress.finish();
  result.clipped_steps = clipped;
  result.skipped_steps = mp.skipped_steps();
  result.entropy_floor = task->entropy_floor();
  if (result.steps_done != tc.steps) {  // stopped early (stop_after or a signal): no final report
    if (result.stopped_by_signal != 0)
      out << "interrupted (" << (result.stopped_by_signal == SIGINT ? "SIGINT" : "SIGTERM") << ") at step "
          << result.steps_done << "/" << tc.steps << ", saved " << checkpoint_record_path(run_dir, "last")
          << "; continue with: scratchformer train --resume " << run_dir << "\n";
    result.seconds = std::chrono::duration<double>(Clock::now() - wall_start).count();
    return result;
  }

  // ---------------------------------------------------------------- finish
  // (As in metrics.jsonl, a NaN or infinite number in summary.json is written as null.)
  bool seq2seq = is_seq2seq_dataset(config.data.dataset);
  json summary = {{"steps", tc.steps}, {"val_loss", result.val_loss}, {"clipped_steps", clipped},
                  {"skipped_steps", result.skipped_steps}, {"overflow_events", mp.overflow_events()}};
  out << "done: val loss " << fmt("%.4f", result.val_loss) << " (nanoGPT-style estimate, " << tc.eval_iters
      << " batches)";
  if (result.entropy_floor >= 0) {
    out << "; entropy floor " << fmt("%.4f", result.entropy_floor) << ", "
        << fmt("%+.4f", result.val_loss - result.entropy_floor) << " nats/token above it";
    summary["entropy_floor"] = result.entropy_floor;
  }
  out << "\n";
  if (tc.eval_full || seq2seq) {
    result.full = mp.forward([&] { return task->full_eval(); });
    out << "  full val: loss " << fmt("%.4f", result.full.loss) << ", perplexity " << fmt("%.3f", result.full.perplexity);
    if (result.full.accuracy >= 0) out << ", exact match " << fmt("%.1f%%", 100 * result.full.accuracy);
    out << " (" << result.full.detail << ")\n";
    summary["full_val_loss"] = result.full.loss;
    summary["full_val_ppl"] = result.full.perplexity;
    if (result.full.accuracy >= 0) summary["exact_match"] = result.full.accuracy;
  }
  if (!tc.reference.empty()) {
    out << "  beside " << tc.reference << ": val loss " << fmt("%.4f", tc.reference_val_loss) << "; this run "
        << fmt("%.4f", result.val_loss) << " (" << fmt("%+.4f", result.val_loss - tc.reference_val_loss) << ")\n";
    summary["reference"] = tc.reference;
    summary["reference_val_loss"] = tc.reference_val_loss;
  }
  out << "  clipped steps: " << clipped << "/" << tc.steps;
  if (mp.precision() == Precision::fp16)
    out << ", skipped (overflow): " << result.skipped_steps << ", final loss scale " << mp.loss_scale();
  out << "\n";
  if (config.output.plot) {
    std::string note = plot_losses(metrics.jsonl_path(), (fs::path(run_dir) / "loss.png").string(), run_dir);
    out << "  " << (note.empty() ? "loss curve: " + (fs::path(run_dir) / "loss.png").string() : note) << "\n";
  }
  if (tc.samples > 0) {
    out << (seq2seq ? "held-out examples:\n" : "samples:\n");
    std::vector<std::string> samples = task->samples(tc.samples, tc.sample_tokens, static_cast<uint64_t>(tc.seed) + 7);
    for (const std::string& s : samples) out << (seq2seq ? "  " : "---\n") << s << "\n";
    std::string report = task->sample_report(samples);
    if (!report.empty()) out << "  " << report << "\n";
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - wall_start).count();
  summary["seconds"] = result.seconds;
  atomic_write_file((fs::path(run_dir) / "summary.json").string(), summary.dump(2) + "\n");
  out << "  wall time " << format_duration(result.seconds) << "\n";
  return result;
}

}  // namespace sf
