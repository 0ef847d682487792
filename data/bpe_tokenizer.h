// bpe_tokenizer.h: byte-level byte-pair encoding, as in GPT-2.
//
// The base vocabulary is the 256 byte values, so every byte string can be encoded and
// decode(encode(s)) == s exactly, for any bytes (valid UTF-8 or not). Training repeatedly
// merges the most frequent adjacent pair of tokens into a new token, id 256 + merge rank,
// until vocab_size tokens exist. With the GPT-2 pre-split, merges never cross the boundaries
// of pretokenize_gpt2's chunks. Encoding replays the merges: among all adjacent pairs that
// have a merge, the one with the lowest rank (leftmost on ties) is merged first.
#pragma once
#include <unordered_map>

#include "data/tokenizer.h"

namespace sf::data {

class BpeTokenizer : public Tokenizer {
 public:
  struct Merge {
    int32_t left, right;  // the pair of token ids merged into token 256 + rank
  };
  // Learns merges from `text` until the vocabulary has `vocab_size` tokens (>= 256; fewer when
  // no pair is left to merge). ConfigError naming "vocab_size" when it is out of range.
  static BpeTokenizer train(std::string_view text, int32_t vocab_size, bool gpt2_split = true);
  BpeTokenizer(std::vector<Merge> merges, bool gpt2_split);

  std::vector<int32_t> encode(std::string_view text) const override;
  std::string decode(const std::vector<int32_t>& ids) const override;
  int32_t vocab_size() const override { return static_cast<int32_t>(token_bytes_.size()); }
  std::string kind() const override { return "bpe"; }
  // {"type": "bpe", "pre_split": "gpt2" | "none", "vocab_size": V, "merges": [[l, r], ...]}
  nlohmann::json to_json() const override;
  static BpeTokenizer from_json(const nlohmann::json& j, const std::string& where);

  const std::vector<Merge>& merges() const { return merges_; }
  const std::string& token_bytes(int32_t id) const { return token_bytes_.at(static_cast<size_t>(id)); }
  bool gpt2_split() const { return gpt2_split_; }

 private:
  void encode_chunk(std::string_view chunk, std::vector<int32_t>& out) const;
  std::vector<Merge> merges_;
  std::vector<std::string> token_bytes_;           // id -> the bytes it stands for
  std::unordered_map<uint64_t, int32_t> rank_of_;  // pair_key(left, right) -> merge rank
  bool gpt2_split_ = true;
};

// The pair (left, right) packed into one 64-bit key.
inline uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

}  // namespace sf::data
