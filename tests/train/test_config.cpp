// Config system: defaults, JSON reading, every kind of error message, --set, generated docs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "autograd/errors.h"
#include "nn/blocks.h"
#include "nn/init.h"
#include "nn/layers.h"
#include "nn/positional.h"
#include "train/config.h"
#include "train/config_doc_zh.h"
#include "train/models.h"

using namespace sf;
using json = nlohmann::json;

// The ConfigError message config_from_json + validate_config give for `j`, or "" if none.
static std::string error_of(const json& j) {
  try {
    validate_config(config_from_json(j));
  } catch (const ConfigError& e) { return e.what(); }
  return "";
}

TEST_CASE("missing keys keep their defaults, present keys are read with their types") {
  Config c = config_from_json(json{{"model", {{"n_layer", 2}}}, {"optim", {{"lr", 3e-4}}}});
  CHECK(c.model.n_layer == 2);
  CHECK(c.model.n_head == Config{}.model.n_head);
  CHECK(c.optim.lr == 3e-4);
  CHECK(c.train.steps == Config{}.train.steps);
  CHECK(error_of(json::object()) == "");
}

TEST_CASE("unknown keys and sections are errors with a did-you-mean") {
  CHECK(error_of(json{{"optim", {{"lrr", 1}}}}) == "optim.lrr: unknown key (did you mean \"lr\"?)");
  CHECK(error_of(json{{"modle", json::object()}}) == "modle: unknown section (did you mean \"model\"?)");
  CHECK(error_of(json{{"train", {{"n_heads", 1}}}}).find("train.n_heads: unknown key (valid: \"steps\"") == 0);
  CHECK(error_of(json{{"model", {{"n_heads", 4}}}}) == "model.n_heads: unknown key (did you mean \"n_head\"?)");
}

TEST_CASE("wrong types name the key, the value and its JSON type") {
  CHECK(error_of(json{{"train", {{"steps", "many"}}}}) == "train.steps: expected an integer, got \"many\" (string)");
  CHECK(error_of(json{{"train", {{"steps", 2.5}}}}) == "train.steps: expected an integer, got 2.5 (number)");
  CHECK(error_of(json{{"optim", {{"lr", true}}}}) == "optim.lr: expected a number, got true (boolean)");
  CHECK(error_of(json{{"model", {{"bias", 1}}}}) == "model.bias: expected true or false, got 1 (number)");
  CHECK(error_of(json{{"model", {{"type", 3}}}}) == "model.type: expected a string, got 3 (number)");
  CHECK(error_of(json{{"model", 3}}) == "model: expected an object {...}, got 3 (number)");
  CHECK(config_from_json(json{{"train", {{"steps", 2e3}}}}).train.steps == 2000);  // integral float is fine
}

