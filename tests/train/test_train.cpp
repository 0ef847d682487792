// The training loop end to end on tiny configs: it learns, it is deterministic, it resumes bit
// for bit (after a stop, kill -9 or Ctrl-C), checkpoints detect damage, failing configs leave
// nothing behind, and fp16/bf16 runs end near the fp32 run.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "autograd/errors.h"
#include "optim/adam.h"
#include "optim/mixed_precision.h"
#include "tiny_run.h"
#include "train/checkpoint.h"
#include "train/config.h"
#include "train/metrics.h"
#include "train/saved_run.h"
#include "train/task.h"
#include "train/train.h"

using namespace sf;
using namespace sf::test;
using json = nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE("a tiny GPT learns: the loss falls well below its starting value") {
  Config c = tiny_config("learns");
  c.train.steps = 60;
  TrainResult r = quiet_train(c);
  REQUIRE(r.losses.size() == 60);
  CHECK(r.losses.front() > 2.5);  // about ln(vocab) at the start
  CHECK(r.val_loss < 0.6 * r.losses.front());
  // The run directory has the resolved config, the metrics and the checkpoints.
  fs::path dir = c.output.run_dir;
  json saved = json::parse(std::ifstream(dir / "config.json"));
  CHECK(saved == config_to_json(c));
  CHECK(read_metrics((dir / "metrics.jsonl").string()).size() == 60 + 7);  // 60 steps + evals at 0,10,..,60
  CHECK(fs::exists(dir / "metrics.csv"));
  CHECK(fs::exists(dir / "checkpoints" / "last.json"));
  CHECK(fs::exists(dir / "checkpoints" / "best.json"));
  CHECK(fs::exists(dir / "summary.json"));
}

TEST_CASE("same config and seed give the same losses bit for bit, another seed does not") {
  Config c = tiny_config("determinism");
  c.train.steps = 20;
  c.model.dropout = 0.1;  // the dropout generator is part of what must repeat
  TrainResult a = quiet_train(c), b = quiet_train(c);
  CHECK(a.losses == b.losses);
  c.train.seed = 7;
  TrainResult other = quiet_train(c);
  CHECK(other.losses != a.losses);
  c.train.rng = RngKind::torch;  // PyTorch's generator: repeatable too, and other draws than ours
  TrainResult t1 = quiet_train(c), t2 = quiet_train(c);
  CHECK(t1.losses == t2.losses);
  CHECK(t1.losses != other.losses);
}

TEST_CASE("a run stopped at step k and resumed gives the uninterrupted run's losses bit for bit") {
  for (const RngKind rng :
       {RngKind::xoshiro, RngKind::torch}) {  // torch: the shared generator and the batch drawn ahead
    CAPTURE(option_name(rng));
    Config c = tiny_config("resume");
    c.model.dropout = 0.1;
    c.train.rng = rng;
    c.output.checkpoint_interval = 5;
    StopAndResume r = train_stopped_and_resumed(c, 15);
    const TrainResult& full = r.full;
    REQUIRE(r.first.losses.size() == 15);
    CHECK(r.rest.first_step == 15);
    CHECK(r.joined == full.losses);
    CHECK(r.rest.val_loss == full.val_loss);
    // metrics.jsonl holds each step once, with the uninterrupted run's losses.
    std::vector<double> logged;
    for (const json& row : read_metrics((fs::path(c.output.run_dir) / "metrics.jsonl").string()))
      if (row["kind"] == "train") logged.push_back(row["loss"].get<double>());
    CHECK(logged == full.losses);
  }
}

