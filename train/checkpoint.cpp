// checkpoint.cpp: tensor files + a record with their sizes and hashes, the record written last.
#include "train/checkpoint.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "autograd/errors.h"
#include "autograd/json_int.h"
#include "data/sha256.h"
#include "nn/safetensors.h"
#include "nn/state_dict.h"
#include "train/atomic_file.h"
#include "train/run_dir.h"

namespace sf {

using json = nlohmann::json;
namespace fs = std::filesystem;

std::string checkpoint_record_path(const std::string& run_dir, const std::string& name) {
  return (fs::path(run_dir) / "checkpoints" / (name + ".json")).string();
}

// Writes bytes atomically and returns {"path": file name, "bytes": n, "sha256": hex}.
static json write_part(const fs::path& dir, const std::string& file, const std::string& bytes) {
  atomic_write_file((dir / file).string(), bytes);
  return {{"path", file}, {"bytes", bytes.size()}, {"sha256", data::sha256_hex(bytes)}};
}

// sha256 of the record as written without its own checksum field. nlohmann::json keeps object
// keys sorted and prints numbers so that they read back the same, so parse -> dump is stable.
static std::string record_checksum(json record) {
  record.erase("record_sha256");
  return data::sha256_hex(record.dump(1));
}

void save_checkpoint(const std::string& run_dir, const std::string& name, int64_t step, Task& task,
                     const Optimizer& optimizer, const MixedPrecision& mp, const json& config, const json& loop,
                     const json& run) {
  fs::path dir = fs::path(run_dir) / "checkpoints";
  fs::create_directories(dir);
  char stem[64];
  std::snprintf(stem, sizeof stem, "%s-%06lld", name.c_str(), static_cast<long long>(step));

  // 1. The tensor files (each atomic).
  Metadata meta{{"format", "scratchformer"}, {"step", std::to_string(step)}};
  std::string weights = safetensors_bytes(state_dict(task.model()), meta);
  OptimizerState opt = optimizer.state_dict();
  std::string optim = safetensors_bytes(opt.tensors);
  json record;
  record["format"] = 1;
  record["name"] = name;
  record["step"] = step;
  record["files"] = {{"weights", write_part(dir, std::string(stem) + ".weights.safetensors", weights)},
                     {"optimizer", write_part(dir, std::string(stem) + ".optim.safetensors", optim)}};
  // 2. The record: everything else, small and JSON. Writing it is the commit.
  record["optimizer"] = opt.scalars;
  record["precision"] = mp.state_dict();
  record["data"] = task.data_state();
  record["loop"] = loop;
  record["config"] = config;
  record["tokenizer"] = task.tokenizer_json();
  record["run"] = run;
  record["record_sha256"] = record_checksum(record);
  atomic_write_file(checkpoint_record_path(run_dir, name), record.dump(1));

  // 3. Remove this checkpoint's older tensor files (and temporaries left by a crash).
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string f = e.path().filename().string();
    bool ours = f.rfind(name + "-", 0) == 0;
    if ((ours && f.rfind(stem, 0) != 0) || (ours && f.find(".tmp.") != std::string::npos)) fs::remove(e.path());
  }
}

json loop_state_to_json(const LoopState& s) {
  json best = std::isfinite(s.best_val_loss) ? json(s.best_val_loss) : json(nullptr);  // null: none yet
  return {{"best_val_loss", best},
          {"clipped_steps", s.clipped_steps},
          {"decay_steps", s.decay_steps},
          {"seconds", s.seconds}};
}

LoopState loop_state_from_json(const json& loop) {
  LoopState s;
  if (loop.contains("best_val_loss") && !loop["best_val_loss"].is_null())
    s.best_val_loss = loop["best_val_loss"].get<double>();
  s.clipped_steps = loop.value("clipped_steps", int64_t{0});
  s.decay_steps = loop.value("decay_steps", int64_t{0});
  s.seconds = loop.value("seconds", 0.0);
  return s;
}

// More ranks than any job has: the bound keeps ranks x train.grad_accum_steps (at most 4096) in
// range when a resume multiplies them.
constexpr int64_t kMaxWorldSize = int64_t(1) << 20;