TEST_CASE("impossible values: one line naming the key, what is valid and what was given") {
  CHECK(error_of(json{{"optim", {{"lr", -1}}}}) == "optim.lr: must be > 0, got -1");
  CHECK(error_of(json{{"optim", {{"lr", 0}}}}) == "optim.lr: must be > 0, got 0");
  Config nan_lr;
  nan_lr.optim.lr = std::nan("");
  CHECK_THROWS_WITH_AS(validate_config(nan_lr), "optim.lr: must be > 0, got NaN", ConfigError);
  CHECK(error_of(json{{"model", {{"n_embd", 130}, {"n_head", 4}}}}) ==
        "model.n_embd: must be divisible by model.n_head = 4 (each head gets n_embd / n_head dimensions), got 130");
  CHECK(error_of(json{{"train", {{"steps", 50}}}, {"schedule", {{"warmup_steps", 100}}}}) ==
        "schedule.warmup_steps: must not be longer than the run (train.steps = 50), got 100");
  CHECK(error_of(json{{"model", {{"block_size", 32}}}, {"data", {{"block_size", 64}}}}) ==
        "data.block_size: must be <= model.block_size = 32 (the positional table has no rows beyond it), got 64");
  CHECK(error_of(json{{"data", {{"dataset", "text"}, {"path", "no/such/file.txt"}}}}) ==
        "data.path: no such file or folder, got \"no/such/file.txt\"");
  CHECK(error_of(json{{"model", {{"type", "gtp"}}}}) ==
        "model.type: must be one of \"gpt\", \"transformer\", got \"gtp\" (did you mean \"gpt\"?)");
  CHECK(error_of(json{{"model", {{"dropout", 1.0}}}}) == "model.dropout: must be in [0, 1), got 1");
  CHECK(error_of(json{{"model", {{"attention", "flash"}}}}) ==
        "model.attention: must be one of \"stored\", \"tiled\", \"auto\", got \"flash\"");
  CHECK(error_of(json{{"model", {{"n_kv_head", 3}}}}) ==
        "model.n_kv_head: must be 0 or a divisor of model.n_head = 4 (n_head: standard, 1: multi-query, a divisor: "
        "grouped-query), got 3");
  CHECK(error_of(json{{"precision", "fp17"}}) ==
        "precision.dtype: must be one of \"fp32\", \"fp16\", \"bf16\", got \"fp17\" (did you mean \"fp16\"?)");
  CHECK(error_of(json{{"data", {{"dataset", "reverse"}}}}) ==
        "model.type: the seq2seq task \"reverse\" needs \"transformer\" (encoder-decoder), got \"gpt\"");
  CHECK(error_of(json{{"train", {{"batch_size", 0}}}}) == "train.batch_size: must be >= 1, got 0");
  // The loss scale is a float32, as the scaler and its checkpoint state hold it: a config it would
  // refuse (or cast out of range, or round to 0) is refused here, by its key.
  for (auto [init_scale, shown] : {std::pair{0.0, "0"}, std::pair{1e-40, "1e-40"}, std::pair{1e39, "1e+39"}})
    CHECK(error_of(json{{"precision", {{"init_scale", init_scale}}}}) ==
          std::string("precision.init_scale: must be from 1.2e-38 to 3.4e38 (a normal float32 > 0), got ") + shown);
  CHECK(error_of(json{{"precision", {{"init_scale", 1e-30}}}}).empty());
  CHECK(error_of(json{{"precision", {{"growth_factor", 1}}}}) ==
        "precision.growth_factor: must be > 1 (and at most 3.4e38, a float32), got 1");
}

// The model's layer options have their tables in nn (kPosEncodings, kActivations, kNorms, kInits);
// the config reads and writes them through those tables, and nothing else parses their names.
TEST_CASE("a config accepts exactly the option names of nn's tables, each as its own value") {
  for (const auto& [name, value] : kPosEncodings) {
    CHECK(config_from_json(json{{"model", {{"pos_encoding", name}}}}).model.pos_encoding == value);
    CHECK(std::string(pos_encoding_name(value)) == name);
  }
  for (const auto& [name, value] : kActivations) {
    CHECK(config_from_json(json{{"model", {{"activation", name}}}}).model.activation == value);
    CHECK(std::string(activation_name(value)) == name);
  }
  for (const auto& [name, value] : kNorms) {
    CHECK(config_from_json(json{{"model", {{"norm", name}}}}).model.norm == value);
    CHECK(std::string(norm_name(value)) == name);
  }
  for (const auto& [name, value] : kInits) {
    CHECK(config_from_json(json{{"model", {{"init", name}}}}).model.init == value);
    CHECK(std::string(init_name(value)) == name);
  }
  CHECK(error_of(json{{"model", {{"pos_encoding", "none"}}}}) == "");  // nn had it; the config refused it
  CHECK(
      error_of(json{{"model", {{"activation", "gelu_tahn"}}}}) ==
      "model.activation: must be one of \"gelu\", \"gelu_tanh\", \"relu\", got \"gelu_tahn\" (did you mean \"gelu_tanh\"?)");
  // An unknown name of each is a one-line error naming the key and the valid names.
  CHECK(error_of(json{{"model", {{"activation", "swish"}}}}) ==
        "model.activation: must be one of \"gelu\", \"gelu_tanh\", \"relu\", got \"swish\"");
  CHECK(
      error_of(json{{"model", {{"pos_encoding", "absolute"}}}}) ==
      "model.pos_encoding: must be one of \"learned\", \"sinusoidal\", \"rope\", \"alibi\", \"none\", got \"absolute\"");
  CHECK(
      error_of(json{{"model", {{"pos_encoding", "relative"}}}}) ==
      "model.pos_encoding: must be one of \"learned\", \"sinusoidal\", \"rope\", \"alibi\", \"none\", got \"relative\"");
  CHECK(error_of(json{{"model", {{"norm", "sandwich"}}}}) ==
        "model.norm: must be one of \"pre\", \"post\", got \"sandwich\"");
  CHECK(error_of(json{{"model", {{"init", "he"}}}}) == "model.init: must be one of \"gpt2\", \"xavier\", got \"he\"");
  CHECK(error_of(json{{"model", {{"init", "kaiming"}}}}) ==
        "model.init: must be one of \"gpt2\", \"xavier\", got \"kaiming\"");
}

