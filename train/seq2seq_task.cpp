// seq2seq_task.cpp: the encoder-decoder Transformer learning a synthetic sequence-to-sequence
// task (copy, reverse, sort, addition), scored by exact match on a fixed held-out set.
#include <cmath>
#include <cstdio>

#include "autograd/errors.h"
#include "autograd/ops.h"
#include "data/saved_state.h"
#include "data/seq2seq_batch.h"
#include "data/seq2seq_tasks.h"
#include "nn/transformer.h"
#include "train/inspect.h"
#include "train/models.h"
#include "train/task.h"

namespace sf {

using json = nlohmann::json;

namespace {

data::Seq2SeqConfig task_config(const Config& c) {
  data::Seq2SeqConfig t;
  t.task = seq2seq_task_of(c.data.dataset);
  t.min_len = c.data.task_min_len;
  t.max_len = c.data.task_max_len;
  t.num_symbols = c.data.task_symbols;
  t.eval_size = c.data.task_eval_size;
  check_task_fits_model(c);  // before the task draws any example
  return t;
}

class Seq2SeqTask : public Task {
 public:
  Seq2SeqTask(const Config& c, int64_t micro_batches)
      : config_(c), cfg_(task_config(c)), task_(cfg_, static_cast<uint64_t>(c.train.seed)) {
    micro_batches_ = micro_batches;
    check_model_size(c, task_.vocab_size());
    model_ = std::make_unique<Transformer>(transformer_config_of(c, task_.vocab_size()));
  }

  Module& model() override { return *model_; }

  // Teacher forcing: the decoder reads <bos> + target and predicts target + <eos>.
  Tensor loss_on(const data::Seq2SeqBatch& b, double label_smoothing) {
    Tensor logits = model_->forward(b.src, b.tgt_in, b.src_pad_mask, b.tgt_pad_mask);  // (B, U, V)
    return cross_entropy(logits, b.tgt_out, -100, label_smoothing);
  }

  // Each micro-batch is padded on its own and its loss is the mean over its own target tokens, so
  // with several micro-batches the step's loss is the mean of their means (as in nanoGPT's
  // accumulation), not exactly the mean over all the global batch's tokens.
  void next_batch() override { examples_ = task_.next_batch(micro_batches_ * config_.train.batch_size); }
  Tensor micro_batch_loss(int64_t k) override {
    const auto B = static_cast<std::ptrdiff_t>(config_.train.batch_size);
    std::vector<data::Example> micro(examples_.begin() + k * B, examples_.begin() + (k + 1) * B);
    data::Seq2SeqBatch b = data::collate(micro);
    last_tokens_ = b.src.numel() + b.tgt_in.numel();
    return loss_on(b, config_.train.label_smoothing);
  }

  double estimate_loss(const std::string& split, int64_t iters, uint64_t seed) override {
    EvalMode mode(*model_);
    data::Seq2SeqTask fresh(cfg_, seed);  // "train": new examples from the training distribution
    Generator gen(seed);
    const auto& held_out = task_.eval_set();
    double total = 0;
    for (int64_t i = 0; i < iters; ++i) {
      std::vector<data::Example> examples;
      if (split == "train") {
        examples = fresh.next_batch(config_.train.batch_size);
      } else {  // "val": random examples of the held-out set
        for (int64_t j = 0; j < config_.train.batch_size; ++j)
          examples.push_back(held_out[static_cast<size_t>(gen.randint(static_cast<int64_t>(held_out.size())))]);
      }
      total += loss_on(data::collate(examples), 0.0).item();
    }
    return total / static_cast<double>(iters);
  }

  // Greedy decoding (KV cache) of examples; predictions without <bos>, cut at <eos>.
  std::vector<std::vector<int32_t>> decode(const std::vector<data::Example>& examples) {
    data::Seq2SeqBatch b = data::collate(examples);
    IntTensor out = model_->greedy_decode(b.src, b.src_pad_mask, data::kBos, data::kEos, task_.max_tgt_len() + 1);
    std::vector<std::vector<int32_t>> preds;
    const int64_t L = out.shape[1];
    for (int64_t r = 0; r < out.shape[0]; ++r) {
      std::vector<int32_t> p;
      for (int64_t t = 1; t < L; ++t) {  // skip <bos>
        int32_t id = out[r * L + t];
        if (id == data::kEos) break;
        p.push_back(id);
      }
      preds.push_back(std::move(p));
    }
    return preds;
  }