// The record's shape, checked field by field so that every later `record.at(...)` and `get<>()`
// in train --resume, eval and sample finds what it expects: CheckpointError naming the field.
static void check_record_fields(const json& record, const std::string& where) {
  auto bad = [&](const std::string& field, const std::string& what) {
    return CheckpointError(where + ": field \"" + field + "\" " + what +
                           " (not a scratchformer checkpoint record, or corrupt)");
  };
  if (!record.contains("step") || !json_int(record["step"], 0)) throw bad("step", "must be an integer >= 0");
  if (!record.contains("files") || !record["files"].is_object()) throw bad("files", "must be an object");
  for (const char* part : {"weights", "optimizer"}) {
    std::string name = std::string("files.") + part;
    if (!record["files"].contains(part) || !record["files"][part].is_object()) throw bad(name, "must be an object");
    const json& f = record["files"][part];
    if (!f.contains("path") || !f["path"].is_string()) throw bad(name + ".path", "must be a string");
    std::string file = f["path"].get<std::string>();  // a file next to the record, nothing else
    if (file.empty() || file == "." || file == ".." || file.find('/') != std::string::npos)
      throw bad(name + ".path", "must be a file name in the checkpoint's folder");
    if (!f.contains("bytes") || !f["bytes"].is_number_unsigned()) throw bad(name + ".bytes", "must be an integer >= 0");
    if (!f.contains("sha256") || !f["sha256"].is_string()) throw bad(name + ".sha256", "must be a string");
  }
  for (const char* field : {"optimizer", "precision", "data", "loop", "config", "tokenizer"})
    if (!record.contains(field) || !record[field].is_object()) throw bad(field, "must be an object");
  // "run" (who wrote it: the run's id, its data's hash, how many ranks) came later; when there it
  // is what resume compares against, and the ranks multiply into the global batch.
  if (record.contains("run")) {
    const json& run = record["run"];
    if (!run.is_object()) throw bad("run", "must be an object");
    for (const char* field : {"run_id", "data_sha256"})
      if (run.contains(field) && !run[field].is_string()) throw bad(std::string("run.") + field, "must be a string");
    if (run.contains("world_size") && !json_int(run["world_size"], 1, kMaxWorldSize))
      throw bad("run.world_size", "must be an integer from 1 to " + std::to_string(kMaxWorldSize));
  }
  const json& loop = record["loop"];
  if (loop.contains("best_val_loss") && !loop["best_val_loss"].is_null() &&
      !(loop["best_val_loss"].is_number() && std::isfinite(loop["best_val_loss"].get<double>())))
    throw bad("loop.best_val_loss", "must be a finite number, or null for none yet");
  if (loop.contains("clipped_steps") && !json_int(loop["clipped_steps"], 0))
    throw bad("loop.clipped_steps", "must be an integer >= 0");
  if (loop.contains("decay_steps") && !json_int(loop["decay_steps"], 0))
    throw bad("loop.decay_steps", "must be an integer >= 0");
  if (loop.contains("seconds") && !(loop["seconds"].is_number() && loop["seconds"].get<double>() >= 0))
    throw bad("loop.seconds", "must be a number >= 0");
}

json read_checkpoint_record(const std::string& record_path) {
  if (!fs::is_regular_file(record_path)) throw CheckpointError(record_path + ": no such checkpoint record");
  json record = json::parse(read_whole_file(record_path), nullptr, false);
  if (record.is_discarded() || !record.is_object())
    throw CheckpointError(record_path + ": not a valid checkpoint record (truncated or corrupt JSON)");
  if (record.contains("record_sha256") &&
      (!record["record_sha256"].is_string() || record["record_sha256"].get<std::string>() != record_checksum(record)))
    throw CheckpointError(record_path +
                          ": the record's checksum (record_sha256) does not match its content (edited or corrupt)");
  check_record_fields(record, record_path);
  fs::path dir = fs::path(record_path).parent_path();
  for (const char* part : {"weights", "optimizer"}) {
    const json& f = record["files"][part];
    std::string path = (dir / f["path"].get<std::string>()).string();
    if (!fs::is_regular_file(path))
      throw CheckpointError(path + ": missing (the checkpoint " + record_path + " needs it)");
    uint64_t size = fs::file_size(path), expected = f["bytes"].get<uint64_t>();
    if (size != expected)
      throw CheckpointError(path + ": " + std::to_string(size) + " bytes, but the checkpoint record says " +
                            std::to_string(expected) + " (truncated or overwritten)");
    if (data::sha256_hex(read_whole_file(path)) != f["sha256"].get<std::string>())
      throw CheckpointError(path + ": sha256 differs from the checkpoint record (the file is corrupt)");
  }
  return record;
}

