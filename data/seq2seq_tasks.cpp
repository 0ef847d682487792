// seq2seq_tasks.cpp: generating copy / reverse / sort / addition examples.
#include "data/seq2seq_tasks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <unordered_map>

#include "autograd/errors.h"
#include "data/saved_state.h"

namespace sf::data {

static constexpr int32_t kPlus = kFirstSymbol + 10;  // addition's '+'

static int64_t numbers_with_digits(int64_t len) { return len == 1 ? 10 : 9 * int64_t(std::pow(10, len - 1)); }

const char* task_name(TaskKind task) {
  switch (task) {
    case TaskKind::copy: return "copy";
    case TaskKind::reverse: return "reverse";
    case TaskKind::sort: return "sort";
    case TaskKind::addition: return "addition";
  }
  return "?";
}

// A count held in a double, written out whole: it may be past int64 (addition's numbers of up to
// 17 digits make about 10^34 pairs, and the other tasks' counts stop growing only past 10^18).
static std::string whole_count(double v) {
  char buf[400];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

void check_seq2seq_config(const Seq2SeqConfig& c) {
  const TaskKind kind = c.task;
  if (c.min_len < 1) throw ConfigError("data.task_min_len: must be >= 1, got " + std::to_string(c.min_len));
  if (c.max_len < c.min_len)
    throw ConfigError("data.task_max_len: must be >= data.task_min_len (" + std::to_string(c.min_len) + "), got " +
                      std::to_string(c.max_len));
  if (kind == TaskKind::addition && c.max_len > 17)
    throw ConfigError("data.task_max_len: addition supports up to 17 digits, got " + std::to_string(c.max_len));
  if (kind != TaskKind::addition && (c.num_symbols < 2 || c.num_symbols > 1000))
    throw ConfigError("data.task_symbols: must be in [2, 1000], got " + std::to_string(c.num_symbols));
  if (c.eval_size < 1) throw ConfigError("data.task_eval_size: must be >= 1, got " + std::to_string(c.eval_size));
  // The held-out set must leave most examples for training.
  double space = 0;
  if (kind == TaskKind::addition) {
    double per_number = 0;
    for (int64_t L = c.min_len; L <= c.max_len; ++L) per_number += double(numbers_with_digits(L));
    space = per_number * per_number;
  } else {
    for (int64_t L = c.min_len; L <= c.max_len && space < 1e18; ++L)
      space += std::pow(double(c.num_symbols), double(L));
  }
  if (space < 4.0 * double(c.eval_size))
    throw ConfigError("data.task_eval_size: " + std::to_string(c.eval_size) + " held-out examples out of only " +
                      whole_count(space) +
                      " possible inputs leaves too few to train on; "
                      "lower data.task_eval_size or raise data.task_max_len");
}

std::vector<int32_t> solve(TaskKind task, const std::vector<int32_t>& src) {
  std::vector<int32_t> out = src;
  switch (task) {
    case TaskKind::copy: break;
    case TaskKind::reverse: std::reverse(out.begin(), out.end()); break;
    case TaskKind::sort: std::sort(out.begin(), out.end()); break;
    case TaskKind::addition: {
      // Schoolbook addition from the least significant digits.
      auto plus = std::find(src.begin(), src.end(), kPlus);
      std::vector<int32_t> a(src.begin(), plus), b(plus == src.end() ? plus : plus + 1, src.end());
      out.clear();
      int carry = 0;
      for (size_t i = 0; i < std::max(a.size(), b.size()) || carry; ++i) {
        int s = carry;
        if (i < a.size()) s += a[a.size() - 1 - i] - kFirstSymbol;
        if (i < b.size()) s += b[b.size() - 1 - i] - kFirstSymbol;
        out.push_back(kFirstSymbol + s % 10);
        carry = s / 10;
      }
      std::reverse(out.begin(), out.end());
      break;
    }
  }
  return out;
}

// An input's length class for the held-out cap: its length in items, or for addition the digit
// counts of both numbers (la, lb) as la * 32 + lb (at most 17 digits each).
static int64_t length_class(TaskKind kind, const std::vector<int32_t>& src) {
  if (kind != TaskKind::addition) return static_cast<int64_t>(src.size());
  auto la = std::find(src.begin(), src.end(), kPlus) - src.begin();
  return la * 32 + (static_cast<int64_t>(src.size()) - la - 1);
}

// How many distinct inputs a length class holds: num_symbols^L, or N(la) * N(lb) for addition
// (as a double: up to 1000^17 or (9e16)^2).
static double inputs_in_class(TaskKind kind, int64_t cls, int64_t num_symbols) {
  if (kind != TaskKind::addition) return std::pow(double(num_symbols), double(cls));
  return double(numbers_with_digits(cls / 32)) * double(numbers_with_digits(cls % 32));
}

Seq2SeqTask::Seq2SeqTask(const Seq2SeqConfig& cfg, uint64_t seed) : cfg_(cfg), kind_(cfg.task), gen_(seed) {
  check_seq2seq_config(cfg);
  // Distinct draws, at most half of any length class's inputs: a class with few inputs (the 10
  // one-symbol sequences) would otherwise be held out whole and never trained on. This always
  // ends: a class of n >= 2 inputs may give floor(n/2) >= n/3 of them, so all classes together
  // >= 4/3 * eval_size, as check_seq2seq_config demands >= 4 * eval_size inputs in all.
  Generator eval_gen(cfg.eval_seed);
  std::unordered_map<int64_t, int64_t> held;  // length class -> held-out inputs of that class
  while (static_cast<int64_t>(eval_.size()) < cfg.eval_size) {
    Example e = sample(eval_gen);
    int64_t cls = length_class(kind_, e.src);
    if (double(held[cls] + 1) > std::floor(inputs_in_class(kind_, cls, cfg.num_symbols) / 2)) continue;
    if (!eval_keys_.insert(key(e.src)).second) continue;
    held[cls]++;
    eval_.push_back(std::move(e));
  }
}

std::string Seq2SeqTask::key(const std::vector<int32_t>& src) {
  return std::string(reinterpret_cast<const char*>(src.data()), src.size() * sizeof(int32_t));
}

Example Seq2SeqTask::sample(Generator& gen) const {
  auto length = [&] { return cfg_.min_len + gen.randint(cfg_.max_len - cfg_.min_len + 1); };
  Example e;
  if (kind_ == TaskKind::addition) {
    for (int k = 0; k < 2; ++k) {
      if (k == 1) e.src.push_back(kPlus);
      int64_t len = length();
      // a number with exactly `len` digits: no leading zero unless it is 0 itself
      e.src.push_back(kFirstSymbol + static_cast<int32_t>(len == 1 ? gen.randint(10) : 1 + gen.randint(9)));
      for (int64_t i = 1; i < len; ++i) e.src.push_back(kFirstSymbol + static_cast<int32_t>(gen.randint(10)));
    }
  } else {
    int64_t len = length();
    for (int64_t i = 0; i < len; ++i)
      e.src.push_back(kFirstSymbol + static_cast<int32_t>(gen.randint(cfg_.num_symbols)));
  }
  e.tgt = solve(kind_, e.src);
  return e;
}

Example Seq2SeqTask::next() {
  Example e;
  do e = sample(gen_);
  while (eval_keys_.count(key(e.src)));  // never train on a held-out example
  ++drawn_;
  return e;
}

std::vector<Example> Seq2SeqTask::next_batch(int64_t batch_size) {
  std::vector<Example> batch;
  for (int64_t i = 0; i < batch_size; ++i) batch.push_back(next());
  return batch;
}

int32_t Seq2SeqTask::vocab_size() const {
  return kFirstSymbol + (kind_ == TaskKind::addition ? 11 : static_cast<int32_t>(cfg_.num_symbols));
}

std::string Seq2SeqTask::token_name(int32_t id) const {
  if (id == kPad) return "<pad>";
  if (id == kBos) return "<bos>";
  if (id == kEos) return "<eos>";
  std::string name;
  int32_t s = id - kFirstSymbol;
  if (id < 0 || id >= vocab_size()) {
    name.append("<").append(std::to_string(id)).append("?>");
  } else if (kind_ == TaskKind::addition) {
    name.push_back(s == 10 ? '+' : char('0' + s));
  } else if (s < 26) {
    name.push_back(char('a' + s));
  } else {
    name.append("s").append(std::to_string(s));
  }
  return name;
}

std::string Seq2SeqTask::to_string(const std::vector<int32_t>& ids) const {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out.push_back(' ');
    out.append(token_name(ids[i]));
  }
  return out;
}

static int64_t max_src_len_of(TaskKind task, int64_t max_len) {
  return task == TaskKind::addition ? 2 * max_len + 1 : max_len;  // a + b
}
static int64_t max_tgt_len_of(TaskKind task, int64_t max_len) {
  return task == TaskKind::addition ? max_len + 1 : max_len;  // a carry adds a digit
}
int64_t longest_sequence(TaskKind task, int64_t max_len) {
  return std::max(max_src_len_of(task, max_len), max_tgt_len_of(task, max_len) + 1);
}

int64_t Seq2SeqTask::max_src_len() const { return max_src_len_of(kind_, cfg_.max_len); }
int64_t Seq2SeqTask::max_tgt_len() const { return max_tgt_len_of(kind_, cfg_.max_len); }

nlohmann::json Seq2SeqTask::get_state() const {
  return {{"kind", "seq2seq"}, {"task", task_name(kind_)}, {"rng", gen_.state()}, {"examples", drawn_}};
}

void Seq2SeqTask::set_state(const nlohmann::json& s) {
  if (!s.is_object() || !s.contains("kind") || s["kind"] != "seq2seq" || !s.contains("task") ||
      s["task"] != task_name(kind_))
    throw DataError("data state in checkpoint: not a state of the \"" + std::string(task_name(kind_)) + "\" task");
  try {
    const std::vector<uint64_t> rng = rng_state_from_json(s.at("rng"), "rng");
    const int64_t drawn = saved_count(s.at("examples"), "\"examples\"");
    gen_.set_state(rng);
    drawn_ = drawn;
  } catch (const nlohmann::json::exception& e) {
    throw DataError(std::string("data state in checkpoint: malformed (") + e.what() + ")");
  } catch (const Error& e) { throw DataError(std::string("data state in checkpoint: ") + e.what()); }
}

double exact_match_accuracy(const std::vector<std::vector<int32_t>>& predictions,
                            const std::vector<Example>& examples) {
  if (predictions.size() != examples.size())
    throw ShapeError("exact_match_accuracy: " + std::to_string(predictions.size()) + " predictions for " +
                     std::to_string(examples.size()) + " examples");
  if (examples.empty()) return 0.0;
  int64_t correct = 0;
  for (size_t i = 0; i < examples.size(); ++i) {
    const auto& p = predictions[i];
    auto end = std::find(p.begin(), p.end(), kEos);
    correct += std::equal(p.begin(), end, examples[i].tgt.begin(), examples[i].tgt.end());
  }
  return double(correct) / double(examples.size());
}

}  // namespace sf::data