  EvalReport full_eval() override {
    EvalMode mode(*model_);
    const auto& held_out = task_.eval_set();
    const size_t B = static_cast<size_t>(config_.train.batch_size);
    double loss_sum = 0;
    int64_t targets = 0;
    std::vector<std::vector<int32_t>> preds;
    for (size_t i = 0; i < held_out.size(); i += B) {
      std::vector<data::Example> chunk(
          held_out.begin() + static_cast<std::ptrdiff_t>(i),
          held_out.begin() + static_cast<std::ptrdiff_t>(std::min(i + B, held_out.size())));
      data::Seq2SeqBatch b = data::collate(chunk);
      int64_t n = 0;  // scored targets in this batch (the mean is over them)
      for (int32_t y : b.tgt_out.data) n += y != -100;
      loss_sum += loss_on(b, 0.0).item() * static_cast<double>(n);
      targets += n;
      for (auto& p : decode(chunk)) preds.push_back(std::move(p));
    }
    EvalReport r;
    r.loss = loss_sum / static_cast<double>(targets);
    r.perplexity = std::exp(r.loss);
    r.accuracy = data::exact_match_accuracy(preds, held_out);
    r.examples = static_cast<int64_t>(held_out.size());
    r.detail = std::to_string(held_out.size()) + " held-out examples, greedy decoding";
    return r;
  }

  int64_t tokens_per_step() const override {
    return last_tokens_ ? last_tokens_ : config_.train.batch_size * (task_.max_src_len() + task_.max_tgt_len() + 1);
  }

  std::vector<std::string> samples(int64_t count, int64_t, uint64_t) override {
    EvalMode mode(*model_);
    const auto& held_out = task_.eval_set();
    std::vector<data::Example> shown(held_out.begin(),
                                     held_out.begin() + std::min<std::ptrdiff_t>(count, held_out.size()));
    std::vector<std::vector<int32_t>> preds = decode(shown);
    std::vector<std::string> lines;
    for (size_t i = 0; i < shown.size(); ++i) {
      bool ok = preds[i] == shown[i].tgt;
      lines.push_back(task_.to_string(shown[i].src) + "  ->  " + task_.to_string(preds[i]) +
                      (ok ? "   (right)" : "   (expected " + task_.to_string(shown[i].tgt) + ")"));
    }
    return lines;
  }

