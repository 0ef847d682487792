// lm_task.cpp: a GPT learning to predict the next token of a corpus (the built-in synthetic
// language, your own text, or Tiny Shakespeare), and the model-size estimate every task uses.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>

#include <unistd.h>

#include "autograd/errors.h"
#include "autograd/ops.h"
#include "data/fortune_poems.h"
#include "data/lm_batches.h"
#include "data/saved_state.h"
#include "data/sha256.h"
#include "data/text_dataset.h"
#include "nn/gpt.h"
#include "nn/init.h"
#include "nn/sampling.h"
#include "train/lm_data.h"
#include "train/models.h"
#include "train/task.h"

namespace sf {

using json = nlohmann::json;

// ---- size estimate, before anything is allocated ----

std::string ModelSizeEstimate::describe() const {
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "%.3gM parameters, about %.2g GB to train (%.2g GB weights+grads+optimizer, %.2g GB activations)",
                parameters / 1e6, (state_bytes + activation_bytes) / 1e9, state_bytes / 1e9, activation_bytes / 1e9);
  return buf;
}

ModelSizeEstimate estimate_model_size(const Config& c, int64_t V) {
  const ModelConfig& m = c.model;
  const double C = static_cast<double>(m.n_embd), F = static_cast<double>(m.d_ff ? m.d_ff : 4 * m.n_embd);
  const double P = static_cast<double>(m.block_size), b = m.bias ? 1.0 : 0.0;
  const double ln = C + b * C;
  const double attn = 3 * C * C + b * 3 * C + C * C + b * C;  // q, k, v and the output projection
  const double mlp = F * C + b * F + C * F + b * C;
  const double encoder_block = 2 * ln + attn + mlp;
  const double decoder_block = 3 * ln + 2 * attn + mlp;  // + cross-attention
  const double pos = m.pos_encoding == PosEncoding::learned ? P * C : 0.0;
  const double final_ln = m.norm == NormPlacement::pre ? ln : 0.0;
  double n = 0, acts = 0;
  const double B = static_cast<double>(c.train.batch_size), H = static_cast<double>(m.n_head);
  const double T = static_cast<double>(c.data.block_size ? c.data.block_size : m.block_size);
  const double L = static_cast<double>(m.n_layer);
  if (m.type == ModelType::gpt) {
    n = V * C + pos + L * encoder_block + final_ln + (m.tie_weights ? 0.0 : V * C);
    // Per layer about 16 (B, T, C) tensors and 3 (B, H, T, T) ones are kept for backward;
    // the logits and their gradient are 2-3 (B, T, V).
    acts = L * (B * T * (12 * C + 2 * F) + 3 * B * H * T * T) + 3 * B * T * V;
  } else {
    const double Ld = static_cast<double>(m.n_decoder_layer ? m.n_decoder_layer : m.n_layer);
    n = V * C + 2 * pos + L * encoder_block + Ld * decoder_block + 2 * final_ln + (m.tie_weights ? 0.0 : V * C + V);
    acts = (L + 2 * Ld) * (B * T * (12 * C + 2 * F) + 3 * B * H * T * T) + 3 * B * T * V;
  }
  ModelSizeEstimate e;
  e.parameters = n < 9e18 ? static_cast<int64_t>(n) : INT64_MAX;  // (a cast of a larger double is UB)
  e.state_bytes = 4.0 * 4.0 * n;                                  // weights, gradients, Adam's m and v
  e.activation_bytes = 4.0 * acts;
  return e;
}

static double available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kb;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024.0;
  return static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGE_SIZE));
}

void check_model_size(const Config& c, int64_t vocab_size) {
  ModelSizeEstimate e = estimate_model_size(c, vocab_size);
  if (e.parameters > 2'000'000'000)
    throw ConfigError("model: " + e.describe() + " with vocab " + std::to_string(vocab_size) +
                      "; this CPU framework refuses more than 2e9 parameters (lower model.n_layer or model.n_embd)");
  double need = e.state_bytes + e.activation_bytes, have = available_memory_bytes();
  if (need > have) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.2g GB of memory available", have / 1e9);
    throw ConfigError("model: " + e.describe() + ", more than the " + buf +
                      " (lower train.batch_size, data.block_size, model.n_embd or model.n_layer)");
  }
}

