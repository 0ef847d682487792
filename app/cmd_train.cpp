// cmd_train.cpp: `scratchformer train CONFIG [--set section.key=value]... [--resume RUN_DIR]`.
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>

#include "app/commands.h"
#include "autograd/errors.h"
#include "train/checkpoint.h"
#include "train/config.h"
#include "train/train.h"

namespace sf {

namespace {
struct TrainArgs {
  std::string config;
  std::vector<std::string> overrides;
  std::string resume;
};
}  // namespace

// RUN/config.json; when that file is gone but checkpoint `last` is there, the config the checkpoint
// records (it is the config the run was trained with; train writes config.json again from it).
static Config saved_run_config(const std::string& run_dir) {
  namespace fs = std::filesystem;
  const std::string path = (fs::path(run_dir) / "config.json").string();
  const std::string record = checkpoint_record_path(run_dir, "last");
  std::error_code ec;
  if (fs::is_directory(run_dir, ec) && !fs::exists(path, ec) && fs::is_regular_file(record, ec)) {
    std::cerr << "note: " << path << " is missing; resuming with the config recorded in " << record << "\n";
    return record_config(record, read_checkpoint_record(record), /*validate=*/false);
  }
  return load_run_config(run_dir);
}

// The config a resumed run continues with: its saved config.json, or the config given with it,
// with the --set overrides. Whether it may differ from what the run was trained with is checked by
// train() against the checkpoint itself (so an edited config.json is caught too).
static Config resume_config(const TrainArgs& a) {
  for (const std::string& o : a.overrides)
    if (o.rfind("output.run_dir=", 0) == 0 && o.substr(15) != a.resume)
      throw ConfigError("output.run_dir: --resume continues " + a.resume + " where it is, so --set " + o +
                        " cannot apply; to continue the run elsewhere, copy its folder there and resume the copy");
  // (A config given on the command line does not need RUN/config.json.)
  nlohmann::json j = config_to_json(a.config.empty() ? saved_run_config(a.resume) : load_config(a.config));
  for (const auto& o : a.overrides) apply_override(j, o);
  Config now = config_from_json(j);
  now.output.run_dir = a.resume;  // the run continues where it is now, even if it was moved
  validate_config(now);
  return now;
}

void add_train_command(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  auto* cmd = app.add_subcommand(
      "train",
      "train a model as a JSON config says (see configs/README.md); Ctrl-C stops after the current step, saving it");
  cmd->add_option("config", args->config, "the experiment's JSON config, e.g. configs/default.json");
  cmd->add_option("--set", args->overrides, "override one config key: --set optim.lr=3e-4 (repeatable)");
  cmd->add_option("--resume", args->resume, "continue the run in RUN_DIR from its last checkpoint, exactly");
  cmd->callback([args] {
    TrainOptions options;
    options.stop_on_signal = true;  // Ctrl-C: finish the step, save `last`, exit 128 + signal (130)
    if (args->resume.empty() && args->config.empty())
      throw ConfigError("train: give a config file (e.g. configs/default.json) or --resume RUN_DIR");
    options.resume = !args->resume.empty();
    if (options.resume) {
      options.origin.run_config = args->config.empty();
      options.origin.file =
          options.origin.run_config ? (std::filesystem::path(args->resume) / "config.json").string() : args->config;
      options.origin.overrides = args->overrides;
    }
    TrainResult r = train(options.resume ? resume_config(*args) : load_config(args->config, args->overrides), options);
    if (r.stopped_by_signal != 0) set_exit_code(128 + r.stopped_by_signal);
  });
}

}  // namespace sf