  json data_state() const override {
    return {{"task", task_.get_state()}, {"dropout_rng", model_->generator_rng().state()}};
  }
  void set_data_state(const json& s) override {
    if (!s.contains("task") || !s.contains("dropout_rng"))
      throw CheckpointError("data state: missing \"task\" or \"dropout_rng\"");
    // All or nothing: the dropout words are checked before the task's state (itself all or
    // nothing) goes in.
    const std::vector<uint64_t> dropout = data::rng_state_from_json(s["dropout_rng"], "data state: dropout_rng");
    task_.set_state(s["task"]);
    model_->generator_rng().set_state(dropout);
  }
  // The "vocabulary" of a task is fixed by its config: special tokens, then the symbols.
  json tokenizer_json() const override {
    json names = json::array();
    for (int32_t i = 0; i < task_.vocab_size(); ++i) names.push_back(task_.token_name(i));
    return {{"type", "seq2seq_task"}, {"task", data::task_name(cfg_.task)}, {"tokens", names}};
  }
  // Cross-attention over the first `max_examples` held-out examples, with teacher forcing: the
  // mean attention (over heads) of each decoder layer on the source position the output aligns
  // with, and the maps of the first example. (inspect.h)
  CrossAttentionReport cross_attention(int64_t max_examples) {
    CrossAttentionReport r;
    r.alignment = cfg_.task == data::TaskKind::reverse ? "mirrored"
                  : cfg_.task == data::TaskKind::copy  ? "same position"
                                                       : "";
    const auto& held_out = task_.eval_set();
    std::vector<data::Example> chosen(
        held_out.begin(), held_out.begin() + static_cast<std::ptrdiff_t>(
                                                 std::min<size_t>(held_out.size(), static_cast<size_t>(max_examples))));
    if (chosen.empty()) return r;
    data::Seq2SeqBatch b = data::collate(chosen);
    EvalMode mode(*model_);
    model_->keep_attention(true);
    model_->forward(b.src, b.tgt_in, b.src_pad_mask, b.tgt_pad_mask);
    model_->keep_attention(false);
    const int64_t B = b.src.shape[0], S = b.src.shape[1], U = b.tgt_in.shape[1], H = config_.model.n_head;
    r.examples = B;
    for (size_t l = 0; l < model_->decoder_layers.size(); ++l) {
      Tensor a = model_->decoder_layers[l].cross_attn.last_attention().to(DType::f64);  // (B, H, U, S)
      const double* w = a.data<double>();
      auto at = [&](int64_t row, int64_t h, int64_t t, int64_t k) { return w[((row * H + h) * U + t) * S + k]; };
      double share = 0;
      int64_t positions = 0;
      for (int64_t row = 0; row < B && !r.alignment.empty(); ++row) {
        const int64_t s_len = b.src_len[static_cast<size_t>(row)], u = b.tgt_len[static_cast<size_t>(row)] - 1;
        for (int64_t t = 0; t < u; ++t) {  // query t predicts target t (the last one, <eos>, aligns with nothing)
          int64_t k = r.alignment == "mirrored" ? s_len - 1 - t : t;
          if (k < 0 || k >= s_len) continue;
          for (int64_t h = 0; h < H; ++h) share += at(row, h, t, k) / static_cast<double>(H);
          ++positions;
        }
      }
      r.aligned_share.push_back(positions ? share / static_cast<double>(positions) : 0.0);
      r.positions = positions;
      // The first example's maps: its decoder inputs (<bos> + target) against its source.
      const int64_t s0 = b.src_len[0], u0 = b.tgt_len[0];
      if (l == 0) {
        for (int64_t t = 0; t < u0; ++t) r.first.labels.push_back(task_.token_name(b.tgt_in[t]));
        for (int64_t k = 0; k < s0; ++k) r.first.key_labels.push_back(task_.token_name(b.src[k]));
        for (int64_t t = 0; t < u0; ++t) r.first.ids.push_back(b.tgt_in[t]);
      }
      r.first.weights.emplace_back(H, std::vector<std::vector<double>>(u0, std::vector<double>(s0)));
      for (int64_t h = 0; h < H; ++h)
        for (int64_t t = 0; t < u0; ++t)
          for (int64_t k = 0; k < s0; ++k) r.first.weights[l][h][t][k] = at(0, h, t, k);
    }
    return r;
  }

  std::string describe_data() const override {
    return "task \"" + std::string(data::task_name(cfg_.task)) + "\", inputs of " + std::to_string(cfg_.min_len) + "-" +
           std::to_string(cfg_.max_len) + (cfg_.task == data::TaskKind::addition ? " digits" : " symbols") +
           ", vocab " + std::to_string(task_.vocab_size()) + ", " + std::to_string(task_.eval_set().size()) +
           " held-out examples";
  }

 private:
  Config config_;
  data::Seq2SeqConfig cfg_;
  data::Seq2SeqTask task_;
  std::unique_ptr<Transformer> model_;
  int64_t last_tokens_ = 0;
  std::vector<data::Example> examples_;  // the global batch drawn last
};

}  // namespace

std::unique_ptr<Task> make_seq2seq_task(const Config& c, int64_t micro_batches) {
  auto task = std::make_unique<Seq2SeqTask>(c, micro_batches);
  return task;
}

CrossAttentionReport cross_attention_report(Task& task, int64_t max_examples) {
  auto* s = dynamic_cast<Seq2SeqTask*>(&task);
  if (!s) throw ConfigError("inspect: cross-attention needs an encoder-decoder (seq2seq) run");
  return s->cross_attention(max_examples);
}

}  // namespace sf
