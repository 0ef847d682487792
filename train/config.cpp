// config.cpp: JSON <-> Config, overrides, validation and the generated documentation.
#include "train/config.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "autograd/errors.h"
#include "autograd/ops_attention.h"
#include "data/file_io.h"
#include "data/seq2seq_tasks.h"
#include "data/utf8.h"
#include "nn/blocks.h"
#include "nn/heads.h"
#include "nn/init.h"
#include "nn/layers.h"
#include "nn/positional.h"
#include "train/config_doc_zh.h"
#include "train/options.h"

namespace sf {

using json = nlohmann::json;
namespace fs = std::filesystem;

// ---- small helpers ----

// Shortest text that reads back as the same double: 0.001, -1, 65536, 3e-4.
static std::string fmt_num(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), x);
  return std::string(buf, r.ptr);
}
static std::string fmt_num(int64_t x) { return std::to_string(x); }
// `s` as a JSON string literal: "a\nb". Invalid UTF-8 (possible in a --set value) is shown as
// U+FFFD instead of throwing, so a message can always be built.
static std::string json_quoted(const std::string& s) {
  return json(s).dump(-1, ' ', false, json::error_handler_t::replace);
}
// `s` as it is when it is plain printable UTF-8, else quoted as JSON, so that a name taken from
// the user's input can never split an error message over two lines.
static std::string printable(const std::string& s) {
  bool plain = data::utf8_first_error(s) < 0 && std::none_of(s.begin(), s.end(), [](char ch) {
                 const auto byte = static_cast<unsigned char>(ch);  // char is unsigned on ARM
                 return byte < 0x20 || byte == 0x7f;
               });
  return plain ? s : json_quoted(s);
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const auto& c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_d) best_d = d, best = c;
  }
  // A typo changes a few characters; anything further is probably a different word.
  size_t limit = std::max<size_t>(2, word.size() / 3);
  return best_d <= limit ? best : "";
}

static std::string join_quoted(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + json_quoted(names[i]);
  return s;
}

// "did you mean" when a candidate is close, else the list of valid names.
static std::string unknown_name_hint(const std::string& word, const std::vector<std::string>& valid) {
  std::string guess = closest_match(word, valid);
  if (!guess.empty()) return "did you mean " + json_quoted(guess) + "?";
  return "valid: " + join_quoted(valid);
}

// ---- reading one value with its type checked ----

static std::string got(const json& v) {
  return v.dump(-1, ' ', false, json::error_handler_t::replace) + " (" + v.type_name() + ")";
}

static void read_value(const json& v, int64_t& out, const std::string& key) {
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    throw ConfigError(key + ": integer too large, got " + v.dump());
  if (v.is_number_integer()) {
    out = v.get<int64_t>();
    return;
  }
  if (v.is_number_float()) {  // 2e3 is fine as an integer when it is one
    double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15) {
      out = static_cast<int64_t>(d);
      return;
    }
  }
  throw ConfigError(key + ": expected an integer, got " + got(v));
}
static void read_value(const json& v, double& out, const std::string& key) {
  if (!v.is_number()) throw ConfigError(key + ": expected a number, got " + got(v));
  out = v.get<double>();
}
static void read_value(const json& v, bool& out, const std::string& key) {
  if (!v.is_boolean()) throw ConfigError(key + ": expected true or false, got " + got(v));
  out = v.get<bool>();
}
static void read_value(const json& v, std::string& out, const std::string& key) {
  if (!v.is_string()) throw ConfigError(key + ": expected a string, got " + got(v));
  out = v.get<std::string>();
}

// An option named by a string: its name must be in the option's table (train/options.h).
template <class E>
requires std::is_enum_v<E>
static void read_value(const json& v, E& out, const std::string& key) {
  std::string name;
  read_value(v, name, key);
  const auto& table = names_table(out);
  for (const auto& n : table)
    if (name == n.name) {
      out = n.value;
      return;
    }
  const std::vector<std::string> valid = names_of(table);
  const std::string guess = closest_match(name, valid);
  throw ConfigError(key + ": must be one of " + join_quoted(valid) + ", got " + json_quoted(name) +
                    (guess.empty() ? "" : " (did you mean " + json_quoted(guess) + "?)"));
}

