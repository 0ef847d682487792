// token_cache.h: token ids of a text saved in a binary file next to it, so a large corpus is
// tokenized once. The cache is trusted only when everything in its header matches:
//
//   offset size  field
//        0    8  magic "SFTOKENS"
//        8    4  format version (1), little-endian uint32
//       12    4  bytes per id (4)
//       16   16  tokenizer fingerprint (Tokenizer::hash(), 16 hex characters)
//       32   16  first 16 bytes of sha256 of the text (a changed text makes the cache stale)
//       48    8  number of ids, little-endian uint64
//       56    8  reserved (zero)
//       64  4*n  the ids, little-endian int32, each checked to be in [0, vocab_size) on load
//
// Anything else (missing, truncated, other tokenizer, other text, ids out of range) means the
// cache is rebuilt. It is written atomically; when it cannot be written (read-only folder) the
// tokens are still returned and the note says why.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "data/tokenizer.h"

namespace sf::data {

struct CachedTokens {
  std::vector<int32_t> ids;
  bool from_cache = false;  // true when read from a valid cache file
  std::string note;         // one line for the log: "read cache ...", "rebuilt cache ...: <why>"
};

// Token ids of `text` under `tok`, through the cache file `cache_path` (empty path: no cache).
CachedTokens encode_with_cache(const std::string& text, const Tokenizer& tok, const std::filesystem::path& cache_path);

// Why `bytes` is not a valid cache for (text_sha, tok); empty string when it is valid.
std::string cache_problem(const std::string& bytes, const std::string& text_sha, const Tokenizer& tok);

}  // namespace sf::data
