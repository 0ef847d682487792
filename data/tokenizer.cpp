// tokenizer.cpp: JSON round trip, fingerprints and the checkpoint vocabulary check.
#include "data/tokenizer.h"

#include "autograd/errors.h"
#include "data/bpe_tokenizer.h"
#include "data/char_tokenizer.h"
#include "data/file_io.h"
#include "data/sha256.h"

namespace sf::data {

std::string Tokenizer::hash() const { return sha256_hex(to_json().dump()).substr(0, 16); }

void Tokenizer::save(const std::filesystem::path& path) const { write_file_atomic(path, to_json().dump(1) + "\n"); }

std::unique_ptr<Tokenizer> tokenizer_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string())
    throw DataError(where + ": tokenizer JSON needs a string field \"type\" (\"char\" or \"bpe\")");
  std::string type = j["type"];
  if (type == "char") return std::make_unique<CharTokenizer>(CharTokenizer::from_json(j, where));
  if (type == "bpe") return std::make_unique<BpeTokenizer>(BpeTokenizer::from_json(j, where));
  throw DataError(where + ": unknown tokenizer type " + j["type"].dump() + " (expected \"char\" or \"bpe\")");
}

std::unique_ptr<Tokenizer> load_tokenizer(const std::filesystem::path& path) {
  std::string text = read_file_bytes(path);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw DataError(path.string() + ": not valid JSON");
  return tokenizer_from_json(j, path.string());
}

void check_same_tokenizer(const Tokenizer& current, const nlohmann::json& saved, const std::string& where) {
  auto theirs = tokenizer_from_json(saved, where);
  if (theirs->to_json() == current.to_json()) return;
  std::string msg = where + ": the data's tokenizer does not match the checkpoint's (" + current.kind() + " vocab of " +
                    std::to_string(current.vocab_size()) + " vs checkpoint's " + theirs->kind() + " vocab of " +
                    std::to_string(theirs->vocab_size()) + ")";
  // Name the first token that decodes differently, to help find the cause.
  int32_t n = std::min(current.vocab_size(), theirs->vocab_size());
  for (int32_t id = 0; id < n; ++id) {
    std::string a = current.decode({id}), b = theirs->decode({id});
    if (a != b) {
      msg += "; first difference at id " + std::to_string(id) + ": " +
             nlohmann::json(a).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + " vs " +
             nlohmann::json(b).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      break;
    }
  }
  throw DataError(msg + "; train with the checkpoint's tokenizer.json");
}

void check_ids(const std::vector<int32_t>& ids, int32_t vocab_size, const char* who) {
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] < 0 || ids[i] >= vocab_size)
      throw DataError(std::string(who) + ": token id " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                      " is outside the vocabulary [0, " + std::to_string(vocab_size) + ")");
}

std::shared_ptr<const std::vector<std::string>> byte_vocabulary(const Tokenizer& t) {
  const auto* bpe = dynamic_cast<const BpeTokenizer*>(&t);
  if (!bpe) return nullptr;
  auto bytes = std::make_shared<std::vector<std::string>>();
  for (int32_t id = 0; id < bpe->vocab_size(); ++id) bytes->push_back(bpe->token_bytes(id));
  return bytes;
}

}  // namespace sf::data