// A field as JSON: an option as its name, anything else as it is.
template <class T>
static json json_value(const T& field) {
  if constexpr (std::is_enum_v<T>) return option_name(field);
  else return field;
}

// `"precision": "bf16"` is short for `"precision": {"dtype": "bf16"}`.
static void expand_shorthands(json& j) {
  if (j.is_object() && j.contains("precision") && j["precision"].is_string())
    j["precision"] = json{{"dtype", j["precision"]}};
}

// ---- JSON -> Config ----

Config config_from_json(const json& j_in) {
  json j = j_in;
  expand_shorthands(j);
  if (!j.is_object()) throw ConfigError("the config must be a JSON object {...}, got " + std::string(j.type_name()));
  Config c;
  std::vector<std::string> section_names{"description"};
  c.sections([&](const char* name, auto&, const char*) { section_names.push_back(name); });
  for (const auto& [name, value] : j.items()) {
    if (std::find(section_names.begin(), section_names.end(), name) == section_names.end())
      throw ConfigError(printable(name) + ": unknown section (" + unknown_name_hint(name, section_names) + ")");
  }
  if (j.contains("description")) read_value(j["description"], c.description, "description");

  c.sections([&](const char* section, auto& s, const char*) {
    if (!j.contains(section)) return;
    const json& obj = j[section];
    if (!obj.is_object()) throw ConfigError(std::string(section) + ": expected an object {...}, got " + got(obj));
    std::vector<std::string> keys;
    s.fields([&](const char* key, auto&, const char*) { keys.push_back(key); });
    for (const auto& [key, value] : obj.items()) {
      if (std::find(keys.begin(), keys.end(), key) == keys.end())
        throw ConfigError(std::string(section) + "." + printable(key) + ": unknown key (" +
                          unknown_name_hint(key, keys) + ")");
    }
    s.fields([&](const char* key, auto& field, const char*) {
      if (obj.contains(key)) read_value(obj[key], field, std::string(section) + "." + key);
    });
  });
  return c;
}

json config_to_json(const Config& c_in) {
  Config c = c_in;  // fields() is non-const: it hands out references
  json j = json::object();
  j["description"] = c.description;
  c.sections([&](const char* section, auto& s, const char*) {
    json obj = json::object();
    s.fields([&](const char* key, auto& field, const char*) { obj[key] = json_value(field); });
    j[section] = obj;
  });
  return j;
}

void apply_override(json& j, const std::string& assignment) {
  if (data::utf8_first_error(assignment) >= 0)  // the config is saved as JSON, which is UTF-8
    throw ConfigError("--set " + printable(assignment) + ": not valid UTF-8 text");
  size_t eq = assignment.find('=');
  size_t dot = assignment.find('.');
  if (eq == std::string::npos || dot == std::string::npos || dot > eq || dot == 0 || dot + 1 == eq)
    throw ConfigError("--set " + printable(assignment) + ": expected section.key=value, e.g. --set optim.lr=3e-4");
  std::string section = assignment.substr(0, dot);
  std::string key = assignment.substr(dot + 1, eq - dot - 1);
  std::string text = assignment.substr(eq + 1);
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) value = text;  // not JSON: a plain string such as a path
  if (!j.is_object()) throw ConfigError("--set " + printable(assignment) + ": the config is not a JSON object {...}");
  expand_shorthands(j);
  if (!j.contains(section)) j[section] = json::object();
  if (!j[section].is_object())
    throw ConfigError("--set " + printable(assignment) + ": " + printable(section) + " is not an object in the config");
  j[section][key] = value;
}

// ---- validation ----

[[noreturn]] static void fail(const std::string& key, const std::string& what, const std::string& value) {
  throw ConfigError(key + ": " + what + ", got " + value);
}
static void positive(const std::string& key, double v) {
  if (!(v > 0) || !std::isfinite(v)) fail(key, "must be > 0", fmt_num(v));
}
static void positive(const std::string& key, int64_t v) {
  if (v <= 0) fail(key, "must be >= 1", fmt_num(v));
}
static void non_negative(const std::string& key, double v) {
  if (!(v >= 0) || !std::isfinite(v)) fail(key, "must be >= 0", fmt_num(v));
}
static void non_negative(const std::string& key, int64_t v) {
  if (v < 0) fail(key, "must be >= 0", fmt_num(v));
}
static void at_most(const std::string& key, int64_t v, int64_t limit) {
  if (v > limit) fail(key, "must be at most " + fmt_num(limit), fmt_num(v));
}
static void in_unit(const std::string& key, double v) {  // [0, 1)
  if (!(v >= 0 && v < 1)) fail(key, "must be in [0, 1)", fmt_num(v));
}

