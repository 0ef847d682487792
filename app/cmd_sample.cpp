// cmd_sample.cpp: `scratchformer sample RUN [--prompt TEXT] [--temperature T] [--top-k K]
// [--top-p P] [--max-new-tokens N] [--seed S] [--num-samples M] [--raw-bytes]`: text from a
// trained GPT, generated with the KV cache.
#include <cmath>
#include <iostream>
#include <limits>

#include <CLI/CLI.hpp>

#include "app/commands.h"
#include "app/number_options.h"
#include "autograd/errors.h"
#include "data/tokenizer.h"
#include "data/utf8.h"
#include "nn/gpt.h"
#include "nn/sampling.h"
#include "train/saved_run.h"
#include "train/stop_signal.h"

namespace sf {

namespace {
struct SampleArgs {
  std::string run, prompt;
  SampleOptions o;
  int64_t seed = 1337, count = 1;
  bool raw_bytes = false;
};
}  // namespace

void add_sample_command(CLI::App& app) {
  auto a = std::make_shared<SampleArgs>();
  auto* cmd = app.add_subcommand("sample",
                                 "generate text from a trained GPT (uses the KV cache); the text streams "
                                 "out as it is drawn, and Ctrl-C stops it");
  cmd->add_option("run", a->run, "a run directory or a checkpoint .json")->required();
  cmd->add_option("--prompt", a->prompt, "text to continue (default: a newline when the vocabulary has one)");
  cmd->add_option("--temperature", a->o.temperature, "divide the logits by this; 0 = always the most likely token")
      ->capture_default_str()
      ->check(finite_in(0.0, 100.0));
  cmd->add_option("--top-k", a->o.top_k, "sample among the k most likely tokens only; 0 = all")
      ->capture_default_str()
      ->transform(whole_number_in(0, int64_t{1} << 31));
  cmd->add_option("--top-p", a->o.top_p, "nucleus: the smallest set of tokens with probability >= p; 1 = all")
      ->capture_default_str()
      ->check(finite_in(0.0, 1.0));
  cmd->add_option("--max-new-tokens", a->o.max_new_tokens, "tokens to generate (at most 10^9; Ctrl-C stops early)")
      ->capture_default_str()
      ->transform(whole_number_in(0, 1000000000));
  cmd->add_option("--seed", a->seed, "random seed of the sampler")
      ->capture_default_str()
      ->transform(whole_number_in(0, std::numeric_limits<int64_t>::max()));
  cmd->add_option("--num-samples", a->count, "how many samples")
      ->capture_default_str()
      ->transform(whole_number_in(1, 1000000));
  cmd->add_flag("--raw-bytes", a->raw_bytes,
                "byte-level BPE: draw tokens as the model says, even bytes that break a character "
                "(shown as U+FFFD); by default the sampler keeps to whole UTF-8 characters");
  cmd->callback([a] {
    // Everything comes from the run folder (config, tokenizer, weights): the training text is
    // not needed, so a run can be sampled after it was moved, or from any working directory.
    SavedRun run = open_saved_run(a->run);
    SavedGPT saved = load_saved_gpt(run, "sample");
    GPT* model = saved.model.get();
    data::Tokenizer* tokenizer = saved.tokenizer.get();
    std::vector<int32_t> ids;
    if (!a->prompt.empty()) {
      ids = encode_prompt(*tokenizer, a->prompt, a->run);
    } else {
      try {
        ids = tokenizer->encode("\n");
      } catch (const DataError&) {
        ids = {0};  // no newline in this vocabulary: start from token 0
      }
    }
    if (ids.empty()) throw ConfigError("--prompt: encodes to no tokens");
    a->o.token_bytes = data::byte_vocabulary(*tokenizer);
    a->o.whole_characters = !a->raw_bytes;
    // Which checkpoint speaks (the best one, which may be older than the last), as eval and inspect
    // say; on stderr, so that stdout holds only the text.
    std::cerr << run.record_path << " (step " << run.record["step"].get<int64_t>() << ")\n";
    // Each token is written as soon as it is drawn. A byte-level BPE token can end inside a
    // character: the stream holds such bytes back until the character is complete, so what is
    // printed is always valid UTF-8. The sampler keeps to whole characters and finishes the last
    // one (nn/sampling.h); with --raw-bytes, or after Ctrl-C (which stops after the current
    // token), a sample can still end inside one.
    StopOnSignal stop(true, "\n(stopped)\n");
    Generator gen(static_cast<uint64_t>(a->seed));
    bool cut_character = false;
    for (int64_t i = 0; i < a->count && stop.signal() == 0; ++i) {
      if (i) std::cout << "\n---\n";
      data::Utf8Stream text;
      std::cout << text.push(tokenizer->decode(ids)) << std::flush;  // the prompt, as the model reads it
      sample_gpt(*model, ids, a->o, gen, [&](int32_t t) {
        std::cout << text.push(tokenizer->decode({t})) << std::flush;
        return stop.signal() == 0;
      });
      bool tail = false;
      std::cout << text.finish(&tail);
      cut_character = cut_character || tail;
    }
    std::cout << "\n" << std::flush;
    if (cut_character)
      std::cerr << "note: a sample ended inside a multi-byte character (its last token held only part of it); "
                   "the incomplete bytes are shown as U+FFFD\n";
    if (stop.signal() != 0) set_exit_code(128 + stop.signal());
  });
}

}  // namespace sf
