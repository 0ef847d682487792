// text_dataset.cpp: reading a corpus, making its tokenizer, caching and splitting its tokens.
#include "data/text_dataset.h"

#include <algorithm>
#include <cmath>

#include "autograd/errors.h"
#include "data/bpe_tokenizer.h"
#include "data/char_tokenizer.h"
#include "data/file_io.h"
#include "data/token_cache.h"

namespace sf::data {

namespace fs = std::filesystem;

std::string read_corpus(const fs::path& path, std::vector<fs::path>* files_read) {
  std::error_code ec;
  if (path.empty()) throw ConfigError("data.path: empty; give a text file or a folder of .txt files");
  if (!fs::exists(path, ec)) throw DataError(path.string() + ": no such file or folder (data.path)");
  std::vector<fs::path> files;
  if (fs::is_directory(path, ec)) {
    for (const auto& e : fs::directory_iterator(path))
      if (e.is_regular_file() && e.path().extension() == ".txt") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    if (files.empty()) throw DataError(path.string() + ": folder has no .txt files (data.path)");
  } else {
    files.push_back(path);
  }
  std::string text;
  for (const fs::path& f : files) {
    text += read_text_file(f);  // each file checked on its own
    if (text.size() > kMaxTextBytes)
      throw DataError(path.string() + ": the .txt files hold more than the limit of " + std::to_string(kMaxTextBytes) +
                      " bytes of text in all (data.path)");
  }
  if (files_read) *files_read = files;
  return text;
}

std::shared_ptr<const Tokenizer> make_tokenizer(const TokenizerConfig& cfg, const std::string& text) {
  switch (cfg.type) {
    case TokenizerKind::chars: break;
    case TokenizerKind::bpe:
      return std::make_shared<BpeTokenizer>(BpeTokenizer::train(text, cfg.vocab_size, cfg.gpt2_split));
  }
  return std::make_shared<CharTokenizer>(CharTokenizer::build(text, cfg.unk));
}

static fs::path cache_path_for(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return path / ".tokens.bin";
  fs::path p = path;
  p += ".tokens.bin";
  return p;
}

LmData load_text_dataset(const TextDataConfig& cfg, const TokenizerConfig& tok_cfg,
                         std::shared_ptr<const Tokenizer> tokenizer) {
  if (!(cfg.val_fraction >= 0.0 && cfg.val_fraction < 1.0))
    throw ConfigError("data.val_fraction: must be in [0, 1), got " + std::to_string(cfg.val_fraction));
  if (cfg.block_size < 1) throw ConfigError("data.block_size: must be >= 1, got " + std::to_string(cfg.block_size));
  const std::string where = cfg.path.string();
  std::string text = read_corpus(cfg.path);

  LmData data;
  if (!tokenizer) {
    if (tok_cfg.type == TokenizerKind::bpe) {
      // BPE learns from the training part only (by bytes; close to the token split below).
      size_t train_bytes = static_cast<size_t>(std::floor(double(text.size()) * (1.0 - cfg.val_fraction)));
      tokenizer = make_tokenizer(tok_cfg, text.substr(0, std::max<size_t>(train_bytes, 1)));
    } else {
      tokenizer = make_tokenizer(tok_cfg, text);
    }
  }
  CachedTokens ct;
  try {
    ct = encode_with_cache(text, *tokenizer,
                           !cfg.cache                ? fs::path()
                           : !cfg.cache_path.empty() ? cfg.cache_path
                                                     : cache_path_for(cfg.path));
  } catch (const DataError& e) {  // e.g. a character the (checkpoint's) vocabulary lacks
    throw DataError(where + ": " + e.what());
  }
  if (!ct.note.empty()) data.notes.push_back(ct.note);

  const int64_t n = static_cast<int64_t>(ct.ids.size());
  const int64_t need = cfg.block_size + 1;
  if (n < need)
    throw DataError(where + ": " + std::to_string(n) + " tokens, shorter than block_size + 1 = " +
                    std::to_string(need) + " needed for one window (use more text or a smaller data.block_size)");
  // nanoGPT's split: the first int(n * 0.9) tokens train (floor, so 1,003,854 of Tiny
  // Shakespeare's 1,115,394 characters), the rest validate.
  int64_t n_train = static_cast<int64_t>(std::floor(double(n) * (1.0 - cfg.val_fraction)));
  int64_t n_val = n - n_train;
  if (n_train < need || (n_val > 0 && n_val < need))
    throw DataError(where + ": " + std::to_string(n) + " tokens split into " + std::to_string(n_train) + " train + " +
                    std::to_string(n_val) + " val, but each split needs at least block_size + 1 = " +
                    std::to_string(need) + " (change data.val_fraction or data.block_size)");
  data.train = std::make_shared<const std::vector<int32_t>>(ct.ids.begin(), ct.ids.begin() + n_train);
  data.val = std::make_shared<const std::vector<int32_t>>(ct.ids.begin() + n_train, ct.ids.end());
  data.tokenizer = tokenizer;
  data.description = where + ": " + std::to_string(n) + " " + tokenizer->kind() + " tokens (vocab " +
                     std::to_string(tokenizer->vocab_size()) + "), " + std::to_string(n_train) + " train / " +
                     std::to_string(n_val) + " val";
  return data;
}

}  // namespace sf::data