data::TaskKind seq2seq_task_of(Dataset dataset) {
  switch (dataset) {
    case Dataset::copy: return data::TaskKind::copy;
    case Dataset::reverse: return data::TaskKind::reverse;
    case Dataset::sort: return data::TaskKind::sort;
    case Dataset::addition: return data::TaskKind::addition;
    default: break;
  }
  throw ConfigError("data.dataset: " + json_quoted(option_name(dataset)) + " is not a seq2seq task");
}

bool is_seq2seq_dataset(Dataset dataset) {
  return dataset == Dataset::copy || dataset == Dataset::reverse || dataset == Dataset::sort ||
         dataset == Dataset::addition;
}

// The rules of each section (declared beside its fields() in config.h), in the order of
// Config::sections(); a rule that compares two sections sits with the later one.
void ModelConfig::validate() const {
  const ModelConfig& m = *this;
  positive("model.n_layer", m.n_layer);
  // The heads' rules are nn's (n_head, n_kv_head, RoPE's even head size), named as JSON keys.
  const std::string broken_heads =
      head_rule_error(m.n_embd, m.n_head, m.n_kv_head, m.pos_encoding == PosEncoding::rope, "n_embd", "model.");
  if (!broken_heads.empty()) throw ConfigError(broken_heads);
  positive("model.block_size", m.block_size);
  non_negative("model.n_decoder_layer", m.n_decoder_layer);
  non_negative("model.d_ff", m.d_ff);
  in_unit("model.dropout", m.dropout);
  non_negative("model.window", m.window);
}

void DataConfig::validate(const Config& c, bool check_files) const {
  const DataConfig& d = *this;
  const ModelConfig& m = c.model;
  const std::string dataset = json_quoted(option_name(d.dataset));
  bool seq2seq = is_seq2seq_dataset(d.dataset);
  if (seq2seq && m.type != ModelType::transformer)
    throw ConfigError("model.type: the seq2seq task " + dataset + " needs \"transformer\" (encoder-decoder), got " +
                      json_quoted(option_name(m.type)));
  if (!seq2seq && m.type != ModelType::gpt)
    throw ConfigError("model.type: the language-modelling dataset " + dataset + " needs \"gpt\", got " +
                      json_quoted(option_name(m.type)));
  if (d.dataset == Dataset::text) {
    if (d.path.empty()) throw ConfigError("data.path: dataset \"text\" needs a file or folder of .txt files, got \"\"");
    if (check_files && !fs::exists(d.path))
      throw ConfigError("data.path: no such file or folder, got " + json_quoted(d.path));
  } else if (!d.path.empty() && d.dataset != Dataset::tang && d.dataset != Dataset::song) {
    throw ConfigError("data.path: only datasets \"text\", \"tang\" and \"song\" read a file, and data.dataset is " +
                      dataset + ", which would ignore it; remove data.path or set data.dataset to \"text\", got " +
                      json_quoted(d.path));
  }
  if (d.tokenizer == data::TokenizerKind::bpe && d.bpe_vocab_size < 256)
    fail("data.bpe_vocab_size", "must be >= 256 (the 256 byte tokens come first)", fmt_num(d.bpe_vocab_size));
  at_most("data.bpe_vocab_size", d.bpe_vocab_size, 1'000'000);  // token ids are int32: refused, never wrapped
  if (!(d.val_fraction > 0 && d.val_fraction < 1))
    fail("data.val_fraction", "must be in (0, 1)", fmt_num(d.val_fraction));
  non_negative("data.block_size", d.block_size);
  if (d.block_size > m.block_size)
    throw ConfigError("data.block_size: must be <= model.block_size = " + fmt_num(m.block_size) +
                      " (the positional table has no rows beyond it), got " + fmt_num(d.block_size));
  positive("data.corpus_tokens", d.corpus_tokens);
  positive("data.corpus_val_tokens", d.corpus_val_tokens);
  // The synthetic corpus is generated into memory, so it is held to the limit on training text.
  constexpr auto kMaxTokens = static_cast<int64_t>(data::kMaxTextBytes);
  if (d.corpus_tokens > kMaxTokens)
    fail("data.corpus_tokens",
         "must be at most " + fmt_num(kMaxTokens) +
             " (the corpus is generated into memory, as much as the 1 GiB limit on training text)",
         fmt_num(d.corpus_tokens));
  if (d.corpus_val_tokens > kMaxTokens)
    fail("data.corpus_val_tokens", "must be at most " + fmt_num(kMaxTokens) + " (as data.corpus_tokens)",
         fmt_num(d.corpus_val_tokens));
  if (d.corpus_order != 1 && d.corpus_order != 2) fail("data.corpus_order", "must be 1 or 2", fmt_num(d.corpus_order));
  positive("data.task_symbols", d.task_symbols);
  positive("data.task_min_len", d.task_min_len);
  if (d.task_max_len < d.task_min_len)
    fail("data.task_max_len", "must be >= data.task_min_len = " + fmt_num(d.task_min_len), fmt_num(d.task_max_len));
  positive("data.task_eval_size", d.task_eval_size);
  if (seq2seq) check_task_fits_model(c);
}

