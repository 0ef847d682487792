// lm_data.cpp: from data.* config keys to the data library's loaders.
#include "train/lm_data.h"

#include "autograd/errors.h"
#include "data/file_io.h"
#include "data/fortune_poems.h"
#include "data/markov_corpus.h"
#include "data/sha256.h"
#include "data/text_dataset.h"
#include "data/tiny_shakespeare.h"

namespace sf {

using json = nlohmann::json;

static data::LmData load_text(const Config& c, const std::string& path, const json& tokenizer,
                              const std::filesystem::path& cache_path, bool use_cache = true) {
  data::TextDataConfig t;
  t.path = path;
  t.cache = use_cache;
  t.cache_path = cache_path;
  t.val_fraction = c.data.val_fraction;
  t.block_size = c.data.block_size ? c.data.block_size : c.model.block_size;
  data::TokenizerConfig k;
  k.type = c.data.tokenizer;
  k.vocab_size = static_cast<int32_t>(c.data.bpe_vocab_size);
  std::shared_ptr<const data::Tokenizer> tok;
  // A saved vocabulary is always a checkpoint record's (resume, eval, sample), never a file of its own.
  if (!tokenizer.is_null()) tok = data::tokenizer_from_json(tokenizer, "the checkpoint record's \"tokenizer\"");
  return data::load_text_dataset(t, k, tok);
}

static std::filesystem::path cache_dir_of(const Config& c) {
  return c.data.cache_dir.empty() ? data::default_cache_dir() : std::filesystem::path(c.data.cache_dir);
}

// The token cache of the user's text lives in our cache folder, never beside their files:
// <cache_dir>/tokens/<file name>-<16 hex digits of sha256 of its absolute path>.<tokenizer>.tokens.bin
// (the cache's own header checks the text and the tokenizer, so a stale one is rebuilt). No cache
// when that folder cannot be made.
static std::filesystem::path text_cache_path(const Config& c) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path abs = fs::weakly_canonical(fs::absolute(c.data.path, ec), ec);
  fs::path dir = cache_dir_of(c) / "tokens";
  fs::create_directories(dir, ec);
  if (ec) return {};
  std::string name = abs.filename().string();
  if (name.empty()) name = "text";
  return dir / (name + "-" + data::sha256_hex(abs.string()).substr(0, 16) + "." + option_name(c.data.tokenizer) +
                ".tokens.bin");
}

// Tiny Shakespeare: an existing verified copy; `scratchformer data shakespeare` downloads it.
static data::LmData load_shakespeare(const Config& c, const json& tokenizer) {
  data::ShakespeareOptions o;
  o.cache_dir = cache_dir_of(c);
  o.download = false;
  std::filesystem::path path;
  try {
    path = data::ensure_tiny_shakespeare(o);
  } catch (const DataError& e) {
    throw DataError(std::string(e.what()) + " (run `scratchformer data shakespeare` to download it)");
  }
  // The token cache goes into our cache folder, never beside a copy we only read (e.g. shared/).
  std::error_code ec;
  std::filesystem::create_directories(o.cache_dir, ec);
  if (ec) throw DataError("data.cache_dir: cannot create " + o.cache_dir.string() + ": " + ec.message());
  return load_text(c, path.string(), tokenizer,
                   o.cache_dir / ("tinyshakespeare." + std::string(option_name(c.data.tokenizer)) + ".tokens.bin"));
}

// Debian's fortunes-zh: tang300 / song100, or data.path.
static data::LmData load_poems(const Config& c, const json& tokenizer) {
  const std::string name = option_name(c.data.dataset);  // "tang" or "song"
  std::filesystem::path source = c.data.path.empty()
                                     ? data::fortune_poems_path(c.data.dataset == Dataset::tang ? "tang300" : "song100")
                                     : std::filesystem::path(c.data.path);
  std::string poems = data::read_fortune_poems(source);
  // The cleaned poems are written once into our cache folder and read from there like any text.
  std::filesystem::path dir = cache_dir_of(c) / "poems";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw DataError("data.cache_dir: cannot create " + dir.string() + ": " + ec.message());
  std::filesystem::path text = dir / (name + "-" + data::sha256_hex(poems).substr(0, 16) + ".txt");
  if (!std::filesystem::exists(text, ec)) data::write_file_atomic(text, poems);
  data::LmData out = load_text(c, text.string(), tokenizer,
                               dir / (text.stem().string() + "." + option_name(c.data.tokenizer) + ".tokens.bin"));
  out.description = source.string() + " (poems only): " + out.description.substr(out.description.find(':') + 2);
  return out;
}

// Generated from the seed: no files, known entropy rate.
static data::LmData load_synthetic(const Config& c) {
  data::MarkovConfig m;
  m.seed = static_cast<uint64_t>(c.data.corpus_seed);
  m.order = c.data.corpus_order;
  m.train_tokens = c.data.corpus_tokens;
  m.val_tokens = c.data.corpus_val_tokens;
  return data::markov_lm_data(m);
}

data::LmData load_lm_data(const Config& c, const json& tokenizer) {
  switch (c.data.dataset) {
    case Dataset::text: {
      std::filesystem::path cache = text_cache_path(c);
      return load_text(c, c.data.path, tokenizer, cache, /*use_cache=*/!cache.empty());
    }
    case Dataset::shakespeare: return load_shakespeare(c, tokenizer);
    case Dataset::tang:
    case Dataset::song: return load_poems(c, tokenizer);
    case Dataset::synthetic: return load_synthetic(c);
    case Dataset::copy:
    case Dataset::reverse:
    case Dataset::sort:
    case Dataset::addition: break;
  }
  throw ConfigError("data.dataset: \"" + std::string(option_name(c.data.dataset)) +
                    "\" is not a language-modelling dataset");
}

}  // namespace sf
