// train.cpp: the training loop. Reads top to bottom like nanoGPT's train.py, one function per
// phase:
//
//   open_run        threads, data + model (the task), optimizer, schedule, mixed precision; the
//                   run dir, created only after all that succeeded (resolved config saved); on
//                   resume, weights, optimizer, loss scaler, RNG and data position from `last`
//                   (what must not change first: resume_checks.h)
//   the loop        evaluate / checkpoint -> stop? -> optimizer_step -> log_step
//   optimizer_step  lr; forward + backward of each micro-batch; gradients summed (and averaged
//                   over ranks under mpirun); unscale, clip, update: once per optimizer step
//   finish          final evaluation, loss plot, samples, summary.json
//
// One optimizer step sees a global batch of train.grad_accum_steps x ranks micro-batches of
// train.batch_size rows (see Task::next_batch): the same update as one step on a batch that many
// times larger, up to the order of float additions. Under `mpirun -np N` every rank runs this
// loop on its share of the micro-batches; rank 0 alone prints, writes metrics and checkpoints.
//
// Ctrl-C (or SIGTERM) does not kill a run: the step in progress finishes, checkpoint `last` is
// written, and one line says how to continue (`scratchformer train --resume RUN_DIR`).
#include "train/train.h"

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

#include "autograd/cpu/blas.h"
#include "autograd/cpu/threads.h"
#include "autograd/errors.h"
#include "autograd/json_int.h"
#include "optim/adam.h"
#include "optim/clip.h"
#include "optim/mixed_precision.h"
#include "optim/schedule.h"
#include "optim/sgd.h"
#include "train/atomic_file.h"
#include "train/checkpoint.h"
#include "train/distributed.h"
#include "train/metrics.h"
#include "train/options.h"
#include "train/progress.h"
#include "train/resume_checks.h"
#include "train/run_dir.h"
#include "train/stop_signal.h"

namespace sf {

using json = nlohmann::json;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// ---- setup helpers: config sections -> optim objects ----

static std::unique_ptr<Optimizer> make_optimizer(const OptimConfig& o, Module& model) {
  NamedParameters params = model.named_parameters();
  if (o.name == OptimizerKind::sgd) {
    SGDOptions s;
    s.lr = o.lr, s.momentum = o.momentum, s.weight_decay = o.weight_decay, s.nesterov = o.nesterov;
    return std::make_unique<SGD>(params, s);
  }
  AdamOptions a;
  a.lr = o.lr, a.beta1 = o.beta1, a.beta2 = o.beta2, a.eps = o.eps, a.weight_decay = o.weight_decay;
  switch (o.decay) {
    case DecaySet::matrices: a.decay_rule = DecayRule{}; break;
    case DecaySet::all_matrices: a.decay_rule = DecayRule::all_matrices(); break;
    case DecaySet::all: a.decay_rule = DecayRule::everything(); break;
  }
  if (o.name == OptimizerKind::adam) return std::make_unique<Adam>(params, a);
  return std::make_unique<AdamW>(params, a);
}

static ScheduleOptions make_schedule(const Config& c) {
  ScheduleOptions s;
  s.kind = c.schedule.name;
  s.lr = c.optim.lr;
  s.min_lr = c.schedule.min_lr;
  s.warmup_steps = c.schedule.warmup_steps;
  s.decay_steps = c.schedule.decay_steps ? c.schedule.decay_steps : c.train.steps;
  s.d_model = c.model.n_embd;
  validate(s);
  return s;
}

static MixedPrecision make_mixed_precision(const PrecisionConfig& p) {
  const Precision precision = p.dtype;
  GradScalerOptions s;
  s.init_scale = p.init_scale;
  s.growth_factor = p.growth_factor;
  s.backoff_factor = p.backoff_factor;
  s.growth_interval = p.growth_interval;
  s.enabled = precision == Precision::fp16 && p.loss_scaling;
  return MixedPrecision(precision, s);
}

// ---- a run folder's config (what resume may change: resume_checks.h) ----

Config load_run_config(const std::string& run_dir) {
  std::string path = (fs::path(run_dir) / "config.json").string();
  if (!fs::exists(run_dir)) throw CheckpointError(run_dir + ": no such run folder");
  if (!fs::is_regular_file(path)) throw CheckpointError(run_dir + ": not a run directory (no config.json)");
  return load_config(path);
}

static std::string fmt(const char* format, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, x);
  return buf;
}