// The optimizer and the clipping compute in float32: a setting beyond its range would become
// infinity there (eps 1e39 would stop every update without a word).
static void float32_range(const std::string& key, double v) {
  if (v > std::numeric_limits<float>::max())
    fail(key, "must be at most " + fmt_num(double(std::numeric_limits<float>::max())) + " (the largest float32)",
         fmt_num(v));
}

void OptimConfig::validate() const {
  const OptimConfig& o = *this;
  positive("optim.lr", o.lr);
  float32_range("optim.lr", o.lr);
  in_unit("optim.beta1", o.beta1);
  in_unit("optim.beta2", o.beta2);
  positive("optim.eps", o.eps);
  float32_range("optim.eps", o.eps);
  non_negative("optim.weight_decay", o.weight_decay);
  float32_range("optim.weight_decay", o.weight_decay);
  in_unit("optim.momentum", o.momentum);
  if (o.nesterov && !(o.momentum > 0))
    fail("optim.nesterov", "needs optim.momentum > 0", "momentum " + fmt_num(o.momentum));
  non_negative("optim.grad_clip", o.grad_clip);
  float32_range("optim.grad_clip", o.grad_clip);
  non_negative("optim.clip_value", o.clip_value);
  float32_range("optim.clip_value", o.clip_value);
}

// train.steps first: the warmup and decay checks compare against it, and a run of 0 steps should
// be named as what is wrong, not blamed on the warmup.
void ScheduleConfig::validate(const Config& c) const {
  const ScheduleConfig& s = *this;
  const OptimConfig& o = c.optim;
  positive("train.steps", c.train.steps);
  non_negative("schedule.warmup_steps", s.warmup_steps);
  if (s.name == ScheduleKind::noam && s.warmup_steps == 0)
    fail("schedule.warmup_steps", "must be >= 1 for \"noam\"", "0");
  if (s.warmup_steps > c.train.steps)
    throw ConfigError("schedule.warmup_steps: must not be longer than the run (train.steps = " +
                      fmt_num(c.train.steps) + "), got " + fmt_num(s.warmup_steps));
  non_negative("schedule.min_lr", s.min_lr);
  if (s.min_lr > o.lr) fail("schedule.min_lr", "must be <= optim.lr = " + fmt_num(o.lr), fmt_num(s.min_lr));
  non_negative("schedule.decay_steps", s.decay_steps);
  int64_t decay_end = s.decay_steps ? s.decay_steps : c.train.steps;
  if ((s.name == ScheduleKind::cosine || s.name == ScheduleKind::linear) && decay_end <= s.warmup_steps)
    throw ConfigError("schedule.warmup_steps: must be shorter than the decay (" +
                      std::string(s.decay_steps ? "schedule.decay_steps" : "train.steps") + " = " + fmt_num(decay_end) +
                      "), got " + fmt_num(s.warmup_steps));
}