void load_checkpoint_weights(const std::string& record_path, const json& record, Module& model) {
  fs::path dir = fs::path(record_path).parent_path();
  std::string weights_path = (dir / record["files"]["weights"]["path"].get<std::string>()).string();
  load_state_dict(model, load_safetensors_from_bytes(read_whole_file(weights_path), weights_path), weights_path);
}

Config record_config(const std::string& record_path, const json& record, bool validate) {
  try {
    Config config = config_from_json(record.at("config"));
    if (validate) validate_config(config, /*check_files=*/false);
    return config;
  } catch (const ConfigError& e) { throw CheckpointError(record_path + ": its config: " + e.what()); }
}

void check_resumable(const std::string& record_path, const json& record) {
  if (record.contains("weights_only") && record["weights_only"] == true)
    throw CheckpointError(record_path +
                          ": holds weights only (converted, e.g. from nanoGPT): it can be evaluated "
                          "and sampled, not resumed");
}

void restore_checkpoint(const std::string& record_path, const json& record, Task& task, Optimizer* optimizer,
                        MixedPrecision* mp) {
  if (optimizer || mp) check_resumable(record_path, record);
  fs::path dir = fs::path(record_path).parent_path();
  std::string weights_path = (dir / record["files"]["weights"]["path"].get<std::string>()).string();
  NamedTensors weights = load_safetensors_from_bytes(read_whole_file(weights_path), weights_path);
  OptimizerState opt;
  if (optimizer) {
    std::string optim_path = (dir / record["files"]["optimizer"]["path"].get<std::string>()).string();
    opt.tensors = load_safetensors_from_bytes(read_whole_file(optim_path), optim_path);
    opt.scalars = record.at("optimizer");
  }
  // All or nothing. The weights' names and shapes are checked first. The data position, the loss
  // scaler and the optimizer each check their whole state before they assign any of it; the first
  // two are small, so their states before are kept and put back when a later part is refused. The
  // weights go in last, when nothing can be refused any more.
  check_state_dict(task.model(), weights, weights_path);
  const bool resuming = optimizer || mp;
  try {
    const json data_before = resuming ? task.data_state() : json();
    const json mp_before = mp ? mp->state_dict() : json();
    if (resuming) task.set_data_state(record.at("data"));
    try {
      if (mp) mp->load_state_dict(record.at("precision"));
      if (optimizer) optimizer->load_state_dict(opt);
    } catch (...) {
      if (mp) mp->load_state_dict(mp_before);
      task.set_data_state(data_before);
      throw;
    }
  } catch (const json::exception& e) {
    throw CheckpointError(record_path + ": " + e.what());
  } catch (const Error& e) {  // the optimizer's or the data sampler's own check: say which record
    throw CheckpointError(record_path + ": " + e.what());
  }
  load_state_dict(task.model(), weights, weights_path);
}

std::string find_checkpoint(const std::string& arg, const std::string& prefer) {
  if (fs::is_regular_file(arg)) {
    // A tensor file beside the record is fine in itself: say it is the wrong file, not a corrupt one.
    if (fs::path(arg).extension() == ".safetensors")
      throw CheckpointError(arg +
                            ": a checkpoint's tensor file, not its record; give the run folder or the .json "
                            "record beside it (e.g. " +
                            (fs::path(arg).parent_path() / "last.json").string() + ")");
    return arg;
  }
  if (!fs::is_directory(arg)) throw CheckpointError(arg + ": no such run directory or checkpoint record");
  std::string other = prefer == "best" ? "last" : "best";
  for (const std::string& name : {prefer, other}) {
    std::string p = checkpoint_record_path(arg, name);
    if (fs::is_regular_file(p)) return p;
  }
  if (classify_run_dir(arg) != RunDirKind::run)  // not a run at all, rather than a run without checkpoints
    throw CheckpointError(arg + ": not a scratchformer run folder (no run.json) and not a checkpoint record");
  throw CheckpointError(arg + ": no checkpoint in this run (expected checkpoints/best.json or checkpoints/last.json)");
}

}  // namespace sf