TEST_CASE("the config's option names become the model configs' enums in one place (models.h)") {
  Config c = config_from_json(json{{"model",
                                    {{"pos_encoding", "rope"},
                                     {"norm", "post"},
                                     {"activation", "relu"},
                                     {"init", "xavier"},
                                     {"attention", "tiled"},
                                     {"window", 3},
                                     {"n_kv_head", 2}}}});
  auto check_options = [](const auto& m) {  // a GPTConfig or a TransformerConfig
    CHECK(m.pos_encoding == PosEncoding::rope);
    CHECK(m.norm == NormPlacement::post);
    CHECK(m.activation == Activation::relu);
    CHECK(m.init == InitScheme::xavier);
    CHECK(m.attention == AttentionKernel::tiled);
    CHECK((m.window == 3 && m.n_kv_head == 2));
  };
  const GPTConfig g = gpt_config_of(c, 30);
  check_options(g);
  CHECK((g.vocab_size == 30 && g.n_embd == c.model.n_embd));
  const TransformerConfig t = transformer_config_of(c, 30);
  check_options(t);
  CHECK((t.src_vocab_size == 30 && t.tgt_vocab_size == 30 && t.d_model == c.model.n_embd));
  // The config's defaults are the GPT's own.
  const GPTConfig from_defaults = gpt_config_of(Config{}, 30), plain;
  CHECK(from_defaults.pos_encoding == plain.pos_encoding);
  CHECK(from_defaults.norm == plain.norm);
  CHECK(from_defaults.activation == plain.activation);
  CHECK(from_defaults.init == plain.init);
  CHECK(from_defaults.attention == plain.attention);
}

TEST_CASE("--set overrides parse JSON values, fall back to strings, and go through the same checks") {
  json j = {{"optim", {{"lr", 1e-3}}}};
  apply_override(j, "optim.lr=3e-4");
  apply_override(j, "train.steps=7");
  apply_override(j, "data.path=some file.txt");
  apply_override(j, "model.bias=false");
  apply_override(j, "precision.dtype=bf16");
  Config c = config_from_json(j);
  CHECK(c.optim.lr == 3e-4);
  CHECK(c.train.steps == 7);
  CHECK(c.data.path == "some file.txt");
  CHECK(c.model.bias == false);
  CHECK(c.precision.dtype == Precision::bf16);
  CHECK_THROWS_WITH_AS(apply_override(j, "optim.lr"), doctest::Contains("expected section.key=value"), ConfigError);
  CHECK_THROWS_WITH_AS(apply_override(j, "lr=1"), doctest::Contains("expected section.key=value"), ConfigError);
  apply_override(j, "optim.lrr=1");
  CHECK_THROWS_WITH_AS(config_from_json(j), "optim.lrr: unknown key (did you mean \"lr\"?)", ConfigError);
}

