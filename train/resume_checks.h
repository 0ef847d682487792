// resume_checks.h: what must stay the same for a run to continue, checked before anything in the
// run folder is touched. A resumed run keeps its config (except the keys of kMayChangeOnResume)
// and its global batch (ranks x train.grad_accum_steps); under mpirun every rank must start with
// the same config and data as rank 0. Each check throws ConfigError naming the key and both values.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "train/config.h"

namespace sf {

// Keys that may differ between the config a run was trained with and the one it is resumed with
// ("section.*": the whole section); everything else would silently change the experiment.
extern const std::vector<std::string> kMayChangeOnResume;

// Where a resumed run's config came from, so that a refused change names its source: the file
// it was read from (RUN/config.json, or the CONFIG given with --resume) and the --set overrides.
struct ConfigOrigin {
  std::string file;                    // "" when unknown (a config built in code)
  bool run_config = false;             // file is the run's own config.json (edited, if it differs)
  std::vector<std::string> overrides;  // as given: "optim.lr=1e-2"
  // " from --set optim.lr=1e-2" (the last --set of `key` wins), " in FILE", or "".
  std::string of(const std::string& key) const;
};

// `config` against the config saved in the checkpoint record at `record_path`.
void check_resume_config(const Config& config, const nlohmann::json& record, const std::string& record_path,
                         const ConfigOrigin& origin = {});
// The global batch of the checkpoint `record` (its ranks x grad_accum_steps) against this job's.
void check_resume_world(const Config& config, const nlohmann::json& record, const std::string& record_path);
// The sha256 of the training tokens now against the one the checkpoint `record` (at
// `record_path`, of the run `run_name`) was trained on; a record without one is not checked.
// Throws DataError ending in `advice` (what to do: "resume needs the same data, ...").
void check_same_data(const nlohmann::json& record, const std::string& record_path, const std::string& run_name,
                     const std::string& data_sha256, const std::string& advice);
// Throws on every rank whose `value` (a config, a data hash) differs from rank 0's; one process: nothing.
void check_same_on_all_ranks(const std::string& name, const std::string& value);

}  // namespace sf
