// saved_run.h: a trained run read back from its folder, for the commands that use a trained
// model (eval, sample, inspect). Everything comes from the run folder: the checkpoint record,
// the config inside it, the tokenizer and the weights; the training text is not needed.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/tokenizer.h"
#include "nn/gpt.h"
#include "train/config.h"
#include "train/task.h"

namespace sf {

struct SavedRun {
  std::string record_path;  // the checkpoint record (RUN/checkpoints/best.json, else last.json)
  nlohmann::json record;    // checked by read_checkpoint_record
  Config config;            // the record's config, validated (files not checked: they may have moved)
  bool is_seq2seq() const;
};

// Finds the checkpoint of a run folder (its best, else its last) or takes a record's path, reads
// it and validates the config it holds. Errors name the path and what is wrong.
SavedRun open_saved_run(const std::string& run_or_checkpoint);

// A language-model run's GPT with the checkpoint's weights, and its tokenizer. `command` names
// the caller in the error an encoder-decoder run gets.
struct SavedGPT {
  std::unique_ptr<GPT> model;
  std::unique_ptr<data::Tokenizer> tokenizer;
};
SavedGPT load_saved_gpt(const SavedRun& run, const std::string& command);

// `prompt` (the --prompt of sample or inspect) as token ids. A character the run's char tokenizer
// does not know is a ConfigError naming --prompt, every such character, and the run's vocabulary.
std::vector<int32_t> encode_prompt(const data::Tokenizer& tokenizer, const std::string& prompt,
                                   const std::string& run_name);

// The run's task (model, data, evaluation) with the checkpoint's weights. Builds the data, so
// a text-file run needs its training text.
std::unique_ptr<Task> load_saved_task(const SavedRun& run);

}  // namespace sf