TEST_CASE("load_config names the file, and reports JSON syntax errors with their position") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "sf_test_config";
  fs::create_directories(dir);
  std::string good = (dir / "good.json").string(), bad = (dir / "bad.json").string();
  std::ofstream(good) << R"({"optim": {"lr": 0.01}, "train": {"steps": 10}, "schedule": {"warmup_steps": 2}})";
  std::ofstream(bad) << "{\"optim\": {\"lr\": 0.01,}}";
  Config c = load_config(good, {"train.batch_size=3"});
  CHECK(c.optim.lr == 0.01);
  CHECK(c.train.batch_size == 3);
  CHECK_THROWS_WITH_AS(load_config(good, {"train.steps=0"}), "--set train.steps=0: train.steps: must be >= 1, got 0",
                       ConfigError);
  CHECK_THROWS_WITH_AS(load_config(bad), doctest::Contains((bad + ": invalid JSON: parse error at line 1").c_str()),
                       ConfigError);
  CHECK_THROWS_WITH_AS(load_config((dir / "none.json").string()), doctest::Contains("config file not found"),
                       ConfigError);
  fs::remove_all(dir);
}

// A bad --set used to be blamed on the config file, which the learner would then search in vain.
TEST_CASE("a config error names the --set that gave the value, or the file when the file did") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "sf_test_config_origin";
  fs::create_directories(dir);
  std::string file = (dir / "c.json").string();
  std::ofstream(file) << R"({"optim": {"lr": -1}, "train": {"steps": 10}, "schedule": {"warmup_steps": 2}})";
  CHECK_THROWS_WITH_AS(load_config(file), (file + ": optim.lr: must be > 0, got -1").c_str(), ConfigError);
  CHECK_THROWS_WITH_AS(load_config(file, {"train.steps=20"}), (file + ": optim.lr: must be > 0, got -1").c_str(),
                       ConfigError);
  CHECK_THROWS_WITH_AS(load_config(file, {"optim.lr=1e-3", "optim.lr=-2"}),
                       "--set optim.lr=-2: optim.lr: must be > 0, got -2", ConfigError);
  CHECK_THROWS_WITH_AS(load_config(file, {"optim.lr=1e-3", "model.foo=1"}),
                       doctest::Contains("--set model.foo=1: model.foo: unknown key"), ConfigError);
  CHECK_THROWS_WITH_AS(load_config(file, {"optim.lr=1e-3", "optimizer.lr=1"}),
                       doctest::Contains("--set optimizer.lr=1: optimizer: unknown section"), ConfigError);
  fs::remove_all(dir);
}

TEST_CASE("last_override_of: the last --set of a key or of its section, nothing for other keys") {
  const std::vector<std::string> sets = {"optim.lr=1e-3", "train.steps=5", "optim.lr=2e-3", "no_dot=1", "x=a.b"};
  const std::string* lr = last_override_of(sets, "optim.lr");
  REQUIRE(lr != nullptr);
  CHECK(*lr == "optim.lr=2e-3");  // the later one wins, as it does when they are applied
  REQUIRE(last_override_of(sets, "train") != nullptr);
  CHECK(*last_override_of(sets, "train") == "train.steps=5");  // a section: any key of it
  CHECK(last_override_of(sets, "optim.beta1") == nullptr);
  CHECK(last_override_of(sets, "train.step") == nullptr);  // whole names only
  CHECK(last_override_of(sets, "no_dot") == nullptr);      // not "section.key=value": skipped
  CHECK(last_override_of(sets, "x") == nullptr);           // its dot is in the value
  CHECK(last_override_of({}, "optim.lr") == nullptr);
}

