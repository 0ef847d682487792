// bpe_tokenizer.cpp: encoding with learned merges, decoding, JSON. Training is in bpe_train.cpp.
#include "data/bpe_tokenizer.h"

#include <cstdint>
#include <queue>

#include "autograd/errors.h"
#include "autograd/json_int.h"
#include "data/bpe_pretokenize.h"

namespace sf::data {

BpeTokenizer::BpeTokenizer(std::vector<Merge> merges, bool gpt2_split)
    : merges_(std::move(merges)), gpt2_split_(gpt2_split) {
  token_bytes_.reserve(256 + merges_.size());
  for (int b = 0; b < 256; ++b) token_bytes_.emplace_back(1, static_cast<char>(b));
  for (size_t r = 0; r < merges_.size(); ++r) {
    const Merge& m = merges_[r];
    int32_t id = static_cast<int32_t>(256 + r);
    if (m.left < 0 || m.left >= id || m.right < 0 || m.right >= id)
      throw DataError("bpe tokenizer: merge " + std::to_string(r) + " (" + std::to_string(m.left) + ", " +
                      std::to_string(m.right) + ") uses a token that does not exist yet");
    if (!rank_of_.emplace(pair_key(m.left, m.right), static_cast<int32_t>(r)).second)
      throw DataError("bpe tokenizer: merge " + std::to_string(r) + " repeats an earlier merge");
    token_bytes_.push_back(token_bytes_[static_cast<size_t>(m.left)] + token_bytes_[static_cast<size_t>(m.right)]);
  }
}

// Merges inside one chunk: a linked list of tokens and a min-heap of (rank, position) for
// every adjacent pair that has a merge. Entries made stale by earlier merges are skipped.
void BpeTokenizer::encode_chunk(std::string_view chunk, std::vector<int32_t>& out) const {
  const int32_t n = static_cast<int32_t>(chunk.size());
  if (n == 1) {
    out.push_back(static_cast<unsigned char>(chunk[0]));
    return;
  }
  std::vector<int32_t> sym(static_cast<size_t>(n)), next(static_cast<size_t>(n)), prev(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    sym[i] = static_cast<unsigned char>(chunk[static_cast<size_t>(i)]);
    next[i] = i + 1 < n ? i + 1 : -1;
    prev[i] = i - 1;
  }
  struct Entry {
    int32_t rank, pos, left, right;
  };
  auto later = [](const Entry& a, const Entry& b) { return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos; };
  std::priority_queue<Entry, std::vector<Entry>, decltype(later)> heap(later);
  auto push_pair = [&](int32_t pos) {
    if (pos < 0 || next[pos] < 0) return;
    auto it = rank_of_.find(pair_key(sym[pos], sym[next[pos]]));
    if (it != rank_of_.end()) heap.push({it->second, pos, sym[pos], sym[next[pos]]});
  };
  for (int32_t i = 0; i + 1 < n; ++i) push_pair(i);
  while (!heap.empty()) {
    Entry e = heap.top();
    heap.pop();
    int32_t nx = next[e.pos];
    if (sym[e.pos] != e.left || nx < 0 || sym[nx] != e.right) continue;  // stale
    sym[e.pos] = 256 + e.rank;
    sym[nx] = -1;  // removed
    next[e.pos] = next[nx];
    if (next[nx] >= 0) prev[next[nx]] = e.pos;
    push_pair(prev[e.pos]);
    push_pair(e.pos);
  }
  for (int32_t i = 0; i >= 0; i = next[i]) out.push_back(sym[i]);
}

std::vector<int32_t> BpeTokenizer::encode(std::string_view text) const {
  std::vector<int32_t> out;
  out.reserve(text.size() / 2);
  if (text.empty()) return out;
  if (gpt2_split_) {
    for (std::string_view chunk : pretokenize_gpt2(text)) encode_chunk(chunk, out);
  } else {
    encode_chunk(text, out);
  }
  return out;
}

std::string BpeTokenizer::decode(const std::vector<int32_t>& ids) const {
  check_ids(ids, vocab_size(), "bpe tokenizer decode");
  std::string out;
  for (int32_t id : ids) out += token_bytes_[static_cast<size_t>(id)];
  return out;
}

nlohmann::json BpeTokenizer::to_json() const {
  nlohmann::json merges = nlohmann::json::array();
  for (const Merge& m : merges_) merges.push_back({m.left, m.right});
  return {
      {"type", "bpe"}, {"pre_split", gpt2_split_ ? "gpt2" : "none"}, {"vocab_size", vocab_size()}, {"merges", merges}};
}

BpeTokenizer BpeTokenizer::from_json(const nlohmann::json& j, const std::string& where) {
  auto bad = [&](const std::string& what) { return DataError(where + ": bpe tokenizer " + what); };
  if (!j.contains("merges") || !j["merges"].is_array()) throw bad("needs an array field \"merges\"");
  bool gpt2 = true;
  if (j.contains("pre_split")) {
    if (j["pre_split"] == "gpt2") gpt2 = true;
    else if (j["pre_split"] == "none") gpt2 = false;
    else throw bad("field \"pre_split\" must be \"gpt2\" or \"none\"");
  }
  auto id = [](const nlohmann::json& t) { return json_int(t, INT32_MIN, INT32_MAX).has_value(); };
  std::vector<Merge> merges;
  for (const auto& m : j["merges"]) {
    if (!m.is_array() || m.size() != 2 || !id(m[0]) || !id(m[1]))
      throw bad("merge " + std::to_string(merges.size()) + " must be a pair of token ids");
    merges.push_back({m[0].get<int32_t>(), m[1].get<int32_t>()});
  }
  if (j.contains("vocab_size") && j["vocab_size"] != 256 + merges.size())
    throw bad("field \"vocab_size\" does not equal 256 + the number of merges");
  try {
    return BpeTokenizer(std::move(merges), gpt2);
  } catch (const DataError& e) { throw DataError(where + ": " + e.what()); }
}

}  // namespace sf::data
