// text_dataset.h: a language-modelling dataset from your own text: one UTF-8 file, or a folder
// whose .txt files are read in name order and concatenated as they are.
//
// The text is tokenized as a whole (through the token cache next to it), then split by
// position: the first (1 - val_fraction) of the tokens train, the rest validate (as nanoGPT).
// A char tokenizer's vocabulary is built from the whole text, so validation never meets an
// unknown character; a BPE tokenizer is trained on the training part only.
#pragma once
#include <filesystem>
#include <string>

#include "data/lm_batches.h"
#include "data/tokenizer.h"

namespace sf::data {

// Unicode code points, or byte-level BPE trained on the text (key data.tokenizer: "char", "bpe").
enum class TokenizerKind { chars, bpe };

struct TokenizerConfig {
  TokenizerKind type = TokenizerKind::chars;
  bool unk = false;          // char: map unknown characters to an <unk> id instead of failing
  int32_t vocab_size = 512;  // bpe: target vocabulary size (>= 256)
  bool gpt2_split = true;    // bpe: GPT-2 style pre-split before merging
};

struct TextDataConfig {
  std::filesystem::path path;        // a text file, or a folder of .txt files
  double val_fraction = 0.1;         // in [0, 1); 0 means no validation split
  int64_t block_size = 64;           // both splits must hold at least block_size + 1 tokens
  bool cache = true;                 // keep token ids in "<file>.tokens.bin" (folder: "<folder>/.tokens.bin")
  std::filesystem::path cache_path;  // a different cache file (e.g. when the text's folder is shared)
};

// The text of a file or folder, checked (missing, empty, binary, invalid UTF-8: DataError
// naming the file). `files_read` lists the files in the order they were concatenated.
std::string read_corpus(const std::filesystem::path& path, std::vector<std::filesystem::path>* files_read = nullptr);

// Builds (char) or trains (bpe) a tokenizer on `text`.
std::shared_ptr<const Tokenizer> make_tokenizer(const TokenizerConfig& cfg, const std::string& text);

// Loads, tokenizes and splits. With `tokenizer` given (a resumed run or a fine-tune), it is used
// as is; otherwise one is made from `tok_cfg`. Errors name the file and the config key.
LmData load_text_dataset(const TextDataConfig& cfg, const TokenizerConfig& tok_cfg,
                         std::shared_ptr<const Tokenizer> tokenizer = nullptr);

}  // namespace sf::data
