// char_tokenizer.cpp: code point vocabulary, encode/decode, JSON.
#include "data/char_tokenizer.h"

#include <algorithm>

#include "autograd/errors.h"
#include "data/utf8.h"

namespace sf::data {

CharTokenizer CharTokenizer::build(std::string_view text, bool use_unk, const std::string& where) {
  std::vector<char32_t> cps = utf8_decode(text, where);
  if (cps.empty()) throw DataError(where + ": no characters to build a vocabulary from");
  std::sort(cps.begin(), cps.end());
  cps.erase(std::unique(cps.begin(), cps.end()), cps.end());
  return CharTokenizer(std::move(cps), use_unk);
}

CharTokenizer::CharTokenizer(std::vector<char32_t> chars, bool use_unk) : chars_(std::move(chars)), use_unk_(use_unk) {
  std::fill(ascii_, ascii_ + 128, -1);
  for (size_t i = 0; i < chars_.size(); ++i) {
    char32_t c = chars_[i];
    if (!id_of_.emplace(c, static_cast<int32_t>(i)).second)
      throw DataError("char tokenizer: character " + describe_code_point(c) + " appears twice in the vocabulary");
    if (c < 128) ascii_[c] = static_cast<int32_t>(i);
  }
}

int32_t CharTokenizer::vocab_size() const { return static_cast<int32_t>(chars_.size()) + (use_unk_ ? 1 : 0); }

std::vector<int32_t> CharTokenizer::encode(std::string_view text) const {
  std::vector<char32_t> cps = utf8_decode(text, "char tokenizer input");
  auto id_of = [&](char32_t c) -> int32_t {  // -1 when c is not in the vocabulary
    if (c < 128) return ascii_[c];
    auto it = id_of_.find(c);
    return it == id_of_.end() ? -1 : it->second;
  };
  std::vector<int32_t> ids(cps.size());
  for (size_t i = 0; i < cps.size(); ++i) {
    ids[i] = id_of(cps[i]);
    if (ids[i] >= 0) continue;
    if (use_unk_) {
      ids[i] = unk_id();
      continue;
    }
    // Without <unk> such text cannot be encoded: name the first few such characters and where.
    std::string which;
    size_t count = 0;
    for (size_t j = i; j < cps.size(); ++j) {
      if (id_of(cps[j]) >= 0) continue;
      if (++count <= 5)
        which += (which.empty() ? "" : ", ") + describe_code_point(cps[j]) + " at position " + std::to_string(j);
    }
    if (count > 5) which += ", and " + std::to_string(count - 5) + " more";
    throw DataError("char tokenizer: the text contains characters the vocabulary does not have: " + which +
                    " (the vocabulary is the " + std::to_string(chars_.size()) + " characters of the training text)");
  }
  return ids;
}

std::string CharTokenizer::decode(const std::vector<int32_t>& ids) const {
  check_ids(ids, vocab_size(), "char tokenizer decode");
  std::string out;
  out.reserve(ids.size());
  for (int32_t id : ids) utf8_append(id == unk_id() ? char32_t(0xFFFD) : chars_[static_cast<size_t>(id)], out);
  return out;
}

nlohmann::json CharTokenizer::to_json() const {
  return {{"type", "char"}, {"chars", utf8_encode(chars_)}, {"unk", use_unk_}};
}

CharTokenizer CharTokenizer::from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.contains("chars") || !j["chars"].is_string())
    throw DataError(where + ": char tokenizer needs a string field \"chars\"");
  bool unk = false;
  if (j.contains("unk")) {
    if (!j["unk"].is_boolean()) throw DataError(where + ": char tokenizer field \"unk\" must be true or false");
    unk = j["unk"];
  }
  std::vector<char32_t> cps = utf8_decode(j["chars"].get<std::string>(), where);
  if (cps.empty())  // found by fuzzing: an empty vocabulary encodes nothing and breaks every model
    throw DataError(where + ": char tokenizer field \"chars\" is empty (it lists the vocabulary, one character each)");
  try {
    return CharTokenizer(std::move(cps), unk);
  } catch (const DataError& e) {  // a repeated character: say which file holds it
    throw DataError(where + ": " + e.what());
  }
}

}  // namespace sf::data