// ---- the model alone (sampling needs no data) ----

std::unique_ptr<GPT> make_gpt(const Config& c, int64_t vocab_size) {
  return std::make_unique<GPT>(gpt_config_of(c, vocab_size));
}

// ---- the language-modelling task ----

namespace {

// Evaluation puts up to this many tokens through one forward (see LmTask::eval_rows).
constexpr int64_t kEvalTokens = 16384;

// Rows [begin, end) of a batch: one micro-batch of a global batch.
data::LmBatch rows_of(const data::LmBatch& batch, int64_t begin, int64_t end) {
  const int64_t T = batch.inputs.shape.at(1);
  auto row = [T](int64_t r) { return static_cast<std::ptrdiff_t>(r * T); };
  data::LmBatch out;
  out.inputs.shape = out.targets.shape = {end - begin, T};
  out.inputs.data.assign(batch.inputs.data.begin() + row(begin), batch.inputs.data.begin() + row(end));
  out.targets.data.assign(batch.targets.data.begin() + row(begin), batch.targets.data.begin() + row(end));
  return out;
}

class LmTask : public Task {
 public:
  // The training windows are drawn a global batch at a time: micro_batches * batch_size starts
  // from one generator, so the global batch is the same however it is split (into micro-batches,
  // or across ranks), and the same as one batch of that size.
  LmTask(const Config& c, data::LmData data, int64_t micro_batches)
      : config_(c),
        data_(std::move(data)),
        T_(c.data.block_size ? c.data.block_size : c.model.block_size),
        train_batches_(data_.train, T_, micro_batches * c.train.batch_size, static_cast<uint64_t>(c.train.seed),
                       "train split") {
    micro_batches_ = micro_batches;
    if (!data_.val || data_.val->size() < static_cast<size_t>(T_ + 1))
      throw DataError(describe_data() + ": the val split holds fewer than block_size + 1 = " + std::to_string(T_ + 1) +
                      " tokens (lower data.block_size or raise data.val_fraction)");
    check_model_size(c, data_.tokenizer->vocab_size());
    model_ = make_gpt(c, data_.tokenizer->vocab_size());
    if (c.train.rng == RngKind::torch) {  // nanoGPT's order: manual_seed, build + init the model, first batch
      torch_rng_ = std::make_shared<TorchGenerator>(static_cast<uint64_t>(c.train.seed));
      init_parameters_like_torch(*model_, c.model.n_layer, *torch_rng_);
      torch_batches_ =
          std::make_unique<data::TorchWindows>(data_.train, T_, micro_batches * c.train.batch_size, torch_rng_,
                                               /*prefetch=*/true, "train split");
    }
  }

  Module& model() override { return *model_; }
  GPT& gpt() { return *model_; }

  void next_batch() override {
    batch_ = torch_batches_ ? torch_batches_->next() : train_batches_.next();  // (M*B, T) each
  }
  Tensor micro_batch_loss(int64_t k) override {
    const int64_t B = config_.train.batch_size;
    data::LmBatch micro = micro_batches_ == 1 ? batch_ : rows_of(batch_, k * B, (k + 1) * B);  // (B, T) each
    Tensor logits = model_->forward(micro.inputs);                                             // (B, T, V)
    return cross_entropy(logits, micro.targets, -1, config_.train.label_smoothing);
  }
  void seed_dropout(uint64_t seed) override { model_->dropout_rng().set_state(Generator(seed).state()); }

