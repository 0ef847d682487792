// saved_run.cpp: reading a trained run back from its folder (see saved_run.h).
#include "experiments/saved_run.h"

#include "autograd/errors.h"
#include "experiments/checkpoint.h"

namespace sf {

bool SavedRun::is_seq2seq() const { return is_seq2seq_dataset(config.data.dataset); }

SavedRun open_saved_run(const std::string& run_or_checkpoint) {
  SavedRun run;
  run.record_path = find_checkpoint(run_or_checkpoint, "best");
  run.record = read_checkpoint_record(run.record_path);
  run.config = config_from_json(run.record.at("config"));
  validate_config(run.config, /*check_files=*/false);
  return run;
}

SavedGPT load_saved_gpt(const SavedRun& run, const std::string& command) {
  if (run.is_seq2seq())
    throw ConfigError(command + ": " + run.record_path +
                      " is an encoder-decoder (seq2seq) run; `scratchformer eval` "
                      "decodes its held-out examples");
  SavedGPT saved;
  saved.tokenizer = data::tokenizer_from_json(run.record.at("tokenizer"), run.record_path);
  saved.model = make_gpt(run.config, saved.tokenizer->vocab_size());
  load_checkpoint_weights(run.record_path, run.record, *saved.model);
  return saved;
}

std::unique_ptr<Task> load_saved_task(const SavedRun& run) {
  std::unique_ptr<Task> task = make_task(run.config, run.record.at("tokenizer"));
  restore_checkpoint(run.record_path, run.record, *task, nullptr, nullptr);
  return task;
}

}  // namespace sf
