// saved_run.cpp: reading a trained run back from its folder (see saved_run.h).
#include "train/saved_run.h"

#include <algorithm>

#include "autograd/errors.h"
#include "data/utf8.h"
#include "train/checkpoint.h"

namespace sf {

bool SavedRun::is_seq2seq() const { return is_seq2seq_dataset(config.data.dataset); }

SavedRun open_saved_run(const std::string& run_or_checkpoint) {
  SavedRun run;
  run.record_path = find_checkpoint(run_or_checkpoint, "best");
  run.record = read_checkpoint_record(run.record_path);
  run.config = record_config(run.record_path, run.record, /*validate=*/true);
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

std::vector<int32_t> encode_prompt(const data::Tokenizer& tokenizer, const std::string& prompt,
                                   const std::string& run_name) {
  if (tokenizer.kind() != "char") return tokenizer.encode(prompt);  // (byte-level BPE encodes any text)
  std::vector<char32_t> chars = data::utf8_decode(prompt, "--prompt");
  try {
    return tokenizer.encode(prompt);
  } catch (const DataError&) {  // the tokenizer's own message speaks of its vocabulary, not of the prompt
  }
  // A char model knows only the characters of its training text: name the prompt's others.
  const std::vector<char32_t> known = data::utf8_decode(tokenizer.to_json().at("chars").get<std::string>());
  std::vector<char32_t> unknown;
  std::string names;
  for (char32_t c : chars) {
    if (std::find(known.begin(), known.end(), c) != known.end()) continue;
    if (std::find(unknown.begin(), unknown.end(), c) != unknown.end()) continue;
    unknown.push_back(c);
    names += (names.empty() ? "" : ", ") + data::describe_code_point(c);
  }
  // The vocabulary itself, shortened when it is long (a Chinese text has thousands of characters).
  std::vector<char32_t> shown(known.begin(),
                              known.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(known.size(), 100)));
  std::string vocab = nlohmann::json(data::utf8_encode(shown)).dump() + (shown.size() < known.size() ? "..." : "");
  throw ConfigError("--prompt: " + names + (unknown.size() == 1 ? " is" : " are") + " not in the vocabulary of " +
                    run_name + ", the " + std::to_string(known.size()) + " characters of its training text: " + vocab);
}

std::unique_ptr<Task> load_saved_task(const SavedRun& run) {
  std::unique_ptr<Task> task = make_task(run.config, run.record.at("tokenizer"));
  restore_checkpoint(run.record_path, run.record, *task, nullptr, nullptr);
  return task;
}

}  // namespace sf