void TrainConfig::validate(const Config& c) const {
  const TrainConfig& t = *this;
  positive("train.batch_size", t.batch_size);
  positive("train.grad_accum_steps", t.grad_accum_steps);
  at_most("train.grad_accum_steps", t.grad_accum_steps, kMaxGradAccumSteps);
  positive("train.eval_interval", t.eval_interval);
  positive("train.eval_iters", t.eval_iters);
  at_most("train.eval_iters", t.eval_iters, 1'000'000);
  positive("train.log_interval", t.log_interval);
  non_negative("train.seed", t.seed);
  if (t.rng == RngKind::torch && (c.model.type != ModelType::gpt || c.model.init != InitScheme::gpt2))
    fail("train.rng", "\"torch\" reproduces nanoGPT's draws: it needs model.type \"gpt\" with model.init \"gpt2\"",
         "\"torch\"");
  if (t.threads < 0 || t.threads > 1024) fail("train.threads", "must be 0 (all cores) to 1024", fmt_num(t.threads));
  in_unit("train.label_smoothing", t.label_smoothing);
  non_negative("train.samples", t.samples);
  at_most("train.samples", t.samples, 1000);
  non_negative("train.sample_tokens", t.sample_tokens);
  if (t.sample_tokens > 100'000)
    fail("train.sample_tokens",
         "must be at most 100000 (for longer text use `scratchformer sample RUN --max-new-tokens N`, "
         "which streams it and stops on Ctrl-C)",
         fmt_num(t.sample_tokens));
  positive("train.max_loss", t.max_loss);
  non_negative("train.reference_val_loss", t.reference_val_loss);
  if (!t.reference.empty() && !(t.reference_val_loss > 0))
    fail("train.reference_val_loss", "must be > 0 when train.reference names a result", fmt_num(t.reference_val_loss));
}

void PrecisionConfig::validate() const {
  const PrecisionConfig& p = *this;
  // Both become float32s, as the loss scaler holds them (optim/grad_scaler.cpp): the scale a normal
  // one, from 2^-126 (1.2e-38) to float's largest (3.4e38).
  constexpr double kFloatMin = std::numeric_limits<float>::min(), kFloatMax = std::numeric_limits<float>::max();
  if (!(p.init_scale >= kFloatMin && p.init_scale <= kFloatMax))
    fail("precision.init_scale", "must be from 1.2e-38 to 3.4e38 (a normal float32 > 0)", fmt_num(p.init_scale));
  if (!(p.growth_factor > 1 && p.growth_factor <= kFloatMax))
    fail("precision.growth_factor", "must be > 1 (and at most 3.4e38, a float32)", fmt_num(p.growth_factor));
  if (!(p.backoff_factor > 0 && p.backoff_factor < 1))
    fail("precision.backoff_factor", "must be in (0, 1)", fmt_num(p.backoff_factor));
  positive("precision.growth_interval", p.growth_interval);
}

void OutputConfig::validate() const {
  const OutputConfig& out = *this;
  if (out.run_dir.empty()) fail("output.run_dir", "must name a directory", "\"\"");
  non_negative("output.checkpoint_interval", out.checkpoint_interval);
}

void validate_config(const Config& c, bool check_files) {
  c.model.validate();
  c.data.validate(c, check_files);
  c.optim.validate();
  c.schedule.validate(c);
  c.train.validate(c);
  c.precision.validate();
  c.output.validate();
}

void check_task_fits_model(const Config& c) {
  const DataConfig& d = c.data;
  data::Seq2SeqConfig t;
  t.task = seq2seq_task_of(d.dataset);
  t.min_len = d.task_min_len;
  t.max_len = d.task_max_len;
  t.num_symbols = d.task_symbols;
  t.eval_size = d.task_eval_size;
  data::check_seq2seq_config(t);
  const int64_t longest = data::longest_sequence(t.task, d.task_max_len);
  if (longest > c.model.block_size)
    fail("data.task_max_len",
         "makes sequences of up to " + fmt_num(longest) + " tokens for task " + json_quoted(option_name(d.dataset)) +
             ", more than model.block_size = " + fmt_num(c.model.block_size) + " positions",
         fmt_num(d.task_max_len));
}

// nlohmann::json keeps the last of two equal keys without a word; this parser callback refuses
// them, naming the key path ("optim.lr: given twice ...").
static json parse_without_duplicate_keys(const std::string& text) {
  struct Level {
    std::string name;  // the key path of this object ("" at the top)
    std::vector<std::string> keys;
  };
  std::vector<Level> levels;
  std::string last_key;
  json::parser_callback_t check = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      std::string name = levels.empty()               ? ""
                         : levels.back().name.empty() ? printable(last_key)
                                                      : levels.back().name + "." + printable(last_key);
      levels.push_back({name, {}});
    } else if (event == json::parse_event_t::object_end) {
      if (!levels.empty()) levels.pop_back();
    } else if (event == json::parse_event_t::array_start) {
      last_key += "[]";  // objects inside an array are named after it
    } else if (event == json::parse_event_t::key && !levels.empty()) {
      last_key = parsed.get<std::string>();
      std::vector<std::string>& keys = levels.back().keys;
      std::string full =
          levels.back().name.empty() ? printable(last_key) : levels.back().name + "." + printable(last_key);
      if (std::find(keys.begin(), keys.end(), last_key) != keys.end())
        throw ConfigError(full + ": given twice in the same object (JSON would silently keep the last); remove one");
      keys.push_back(last_key);
    }
    return true;
  };
  return json::parse(text, check);
}

