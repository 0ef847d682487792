// bpe_train.cpp: learning BPE merges with incremental pair counts.
//
// A naive trainer recounts every pair of the corpus after each merge: O(corpus x merges).
// Here the corpus is a doubly linked list of tokens, `count` holds each pair's frequency,
// `where` lists the positions where each pair may occur, and a max-heap (with lazy deletion of
// stale entries) finds the most frequent pair. A merge touches only the positions of the
// merged pair and updates the counts of its neighbours' pairs, so the total work is about
// O(corpus + sum of merged occurrences x log). With the GPT-2 pre-split, identical chunks
// (words) are stored once with a weight equal to their frequency.
#include <algorithm>
#include <queue>
#include <unordered_map>

#include "autograd/errors.h"
#include "data/bpe_pretokenize.h"
#include "data/bpe_tokenizer.h"

namespace sf::data {

namespace {

struct Corpus {
  std::vector<int32_t> sym;     // token at each position; -1 once merged into its left neighbour
  std::vector<int32_t> next;    // next live position in the same chunk, -1 at the chunk's end
  std::vector<int32_t> prev;    // previous live position in the same chunk, -1 at its start
  std::vector<int64_t> weight;  // how many times the chunk holding this position occurs
};

// Lays out the distinct chunks end to end (or the whole text as one chunk).
Corpus build_corpus(std::string_view text, bool gpt2_split) {
  std::vector<std::pair<std::string_view, int64_t>> chunks;
  if (gpt2_split) {
    std::unordered_map<std::string_view, int64_t> freq;
    for (std::string_view c : pretokenize_gpt2(text)) ++freq[c];
    chunks.assign(freq.begin(), freq.end());
    std::sort(chunks.begin(), chunks.end());  // a fixed order: training is deterministic
  } else {
    chunks.push_back({text, 1});
  }
  Corpus c;
  for (auto& [chunk, w] : chunks) {
    int32_t start = static_cast<int32_t>(c.sym.size());
    int32_t len = static_cast<int32_t>(chunk.size());
    for (int32_t i = 0; i < len; ++i) {
      c.sym.push_back(static_cast<unsigned char>(chunk[static_cast<size_t>(i)]));
      c.next.push_back(i + 1 < len ? start + i + 1 : -1);
      c.prev.push_back(i > 0 ? start + i - 1 : -1);
      c.weight.push_back(w);
    }
  }
  return c;
}

struct HeapEntry {
  int64_t count;
  uint64_t key;
  // Most frequent first; on ties the smaller pair (left id, then right id), for determinism.
  bool operator<(const HeapEntry& o) const { return count != o.count ? count < o.count : key > o.key; }
};

}  // namespace

BpeTokenizer BpeTokenizer::train(std::string_view text, int32_t vocab_size, bool gpt2_split) {
  if (vocab_size < 256 || vocab_size > (1 << 20))
    throw ConfigError("BPE training: vocab_size " + std::to_string(vocab_size) +
                      " is out of range for byte-level BPE (256 .. 1048576)");
  if (text.size() >= (size_t(1) << 31) - 1) throw DataError("bpe training text is larger than 2 GB; train on a sample");
  Corpus c = build_corpus(text, gpt2_split);

  std::unordered_map<uint64_t, int64_t> count;
  std::unordered_map<uint64_t, std::vector<int32_t>> where;
  for (int32_t i = 0; i < static_cast<int32_t>(c.sym.size()); ++i) {
    if (c.next[i] < 0) continue;
    uint64_t key = pair_key(c.sym[i], c.sym[c.next[i]]);
    count[key] += c.weight[i];
    where[key].push_back(i);
  }
  std::priority_queue<HeapEntry> heap;
  for (auto& [key, n] : count) heap.push({n, key});

  std::vector<Merge> merges;
  std::vector<uint64_t> touched;  // pairs whose count changed during one merge
  auto add = [&](uint64_t key, int64_t delta) {
    count[key] += delta;
    touched.push_back(key);
  };
  while (256 + static_cast<int32_t>(merges.size()) < vocab_size && !heap.empty()) {
    // 1. the most frequent pair (skipping heap entries whose count has changed since)
    HeapEntry top = heap.top();
    heap.pop();
    auto it = count.find(top.key);
    if (it == count.end() || it->second != top.count || top.count <= 0) continue;
    int32_t a = static_cast<int32_t>(top.key >> 32), b = static_cast<int32_t>(top.key & 0xFFFFFFFFu);
    int32_t merged = 256 + static_cast<int32_t>(merges.size());
    merges.push_back({a, b});

    // 2. merge it at each of its positions, left to right, updating neighbouring pair counts
    std::vector<int32_t> positions = std::move(where[top.key]);
    where.erase(top.key);
    std::sort(positions.begin(), positions.end());
    touched.clear();
    for (int32_t pos : positions) {
      int32_t nx = c.next[pos];
      if (c.sym[pos] != a || nx < 0 || c.sym[nx] != b) continue;  // already changed by a merge
      int64_t w = c.weight[pos];
      int32_t p = c.prev[pos], n = c.next[nx];
      add(top.key, -w);
      if (p >= 0) {
        add(pair_key(c.sym[p], a), -w);
        add(pair_key(c.sym[p], merged), w);
        where[pair_key(c.sym[p], merged)].push_back(p);
      }
      if (n >= 0) {
        add(pair_key(b, c.sym[n]), -w);
        add(pair_key(merged, c.sym[n]), w);
        where[pair_key(merged, c.sym[n])].push_back(pos);
      }
      c.sym[pos] = merged;
      c.sym[nx] = -1;
      c.next[pos] = n;
      if (n >= 0) c.prev[n] = pos;
    }
    // 3. re-enter every changed pair with its new count
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (uint64_t key : touched) {
      int64_t n = count[key];
      if (n > 0) heap.push({n, key});
      else count.erase(key);
    }
  }
  return BpeTokenizer(std::move(merges), gpt2_split);
}

}  // namespace sf::data