// ---- the run: what the phases below share ----

struct Run {
  Run(const Config& c, const TrainOptions& o)
      : config(c),
        tc(c.train),
        run_dir(c.output.run_dir),
        options(o),
        out(o.out && dist::rank() == 0 ? *o.out
            : dist::rank() == 0        ? std::cout
                                       : null_out),
        mp(make_mixed_precision(c.precision)),
        rank(dist::rank()),
        ranks(dist::size()) {}

  const Config& config;
  const TrainConfig& tc;
  const std::string& run_dir;
  const TrainOptions& options;
  std::ostream null_out{nullptr};  // what ranks other than 0 print to: nothing
  std::ostream& out;
  MixedPrecision mp;
  const int rank, ranks;  // rank 0 alone prints, writes metrics, checkpoints and samples

  std::optional<RunLock> lock;  // one writer per run folder, from before the first check to the end
  json saved_record, config_json, run_info;
  std::string record_path;
  std::unique_ptr<Task> task;
  std::unique_ptr<Optimizer> optimizer;
  NamedParameters params;
  ScheduleOptions schedule;
  std::optional<MetricsLog> metrics;  // rank 0
  std::optional<Progress> progress;
  std::optional<dist::GradientSum> grads;

  Clock::time_point wall_start = Clock::now();
  double earlier_seconds = 0;  // the training time of the run's earlier parts (before a resume)
  double seconds_over_whole_run() const { return earlier_seconds + progress->elapsed(); }
  int64_t start = 0, clipped = 0, last_saved = -1;  // last_saved: the step checkpoint `last` holds
  double best_val = INFINITY;
  bool writer() const { return rank == 0; }
};

static void save(Run& run, const std::string& name, int64_t step) {
  if (!run.writer()) return;
  save_checkpoint(
      run.run_dir, name, step, *run.task, *run.optimizer, run.mp, run.config_json,
      loop_state_to_json({run.best_val, run.clipped, run.schedule.decay_steps, run.seconds_over_whole_run()}),
      run.run_info);
  if (name == "last") run.last_saved = step;
}

// A resumed run keeps the lr schedule it started with. With schedule.decay_steps 0 the decay ends
// at train.steps, so raising train.steps on resume would stretch the cosine over the new length
// and the lr would jump back up in the middle of the run. Instead the decay keeps the end it had
// when the run started (each checkpoint records it; a record from before that has it in its
// config), and the steps past it stay at min_lr, as in nanoGPT when max_iters > lr_decay_iters.
// An explicit schedule.decay_steps is the user's choice and wins. Returns the line that says so,
// or "" when the schedule is simply what this part's config says.
static std::string keep_decay_steps(Run& run) {
  if (run.config.schedule.decay_steps != 0) return "";
  int64_t kept = loop_state_from_json(run.saved_record.at("loop")).decay_steps;
  if (kept == 0) {  // a record written before the loop state held it
    const Config then = record_config(run.record_path, run.saved_record, /*validate=*/false);
    kept = then.schedule.decay_steps ? then.schedule.decay_steps : then.train.steps;
  }
  if (kept == run.schedule.decay_steps) return "";
  run.schedule.decay_steps = kept;
  try {  // (a record the loop wrote always fits: the warmup cannot change on resume)
    validate(run.schedule);
  } catch (const ConfigError& e) {
    throw CheckpointError(run.record_path + ": the lr decay the run started with, to step " + std::to_string(kept) +
                          ", does not fit its schedule (" + e.what() +
                          "); choose the decay with --set schedule.decay_steps=N");
  }
  if (run.schedule.kind != ScheduleKind::cosine && run.schedule.kind != ScheduleKind::linear) return "";
  const std::string steps = std::to_string(run.tc.steps);
  return "lr schedule: the decay still ends at step " + std::to_string(kept) + " as when the run started (" +
         (kept < run.tc.steps ? "then min_lr " + fmt("%g", run.config.schedule.min_lr) + " to step " + steps
                              : "this part of the run stops at step " + steps) +
         "); to decay over train.steps = " + steps + " instead, resume with --set schedule.decay_steps=" + steps;
}

