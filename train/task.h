// task.h: what the training loop trains, behind one small interface, so train.cpp reads the same
// for a GPT on a language-modelling corpus (LmTask) and for an encoder-decoder on a
// sequence-to-sequence task (Seq2SeqTask):
//
//   task.next_batch()                 get_batch("train"): the step's global batch, drawn at once
//   loss = task.micro_batch_loss(k)   micro-batch k of it: forward + cross-entropy
//   task.estimate_loss("val", ...)    nanoGPT's estimate: the mean over eval_iters random batches
//   task.full_eval()                  the whole val split (LM) or held-out set (seq2seq)
//
// A task owns its data, its tokenizer and its model; its data position and dropout RNG are part
// of a checkpoint (data_state / set_data_state).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nn/module.h"
#include "train/config.h"

namespace sf {

// A full evaluation: val loss, its perplexity e^loss, and for seq2seq tasks exact-match accuracy.
struct EvalReport {
  double loss = 0;
  double perplexity = 0;
  double accuracy = -1;  // fraction of held-out examples decoded exactly right; -1 for LMs
  int64_t examples = 0;  // windows (LM) or examples (seq2seq) evaluated
  std::string detail;    // one line: "1742 windows of 64 tokens", ...
};

// Size of a model before it is built, to refuse absurd configs early.
struct ModelSizeEstimate {
  int64_t parameters = 0;
  double state_bytes = 0;        // weights + gradients + optimizer state (float32)
  double activation_bytes = 0;   // what one training step keeps for backward
  std::string describe() const;  // "12.3M parameters, about 1.2 GB to train"
};
ModelSizeEstimate estimate_model_size(const Config& c, int64_t vocab_size);
// Throws ConfigError naming the estimate when the model is beyond 2e9 parameters or would need
// more memory than this machine has.
void check_model_size(const Config& c, int64_t vocab_size);

// Evaluation scope: dropout off and no graph recorded; the module's mode is restored after.
class EvalMode {
 public:
  explicit EvalMode(Module& m) : m_(m), was_training_(m.training()) { m_.eval(); }
  ~EvalMode() { m_.train(was_training_); }
  EvalMode(const EvalMode&) = delete;
  EvalMode& operator=(const EvalMode&) = delete;

 private:
  Module& m_;
  bool was_training_;
  NoGradGuard no_grad_;
};

class Task {
 public:
  virtual ~Task() = default;
  virtual Module& model() = 0;
  // Draws the next global training batch: micro_batches() micro-batches of train.batch_size rows
  // (LM) or examples (seq2seq), drawn as one batch of micro_batches() * batch_size, so micro-batch
  // k is its rows [k * batch_size, (k + 1) * batch_size). The global batch is the concatenation of
  // its micro-batches whichever rank computes which, and does not depend on how it is split.
  virtual void next_batch() = 0;
  // The mean loss of the model on micro-batch k of the batch drawn last (with graph).
  virtual Tensor micro_batch_loss(int64_t k) = 0;
  // Micro-batches per global batch: train.grad_accum_steps * ranks (see make_task).
  int64_t micro_batches() const { return micro_batches_; }
  // Draws a batch and returns the loss of its first micro-batch (the whole batch when
  // train.grad_accum_steps is 1 in one process).
  Tensor train_loss() {
    next_batch();
    return micro_batch_loss(0);
  }
  // Restarts the dropout generator from `seed`: with several micro-batches per step, the loop gives
  // each its own stream, so that its masks do not depend on which rank computes it.
  virtual void seed_dropout(uint64_t seed) {}
  // Mean loss over `iters` random batches of `split` ("train" or "val"), drawn from a generator
  // seeded with `seed` (so evaluating never disturbs the training stream). No graph.
  virtual double estimate_loss(const std::string& split, int64_t iters, uint64_t seed) = 0;
  // The whole validation split / held-out set.
  virtual EvalReport full_eval() = 0;
  // Tokens the model reads per training step (for tokens/s).
  virtual int64_t tokens_per_step() const = 0;
  // The best loss any model can reach on this data (nats/token), or -1 when unknown.
  virtual double entropy_floor() const { return -1; }
  // A few lines of model output for the log: generated text, or decoded test examples.
  virtual std::vector<std::string> samples(int64_t count, int64_t max_tokens, uint64_t seed) = 0;
  // Everything random that training advances: data position and the dropout generator.
  virtual nlohmann::json data_state() const = 0;
  virtual void set_data_state(const nlohmann::json& state) = 0;
  // The tokenizer as JSON (saved with the run), and a one-line description of the data.
  virtual nlohmann::json tokenizer_json() const = 0;
  virtual std::string describe_data() const = 0;
  // sha256 of the training data as the model sees it (the token ids of both splits), so that a
  // resumed run can tell it is continuing on the same data; "" when the data is generated from
  // the config alone (seq2seq tasks).
  virtual std::string data_sha256() const { return ""; }
  // One line about the samples that only this data gives meaning to ("" when none): for the Tang
  // and Song poems, the share of generated clauses of 5 or 7 characters beside the corpus's.
  virtual std::string sample_report(const std::vector<std::string>& samples) const { return ""; }

 protected:
  int64_t micro_batches_ = 1;
};

// Builds the data (DataError naming the file) and, after check_model_size, the model, with the
// weights initialised from train.seed. With `tokenizer` (a resumed run, or a saved model being
// evaluated) that vocabulary is used instead of building one. Its training batches are global
// batches for `ranks` processes: train.grad_accum_steps * ranks micro-batches of batch_size.
std::unique_ptr<Task> make_task(const Config& c, const nlohmann::json& tokenizer = nullptr, int64_t ranks = 1);

class GPT;
class Transformer;
std::unique_ptr<Task> make_lm_task(const Config& c, const nlohmann::json& tokenizer,
                                   int64_t micro_batches);                        // lm_task.cpp
std::unique_ptr<Task> make_seq2seq_task(const Config& c, int64_t micro_batches);  // seq2seq_task.cpp
// The model inside a task, when it is of that kind (sampling needs the GPT), else null.
GPT* as_gpt(Task& task);
// The GPT a config describes, for a vocabulary of `vocab_size`, without any data (sampling from a
// saved run needs only the model and the tokenizer, both in the run folder).
std::unique_ptr<GPT> make_gpt(const Config& c, int64_t vocab_size);

}  // namespace sf
