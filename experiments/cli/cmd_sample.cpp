// cmd_sample.cpp: `scratchformer sample RUN [--prompt TEXT] [--temperature T] [--top-k K]
// [--top-p P] [--max-new-tokens N] [--seed S] [--num-samples M]`: text from a trained GPT,
// generated with the KV cache.
#include <iostream>

#include <CLI/CLI.hpp>

#include "autograd/errors.h"
#include "data/tokenizer.h"
#include "experiments/checkpoint.h"
#include "experiments/cli/commands.h"
#include "experiments/config.h"
#include "experiments/sampling.h"
#include "experiments/task.h"

namespace sf {

namespace {
struct SampleArgs {
  std::string run, prompt;
  SampleOptions o;
  int64_t seed = 1337, count = 1;
};
}  // namespace

void add_sample_command(CLI::App& app) {
  auto a = std::make_shared<SampleArgs>();
  auto* cmd = app.add_subcommand("sample", "generate text from a trained GPT (uses the KV cache)");
  cmd->add_option("run", a->run, "a run directory or a checkpoint .json")->required();
  cmd->add_option("--prompt", a->prompt, "text to continue (default: a newline when the vocabulary has one)");
  cmd->add_option("--temperature", a->o.temperature, "divide the logits by this; 0 = always the most likely token")
      ->capture_default_str()->check(CLI::Range(0.0, 100.0));
  cmd->add_option("--top-k", a->o.top_k, "sample among the k most likely tokens only; 0 = all")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--top-p", a->o.top_p, "nucleus: the smallest set of tokens with probability >= p; 1 = all")
      ->capture_default_str()->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--max-new-tokens", a->o.max_new_tokens, "tokens to generate")->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", a->seed, "random seed of the sampler")->capture_default_str();
  cmd->add_option("--num-samples", a->count, "how many samples")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->callback([a] {
    std::string record_path = find_checkpoint(a->run, "best");
    nlohmann::json record = read_checkpoint_record(record_path);
    Config c = config_from_json(record.at("config"));
    validate_config(c);
    if (is_seq2seq_dataset(c.data.dataset))
      throw ConfigError("sample: " + a->run + " is an encoder-decoder (seq2seq) run; `scratchformer eval` decodes its held-out examples");
    std::unique_ptr<Task> task = make_task(c, record.at("tokenizer"));
    restore_checkpoint(record_path, record, *task, nullptr, nullptr);
    auto tokenizer = data::tokenizer_from_json(record.at("tokenizer"), record_path);
    std::string prompt = a->prompt.empty() ? "\n" : a->prompt;
    std::vector<int32_t> ids;
    try {
      ids = tokenizer->encode(prompt);
    } catch (const DataError&) {
      if (!a->prompt.empty()) throw;
      ids = {0};  // no newline in this vocabulary: start from token 0
    }
    Generator gen(static_cast<uint64_t>(a->seed));
    for (int64_t i = 0; i < a->count; ++i) {
      if (i) std::cout << "\n---\n";
      std::cout << tokenizer->decode(sample_gpt(*as_gpt(*task), ids, a->o, gen)) << std::flush;
    }
    std::cout << "\n";
  });
}

}  // namespace sf