// Whether the run in run_dir got its final report at `step`: finish() writes summary.json last,
// with the step count it ended at. A run stopped (Ctrl-C, stop_after) exactly at its train.steps
// has none yet, so a resume with that many steps only finishes it (evaluation, plot, summary).
static bool finished_at(const std::string& run_dir, int64_t step) {
  const fs::path path = fs::path(run_dir) / "summary.json";
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  const json summary = json::parse(read_whole_file(path.string()), nullptr, false);
  return summary.is_object() && summary.contains("steps") && json_int(summary["steps"]) == step;
}

// The val loss of the evaluation at `step` in metrics.jsonl (NaN when there is none).
static double recorded_val_loss(const std::string& jsonl_path, int64_t step) {
  for (const json& row : read_metrics(jsonl_path)) {
    const json val_loss = row.value("val_loss", json());
    if (row["kind"] == "eval" && row["step"] == step && val_loss.is_number()) return val_loss.get<double>();
  }
  return NAN;
}

// ---- phase 1: open (a fresh run, or resume) ----
// Checks everything, builds data + model, and only then creates the run folder. Its steps:
// resume's checks against checkpoint `last` (or a new run's check of its folder), the task and
// the optimizer, the run folder's files, resume's restore, the header lines.

// Resume: locks the folder and checks checkpoint `last` against the folder, the config, the
// world size and train.steps; keeps the run's id and saved vocabulary. Returns false when the run
// is already finished (nothing is touched then).
static bool check_resume(Run& run, TrainResult& result, std::string& run_id, json& tokenizer) {
  const TrainConfig& tc = run.tc;
  const std::string& run_dir = run.run_dir;
  if (run.writer()) run.lock.emplace(run_dir);
  run.record_path = checkpoint_record_path(run_dir, "last");
  run.saved_record = read_checkpoint_record(run.record_path);
  const json& record = run.saved_record;
  check_resumable(run.record_path, record);
  run_id = record.value("run", json::object()).value("run_id", "");
  std::string folder_id = read_run_id(run_dir);
  if (!run_id.empty() && !folder_id.empty() && run_id != folder_id)
    throw CheckpointError(run.record_path + ": belongs to another run (run_id " + run_id + ", but " + run_dir +
                          "/run.json says " + folder_id + "); resume the run it came from");
  if (run_id.empty()) run_id = folder_id;
  check_resume_config(run.config, record, run.record_path, run.options.origin);
  check_resume_world(run.config, record, run.record_path);
  const int64_t at = record.at("step").get<int64_t>();
  if (tc.steps < at)
    throw ConfigError("train.steps: " + std::to_string(tc.steps) + " is below the step " + run_dir + " has reached (" +
                      std::to_string(at) + "); a run cannot go back (to train further, give more steps)");
  if (tc.steps == at && finished_at(run_dir, at)) {  // nothing to do, and nothing is touched
    run.out << run_dir << " is finished (step " << at << "/" << tc.steps << "); to train further, resume with "
            << "--set train.steps=N where N > " << at << "\n";
    result.first_step = result.steps_done = at;
    return false;
  }
  tokenizer = record.at("tokenizer");  // the saved vocabulary, so token ids mean what they meant
  return true;
}

// Data + model (size checked first), the optimizer and the schedule. Returns the data's SHA-256,
// checked to be the same on every rank and, on resume, the same as the run's.
static std::string build_task(Run& run, const json& tokenizer) {
  run.task = make_task(run.config, tokenizer, run.ranks);
  const std::string data_sha = run.task->data_sha256();
  check_same_on_all_ranks("data", data_sha);
  if (run.options.resume)
    check_same_data(run.saved_record, run.record_path, run.run_dir, data_sha,
                    "resume needs the same data, or start a new run");
  Module& model = run.task->model();
  run.optimizer = make_optimizer(run.config.optim, model);
  run.params = model.named_parameters();
  run.schedule = make_schedule(run.config);
  return data_sha;
}