// Runs `scratchformer train` on config c (saved next to its run directory) in a child process
// with stdout to `stdout_path`, waits until checkpoint `last` is past step 8, sends `sig` and
// returns the child's wait status. The run directory is cleared first, so the poll only sees
// the spawned run's checkpoints.
static int spawn_train_and_signal(const std::string& exe, const Config& c, int sig, const std::string& stdout_path) {
  fs::remove_all(c.output.run_dir);
  fs::path cfg = fs::path(c.output.run_dir).string() + ".json";
  std::ofstream(cfg) << config_to_json(c).dump();
  pid_t pid;
  std::string cfg_s = cfg.string();
  char* argv[] = {const_cast<char*>(exe.c_str()), const_cast<char*>("train"), cfg_s.data(), nullptr};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attr;       // default SIGINT/SIGTERM actions in the child, even when ctest runs in
  posix_spawnattr_init(&attr);  // a shell's background job (which ignores SIGINT)
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  REQUIRE(posix_spawn(&pid, exe.c_str(), &fa, &attr, argv, environ) == 0);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  // Signal it once a checkpoint past step 8 exists (whatever it is doing at that moment).
  std::string record = checkpoint_record_path(c.output.run_dir, "last");
  for (int i = 0; i < 2000; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    json r = json::parse(std::ifstream(record), nullptr, false);
    if (!r.is_discarded() && r.value("step", 0) >= 8) break;
  }
  ::kill(pid, sig);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

// Resumes the run in c.output.run_dir, which stopped at step `from`, for `more` steps; then trains
// the same config from scratch for as long. The resumed losses must be the uninterrupted run's
// tail, bit for bit.
static void check_resume_equals_uninterrupted(const Config& c, int64_t from, int64_t more) {
  TrainOptions resume;
  resume.resume = true;
  resume.stop_after = from + more;
  TrainResult rest = quiet_train(c, resume);
  CHECK(rest.first_step == from);
  REQUIRE(rest.first_step < c.train.steps);

  fs::remove_all(c.output.run_dir);
  TrainOptions uninterrupted;
  uninterrupted.stop_after = from + more;
  TrainResult full = quiet_train(c, uninterrupted);
  REQUIRE(full.losses.size() == static_cast<size_t>(from + more));
  std::vector<double> tail(full.losses.begin() + from, full.losses.end());
  CHECK(rest.losses == tail);
}

TEST_CASE("kill -9 in the middle of a run, then --resume: same losses as the uninterrupted run") {
  std::string exe = std::string(SF_BINARY_DIR) + "/scratchformer";
  if (!fs::exists(exe)) {
    MESSAGE("skipped: " << exe << " is not built");
    return;
  }
  Config c = tiny_config("kill9");
  c.train.steps = 5000;  // long enough that the kill lands mid-run
  c.train.eval_interval = 1000;
  c.output.checkpoint_interval = 4;
  int status = spawn_train_and_signal(exe, c, SIGKILL, "/dev/null");
  CHECK(WIFSIGNALED(status));
  std::string record = checkpoint_record_path(c.output.run_dir, "last");

  // Wherever the kill landed (a slow or busy machine may let the child run far), resume for 40
  // more steps, then compare with an uninterrupted run of the same length.
  int64_t killed_at = json::parse(std::ifstream(record), nullptr, false).value("step", 0);
  CHECK(killed_at >= 8);
  check_resume_equals_uninterrupted(c, killed_at, 40);
}

TEST_CASE("Ctrl-C stops at the end of a step, saves last, exits 130, and --resume continues bit for bit") {
  std::string exe = std::string(SF_BINARY_DIR) + "/scratchformer";
  if (!fs::exists(exe)) {
    MESSAGE("skipped: " << exe << " is not built");
    return;
  }
  Config c = tiny_config("sigint");
  c.train.steps = 5000;  // long enough that the signal lands mid-run
  c.train.eval_interval = 1000;
  c.output.checkpoint_interval = 4;  // the poll waits for step 8; the stop then saves its own step
  c.model.dropout = 0.1;             // the dropout generator must be saved at the stop too
  fs::path log = fs::path(c.output.run_dir).string() + ".out";
  int status = spawn_train_and_signal(exe, c, SIGINT, log.string());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);

  // `last` is at the step where it stopped, and metrics.jsonl holds exactly the steps before it.
  std::string record = checkpoint_record_path(c.output.run_dir, "last");
  int64_t stopped_at = read_checkpoint_record(record).at("step").get<int64_t>();
  CHECK(stopped_at >= 8);
  REQUIRE(stopped_at < c.train.steps);
  int64_t train_rows = 0, last_row = 0;
  for (const json& row : read_metrics((fs::path(c.output.run_dir) / "metrics.jsonl").string()))
    if (row["kind"] == "train") ++train_rows, last_row = row["step"].get<int64_t>();
  CHECK(train_rows == stopped_at);
  CHECK(last_row == stopped_at);
  // One line says where it stopped and how to continue.
  std::string out;
  {
    std::ifstream in(log);
    std::stringstream ss;
    ss << in.rdbuf();
    out = ss.str();
  }
  std::string where = "interrupted (SIGINT) at step " + std::to_string(stopped_at) + "/5000";
  CHECK(out.find(where) != std::string::npos);
  CHECK(out.find("scratchformer train --resume " + c.output.run_dir) != std::string::npos);

  // Resume for 30 more steps: the same losses as an uninterrupted run of that length.
  check_resume_equals_uninterrupted(c, stopped_at, 30);

  // SIGTERM (what `kill` and service managers send) stops the same way, with 128 + 15.
  status = spawn_train_and_signal(exe, c, SIGTERM, log.string());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 143);
  CHECK(read_checkpoint_record(record).at("step").get<int64_t>() >= 8);
}

