// fuzz_checkpoint.cpp: checkpoint state (train/checkpoint.h): a record
// (RUN_DIR/checkpoints/last.json) and the two tensor files it names, read and restored the way
// `train --resume`, `eval` and `sample` do, into a small GPT with AdamW and a loss scaler.
//
// Input layout: one control byte, then the record's JSON, the weights file and the optimizer
// file, separated by the line "--sf-part--" (kSep). The record names the files "w.safetensors"
// and "o.safetensors" to find them. When the control byte is odd, the harness writes the true
// sizes and sha256 of the two files into the record, so the fuzzer gets past those checks to
// the tensor files, the optimizer, loss-scaler and data state behind them.
#include <filesystem>

#include <nlohmann/json.hpp>

#include "data/sha256.h"
#include "data/tokenizer.h"
#include "fuzz_common.h"
#include "optim/adam.h"
#include "train/checkpoint.h"
#include "train/config.h"
#include "train/task.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const std::string kSep = "\n--sf-part--\n";

// The model the seeds were saved from (tests/fuzz/make_checkpoint_seeds.sh uses the same config).
const char* kConfig = R"({"model": {"n_layer": 1, "n_head": 1, "n_embd": 4, "block_size": 4},
  "data": {"dataset": "synthetic", "corpus_tokens": 300, "corpus_val_tokens": 100},
  "schedule": {"warmup_steps": 0}, "precision": {"dtype": "fp16"},
  "train": {"batch_size": 2, "steps": 2, "eval_interval": 2, "eval_iters": 1, "samples": 0}})";

struct Run {
  std::string dir = "/tmp/sf_fuzz_" + std::to_string(::getpid()) + "_checkpoint";
  std::unique_ptr<sf::Task> task;
  std::unique_ptr<sf::AdamW> optimizer;
  std::unique_ptr<sf::MixedPrecision> mp;
  Run() {
    fs::create_directories(dir);
    sf::Config c = sf::config_from_json(json::parse(kConfig));
    sf::validate_config(c);
    task = sf::make_task(c);
    optimizer = std::make_unique<sf::AdamW>(task->model().named_parameters(), sf::AdamOptions{});
    sf::GradScalerOptions s;
    s.enabled = true;
    mp = std::make_unique<sf::MixedPrecision>(sf::Precision::fp16, s);
  }
  // Everything a restore may change, as text: weights, optimizer state, scaler, data position.
  std::string state() const {
    json j;
    for (const auto& [name, p] : task->model().named_parameters()) j["weights"][name] = p.to_vector();
    sf::OptimizerState o = optimizer->state_dict();
    for (const auto& [name, t] : o.tensors) j["optimizer"][name] = t.to_vector();
    j["scalars"] = o.scalars;
    j["precision"] = mp->state_dict();
    j["data"] = task->data_state();
    return j.dump();
  }
};

std::vector<std::string> split(std::string_view in) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    size_t sep = in.find(kSep, start);
    parts.emplace_back(in.substr(start, sep == std::string_view::npos ? sep : sep - start));
    if (sep == std::string_view::npos || parts.size() == 3) break;
    start = sep + kSep.size();
  }
  parts.resize(3);
  return parts;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static Run run;
  std::vector<std::string> parts = split({reinterpret_cast<const char*>(data + 1), size - 1});
  std::string& record_text = parts[0];
  if (data[0] & 1) {  // the true sizes and hashes, when the record has a place for them
    json r = json::parse(record_text, nullptr, false);
    if (r.is_object() && r.contains("files") && r["files"].is_object()) {
      for (auto [part, bytes] : {std::pair{"weights", &parts[1]}, std::pair{"optimizer", &parts[2]}}) {
        json& f = r["files"][part];
        if (!f.is_object()) continue;
        f["bytes"] = bytes->size();
        f["sha256"] = sf::data::sha256_hex(*bytes);
      }
      record_text = r.dump(1);
    }
  }
  fs::path ckpt = fs::path(run.dir) / "checkpoints";
  fs::create_directories(ckpt);
  const std::string record_path = (ckpt / "last.json").string();
  sf::fuzz::write_scratch(record_path, record_text);
  sf::fuzz::write_scratch((ckpt / "w.safetensors").string(), parts[1]);
  sf::fuzz::write_scratch((ckpt / "o.safetensors").string(), parts[2]);

  sf::fuzz::guarded([&] {
    json record = sf::read_checkpoint_record(record_path);
    // What eval and sample read from a verified record.
    sf::fuzz::guarded([&] { sf::validate_config(sf::config_from_json(record.at("config"))); });
    sf::fuzz::guarded([&] { sf::data::tokenizer_from_json(record.at("tokenizer"), record_path); });
    // What train --resume reads: the step and loop scalars, then everything restored.
    if (record.at("step").get<int64_t>() < 0) sf::fuzz::bug("negative step accepted");
    const json& loop = record.at("loop");
    (void)sf::loop_state_from_json(loop);
    // All or nothing: a refused restore leaves every part as it was.
    const std::string before = run.state();
    try {
      sf::restore_checkpoint(record_path, record, *run.task, run.optimizer.get(), run.mp.get());
    } catch (const sf::Error&) {
      if (run.state() != before) sf::fuzz::bug("a refused restore changed the model, optimizer, scaler or data");
      throw;
    }
  });
  return 0;
}
