// seq2seq_tasks.h: synthetic sequence-to-sequence tasks for the encoder-decoder Transformer.
//
//   copy      a b c      -> a b c
//   reverse   a b c      -> c b a
//   sort      c a b a    -> a a b c
//   addition  4 7 + 8 5  -> 1 3 2     (multi-digit numbers, most significant digit first)
//
// Token ids (the same for every task):
//   0 <pad>  fills sources and decoder inputs up to the batch's longest sequence
//   1 <bos>  starts every decoder input
//   2 <eos>  ends every decoder output (generation stops there)
//   3 ...    content: task_symbols symbols shown as a, b, c, ...; for addition the digits
//            0-9 (ids 3-12) and '+' (id 13)
// Examples hold content ids only; seq2seq_batch.h adds <bos>/<eos>/<pad>.
//
// Training examples come from an endless seeded generator; the held-out evaluation set is a
// fixed list of distinct examples drawn with its own seed, and the training generator never
// yields one of them, so evaluation measures generalization, not memory. The held-out set takes
// at most half of the distinct inputs of any one length (for addition: of any pair of digit
// counts), so training sees every length: with 1-8 symbols the 10 one-symbol inputs would
// otherwise all be held out (about 62 of 500 draws have length 1), and the model never trained
// on them.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "autograd/tensor.h"

namespace sf::data {

enum class TaskKind { copy, reverse, sort, addition };
// "copy", "reverse", "sort", "addition": how a task is named in a checkpoint's data state and
// in messages (the config's names are train/options.h's).
const char* task_name(TaskKind task);

struct Seq2SeqConfig {
  TaskKind task = TaskKind::copy;  // key data.dataset
  int64_t min_len = 1;             // shortest source in items; for addition, digits per number
  int64_t max_len = 8;             // longest source in items; for addition, digits per number
  int64_t num_symbols = 10;        // copy/reverse/sort: distinct content symbols (addition: 10 digits)
  int64_t eval_size = 500;         // examples in the held-out set (at most half of each length's inputs)
  uint64_t eval_seed = 4242;       // seed of the held-out set (fixed, independent of the run's seed)
};

struct Example {
  std::vector<int32_t> src;  // content ids, no special tokens
  std::vector<int32_t> tgt;
};

inline constexpr int32_t kPad = 0, kBos = 1, kEos = 2, kFirstSymbol = 3;

// Validates a config: ConfigError naming data.task_min_len / data.task_max_len /
// data.task_symbols / data.task_eval_size.
void check_seq2seq_config(const Seq2SeqConfig& cfg);

// The longest sequence a task's model reads or writes, in tokens, for sources of at most
// `max_len` items (digits per number for addition): the longest source, or the longest target
// with <bos> (the decoder's input) or <eos> (its output) added.
int64_t longest_sequence(TaskKind task, int64_t max_len);

// The answer to `src` for a task (content ids in, content ids out).
std::vector<int32_t> solve(TaskKind task, const std::vector<int32_t>& src);

class Seq2SeqTask {
 public:
  Seq2SeqTask(const Seq2SeqConfig& cfg, uint64_t seed);

  int32_t vocab_size() const;                                    // 3 special tokens + content symbols
  std::string token_name(int32_t id) const;                      // "<pad>", "<bos>", "<eos>", "a", "7", "+"
  std::string to_string(const std::vector<int32_t>& ids) const;  // names joined by spaces
  int64_t max_src_len() const;                                   // longest source (addition: 2 * max_len + 1)
  int64_t max_tgt_len() const;                                   // longest target, without <bos>/<eos>

  Example next();  // the next training example
  std::vector<Example> next_batch(int64_t batch_size);
  const std::vector<Example>& eval_set() const { return eval_; }

  // {"kind": "seq2seq", "task": ..., "rng": [4 words], "examples": n}
  nlohmann::json get_state() const;
  void set_state(const nlohmann::json& state);  // DataError when it is another task's state

 private:
  Example sample(Generator& gen) const;
  static std::string key(const std::vector<int32_t>& src);
  Seq2SeqConfig cfg_;
  TaskKind kind_;
  Generator gen_;
  int64_t drawn_ = 0;
  std::vector<Example> eval_;
  std::unordered_set<std::string> eval_keys_;
};

// Exact-match accuracy: the fraction of examples whose predicted target equals the true one
// exactly. Each prediction is cut at its first <eos> (if any) before comparing.
double exact_match_accuracy(const std::vector<std::vector<int32_t>>& predictions, const std::vector<Example>& examples);

}  // namespace sf::data