const std::string* last_override_of(const std::vector<std::string>& overrides, const std::string& key) {
  for (auto o = overrides.rbegin(); o != overrides.rend(); ++o) {
    const size_t eq = o->find('='), dot = o->find('.');
    if (eq == std::string::npos || dot == std::string::npos || dot > eq) continue;
    // Compared as error messages print them (printable), so a key with odd bytes still matches.
    const std::string section = printable(o->substr(0, dot));
    if (key == section + "." + printable(o->substr(dot + 1, eq - dot - 1)) || key == section) return &*o;
  }
  return nullptr;
}

// Where the value a ConfigError `message` ("model.foo: unknown key ...") names came from: the last
// --set of that key (or of its section, for an unknown section), else the config file. Said first
// in the message, so that a learner edits the right place.
static std::string error_origin(const std::string& message, const std::string& path,
                                const std::vector<std::string>& overrides) {
  const std::string* o = last_override_of(overrides, message.substr(0, message.find(": ")));
  return o ? "--set " + printable(*o) : printable(path);
}

Config load_config(const std::string& path, const std::vector<std::string>& overrides) {
  if (fs::is_directory(path))
    throw ConfigError("config file " + json_quoted(path) + " is a folder, expected a JSON file");
  if (!fs::is_regular_file(path)) throw ConfigError("config file not found: " + json_quoted(path));
  std::error_code ec;
  if (fs::file_size(path, ec) > kMaxConfigBytes)
    throw ConfigError(printable(path) + ": " + std::to_string(fs::file_size(path, ec)) +
                      " bytes; a config is at most " + std::to_string(kMaxConfigBytes) +
                      " bytes (is this the right file?)");
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  json j;
  try {
    j = parse_without_duplicate_keys(ss.str());
  } catch (const ConfigError& e) {
    throw ConfigError(printable(path) + ": " + e.what());
  } catch (const json::exception& e) {  // parse_error, and out_of_range for 1e999
    std::string what = e.what();        // "[json.exception.parse_error.101] parse error at line 3, ..."
    size_t bracket = what.find("] ");
    if (bracket != std::string::npos) what = what.substr(bracket + 2);
    throw ConfigError(printable(path) + ": invalid JSON: " + what);
  }
  try {
    for (const auto& o : overrides) apply_override(j, o);
    Config c = config_from_json(j);
    validate_config(c);
    return c;
  } catch (const ConfigError& e) { throw ConfigError(error_origin(e.what(), path, overrides) + ": " + e.what()); }
}

// ---- documentation ----