  double estimate_loss(const std::string& split, int64_t iters, uint64_t seed) override {
    const data::Tokens& tokens = split == "train" ? data_.train : data_.val;
    // With train.rng "torch" the batches come from the shared generator (nanoGPT's estimate_loss).
    std::optional<data::RandomWindows> own;
    std::optional<data::TorchWindows> torch;
    if (torch_rng_)
      torch.emplace(tokens, T_, config_.train.batch_size, torch_rng_, /*prefetch=*/false, split + " split");
    else own.emplace(tokens, T_, config_.train.batch_size, seed, split + " split");
    // The mean of the batches' mean losses: the batches have the same size, so it is the mean over
    // all their rows, which goes through the model in a few large forwards (bigger matmuls). The
    // batches are drawn as they are needed, a forward's worth at a time (same draws, same order).
    EvalMode mode(*model_);
    const int64_t per_forward = eval_rows() / config_.train.batch_size;
    double total = 0;
    std::vector<data::LmBatch> batches;
    for (int64_t i = 0; i < iters; i += per_forward) {
      const int64_t n = std::min(iters - i, per_forward);
      batches.clear();
      for (int64_t k = 0; k < n; ++k) batches.push_back(torch ? torch->next() : own->next());
      data::LmBatch chunk = data::concat_rows(batches, 0, batches.size());
      total += cross_entropy(model_->forward(chunk.inputs), chunk.targets, -1).item() * static_cast<double>(n);
    }
    return total / static_cast<double>(iters);
  }

  EvalReport full_eval() override {
    // Many windows per forward: every window is scored once either way.
    data::SequentialWindows windows(data_.val, T_, eval_rows(), "val split");
    EvalMode mode(*model_);
    double total = 0;
    int64_t scored = 0;
    for (int64_t i = 0; i < windows.num_batches(); ++i) {
      data::LmBatch batch = windows.batch(i);
      int64_t b = batch.inputs.shape[0];  // every row scores T targets, so weight by rows
      total += cross_entropy(model_->forward(batch.inputs), batch.targets, -1).item() * static_cast<double>(b);
      scored += b;
    }
    EvalReport r;
    r.loss = total / static_cast<double>(scored);
    r.perplexity = std::exp(r.loss);
    r.examples = scored;
    r.detail = std::to_string(scored) + " non-overlapping windows of " + std::to_string(T_) + " tokens";
    return r;
  }

  int64_t tokens_per_step() const override { return config_.train.batch_size * T_; }
  double entropy_floor() const override { return data_.entropy_floor; }

  std::vector<std::string> samples(int64_t count, int64_t max_tokens, uint64_t seed) override {
    Generator gen(seed);
    SampleOptions o;
    o.max_new_tokens = max_tokens;
    o.temperature = 0.8;
    o.top_k = 0;
    o.token_bytes = data::byte_vocabulary(*data_.tokenizer);  // whole characters from a byte-level BPE
    std::vector<std::string> out;
    for (int64_t i = 0; i < count; ++i) {
      // Each sample starts from one token of the val split, as a prompt; a poem sample starts at
      // the beginning of a line, so its first clause is a whole one (see sample_report).
      int32_t first = (*data_.val)[static_cast<size_t>(gen.randint(static_cast<int64_t>(data_.val->size())))];
      if (is_poems()) first = line_start_token().value_or(first);
      out.push_back(data_.tokenizer->decode(sample_gpt(*model_, {first}, o, gen)));
    }
    return out;
  }

