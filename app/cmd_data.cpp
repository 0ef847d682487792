// cmd_data.cpp: `scratchformer data shakespeare [--cache-dir DIR]` downloads Tiny Shakespeare
// (or finds a copy), checks its sha256 and prints where it is; `scratchformer data synthetic`
// describes the built-in corpus and its entropy rate.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "app/commands.h"
#include "autograd/errors.h"
#include "data/markov_corpus.h"
#include "data/tiny_shakespeare.h"

namespace sf {

void add_data_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "data", "get or describe a dataset: `data shakespeare` downloads and verifies Tiny Shakespeare");
  auto name = std::make_shared<std::string>();
  auto cache_dir = std::make_shared<std::string>();
  cmd->add_option("name", *name, "\"shakespeare\" or \"synthetic\"")
      ->required()
      ->check(CLI::IsMember({"shakespeare", "synthetic"}));
  cmd->add_option("--cache-dir", *cache_dir, "where downloads go (default $SF_DATA_DIR or ~/.cache/scratchformer)");
  cmd->callback([name, cache_dir] {
    if (*name == "shakespeare") {
      std::filesystem::path dir = cache_dir->empty() ? data::default_cache_dir() : std::filesystem::path(*cache_dir);
      std::filesystem::path path = data::ensure_tiny_shakespeare(dir);
      std::printf("Tiny Shakespeare: %s (sha256 %s verified)\n", path.string().c_str(), data::kTinyShakespeareSha256);
      return;
    }
    data::MarkovSource source{data::MarkovConfig{}};
    std::printf("built-in synthetic corpus: order-%lld Markov source over %lld symbols (seed 1234)\n",
                static_cast<long long>(source.order()), static_cast<long long>(source.num_symbols()));
    std::printf("  entropy rate (the best possible val loss): %.4f nats/token\n", source.entropy_rate());
    std::printf("  a bigram model can reach %.4f, a unigram model %.4f\n", source.entropy_given(1),
                source.entropy_given(0));
  });
}

}  // namespace sf