TEST_CASE("the resolved config round-trips through JSON with every field") {
  Config c;
  c.model.n_layer = 3;
  c.optim.lr = 0.123;
  c.data.dataset = Dataset::addition;
  json j = config_to_json(c);
  CHECK(j["model"]["n_layer"] == 3);
  CHECK(j["train"].contains("seed"));
  Config back = config_from_json(j);
  CHECK(config_to_json(back) == j);
}

TEST_CASE("option names end at the config: each is read into its enum, written back as its name") {
  // Every name of every table reads into its value and is written back as the same name.
  auto round_trip = [](const char* section, const char* key, const auto& table) {
    for (const auto& n : table) {
      CAPTURE(n.name);
      json j = config_to_json(config_from_json(json{{section, {{key, n.name}}}}));
      CHECK(j[section][key] == n.name);
    }
  };
  round_trip("model", "type", kModelTypeNames);
  round_trip("data", "dataset", kDatasetNames);
  round_trip("data", "tokenizer", kTokenizerNames);
  round_trip("optim", "name", kOptimizerNames);
  round_trip("optim", "decay", kDecayNames);
  round_trip("schedule", "name", kScheduleNames);
  round_trip("train", "rng", kRngNames);
  round_trip("precision", "dtype", kPrecisionNames);
  CHECK(config_from_json(json{{"data", {{"dataset", "shakespeare"}}}}).data.dataset == Dataset::shakespeare);
  CHECK(config_from_json(json{{"optim", {{"name", "sgd"}}}}).optim.name == OptimizerKind::sgd);
  // An unknown name: one line naming the key, the valid names and the likely one.
  auto read_error = [](const json& j) {
    try {
      config_from_json(j);
    } catch (const ConfigError& e) { return std::string(e.what()); }
    return std::string();
  };
  CHECK(read_error(json{{"data", {{"dataset", "shakespear"}}}}) ==
        "data.dataset: must be one of \"synthetic\", \"text\", \"shakespeare\", \"tang\", \"song\", \"copy\", "
        "\"reverse\", \"sort\", \"addition\", got \"shakespear\" (did you mean \"shakespeare\"?)");
  CHECK(read_error(json{{"data", {{"tokenizer", "words"}}}}) ==
        "data.tokenizer: must be one of \"char\", \"bpe\", got \"words\"");
  CHECK(read_error(json{{"schedule", {{"name", "cosin"}}}}) ==
        "schedule.name: must be one of \"constant\", \"cosine\", \"linear\", \"noam\", got \"cosin\" (did you mean "
        "\"cosine\"?)");
  CHECK(read_error(json{{"train", {{"rng", "mt19937"}}}}) ==
        "train.rng: must be one of \"xoshiro\", \"torch\", got \"mt19937\"");
  CHECK(read_error(json{{"optim", {{"name", "lion"}}}}) ==
        "optim.name: must be one of \"adamw\", \"adam\", \"sgd\", got \"lion\"");
  CHECK(read_error(json{{"optim", {{"decay", "none"}}}}) ==
        "optim.decay: must be one of \"matrices\", \"all_matrices\", \"all\", got \"none\"");
  CHECK(read_error(json{{"train", {{"rng", 1}}}}) == "train.rng: expected a string, got 1 (number)");
  // Only the seq2seq datasets are tasks of the data library.
  CHECK(seq2seq_task_of(Dataset::reverse) == data::TaskKind::reverse);
  CHECK(is_seq2seq_dataset(Dataset::addition));
  CHECK(!is_seq2seq_dataset(Dataset::tang));
  CHECK_THROWS_WITH_AS(seq2seq_task_of(Dataset::text), "data.dataset: \"text\" is not a seq2seq task", ConfigError);
}

TEST_CASE("edit distance and did-you-mean") {
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(closest_match("n_embed", {"n_layer", "n_head", "n_embd"}) == "n_embd");
  CHECK(closest_match("zzzzzz", {"n_layer", "n_head"}) == "");
}