// The run folder, written only once everything before succeeded (rank 0): a new run creates it,
// takes its lock and writes run.json and tokenizer.json; every run writes its resolved config.
static void write_run_folder(Run& run, std::string run_id, const std::string& data_sha) {
  const std::string& run_dir = run.run_dir;
  run.config_json = config_to_json(run.config);
  if (run.writer()) {
    if (!run.options.resume) {
      try {
        fs::create_directories(run_dir);
      } catch (const fs::filesystem_error& e) {  // read-only, a file in the way, no permission, ...
        throw Error("output.run_dir: cannot create or clear " + run_dir + " (" + e.code().message() + ")");
      }
      run.lock.emplace(run_dir);
      run_id = start_fresh_run(run_dir, run.config.output.overwrite);
      atomic_write_file((fs::path(run_dir) / "tokenizer.json").string(), run.task->tokenizer_json().dump() + "\n");
    }
    // The resolved config of this part of the run (a resume may have raised train.steps).
    atomic_write_file((fs::path(run_dir) / "config.json").string(), run.config_json.dump(2) + "\n");
  }
  run.run_info = {{"run_id", run_id}, {"data_sha256", data_sha}};
  if (run.ranks > 1) run.run_info["world_size"] = run.ranks;
}

// Resume: weights, optimizer, loss scaler, RNG and data position from checkpoint `last`.
static void restore_last(Run& run) {
  restore_checkpoint(run.record_path, run.saved_record, *run.task, run.optimizer.get(), &run.mp);
  LoopState loop = loop_state_from_json(run.saved_record.at("loop"));
  run.start = run.last_saved = run.saved_record.at("step").get<int64_t>();
  run.best_val = loop.best_val_loss;
  run.clipped = loop.clipped_steps;
  run.earlier_seconds = loop.seconds;
}

// The lines that open a run's log: what it trains, on what data, with which model.
static void print_header(Run& run, const std::string& schedule_note) {
  const Config& config = run.config;
  const TrainConfig& tc = run.tc;
  std::ostream& out = run.out;
  out << (run.options.resume ? "resuming " : "training ") << run.run_dir << " from step " << run.start << "/"
      << tc.steps << "\n";
  if (!config.description.empty()) out << "  " << config.description << "\n";
  out << "  data: " << run.task->describe_data() << "\n";
  out << "  model: " << option_name(config.model.type) << ", " << format_count(run.task->model().num_parameters())
      << " parameters, " << config.model.n_layer << " layers, " << config.model.n_head << " heads, n_embd "
      << config.model.n_embd << ", " << option_name(config.precision.dtype) << "\n";
  if (const std::string note = blas::narrow_kernels_note(); !note.empty()) out << "  note: " << note << "\n";
  if (!schedule_note.empty()) out << "  " << schedule_note << "\n";
  if (run.task->micro_batches() > 1)
    out << "  global batch: " << run.task->micro_batches() * tc.batch_size << " = " << run.ranks << " rank(s) x "
        << tc.grad_accum_steps << " micro-batch(es) x " << tc.batch_size << "\n";
}

static bool open_run(Run& run, TrainResult& result) {
  const TrainConfig& tc = run.tc;
  if (tc.threads > 0) set_num_threads(static_cast<int>(tc.threads));
  check_same_on_all_ranks("config", config_to_json(run.config).dump() + (run.options.resume ? " resume" : ""));
  json tokenizer = nullptr;
  std::string run_id;
  if (run.options.resume) {
    if (!check_resume(run, result, run_id, tokenizer)) return false;
  } else if (run.writer()) {
    check_not_in_use(run.run_dir);
    check_fresh_run_dir(run.run_dir, run.config.output.overwrite);  // before a download or a long data load
  }
  const std::string data_sha = build_task(run, tokenizer);
  const std::string schedule_note = run.options.resume ? keep_decay_steps(run) : "";
  if (run.task->micro_batches() > 1) run.grads.emplace(run.params);
  // A resume restores the checkpoint before it writes anything: a checkpoint that cannot be
  // restored leaves the run folder as it was.
  if (run.options.resume) restore_last(run);
  write_run_folder(run, run_id, data_sha);
  result.first_step = run.start;
  if (run.writer())
    run.metrics.emplace(run.run_dir, run.options.resume ? run.start + 1 : -1);  // a resumed run redoes steps > start
  print_header(run, schedule_note);
  // (No bar under mpirun: it hands each rank a terminal even when its own output goes to a file.)
  bool bar = run.options.progress_bar && run.options.out == nullptr && run.ranks == 1 && Progress::stdout_is_terminal();
  run.progress.emplace(tc.steps, tc.log_interval, run.out, bar, run.start);
  return true;
}

