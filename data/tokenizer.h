// tokenizer.h: the interface shared by the char and byte-level BPE tokenizers, and saving,
// loading and comparing tokenizers as JSON (the tokenizer is saved with every run).
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace sf::data {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // Text -> token ids in [0, vocab_size). Throws DataError on text it cannot represent.
  virtual std::vector<int32_t> encode(std::string_view text) const = 0;
  // Token ids -> text. Throws DataError on an id outside [0, vocab_size).
  virtual std::string decode(const std::vector<int32_t>& ids) const = 0;
  virtual int32_t vocab_size() const = 0;
  virtual std::string kind() const = 0;        // "char" or "bpe"
  virtual nlohmann::json to_json() const = 0;  // {"type": kind(), ...}: everything to rebuild it

  // Fingerprint: the first 16 hex digits of sha256(to_json().dump()); stored in token caches
  // and checkpoints to notice a different vocabulary.
  std::string hash() const;
  void save(const std::filesystem::path& path) const;  // atomically, as pretty JSON
};

// Rebuilds a tokenizer from to_json() output. `where` (a file name) prefixes errors.
std::unique_ptr<Tokenizer> tokenizer_from_json(const nlohmann::json& j, const std::string& where);
std::unique_ptr<Tokenizer> load_tokenizer(const std::filesystem::path& path);

// Throws DataError when `current` differs from the tokenizer saved in a checkpoint (`saved`,
// as JSON), naming `where`, both vocab sizes and the first differing entry.
void check_same_tokenizer(const Tokenizer& current, const nlohmann::json& saved, const std::string& where);

// The bytes of every token, for a byte-level vocabulary (BPE) whose tokens can hold part of a
// character; null for the char tokenizer. The sampler uses it to keep to whole characters
// (SampleOptions::token_bytes in nn/sampling.h).
std::shared_ptr<const std::vector<std::string>> byte_vocabulary(const Tokenizer& t);

// Throws DataError when an id is outside [0, vocab_size); used by decode().
void check_ids(const std::vector<int32_t>& ids, int32_t vocab_size, const char* who);

}  // namespace sf::data
