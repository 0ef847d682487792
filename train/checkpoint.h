// checkpoint.h: saving a run so that it can continue exactly, and finding what to evaluate.
//
// A checkpoint named `last` or `best` lives in RUN_DIR/checkpoints/ as three files:
//
//   last-000120.weights.safetensors   the model's parameters (nn's names, loadable on their own)
//   last-000120.optim.safetensors     the optimizer's state tensors (Adam's exp_avg, ...)
//   last.json                         the record: step, config, tokenizer, optimizer scalars,
//                                     loss-scaler, RNG and data position, the size and sha256
//                                     of both tensor files, the run it belongs to ("run": its
//                                     run_id and the sha256 of its training tokens), and
//                                     record_sha256, a checksum of the record itself
//
// Each file is written atomically (temporary file, fsync, rename), tensor files first and the
// record last: the record is the commit point, so a crash at any moment leaves the previous
// record pointing at its own intact files. Files no record refers to are removed afterwards.
// Loading checks sizes and hashes before touching the model: a truncated or corrupt file is a
// CheckpointError naming it, and nothing is modified.
//
// A record with "weights_only": true (tools/nanogpt_convert.py to-run writes them, with an empty
// optimizer file) can be evaluated and sampled; resuming from it is a CheckpointError.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "optim/mixed_precision.h"
#include "optim/optimizer.h"
#include "train/config.h"
#include "train/task.h"

namespace sf {

// The training loop's own scalars in a record's "loop" object. JSON has no Infinity, so "no finite
// val loss yet" (best_val_loss = +infinity, before the first evaluation or while every one was
// NaN/Inf) is written as null and read back as +infinity; a record without the key (converted
// from nanoGPT) reads the same way. decay_steps is the step at which the lr schedule's decay ends
// (schedule.decay_steps, or train.steps when that is 0), pinned when the run starts so that a
// resume with more steps continues the same schedule; 0: not recorded (a record from before it was).
// seconds is the training time up to the checkpoint, over all parts of the run (each resume starts a part), so that a resumed run's
// time_s and summary "seconds" go on from there instead of starting again at 0.
struct LoopState {
  double best_val_loss = INFINITY;
  int64_t clipped_steps = 0;
  int64_t decay_steps = 0;
  double seconds = 0;
};
nlohmann::json loop_state_to_json(const LoopState& s);
// Reads the "loop" object of a record that read_checkpoint_record has checked.
LoopState loop_state_from_json(const nlohmann::json& loop);

// Writes checkpoint `name` of the run in run_dir. `loop` holds the training loop's own scalars
// (step, best val loss, counters); `config` and `tokenizer` are stored for eval and sample; `run`
// ({"run_id", "data_sha256"}) lets a resume check that it continues this run on this data.
void save_checkpoint(const std::string& run_dir, const std::string& name, int64_t step, Task& task,
                     const Optimizer& optimizer, const MixedPrecision& mp, const nlohmann::json& config,
                     const nlohmann::json& loop, const nlohmann::json& run);

// Reads and verifies a checkpoint record (RUN_DIR/checkpoints/<name>.json): the JSON parses, its
// record_sha256 (when it has one: older records do not) matches, and both tensor files exist with
// the recorded size and sha256. Returns the record.
nlohmann::json read_checkpoint_record(const std::string& record_path);

// Restores the model weights (always), and when given the optimizer, the loss scaler and the data
// position / RNG state, from a verified record. Nothing is modified when any part does not fit.
void restore_checkpoint(const std::string& record_path, const nlohmann::json& record, Task& task, Optimizer* optimizer,
                        MixedPrecision* mp);

// The config a verified record was trained with, read through config_from_json (a key added to
// scratchformer since then reads as its default); with `validate`, also checked as a run's config
// (its files not: they may have moved). An error in it is the record's, not the user's config
// file's, so it comes as a CheckpointError "<record_path>: its config: <what is wrong>".
Config record_config(const std::string& record_path, const nlohmann::json& record, bool validate);

// CheckpointError unless the record can be resumed (a "weights_only" one cannot).
void check_resumable(const std::string& record_path, const nlohmann::json& record);

// Only the weights of a verified record, into `model` (its names and shapes checked first).
void load_checkpoint_weights(const std::string& record_path, const nlohmann::json& record, Module& model);

// The record a RUN_OR_CHECKPOINT argument names: a record file itself, or a run directory
// (its `prefer` checkpoint, else the other one). CheckpointError when there is none.
std::string find_checkpoint(const std::string& run_or_checkpoint, const std::string& prefer = "best");

// RUN_DIR/checkpoints/<name>.json
std::string checkpoint_record_path(const std::string& run_dir, const std::string& name);

}  // namespace sf