// ---- phase 2: evaluate (every rank: train.rng "torch" shares its generator with the batches) ----
static void evaluate(Run& run, int64_t step, TrainResult& result) {
  auto eval_seed = [&](int split) {  // evaluation draws its own batches
    return static_cast<uint64_t>(run.tc.seed) * 1000003ull + static_cast<uint64_t>(step) * 2ull + split;
  };
  Task& task = *run.task;
  double train_loss = run.mp.forward([&] { return task.estimate_loss("train", run.tc.eval_iters, eval_seed(0)); });
  double val_loss = run.mp.forward([&] { return task.estimate_loss("val", run.tc.eval_iters, eval_seed(1)); });
  result.val_loss = val_loss;
  if (run.metrics)
    run.metrics->write({{"kind", "eval"},
                        {"step", step},
                        {"time_s", run.seconds_over_whole_run()},
                        {"train_loss", train_loss},
                        {"val_loss", val_loss},
                        {"val_ppl", std::exp(val_loss)}});
  run.progress->line("step " + std::to_string(step) + ": train loss " + fmt("%.4f", train_loss) + ", val loss " +
                     fmt("%.4f", val_loss));
  if (val_loss < run.best_val) {
    run.best_val = val_loss;
    if (run.config.output.save_best && step > 0) save(run, "best", step);
  }
}

// ---- phase 3: one optimizer step ----

struct StepOutcome {
  double loss = 0;  // the mean loss of the global batch's micro-batches, before the update
  double lr = 0, norm = 0;
  bool clipped = false;
  StepStats stats;
};

// The dropout stream of micro-batch k of a step, when a step has several: a function of (seed,
// step, k) only, so micro-batch k gets the same masks on whichever rank, and after a resume.
static uint64_t micro_batch_seed(int64_t seed, int64_t step, int64_t k) {
  return static_cast<uint64_t>(seed) * 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(step + 1) * 0xBF58476D1CE4E5B9ull ^
         static_cast<uint64_t>(k + 1) * 0x94D049BB133111EBull;
}

// Forward and backward of this rank's micro-batches of the global batch, the gradients summed (and
// averaged over ranks), then clipping, the loss-scale check and the update, once per step.
static StepOutcome optimizer_step(Run& run, int64_t step) {
  StepOutcome r;
  r.lr = lr_at(run.schedule, step);  // the schedule follows optimizer steps
  run.optimizer->set_lr(r.lr);

  Task& task = *run.task;
  const int64_t micro_batches = task.micro_batches(), per_rank = micro_batches / run.ranks;
  task.next_batch();  // every rank draws the whole global batch, and computes its share
  double loss_sum = 0;
  for (int64_t i = 0; i < per_rank; ++i) {
    const int64_t k = run.rank * per_rank + i;  // rank r computes micro-batches r*per_rank, ...
    if (micro_batches > 1) task.seed_dropout(micro_batch_seed(run.tc.seed, step, k));
    task.model().zero_grad();
    Tensor loss = run.mp.forward([&] { return task.micro_batch_loss(k); });
    run.mp.backward(loss);  // (loss * S).backward(): the loss scale applies to every micro-batch
    loss_sum += loss.item();
    if (run.grads) run.grads->add_micro_batch();
  }
  if (run.grads) run.grads->finish(micro_batches);  // .grad = the mean over the global batch
  if (run.ranks > 1) {
    std::vector<double> total = {loss_sum};
    dist::allreduce_sum(total);
    loss_sum = total[0];
  }
  r.loss = loss_sum / static_cast<double>(micro_batches);

  const OptimConfig& o = run.config.optim;
  r.stats = run.mp.unscale_and_check(run.params);
  r.norm = o.grad_clip > 0 ? clip_grad_norm(run.params, o.grad_clip) : grad_norm(run.params);
  if (o.clip_value > 0) clip_grad_value(run.params, o.clip_value);
  r.clipped = o.grad_clip > 0 && r.norm > o.grad_clip;
  run.clipped += r.clipped ? 1 : 0;
  run.mp.step(*run.optimizer);
  run.mp.update();
  return r;
}