TEST_CASE("a truncated or corrupt checkpoint is named, the other checkpoint is untouched") {
  Config c = tiny_config("corrupt");
  c.train.steps = 20;
  quiet_train(c);
  std::string last = checkpoint_record_path(c.output.run_dir, "last");
  std::string best = checkpoint_record_path(c.output.run_dir, "best");
  json record = read_checkpoint_record(last);
  fs::path weights = fs::path(last).parent_path() / record["files"]["weights"]["path"].get<std::string>();

  // Flip one byte: same size, different hash.
  {
    std::fstream f(weights, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(100);
    char ch;
    f.get(ch);
    f.seekp(100);
    f.put(static_cast<char>(ch ^ 0x40));
  }
  CHECK_THROWS_WITH_AS(read_checkpoint_record(last), doctest::Contains("sha256 differs"), CheckpointError);
  // Truncate it.
  fs::resize_file(weights, fs::file_size(weights) / 2);
  CHECK_THROWS_WITH_AS(read_checkpoint_record(last), doctest::Contains(weights.filename().string().c_str()),
                       CheckpointError);
  CHECK_THROWS_WITH_AS(read_checkpoint_record(last), doctest::Contains("truncated"), CheckpointError);
  // A torn record.
  std::string text;
  {
    std::ifstream in(last);
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  std::ofstream(last) << text.substr(0, text.size() / 2);
  CHECK_THROWS_WITH_AS(read_checkpoint_record(last), doctest::Contains("not a valid checkpoint record"),
                       CheckpointError);
  // best was never touched and still loads.
  CHECK_NOTHROW(read_checkpoint_record(best));
  // Resuming from the damaged `last` is one clear error.
  TrainOptions resume;
  resume.resume = true;
  CHECK_THROWS_AS(quiet_train(c, resume), CheckpointError);
}

// restore_checkpoint sets the data position, the loss scaler, the optimizer and the weights, in
// that order; a part refused after others were set must leave them as they were too. The data
// position is itself in parts (the window sampler, the PyTorch generator, the dropout generator):
// a refused dropout generator must not leave the sampler moved.
TEST_CASE("restoring a checkpoint is all or nothing: a refused part leaves every other part as it was") {
  // A language model on our generator, one on PyTorch's, and an encoder-decoder on a task.
  for (const char* kind : {"xoshiro", "torch", "seq2seq"}) {
    CAPTURE(std::string(kind));
    Config c = tiny_config("restore_all_or_nothing");
    c.train.steps = 6;
    const bool seq2seq = std::string(kind) == "seq2seq";
    if (std::string(kind) == "torch") c.train.rng = RngKind::torch;
    if (seq2seq) {
      c.model.type = ModelType::transformer;
      c.data.dataset = Dataset::reverse;
      c.data.path = "";
      c.data.task_eval_size = 20;
    }
    validate_config(c);
    quiet_train(c);
    const std::string path = checkpoint_record_path(c.output.run_dir, "last");
    const json good = read_checkpoint_record(path);

    std::unique_ptr<Task> task = make_task(c, good.at("tokenizer"));
    AdamW opt(task->model().named_parameters(), AdamOptions{});
    MixedPrecision mp(Precision::fp32);
    auto state = [&] {  // everything a restore may change
      std::vector<std::vector<double>> tensors;
      for (const auto& [name, p] : task->model().named_parameters()) tensors.push_back(p.to_vector());
      for (const auto& [name, t] : opt.state_dict().tensors) tensors.push_back(t.to_vector());
      return std::tuple(tensors, opt.state_dict().scalars.dump(), mp.state_dict().dump(), task->data_state().dump());
    };
    const auto before = state();
    const std::string param = "/optimizer/param_steps/" + good["optimizer"]["param_steps"].begin().key();
    std::vector<std::tuple<const char*, std::string, json>> refused = {
        {"the data state", seq2seq ? "/data/task/examples" : "/data/train_windows/batches", -3},
        {"the dropout generator", "/data/dropout_rng", json::array({1, 2, 3})},
        {"the loss scaler", "/precision/skipped_steps", -1},
        {"the optimizer", param, -1}};
    if (c.train.rng == RngKind::torch) refused.emplace_back("the PyTorch generator", "/data/torch_rng", "1 2 3");
    for (const auto& [what, pointer, value] : refused) {
      CAPTURE(std::string(what));
      json bad = good;
      bad[json::json_pointer(pointer)] = value;
      CHECK_THROWS_WITH_AS(restore_checkpoint(path, bad, *task, &opt, &mp), doctest::Contains(path.c_str()),
                           CheckpointError);
      const auto after = state();
      CHECK(std::get<0>(after) == std::get<0>(before));  // the weights and the optimizer's moments
      CHECK(std::get<1>(after) == std::get<1>(before));  // the optimizer's steps and lr
      CHECK(std::get<2>(after) == std::get<2>(before));  // the loss scaler
      CHECK(std::get<3>(after) == std::get<3>(before));  // the data position and both generators
    }
    restore_checkpoint(path, good, *task, &opt, &mp);
    CHECK(opt.step_count() == 6);
    CHECK(state() != before);
    CHECK(task->data_state() == good["data"]);
  }
}

// metrics.jsonl and summary.json have no checksum: a hand edit or another tool's line must not
// stop a resume, the plot or the finished-run check. A line that is not a metrics row (an object
// with a string "kind" and an integer "step" >= 0) is skipped as a torn one is; these used to end
// in "internal error" (a JSON type error), and "step": 1e30 in a cast that is undefined.
TEST_CASE("lines of metrics.jsonl and summary.json that are not what the loop wrote are skipped") {
  Config c = tiny_config("metrics_hand_edits");
  c.train.steps = 8;
  c.train.eval_interval = 4;
  TrainOptions stop;
  stop.stop_after = 4;
  quiet_train(c, stop);
  const std::string jsonl = (fs::path(c.output.run_dir) / "metrics.jsonl").string();
  const size_t rows = read_metrics(jsonl).size();
  REQUIRE(rows > 0);
  {
    std::ofstream out(jsonl, std::ios::app);
    for (const char* line : {"[]", "7", R"({"kind": "train", "step": "5"})", R"({"kind": 1, "step": 2})",
                             R"({"kind": "train", "step": 1e30})", R"({"kind": "train", "step": -1})",
                             R"({"step": 3, "loss": 1.5})", R"({"kind": "tra)"})
      out << line << "\n";
  }
  CHECK(read_metrics(jsonl).size() == rows);
  const std::string png = (fs::path(c.output.run_dir) / "edited.png").string();
  CHECK_NOTHROW(plot_losses(jsonl, png, "edited"));
  TrainOptions resume;
  resume.resume = true;
  CHECK(quiet_train(c, resume).losses.size() == 4);
  std::map<int64_t, int> train_steps;  // each step once, 1 to 8
  for (const json& row : read_metrics(jsonl))
    if (row["kind"] == "train") ++train_steps[row["step"].get<int64_t>()];
  CHECK(train_steps.size() == 8);
  CHECK(train_steps.begin()->first == 1);
  CHECK(train_steps.rbegin()->first == 8);
  for (const auto& [step, count] : train_steps) CHECK(count == 1);
  // A finished run whose summary.json was edited: resumed at its steps, it finishes again.
  const fs::path summary = fs::path(c.output.run_dir) / "summary.json";
  for (const char* steps : {"\"8\"", "1e30", "18446744073709551615"}) {
    CAPTURE(steps);
    json s = json::parse(std::ifstream(summary));
    s["steps"] = json::parse(steps);
    std::ofstream(summary) << s.dump(1);
    CHECK_NOTHROW(quiet_train(c, resume));
  }
}

// Until an evaluation gives a finite val loss the best one is +infinity, which JSON cannot hold
// (nlohmann::json writes it as null). A checkpoint in that state must still resume, and resume
// exactly. (Step 0 always evaluates, so it takes a NaN or Inf val estimate to get there.)
TEST_CASE("a checkpoint saved before any finite val loss resumes bit for bit") {
  Config c = tiny_config("no_best_yet");
  c.output.checkpoint_interval = 5;
  TrainOptions stop;
  stop.stop_after = 15;
  quiet_train(c, stop);
  std::string last = checkpoint_record_path(c.output.run_dir, "last");
  json record = read_checkpoint_record(last);
  // The record is edited by hand below: drop its checksum, as records written before it had none
  // (the next test checks that an edit is caught when the checksum is there).
  REQUIRE(record.contains("record_sha256"));
  record.erase("record_sha256");
  const json saved_loop = record["loop"];
  // The loop state round-trips through a record, "none yet" included; a non-number is rejected.
  for (double best : {double(INFINITY), 2.5}) {
    CAPTURE(best);
    record["loop"] = loop_state_to_json({best, 3});
    std::ofstream(last) << record.dump(1);
    LoopState back = loop_state_from_json(read_checkpoint_record(last).at("loop"));
    CHECK(back.best_val_loss == best);
    CHECK(back.clipped_steps == 3);
  }
  record["loop"]["best_val_loss"] = "inf";
  std::ofstream(last) << record.dump(1);
  CHECK_THROWS_WITH_AS(read_checkpoint_record(last), doctest::Contains("loop.best_val_loss"), CheckpointError);
  // As the loop wrote it before (nlohmann::json turns +infinity into null), then resumed.
  record["loop"] = saved_loop;
  record["loop"]["best_val_loss"] = INFINITY;
  std::ofstream(last) << record.dump(1);
  check_resume_equals_uninterrupted(c, 15, 10);
}

TEST_CASE("a checkpoint record edited by hand fails its own checksum, naming it") {
  Config c = tiny_config("record_checksum");
  c.train.steps = 10;
  quiet_train(c);
  std::string last = checkpoint_record_path(c.output.run_dir, "last");
  json record = read_checkpoint_record(last);
  record["optimizer"]["lr"] = 1.0;  // plausible, and the tensor files still match
  std::ofstream(last) << record.dump(1);
  CHECK_THROWS_WITH_AS(read_checkpoint_record(last), doctest::Contains("record_sha256"), CheckpointError);
  record.erase("record_sha256");  // without the checksum (an older record) the same edit is not seen
  std::ofstream(last) << record.dump(1);
  CHECK_NOTHROW(read_checkpoint_record(last));
  // Without the checksum, the fields resume and eval read are still checked by name: these were
  // read with value<int64_t>() / get<std::string>() and ended in a JSON type error ("internal
  // error", exit 3), a float cast out of range, or an overflow of ranks x accumulation steps.
  for (const auto& [pointer, value, message] :
       {std::tuple{"/run", json(5), "field \"run\" must be an object"},
        std::tuple{"/run/world_size", json(1e30), "field \"run.world_size\" must be an integer from 1 to 1048576"},
        std::tuple{"/run/world_size", json(0), "field \"run.world_size\" must be an integer from 1 to 1048576"},
        std::tuple{"/run/world_size", json(uint64_t(1) << 62),
                   "field \"run.world_size\" must be an integer from 1 to 1048576"},
        std::tuple{"/run/run_id", json(7), "field \"run.run_id\" must be a string"},
        std::tuple{"/run/data_sha256", json::array(), "field \"run.data_sha256\" must be a string"},
        std::tuple{"/loop/clipped_steps", json(UINT64_MAX), "field \"loop.clipped_steps\" must be an integer >= 0"},
        std::tuple{"/loop/decay_steps", json(2.5), "field \"loop.decay_steps\" must be an integer >= 0"}}) {
    CAPTURE(pointer);
    json edited = record;
    edited[json::json_pointer(pointer)] = value;
    std::ofstream(last) << edited.dump(1);
    CHECK_THROWS_WITH_AS(read_checkpoint_record(last), doctest::Contains(message), CheckpointError);
  }
  // eval and sample read the record's config and tokenizer: an error in them names the record,
  // not the user's config file or a tokenizer.json that is not there.
  json edited = record;
  edited["config"]["model"]["n_layers"] = 2;  // a key scratchformer does not know
  std::ofstream(last) << edited.dump(1);
  CHECK_THROWS_WITH_AS(open_saved_run(last), doctest::Contains((last + ": its config: model.n_layers").c_str()),
                       CheckpointError);
  // A resume compares its config with the record's: the same error, naming the record.
  TrainOptions resume;
  resume.resume = true;
  CHECK_THROWS_WITH_AS(quiet_train(c, resume), doctest::Contains((last + ": its config: model.n_layers").c_str()),
                       CheckpointError);
  // The record's grad_accum_steps times its ranks is compared with today's: a value no config
  // allows is refused first (2^62 x 2 ranks would overflow int64).
  edited = record;
  edited["config"]["train"]["grad_accum_steps"] = int64_t(1) << 62;
  edited["run"]["world_size"] = 2;
  std::ofstream(last) << edited.dump(1);
  CHECK_THROWS_WITH_AS(
      quiet_train(c, resume),
      doctest::Contains(
          (last + ": its config: train.grad_accum_steps must be from 1 to 4096, got 4611686018427387904").c_str()),
      CheckpointError);
  edited = record;
  edited["tokenizer"] = {{"type", "wordpiece"}};
  std::ofstream(last) << edited.dump(1);
  CHECK_THROWS_WITH_AS(load_saved_task(open_saved_run(last)),
                       doctest::Contains("the checkpoint record's \"tokenizer\": unknown tokenizer type"), DataError);
  std::ofstream(last) << record.dump(1);
  CHECK_NOTHROW(read_checkpoint_record(last));
}

TEST_CASE("train.reference puts a known result beside the final val loss, in the log and summary.json") {
  Config c = tiny_config("reference");
  c.train.steps = 10;
  c.train.reference = "a made-up baseline";
  c.train.reference_val_loss = 1.5;
  std::ostringstream log;
  TrainOptions o;
  o.out = &log;
  TrainResult r = train(c, o);
  char expected[160];
  std::snprintf(expected, sizeof expected, "  beside a made-up baseline: val loss 1.5000; this run %.4f (%+.4f)\n",
                r.val_loss, r.val_loss - 1.5);
  CHECK(log.str().find(expected) != std::string::npos);
  json summary = json::parse(std::ifstream(fs::path(c.output.run_dir) / "summary.json"));
  CHECK(summary["reference_val_loss"] == 1.5);
  c.train.reference_val_loss = 0;  // a name without a number is refused
  CHECK_THROWS_WITH_AS(validate_config(c), doctest::Contains("train.reference_val_loss: must be > 0"), ConfigError);
}

TEST_CASE("dataset tang trains on the fortunes-zh Tang poems and reports the poem form of its samples") {
  if (!fs::exists("/usr/share/games/fortunes/tang300")) {
    MESSAGE("skipped: fortunes-zh is not installed (scripts/setup.sh installs it)");
    return;
  }
  Config c = tiny_config("tang");
  c.data.dataset = Dataset::tang;
  c.data.path = "";
  c.train.steps = 4;
  c.train.samples = 2;
  c.train.sample_tokens = 60;
  c.schedule.warmup_steps = 1;
  std::ostringstream log;
  TrainOptions o;
  o.out = &log;
  train(c, o);
  CHECK(log.str().find("data: /usr/share/games/fortunes/tang300 (poems only): ") != std::string::npos);
  CHECK(log.str().find("generated clauses have 5 or 7 characters; the corpus: 95.0% of 3261") != std::string::npos);
}

TEST_CASE("a run saved before a config key existed resumes: the missing key counts as its default") {
  Config c = tiny_config("older_record");
  TrainOptions stop;
  stop.stop_after = 10;
  quiet_train(c, stop);
  std::string last = checkpoint_record_path(c.output.run_dir, "last");
  json record = read_checkpoint_record(last);
  REQUIRE(record["config"]["model"].contains("scale_embeddings"));
  record["config"]["model"].erase("scale_embeddings");  // as a record written before that key was added
  record.erase("record_sha256");                        // (which had no checksum either)
  std::ofstream(last) << record.dump(1);
  TrainOptions resume;
  resume.resume = true;
  CHECK(quiet_train(c, resume).steps_done == c.train.steps);
}

// The lr of every logged train step (step -> lr) in a run's metrics.jsonl.
static std::map<int64_t, double> logged_lrs(const Config& c) {
  std::map<int64_t, double> lrs;
  for (const json& row : read_metrics((fs::path(c.output.run_dir) / "metrics.jsonl").string()))
    if (row["kind"] == "train") lrs[row["step"].get<int64_t>()] = row["lr"].get<double>();
  return lrs;
}

// With schedule.decay_steps 0 the cosine ends at train.steps. Raising train.steps on resume used to
// stretch it over the new length: the lr jumped from min_lr back up to about 4x (audit, item 1).
TEST_CASE("a resume with more steps keeps the lr decay the run started with, unless decay_steps is given") {
  Config c = tiny_config("keeps_decay");
  c.train.steps = 20;
  quiet_train(c);
  const double end_lr = logged_lrs(c).at(20);
  Config more = c;
  more.train.steps = 30;
  const std::string record = checkpoint_record_path(c.output.run_dir, "last");
  const json finished = read_checkpoint_record(record);
  CHECK(finished["loop"]["decay_steps"] == 20);
  const fs::path saved = fs::path(c.output.run_dir).string() + "_checkpoints";  // to resume step 20 again
  fs::remove_all(saved);
  fs::copy(fs::path(c.output.run_dir) / "checkpoints", saved);
  auto back_to_step_20 = [&](const json& record_json) {
    fs::remove_all(fs::path(c.output.run_dir) / "checkpoints");
    fs::copy(saved, fs::path(c.output.run_dir) / "checkpoints");
    std::ofstream(record) << record_json.dump(1);
  };

  // The 10 new steps run at min_lr (the cosine has ended), and one line says so and how to choose.
  TrainOptions resume;
  resume.resume = true;
  std::ostringstream log;
  resume.out = &log;
  train(more, resume);
  CHECK(log.str().find("lr schedule: the decay still ends at step 20 as when the run started (then min_lr 0.0003 "
                       "to step 30); to decay over train.steps = 30 instead, resume with --set "
                       "schedule.decay_steps=30") != std::string::npos);
  auto lrs = logged_lrs(c);
  for (int64_t step = 21; step <= 30; ++step) CHECK(lrs.at(step) == doctest::Approx(c.schedule.min_lr));
  CHECK(lrs.at(21) < end_lr);  // no jump
  // The next resume keeps it too, though config.json and the record now say train.steps = 30.
  CHECK(read_checkpoint_record(record)["loop"]["decay_steps"] == 20);

  // A record from before the loop state held decay_steps: the decay its own config had (20).
  json old = finished;
  old["loop"].erase("decay_steps");
  old.erase("record_sha256");  // (records that old had no checksum either)
  back_to_step_20(old);
  quiet_train(more, resume);
  CHECK(logged_lrs(c).at(21) == doctest::Approx(c.schedule.min_lr));

  // A record whose decay end was edited to one the schedule cannot take (not after the warmup's 5
  // steps): the error names the record and the way out, not the user's schedule.decay_steps.
  json edited = finished;
  edited["loop"]["decay_steps"] = 3;
  edited.erase("record_sha256");
  back_to_step_20(edited);
  const std::string refused = record +
                              ": the lr decay the run started with, to step 3, does not fit its schedule "
                              "(schedule.decay_steps (3) must be greater than warmup_steps (5)); choose the decay "
                              "with --set schedule.decay_steps=N";
  CHECK_THROWS_WITH_AS(quiet_train(more, resume), doctest::Contains(refused.c_str()), CheckpointError);

  // Asked for explicitly, the decay spreads over the new length: the lr rises again at step 21.
  back_to_step_20(finished);
  more.schedule.decay_steps = 30;
  quiet_train(more, resume);
  CHECK(logged_lrs(c).at(21) > 2 * c.schedule.min_lr);
  fs::remove_all(saved);
}

// The plot's output path is a gnuplot string: an unescaped ' ended it, and the plot was lost.
TEST_CASE("the loss plot is drawn in a run folder whose path holds a single quote") {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    MESSAGE("skipped: gnuplot is not installed (scripts/setup.sh installs it)");
    return;
  }
  Config c = tiny_config("it's_plotted");
  c.train.steps = 10;
  c.output.plot = true;
  quiet_train(c);
  CHECK(fs::exists(fs::path(c.output.run_dir) / "loss.png"));
}

// time_s and summary "seconds" used to start again from 0 in every part of a resumed run.
TEST_CASE("a resumed run's time_s goes on from where it stopped, and its summary counts every part") {
  Config c = tiny_config("time_goes_on");
  TrainOptions stop;
  stop.stop_after = 15;
  quiet_train(c, stop);
  TrainOptions resume;
  resume.resume = true;
  quiet_train(c, resume);
  double before = 0;
  for (const json& row : read_metrics((fs::path(c.output.run_dir) / "metrics.jsonl").string())) {
    CAPTURE(row.dump());
    CHECK(row["time_s"].get<double>() >= before);
    before = row["time_s"].get<double>();
  }
  json summary = json::parse(std::ifstream(fs::path(c.output.run_dir) / "summary.json"));
  CHECK(summary["seconds"].get<double>() >= before);
}

// A run stopped exactly at a step and resumed with train.steps at that step used to be called
// "finished" without its final evaluation, summary.json or loss plot.
TEST_CASE("a run stopped at step k and resumed with train.steps k gets its final report, once") {
  for (int64_t k : {15, 20}) {  // 15: stopped between evaluations; 20: on one (eval_interval 10)
    CAPTURE(k);
    Config c = tiny_config("finish_on_resume");
    TrainOptions stop;
    stop.stop_after = k;
    quiet_train(c, stop);
    const fs::path summary_path = fs::path(c.output.run_dir) / "summary.json";
    REQUIRE_FALSE(fs::exists(summary_path));

    Config finish = c;
    finish.train.steps = k;
    TrainOptions resume;
    resume.resume = true;
    TrainResult r = quiet_train(finish, resume);
    CHECK(r.steps_done == k);
    REQUIRE(fs::exists(summary_path));
    json summary = json::parse(std::ifstream(summary_path));
    CHECK(summary["steps"] == k);
    CHECK(std::isfinite(summary["val_loss"].get<double>()));
    int evals_at_k = 0;
    double val_at_k = NAN;
    for (const json& row : read_metrics((fs::path(c.output.run_dir) / "metrics.jsonl").string()))
      if (row["kind"] == "eval" && row["step"] == k) ++evals_at_k, val_at_k = row["val_loss"].get<double>();
    CHECK(evals_at_k == 1);
    CHECK(summary["val_loss"].get<double>() == val_at_k);

    // Now it is finished: a second resume says so and touches nothing.
    const std::string before = json::parse(std::ifstream(summary_path)).dump();
    const auto written = fs::last_write_time(summary_path);
    std::ostringstream log;
    resume.out = &log;
    train(finish, resume);
    CHECK(log.str().find("is finished") != std::string::npos);
    CHECK(fs::last_write_time(summary_path) == written);
    CHECK(json::parse(std::ifstream(summary_path)).dump() == before);
  }
}

TEST_CASE("a config that fails leaves no run directory behind") {
  Config c = tiny_config("never_created");
  fs::remove_all(c.output.run_dir);
  c.model.block_size = 64;
  c.data.val_fraction = 0.001;  // a val split of ~33 tokens is shorter than one window: DataError
  CHECK_THROWS_AS(quiet_train(c), DataError);
  CHECK_FALSE(fs::exists(c.output.run_dir));

  Config huge = tiny_config("never_created");
  huge.model.n_layer = 200;
  huge.model.n_embd = 8192;
  huge.model.n_head = 64;
  CHECK_THROWS_WITH_AS(quiet_train(huge), doctest::Contains("parameters"), ConfigError);
  CHECK_FALSE(fs::exists(c.output.run_dir));
}

static std::string file_text(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_CASE("a fresh run into a run directory that holds a run is refused before any data is read") {
  Config first = tiny_config("occupied");
  first.train.steps = 10;
  first.schedule.warmup_steps = 2;
  quiet_train(first);
  std::string before = file_text(fs::path(first.output.run_dir) / "config.json");

  Config again = tiny_config("occupied");
  again.output.overwrite = false;
  again.data.path = "/nonexistent/corpus.txt";  // would be a DataError if it were read first
  CHECK_THROWS_WITH_AS(quiet_train(again), doctest::Contains("already holds a run"), ConfigError);
  CHECK(file_text(fs::path(first.output.run_dir) / "config.json") == before);  // untouched
}

TEST_CASE("the parameter estimate made before allocation is exact") {
  for (bool bias : {true, false})
    for (bool tie : {true, false})
      for (PosEncoding pos : {PosEncoding::learned, PosEncoding::rope}) {
        Config c = tiny_config("estimate");
        c.model.bias = bias;
        c.model.tie_weights = tie;
        c.model.pos_encoding = pos;
        std::unique_ptr<Task> task = make_task(c);
        CHECK(estimate_model_size(c, 30).parameters > 0);
        int64_t vocab = task->tokenizer_json()["chars"].get<std::string>().size();
        CHECK(estimate_model_size(c, vocab).parameters == task->model().num_parameters());
      }
}

TEST_CASE("bf16 and fp16 (with loss scaling) runs end within a few percent of the fp32 run") {
  Config c = tiny_config("precision");
  c.train.steps = 60;
  double fp32 = quiet_train(c).val_loss;
  c.precision.dtype = Precision::bf16;
  double bf16 = quiet_train(c).val_loss;
  c.precision.dtype = Precision::fp16;
  TrainResult fp16 = quiet_train(c);
  CHECK(std::fabs(bf16 - fp32) / fp32 < 0.05);
  CHECK(std::fabs(fp16.val_loss - fp32) / fp32 < 0.05);
  CHECK(bf16 != fp32);  // the emulation really changed the arithmetic
}
