// lm_batches.cpp: random and sequential windows over token ids.
#include "data/lm_batches.h"

#include "autograd/errors.h"
#include "data/saved_state.h"

namespace sf::data {

static LmBatch make_batch(int64_t rows, int64_t block_size) {
  LmBatch b;
  std::vector<int32_t> zeros(static_cast<size_t>(rows * block_size), 0);
  b.inputs = IntTensor({rows, block_size}, zeros);
  b.targets = IntTensor({rows, block_size}, zeros);
  return b;
}

void fill_row(const std::vector<int32_t>& tokens, int64_t start, int64_t block_size, int64_t row, LmBatch& batch) {
  if (start < 0 || start + block_size + 1 > static_cast<int64_t>(tokens.size()))
    throw ShapeError("fill_row: window [" + std::to_string(start) + ", " + std::to_string(start + block_size + 1) +
                     ") is outside " + std::to_string(tokens.size()) + " tokens");
  const int32_t* src = tokens.data() + start;
  int32_t* in = batch.inputs.data.data() + row * block_size;
  int32_t* tg = batch.targets.data.data() + row * block_size;
  for (int64_t t = 0; t < block_size; ++t) {
    in[t] = src[t];
    tg[t] = src[t + 1];
  }
}

LmBatch concat_rows(const std::vector<LmBatch>& batches, size_t begin, size_t end) {
  if (begin >= end || end > batches.size()) throw ShapeError("concat_rows: empty or out-of-range batch range");
  const int64_t T = batches[begin].inputs.shape.at(1);
  LmBatch out;
  int64_t rows = 0;
  for (size_t i = begin; i < end; ++i) {
    if (batches[i].inputs.shape.at(1) != T) throw ShapeError("concat_rows: batches of different block sizes");
    rows += batches[i].inputs.shape.at(0);
    out.inputs.data.insert(out.inputs.data.end(), batches[i].inputs.data.begin(), batches[i].inputs.data.end());
    out.targets.data.insert(out.targets.data.end(), batches[i].targets.data.begin(), batches[i].targets.data.end());
  }
  out.inputs.shape = out.targets.shape = {rows, T};
  return out;
}

static void check_sizes(const Tokens& tokens, int64_t block_size, int64_t batch_size, const std::string& where) {
  if (block_size < 1) throw ConfigError("data.block_size: must be >= 1, got " + std::to_string(block_size));
  if (batch_size < 1) throw ConfigError("train.batch_size: must be >= 1, got " + std::to_string(batch_size));
  int64_t n = tokens ? static_cast<int64_t>(tokens->size()) : 0;
  if (n < block_size + 1)
    throw DataError(where + ": " + std::to_string(n) + " tokens, but one window needs block_size + 1 = " +
                    std::to_string(block_size + 1) + " (use a longer text or a smaller data.block_size)");
}

RandomWindows::RandomWindows(Tokens tokens, int64_t block_size, int64_t batch_size, uint64_t seed,
                             const std::string& where)
    : tokens_(std::move(tokens)), block_size_(block_size), batch_size_(batch_size), seed_(seed), gen_(seed) {
  check_sizes(tokens_, block_size, batch_size, where);
}

LmBatch RandomWindows::next() {
  LmBatch b = make_batch(batch_size_, block_size_);
  int64_t starts = static_cast<int64_t>(tokens_->size()) - block_size_;  // valid starts: [0, starts)
  for (int64_t r = 0; r < batch_size_; ++r) fill_row(*tokens_, gen_.randint(starts), block_size_, r, b);
  ++drawn_;
  return b;
}

nlohmann::json RandomWindows::get_state() const {
  return {{"kind", "random_windows"},  {"seed", seed_},
          {"rng", gen_.state()},       {"batches", drawn_},
          {"tokens", tokens_->size()}, {"block_size", block_size_},
          {"batch_size", batch_size_}};
}

static DataError bad_state(const std::string& why) { return DataError("data state in checkpoint: " + why); }

// A sampler state must be of `kind` and saved for the same data, block size and batch size.
static void check_state_fits(const nlohmann::json& s, const std::string& kind, const std::string& not_kind,
                             const Tokens& tokens, int64_t block_size, int64_t batch_size) {
  if (!s.is_object() || !s.contains("kind") || s["kind"] != kind) throw bad_state(not_kind);
  for (const char* key : {"tokens", "block_size", "batch_size"})
    if (!s.contains(key)) throw bad_state(std::string("missing \"") + key + "\"");
  uint64_t saved_tokens = 0;
  int64_t saved_block_size = 0, saved_batch_size = 0;
  try {
    saved_tokens = saved_u64(s.at("tokens"), "\"tokens\"");
    saved_block_size = saved_i64(s.at("block_size"), "\"block_size\"");
    saved_batch_size = saved_i64(s.at("batch_size"), "\"batch_size\"");
  } catch (const Error& e) { throw bad_state(e.what()); }
  if (saved_tokens != tokens->size())
    throw bad_state("saved for " + std::to_string(saved_tokens) + " tokens, the data now has " +
                    std::to_string(tokens->size()) + " (the dataset or tokenizer changed)");
  if (saved_block_size != block_size || saved_batch_size != batch_size)
    throw bad_state("saved with another block_size or batch_size");
}

void RandomWindows::set_state(const nlohmann::json& s) {
  check_state_fits(s, "random_windows", "not a random-window sampler state", tokens_, block_size_, batch_size_);
  try {
    const std::vector<uint64_t> rng = rng_state_from_json(s.at("rng"), "rng");
    const int64_t drawn = saved_count(s.at("batches"), "\"batches\"");
    const uint64_t seed = saved_u64(s.at("seed"), "\"seed\"");
    gen_.set_state(rng);
    drawn_ = drawn;
    seed_ = seed;
  } catch (const nlohmann::json::exception& e) {
    throw bad_state(std::string("malformed (") + e.what() + ")");
  } catch (const Error& e) { throw bad_state(e.what()); }
}

TorchWindows::TorchWindows(Tokens tokens, int64_t block_size, int64_t batch_size, std::shared_ptr<TorchGenerator> gen,
                           bool prefetch, const std::string& where)
    : tokens_(std::move(tokens)),
      block_size_(block_size),
      batch_size_(batch_size),
      gen_(std::move(gen)),
      prefetch_(prefetch) {
  check_sizes(tokens_, block_size, batch_size, where);
  if (prefetch_) pending_ = draw_starts();
}

std::vector<int64_t> TorchWindows::draw_starts() {
  const int64_t starts = static_cast<int64_t>(tokens_->size()) - block_size_;  // torch.randint(n - T, (B,))
  std::vector<int64_t> ix(static_cast<size_t>(batch_size_));
  for (auto& i : ix) i = gen_->randint(starts);
  return ix;
}

LmBatch TorchWindows::next() {
  std::vector<int64_t> ix = prefetch_ ? std::move(pending_) : draw_starts();
  if (prefetch_) pending_ = draw_starts();
  LmBatch b = make_batch(batch_size_, block_size_);
  for (int64_t r = 0; r < batch_size_; ++r) fill_row(*tokens_, ix[static_cast<size_t>(r)], block_size_, r, b);
  ++drawn_;
  return b;
}

nlohmann::json TorchWindows::get_state() const {
  return {{"kind", "torch_windows"},   {"pending", pending_},       {"batches", drawn_},
          {"tokens", tokens_->size()}, {"block_size", block_size_}, {"batch_size", batch_size_}};
}

void TorchWindows::set_state(const nlohmann::json& s) {
  check_state_fits(s, "torch_windows",
                   "not a PyTorch-generator window sampler state (the checkpoint was saved with another train.rng)",
                   tokens_, block_size_, batch_size_);
  std::vector<int64_t> pending;
  int64_t drawn = 0;
  try {
    const nlohmann::json& saved = s.at("pending");
    if (!saved.is_array()) throw Error("\"pending\" must be an array of window starts");
    for (const nlohmann::json& i : saved) pending.push_back(saved_i64(i, "a pending window start"));
    drawn = saved_count(s.at("batches"), "\"batches\"");
  } catch (const nlohmann::json::exception& e) {
    throw bad_state(std::string("malformed (") + e.what() + ")");
  } catch (const Error& e) { throw bad_state(e.what()); }
  if (pending.size() != (prefetch_ ? static_cast<size_t>(batch_size_) : 0u))
    throw bad_state("\"pending\" has the wrong length");
  const int64_t starts = static_cast<int64_t>(tokens_->size()) - block_size_;
  for (int64_t i : pending)
    if (i < 0 || i >= starts) throw bad_state("a pending window start is outside the data");
  pending_ = std::move(pending);
  drawn_ = drawn;
}

SequentialWindows::SequentialWindows(Tokens tokens, int64_t block_size, int64_t batch_size, const std::string& where)
    : tokens_(std::move(tokens)), block_size_(block_size), batch_size_(batch_size) {
  check_sizes(tokens_, block_size, batch_size, where);
  windows_ = (static_cast<int64_t>(tokens_->size()) - 1) / block_size_;
}

int64_t SequentialWindows::dropped_targets() const {
  return static_cast<int64_t>(tokens_->size()) - 1 - windows_ * block_size_;
}

LmBatch SequentialWindows::batch(int64_t i) const {
  if (i < 0 || i >= num_batches())
    throw ShapeError("SequentialWindows::batch: index " + std::to_string(i) + " not in [0, " +
                     std::to_string(num_batches()) + ")");
  int64_t first = i * batch_size_;
  int64_t rows = std::min(batch_size_, windows_ - first);
  LmBatch b = make_batch(rows, block_size_);
  for (int64_t r = 0; r < rows; ++r) fill_row(*tokens_, (first + r) * block_size_, block_size_, r, b);
  return b;
}

}  // namespace sf::data