// The log of one step. The logged loss is the global batch's, before the update, in training
// mode (dropout and label smoothing on): far noisier than an evaluation (the mean over eval_iters
// batches, with neither), but the same quantity on average when both are 0.
static void log_step(Run& run, int64_t step, const StepOutcome& r, double seconds, TrainResult& result) {
  if (!std::isfinite(r.loss) || r.loss > run.tc.max_loss)
    throw NumericalError("training diverged at step " + std::to_string(step + 1) + ": loss " + fmt("%g", r.loss) +
                         " (lr " + fmt("%.3g", r.lr) +
                         "); lower optim.lr, raise schedule.warmup_steps or set optim.grad_clip");
  result.losses.push_back(r.loss);
  const double tokens = static_cast<double>(run.task->tokens_per_step() * run.task->micro_batches());
  double tok_per_s = tokens / std::max(seconds, 1e-9);
  json row = {{"kind", "train"},
              {"step", step + 1},
              {"time_s", run.seconds_over_whole_run()},
              {"loss", r.loss},
              {"lr", r.lr},
              {"grad_norm", r.norm},
              {"clipped", r.clipped},
              {"tok_per_s", tok_per_s}};
  if (run.mp.precision() != Precision::fp32) {
    row["loss_scale"] = r.stats.loss_scale;
    row["skipped"] = r.stats.skipped;
    row["underflow"] = r.stats.underflow_fraction;
  }
  if (run.ranks > 1) {  // cumulative: seconds in the all-reduce, and waiting for the slowest rank before it
    row["allreduce_s"] = run.grads->allreduce_seconds();
    row["wait_s"] = run.grads->wait_seconds();
  }
  if (run.metrics) run.metrics->write(row);
  run.progress->update({step + 1, r.loss, r.lr, r.norm, tok_per_s, run.mp.scaler().enabled() ? r.stats.loss_scale : 0.0,
                        tokens, seconds});
}

// Ctrl-C / SIGTERM on any rank stops every rank after the same step (mpirun forwards signals,
// but they may arrive between two steps on one rank and not yet on another).
static int agreed_signal(const Run& run, int signal) {
  if (run.ranks == 1) return signal;
  std::vector<double> any = {static_cast<double>(signal)};
  dist::allreduce_sum(any);
  return any[0] == 0 ? 0 : signal != 0 ? signal : SIGTERM;
}