static std::string doc_value(const std::string& v) { return "`" + json(v).dump() + "`"; }
template <class E>
requires std::is_enum_v<E>
static std::string doc_value(E v) { return doc_value(std::string(option_name(v))); }
static std::string doc_value(double v) { return "`" + fmt_num(v) + "`"; }
static std::string doc_value(int64_t v) { return "`" + fmt_num(v) + "`"; }
static std::string doc_value(bool v) { return v ? "`true`" : "`false`"; }
static const char* doc_type(const std::string&) { return "string"; }
static const char* doc_type(double) { return "number"; }
static const char* doc_type(int64_t) { return "integer"; }
static const char* doc_type(bool) { return "bool"; }
template <class E>
requires std::is_enum_v<E>
static const char* doc_type(E) { return "string"; }

static std::string escape_cell(const std::string& s) {
  std::string out;
  for (char ch : s) out += (ch == '|') ? std::string("\\|") : std::string(1, ch);
  return out;
}

// The English edition: its sections', keys' and ready configs' texts are the ones in config.h
// and in each config's "description", so its tables are empty.
static const ConfigDocTexts& config_doc_en() {
  static const ConfigDocTexts texts{
      .intro =
          "<!-- Generated by `scratchformer config-doc > configs/README.md` from train/config.h;\n"
          "     edit the field list there, not this file (a test fails when this file is out of date). -->\n"
          "# Experiment configs\n\n"
          "An experiment is one JSON file with the sections below. Every key is optional: a missing key\n"
          "keeps the default shown here. Unknown keys, wrong types and impossible values are errors that\n"
          "name the key (`error: configs/x.json: optim.lr: must be > 0, got -1`), and no run directory is\n"
          "created for a config that fails. The resolved config (every field) is saved as\n"
          "`config.json` in the run directory. 中文：[README.zh.md](README.zh.md).\n\n"
          "```sh\n"
          "scratchformer train configs/default.json                         # train\n"
          "scratchformer train configs/default.json --set optim.lr=3e-4 --set train.steps=500\n"
          "scratchformer train configs/default.json --resume runs/default   # continue a stopped run\n"
          "```\n\n"
          "`--set section.key=value` parses the value as JSON (`3e-4`, `true`, `\"text\"`) and takes it as\n"
          "a plain string otherwise (`--set data.path=my.txt`). `\"precision\": \"bf16\"` is short for\n"
          "`\"precision\": {\"dtype\": \"bf16\"}`. A top-level `\"description\"` string is shown in the log.\n",
      .key_table = "| key | type | default | meaning |\n| --- | --- | --- | --- |\n",
      .ready_table = "\n## Ready configs\n\n| file | what it trains |\n| --- | --- |\n",
      .sections = {},
      .fields = {},
      .configs = {},
  };
  return texts;
}

// The text `texts` has for `name`, else the English one.
static std::string text_of(const std::map<std::string, std::string>& texts, const std::string& name,
                           const std::string& english) {
  auto it = texts.find(name);
  return it != texts.end() ? it->second : english;
}

std::string config_doc_markdown(const std::string& configs_dir, DocLang lang) {
  const ConfigDocTexts& t = lang == DocLang::zh ? config_doc_zh() : config_doc_en();
  std::ostringstream md;
  md << t.intro;
  Config c;
  c.sections([&](const char* section, auto& s, const char* about) {
    md << "\n## " << section << "\n\n" << text_of(t.sections, section, std::string(about) + ".") << "\n\n";
    md << t.key_table;
    s.fields([&](const char* key, auto& field, const char* doc) {
      md << "| `" << key << "` | " << doc_type(field) << " | " << doc_value(field) << " | "
         << escape_cell(text_of(t.fields, std::string(section) + "." + key, doc)) << " |\n";
    });
  });
  if (!configs_dir.empty() && fs::is_directory(configs_dir)) {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(configs_dir))
      if (e.path().extension() == ".json") files.push_back(e.path().filename().string());
    std::sort(files.begin(), files.end());
    md << t.ready_table;
    for (const auto& f : files) {
      std::string description;
      try {
        std::ifstream in(fs::path(configs_dir) / f);
        json j = json::parse(in);
        if (j.contains("description") && j["description"].is_string())
          description = text_of(t.configs, f, j["description"]);
      } catch (const json::exception&) { description = "(not valid JSON)"; }
      md << "| `" << f << "` | " << escape_cell(description) << " |\n";
    }
  }
  return md.str();
}

}  // namespace sf