TEST_CASE("configs/README.md is the generated reference, up to date with the code") {
  std::ifstream in(std::string(SF_SOURCE_DIR) + "/configs/README.md");
  REQUIRE_MESSAGE(in.good(), "configs/README.md is missing: run `build/scratchformer config-doc > configs/README.md`");
  std::stringstream committed;
  committed << in.rdbuf();
  bool same = committed.str() == config_doc_markdown(std::string(SF_SOURCE_DIR) + "/configs");
  CHECK_MESSAGE(same, "configs/README.md is out of date: run `build/scratchformer config-doc > configs/README.md`");
}

TEST_CASE("configs/README.zh.md is the generated Chinese reference, up to date with the code") {
  std::ifstream in(std::string(SF_SOURCE_DIR) + "/configs/README.zh.md");
  REQUIRE_MESSAGE(
      in.good(),
      "configs/README.zh.md is missing: run `build/scratchformer config-doc --lang zh > configs/README.zh.md`");
  std::stringstream committed;
  committed << in.rdbuf();
  bool same = committed.str() == config_doc_markdown(std::string(SF_SOURCE_DIR) + "/configs", DocLang::zh);
  CHECK_MESSAGE(same,
                "configs/README.zh.md is out of date: run `build/scratchformer config-doc --lang zh > "
                "configs/README.zh.md`");
}

// The numbers a text writes ("1.8857", "25,000", "2e-3" is 2 and 3), sorted: a translation
// keeps them all, in whatever order its sentences take.
static std::vector<std::string> numbers_in(const std::string& text) {
  auto digit = [&](size_t i) { return i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); };
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    if (!digit(i)) {
      ++i;
      continue;
    }
    size_t j = i;
    while (digit(j) || ((text[j] == '.' || text[j] == ',') && digit(j + 1))) ++j;
    out.push_back(text.substr(i, j - i));
    i = j;
  }
  std::sort(out.begin(), out.end());
  return out;
}

static std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// Each Chinese text against its English one: it exists, and it has the same numbers. `english`
// maps every name the English edition has to its text.
static void check_chinese_texts(const std::string& what, const std::map<std::string, std::string>& english,
                                const std::map<std::string, std::string>& chinese) {
  for (const auto& [name, text] : english) {
    auto it = chinese.find(name);
    if (it == chinese.end()) {
      FAIL_CHECK(what << " " << name << " has no Chinese text in train/config_doc_zh.cpp");
      continue;
    }
    CHECK_MESSAGE(numbers_in(it->second) == numbers_in(text),
                  what << " " << name << ": the Chinese text's numbers (" << joined(numbers_in(it->second))
                       << ") are not the English text's (" << joined(numbers_in(text)) << ")");
  }
  for (const auto& [name, text] : chinese)
    CHECK_MESSAGE(english.count(name) == 1,
                  "train/config_doc_zh.cpp has a text for " << what << " " << name << ", which does not exist");
}

TEST_CASE("the Chinese reference has a text for each section, key and ready config, with the same numbers") {
  CHECK(numbers_in("lr 2e-3, val 1.8857 (25,000 chars), 3.") ==
        std::vector<std::string>{"1.8857", "2", "25,000", "3", "3"});
  std::map<std::string, std::string> sections, fields, configs;
  Config c;
  c.sections([&](const char* section, auto& s, const char* about) {
    sections[section] = about;
    s.fields([&](const char* key, auto&, const char* doc) { fields[std::string(section) + "." + key] = doc; });
  });
  for (const auto& e : std::filesystem::directory_iterator(std::string(SF_SOURCE_DIR) + "/configs")) {
    if (e.path().extension() != ".json") continue;
    std::ifstream in(e.path());
    configs[e.path().filename().string()] = json::parse(in).value("description", "");
  }
  REQUIRE(configs.size() >= 5);
  const ConfigDocTexts& zh = config_doc_zh();
  check_chinese_texts("section", sections, zh.sections);
  check_chinese_texts("key", fields, zh.fields);
  check_chinese_texts("ready config", configs, zh.configs);
}
