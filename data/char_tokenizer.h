// char_tokenizer.h: one token per Unicode code point ("我喜欢苹果" is 5 tokens).
//
// The vocabulary is the sorted set of code points in the training text; token id i is the i-th
// smallest. With use_unk, one extra id (the last, vocab_size-1) stands for every character not
// in the vocabulary and decodes to U+FFFD; without it, such a character is a DataError naming
// the character and its position. decode(encode(s)) == s for any s made of known characters.
#pragma once
#include <unordered_map>

#include "data/tokenizer.h"

namespace sf::data {

class CharTokenizer : public Tokenizer {
 public:
  // The vocabulary of `text` (UTF-8; DataError naming `where` and the byte offset otherwise).
  static CharTokenizer build(std::string_view text, bool use_unk = false, const std::string& where = "text");
  // From code points in id order (must be distinct).
  CharTokenizer(std::vector<char32_t> chars, bool use_unk);

  std::vector<int32_t> encode(std::string_view text) const override;
  std::string decode(const std::vector<int32_t>& ids) const override;
  int32_t vocab_size() const override;
  std::string kind() const override { return "char"; }
  // {"type": "char", "chars": "\n !&...z" (all characters in id order), "unk": false}
  nlohmann::json to_json() const override;
  static CharTokenizer from_json(const nlohmann::json& j, const std::string& where);

  const std::vector<char32_t>& chars() const { return chars_; }
  bool use_unk() const { return use_unk_; }
  int32_t unk_id() const { return use_unk_ ? static_cast<int32_t>(chars_.size()) : -1; }

 private:
  std::vector<char32_t> chars_;                  // id -> code point
  std::unordered_map<char32_t, int32_t> id_of_;  // code point -> id
  int32_t ascii_[128];                           // fast path for ASCII, -1 when absent
  bool use_unk_ = false;
};

}  // namespace sf::data