  json data_state() const override {
    json s = {{"dropout_rng", model_->dropout_rng().state()}};
    if (torch_batches_) {
      s["train_windows"] = torch_batches_->get_state();
      s["torch_rng"] = torch_rng_->state();
    } else {
      s["train_windows"] = train_batches_.get_state();
    }
    return s;
  }
  void set_data_state(const json& s) override {
    if (!s.contains("train_windows") || !s.contains("dropout_rng"))
      throw CheckpointError("data state: missing \"train_windows\" or \"dropout_rng\"");
    // All or nothing: every part is read and checked before any is assigned. The window samplers'
    // set_state is itself all or nothing, so it goes between the checks and the assignments.
    const std::vector<uint64_t> dropout = data::rng_state_from_json(s["dropout_rng"], "data state: dropout_rng");
    if (torch_batches_) {
      if (!s.contains("torch_rng") || !s["torch_rng"].is_string())
        throw CheckpointError(
            "data state: no PyTorch generator state (\"torch_rng\"); was it saved with train.rng \"xoshiro\"?");
      TorchGenerator torch_rng;
      try {
        torch_rng.set_state(s["torch_rng"].get<std::string>());
      } catch (const Error& e) { throw CheckpointError(std::string("data state: ") + e.what()); }
      torch_batches_->set_state(s["train_windows"]);
      *torch_rng_ = torch_rng;
    } else {
      train_batches_.set_state(s["train_windows"]);
    }
    model_->dropout_rng().set_state(dropout);
  }
  json tokenizer_json() const override { return data_.tokenizer->to_json(); }
  std::string sample_report(const std::vector<std::string>& samples) const override {
    if (!is_poems()) return "";
    // Only whole clauses count: a sample stops after max_tokens, usually inside a clause, so the
    // text after its last punctuation mark or line break is left out.
    std::string generated;
    for (const std::string& s : samples) generated += data::up_to_last_clause_end(s) + "\n";
    int64_t n_generated = 0, n_corpus = 0;
    double ours = 0, corpus = 0;
    try {
      ours = data::five_or_seven_share(generated, &n_generated);
      corpus = data::five_or_seven_share(data_.tokenizer->decode(*data_.train) + data_.tokenizer->decode(*data_.val),
                                         &n_corpus);
    } catch (const DataError&) {  // a byte-level BPE sample may end inside a character
      return "poem form: not measured (the samples are not whole UTF-8 text)";
    }
    char line[200];
    std::snprintf(line, sizeof line,
                  "poem form: %.1f%% of the %lld generated clauses have 5 or 7 characters; the corpus: %.1f%% of %lld",
                  100 * ours, static_cast<long long>(n_generated), 100 * corpus, static_cast<long long>(n_corpus));
    return line;
  }
  std::string data_sha256() const override {  // of the token ids (int32, this machine's byte order)
    std::string bytes;
    for (const data::Tokens& t : {data_.train, data_.val})
      if (t) bytes.append(reinterpret_cast<const char*>(t->data()), t->size() * sizeof(int32_t));
    return data::sha256_hex(bytes);
  }
  std::string describe_data() const override { return data_.description; }
  const data::LmData& data() const { return data_; }

 private:
  bool is_poems() const { return config_.data.dataset == Dataset::tang || config_.data.dataset == Dataset::song; }
  // The token of a line break, when the tokenizer has one of its own.
  std::optional<int32_t> line_start_token() const {
    std::vector<int32_t> ids = data_.tokenizer->encode("\n");
    if (ids.size() != 1) return std::nullopt;
    return ids[0];
  }

  // Rows per evaluation forward: a whole number of training batches, up to kEvalTokens tokens but
  // at most n_layer batches, so that its attention matrices (rows x heads x T x T, one layer at a
  // time without a graph) never outgrow the training step's (every layer's, kept for backward).
  int64_t eval_rows() const {
    const int64_t B = config_.train.batch_size;
    return B * std::clamp<int64_t>(kEvalTokens / (B * T_), 1, config_.model.n_layer);
  }

  Config config_;
  data::LmData data_;
  int64_t T_;
  data::RandomWindows train_batches_;
  data::LmBatch batch_;  // the global batch drawn last, (M*B, T) each
  std::unique_ptr<GPT> model_;
  std::shared_ptr<TorchGenerator> torch_rng_;          // train.rng "torch" only
  std::unique_ptr<data::TorchWindows> torch_batches_;  // train.rng "torch" only
};

}  // namespace

std::unique_ptr<Task> make_lm_task(const Config& c, const json& tokenizer, int64_t micro_batches) {
  return std::make_unique<LmTask>(c, load_lm_data(c, tokenizer), micro_batches);
}

GPT* as_gpt(Task& task) {
  auto* lm = dynamic_cast<LmTask*>(&task);
  return lm ? &lm->gpt() : nullptr;
}

}  // namespace sf