// ---- phase 4: finish (the final report, rank 0) ----
static void finish(Run& run, TrainResult& result) {
  const Config& config = run.config;
  const TrainConfig& tc = run.tc;
  std::ostream& out = run.out;
  MixedPrecision& mp = run.mp;
  // (As in metrics.jsonl, a NaN or infinite number in summary.json is written as null.)
  bool seq2seq = is_seq2seq_dataset(config.data.dataset);
  json summary = {{"steps", tc.steps},
                  {"val_loss", result.val_loss},
                  {"clipped_steps", run.clipped},
                  {"skipped_steps", result.skipped_steps},
                  {"overflow_events", mp.overflow_events()}};
  out << "done: val loss " << fmt("%.4f", result.val_loss) << " (nanoGPT-style estimate, " << tc.eval_iters
      << " batches)";
  if (result.entropy_floor >= 0) {
    out << "; entropy floor " << fmt("%.4f", result.entropy_floor) << ", "
        << fmt("%+.4f", result.val_loss - result.entropy_floor) << " nats/token above it";
    summary["entropy_floor"] = result.entropy_floor;
  }
  out << "\n";
  if (tc.eval_full || seq2seq) {
    result.full = mp.forward([&] { return run.task->full_eval(); });
    out << "  full val: loss " << fmt("%.4f", result.full.loss) << ", perplexity "
        << fmt("%.3f", result.full.perplexity);
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
  out << "  clipped steps: " << run.clipped << "/" << tc.steps;
  if (mp.precision() == Precision::fp16)
    out << ", skipped (overflow): " << result.skipped_steps << ", final loss scale " << mp.loss_scale();
  out << "\n";
  const std::string& run_dir = run.run_dir;
  if (config.output.plot) {
    std::string note = plot_losses(run.metrics->jsonl_path(), (fs::path(run_dir) / "loss.png").string(), run_dir);
    out << "  " << (note.empty() ? "loss curve: " + (fs::path(run_dir) / "loss.png").string() : note) << "\n";
  }
  if (tc.samples > 0) {
    out << (seq2seq ? "held-out examples:\n" : "samples:\n");
    std::vector<std::string> samples =
        run.task->samples(tc.samples, tc.sample_tokens, static_cast<uint64_t>(tc.seed) + 7);
    for (const std::string& s : samples) out << (seq2seq ? "  " : "---\n") << s << "\n";
    std::string report = run.task->sample_report(samples);
    if (!report.empty()) out << "  " << report << "\n";
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - run.wall_start).count();
  summary["seconds"] = run.earlier_seconds + result.seconds;  // the whole run's, not this part's
  atomic_write_file((fs::path(run_dir) / "summary.json").string(), summary.dump(2) + "\n");
  out << "  wall time " << format_duration(result.seconds);
  if (run.earlier_seconds > 0)
    out << " (" << format_duration(summary["seconds"].get<double>()) << " with the run's earlier parts)";
  out << "\n";
}

// ---- the loop ----

TrainResult train(const Config& config, const TrainOptions& options) {
  Run run(config, options);
  TrainResult result;
  result.ranks = run.ranks;
  if (!open_run(run, result)) return result;
  const TrainConfig& tc = config.train;
  // From here on, Ctrl-C / SIGTERM means "stop after this step" (while the data loaded, it
  // simply ended the process: nothing had been written yet).
  StopOnSignal stop(options.stop_on_signal);

  run.task->model().train();
  for (int64_t step = run.start;; ++step) {
    const bool final_step = step == tc.steps;

    // -- evaluate and checkpoint (at step 0, every eval_interval steps, and at the end) --
    // (A resumed run starts at a step whose checkpoint was saved after that step's evaluation, if
    // it had one; a run stopped exactly at its last step had none, and gets it now.)
    const bool evaluated_before = options.resume && step == run.start && step % tc.eval_interval == 0;
    if ((step % tc.eval_interval == 0 || final_step) && !evaluated_before) {
      evaluate(run, step, result);
      if (config.output.checkpoint_interval == 0 && step > 0) save(run, "last", step);
    } else if (final_step && run.metrics) {  // stopped on an evaluation at its last step: that one is final
      result.val_loss = recorded_val_loss(run.metrics->jsonl_path(), step);
    }
    if (config.output.checkpoint_interval > 0 && step > run.start &&
        (step % config.output.checkpoint_interval == 0 || final_step))
      save(run, "last", step);

    // -- stop? (the end of the run, stop_after, or Ctrl-C / SIGTERM during the last step) --
    const int signal = agreed_signal(run, stop.signal());
    if (final_step || step == options.stop_after || signal != 0) {
      if (!final_step && run.last_saved != step) save(run, "last", step);  // --resume continues from here
      result.steps_done = step;
      result.stopped_by_signal = final_step ? 0 : signal;
      break;
    }

    // -- forward, backward and update on the global batch, then the log --
    auto t0 = Clock::now();
    StepOutcome outcome = optimizer_step(run, step);
    log_step(run, step, outcome, std::chrono::duration<double>(Clock::now() - t0).count(), result);
  }
  run.progress->finish();
  result.clipped_steps = run.clipped;
  result.skipped_steps = run.mp.skipped_steps();
  result.entropy_floor = run.task->entropy_floor();
  if (run.grads) result.allreduce_seconds = run.grads->allreduce_seconds();
  if (result.steps_done != tc.steps) {  // stopped early (stop_after or a signal): no final report
    if (result.stopped_by_signal != 0)
      run.out << "interrupted (" << (result.stopped_by_signal == SIGINT ? "SIGINT" : "SIGTERM") << ") at step "
              << result.steps_done << "/" << tc.steps << ", saved " << checkpoint_record_path(run.run_dir, "last")
              << "; continue with: scratchformer train --resume " << run.run_dir << "\n";
  } else if (run.writer()) {
    finish(run, result);
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - run.wall_start).count();
  return result;
}

}  // namespace sf
