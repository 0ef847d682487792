// resume_checks.cpp: what a resumed run and the ranks of one job must agree on (resume_checks.h).
#include "train/resume_checks.h"

#include "autograd/errors.h"
#include "data/sha256.h"
#include "train/checkpoint.h"
#include "train/distributed.h"

namespace sf {

using json = nlohmann::json;

// Keys that may differ between the config a run was trained with (its checkpoint's) and the one
// it is resumed with ("section.*": the whole section). Everything else must match: it would
// silently change the experiment. (The top-level description is free too: it is not a section.)
const std::vector<std::string> kMayChangeOnResume = {
    "train.steps",           "train.threads",   "train.log_interval",       "train.samples",
    "train.sample_tokens",   "train.reference", "train.reference_val_loss", "output.*",
    "schedule.decay_steps",     // (an explicit choice; left at 0, the run keeps its own: train.cpp)
    "train.grad_accum_steps"};  // (as long as ranks x grad_accum_steps stays: check_resume_world)

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

std::string ConfigOrigin::of(const std::string& key) const {
  if (const std::string* o = last_override_of(overrides, key)) return " from --set " + *o;
  if (file.empty()) return "";
  return " in " + file + (run_config ? "; was it edited?" : "");  // (train rewrites it only as allowed)
}

// Compares the config of this part of the run with the one the checkpoint was trained with. The saved
// config is read back through config_from_json (record_config), so a key added to scratchformer
// since the run was trained compares as its default (which keeps the old behaviour) instead of as
// missing. It is not validated: only the config the run continues with has to pass today's checks.
void check_resume_config(const Config& config, const json& record, const std::string& record_path,
                         const ConfigOrigin& origin) {
  const json saved_json = config_to_json(record_config(record_path, record, /*validate=*/false));
  json now_json = config_to_json(config);
  for (const auto& [section, obj] : now_json.items()) {
    if (!obj.is_object()) continue;
    for (const auto& [key, value] : obj.items()) {
      const json& saved = saved_json[section][key];
      if (saved != value && !may_change_on_resume(section, key))
        throw ConfigError(section + "." + key + ": differs from the run being resumed (" + saved.dump() + " in " +
                          record_path + ", now " + value.dump() + origin.of(section + "." + key) +
                          "); a resumed run keeps its config except " + join(kMayChangeOnResume) + " and description");
    }
  }
}

void check_same_data(const json& record, const std::string& record_path, const std::string& run_name,
                     const std::string& data_sha256, const std::string& advice) {
  std::string saved_sha = record.value("run", json::object()).value("data_sha256", "");
  if (!saved_sha.empty() && saved_sha != data_sha256)
    throw DataError("data: the training tokens differ from those " + run_name + " was trained on (sha256 " +
                    data_sha256.substr(0, 12) + "... now, " + saved_sha.substr(0, 12) + "... in " + record_path +
                    "); the text was changed or replaced: " + advice);
}

// ---- data parallel ----

// Throws on every rank whose `what` (a config, a data hash) differs from rank 0's, so that a rank
// started with another config or other data ends the job at start instead of training on.
void check_same_on_all_ranks(const std::string& name, const std::string& value) {
  if (dist::size() == 1) return;
  std::string ours = data::sha256_hex(value), rank0 = ours;
  dist::broadcast(rank0);
  if (ours != rank0)
    throw ConfigError(name + ": rank " + std::to_string(dist::rank()) + " has another one than rank 0 (sha256 " +
                      ours.substr(0, 12) + "... vs " + rank0.substr(0, 12) +
                      "...); start every rank with the same "
                      "config, --set options and data");
  dist::barrier();  // no rank goes on (rank 0 to write the run folder) before every rank has checked
}

// A resumed run continues only with the same global batch: batch_size (checked with the config)
// times grad_accum_steps times ranks. Within that product ranks and accumulation may trade places
// (2 ranks x 1 = 1 rank x 2): the same windows, in the same micro-batches, the same dropout.
void check_resume_world(const Config& config, const json& record, const std::string& record_path) {
  const json run = record.value("run", json::object());
  const int64_t ranks_then = run.value("world_size", int64_t{1});
  const int64_t accum_then = record_config(record_path, record, /*validate=*/false).train.grad_accum_steps;
  if (accum_then < 1 || accum_then > kMaxGradAccumSteps)  // (the record's config is not validated)
    throw CheckpointError(record_path + ": its config: train.grad_accum_steps must be from 1 to " +
                          std::to_string(kMaxGradAccumSteps) + ", got " + std::to_string(accum_then));
  const int64_t ranks_now = dist::size(), accum_now = config.train.grad_accum_steps;
  if (ranks_then * accum_then == ranks_now * accum_now) return;
  throw ConfigError("train.grad_accum_steps: " + record_path + " was trained on " + std::to_string(ranks_then) +
                    " rank(s) x " + std::to_string(accum_then) + " micro-batch(es) per step, now " +
                    std::to_string(ranks_now) + " x " + std::to_string(accum_now) +
                    ": another global batch, so "
                    "it cannot continue; resume with ranks x train.grad_accum_steps = " +
                    std::to_string(ranks_then * accum_then) + " (e.g. mpirun -np " + std::to_string(ranks_then) +
                    ", or --set train.grad_accum_steps=" + std::to_string(ranks_then * accum_then) +
                    " in one process)");
}

}  // namespace sf
