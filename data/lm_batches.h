// lm_batches.h: language-modelling batches from a stream of token ids.
//
// A window of T+1 consecutive tokens gives one row: inputs are its first T tokens, targets its
// last T (each input's next token). Batches are (B, T) IntTensors.
//
//   tokens  :  t0 t1 t2 t3 t4        (a window, T = 4)
//   inputs  :  t0 t1 t2 t3
//   targets :  t1 t2 t3 t4
//
// Training draws windows at random starts (RandomWindows, seeded, resumable). Evaluation sweeps
// non-overlapping windows in order (SequentialWindows): window k covers tokens
// [k*T, k*T + T], so every target from token 1 to token W*T is scored exactly once, where
// W = (n - 1) / T windows fit. The tail (the last (n - 1) - W*T targets, fewer than T) is not
// scored; dropped_targets() says how many.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autograd/int_tensor.h"
#include "autograd/tensor.h"
#include "autograd/torch_generator.h"
#include "data/tokenizer.h"

namespace sf::data {

using Tokens = std::shared_ptr<const std::vector<int32_t>>;

struct LmBatch {
  IntTensor inputs;   // (B, T)
  IntTensor targets;  // (B, T), targets[b][t] = inputs[b][t+1], the last one from beyond the inputs
};

// A language-modelling corpus split for training: what every LM data source produces.
struct LmData {
  Tokens train, val;  // token ids; val may be empty (val_fraction 0)
  std::shared_ptr<const Tokenizer> tokenizer;
  std::string description;         // one line for the log, e.g. "input.txt: 1003854 train ..."
  double entropy_floor = -1;       // nats/token the best model reaches; -1 when unknown
  std::vector<std::string> notes;  // cache messages etc., for the log
};

// The window starting at `start` as row `row` of a batch (throws ShapeError when out of range).
void fill_row(const std::vector<int32_t>& tokens, int64_t start, int64_t block_size, int64_t row, LmBatch& batch);

// The rows of batches [begin, end) as one batch (all (B_i, T) with the same T): evaluation runs
// several batches through one forward, which is faster and gives the same mean loss.
LmBatch concat_rows(const std::vector<LmBatch>& batches, size_t begin, size_t end);

// Training batches: B windows at uniform random starts in [0, n - T - 1] per batch.
class RandomWindows {
 public:
  // DataError naming `where` when the tokens hold fewer than block_size + 1 ids.
  RandomWindows(Tokens tokens, int64_t block_size, int64_t batch_size, uint64_t seed,
                const std::string& where = "train split");
  LmBatch next();
  int64_t batches_drawn() const { return drawn_; }
  // {"kind": "random_windows", "seed": s, "rng": [4 words], "batches": n, "tokens": n_tokens}
  nlohmann::json get_state() const;
  void set_state(const nlohmann::json& state);  // DataError when it does not fit this data

 private:
  Tokens tokens_;
  int64_t block_size_, batch_size_;
  uint64_t seed_;
  Generator gen_;
  int64_t drawn_ = 0;
};

// Batches as nanoGPT's get_batch draws them, from a PyTorch generator that the weight init and
// the evaluation share (train.rng "torch"): the B starts are torch.randint(n - T, (B,)).
// With `prefetch`, a batch is drawn ahead, as soon as the previous one is handed out (and the
// first when constructed): train.py fetches batch k+1 right after the forward of batch k, so an
// evaluation before step k+1 draws after it. Without, each next() draws its own batch.
class TorchWindows {
 public:
  TorchWindows(Tokens tokens, int64_t block_size, int64_t batch_size, std::shared_ptr<TorchGenerator> gen,
               bool prefetch, const std::string& where = "train split");
  LmBatch next();
  int64_t batches_drawn() const { return drawn_; }
  // {"kind": "torch_windows", "pending": [starts of the batch drawn ahead], "batches": n,
  //  "tokens": n_tokens, ...}. The shared generator's state is saved by its owner.
  nlohmann::json get_state() const;
  void set_state(const nlohmann::json& state);  // DataError when it does not fit this data

 private:
  std::vector<int64_t> draw_starts();
  Tokens tokens_;
  int64_t block_size_, batch_size_;
  std::shared_ptr<TorchGenerator> gen_;
  bool prefetch_;
  std::vector<int64_t> pending_;
  int64_t drawn_ = 0;
};

// Evaluation batches: non-overlapping windows in order, batch_size per batch (the last batch
// may have fewer rows). Deterministic, so it has no state.
class SequentialWindows {
 public:
  SequentialWindows(Tokens tokens, int64_t block_size, int64_t batch_size, const std::string& where = "val split");
  int64_t num_windows() const { return windows_; }
  int64_t num_batches() const { return (windows_ + batch_size_ - 1) / batch_size_; }
  int64_t dropped_targets() const;
  LmBatch batch(int64_t i) const;  // 0 <= i < num_batches()

 private:
  Tokens tokens_;
  int64_t block_size_, batch_size_, windows_;
};

}  // namespace sf::data
