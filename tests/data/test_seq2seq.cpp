// Synthetic seq2seq tasks: each task's answers, the held-out set, seeding and resuming,
// padding and masks, exact-match scoring, and config errors.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "autograd/errors.h"
#include "data/seq2seq_batch.h"
#include "data/seq2seq_tasks.h"
#include "test_helpers.h"

using namespace sf;
using namespace sf::data;
using sf::test::contains;
using sf::test::error_of;

// The task named `name` ("copy", ...), found through task_name, the names a checkpoint holds.
static TaskKind task_named(const std::string& name) {
  for (TaskKind k : {TaskKind::copy, TaskKind::reverse, TaskKind::sort, TaskKind::addition})
    if (task_name(k) == name) return k;
  throw std::invalid_argument("no task named " + name);
}

static Seq2SeqConfig config(const std::string& task, int64_t lo = 1, int64_t hi = 6) {
  Seq2SeqConfig c;
  c.task = task_named(task);
  c.min_len = lo;
  c.max_len = hi;
  c.eval_size = 50;
  return c;
}

// The integer a sequence of digit tokens spells.
static long long number(std::vector<int32_t>::const_iterator b, std::vector<int32_t>::const_iterator e) {
  long long v = 0;
  for (; b != e; ++b) v = v * 10 + (*b - kFirstSymbol);
  return v;
}

TEST_CASE("seq2seq: copy, reverse and sort give the right answers") {
  for (std::string task : {"copy", "reverse", "sort"}) {
    Seq2SeqTask t(config(task, 2, 7), 1);
    CHECK(t.vocab_size() == 13);
    for (int i = 0; i < 200; ++i) {
      Example e = t.next();
      CHECK(e.src.size() >= 2);
      CHECK(e.src.size() <= 7);
      for (int32_t id : e.src) CHECK((id >= kFirstSymbol && id < t.vocab_size()));
      std::vector<int32_t> want = e.src;
      if (task == "reverse") want.assign(e.src.rbegin(), e.src.rend());
      if (task == "sort") std::sort(want.begin(), want.end());
      CHECK(e.tgt == want);
    }
  }
  Seq2SeqTask t(config("reverse"), 1);
  CHECK(t.to_string({kBos, 3, 4, 5, kEos, kPad}) == "<bos> a b c <eos> <pad>");
}

TEST_CASE("seq2seq: addition of multi-digit numbers") {
  Seq2SeqTask t(config("addition", 1, 4), 3);
  CHECK(t.vocab_size() == 14);
  CHECK(t.max_src_len() == 9);
  CHECK(t.max_tgt_len() == 5);
  for (int i = 0; i < 500; ++i) {
    Example e = t.next();
    auto plus = std::find(e.src.begin(), e.src.end(), kFirstSymbol + 10);
    REQUIRE(plus != e.src.end());
    long long a = number(e.src.begin(), plus), b = number(plus + 1, e.src.end());
    CHECK(number(e.tgt.begin(), e.tgt.end()) == a + b);
    CHECK(std::to_string(a).size() == static_cast<size_t>(plus - e.src.begin()));  // no leading zeros
    CHECK(std::to_string(a + b).size() == e.tgt.size());
  }
  CHECK(t.to_string(solve(TaskKind::addition, {3 + 4, 3 + 7, 13, 3 + 8, 3 + 5})) == "1 3 2");  // 47 + 85
  CHECK(t.to_string(solve(TaskKind::addition, {3 + 9, 3 + 9, 3 + 9, 13, 3 + 1})) == "1 0 0 0");
}

TEST_CASE("seq2seq: a fixed held-out set the training stream never yields") {
  Seq2SeqConfig c = config("copy", 1, 3);
  c.num_symbols = 5;  // 5 + 25 + 125 = 155 possible inputs
  c.eval_size = 30;
  Seq2SeqTask a(c, 1), b(c, 777);
  REQUIRE(a.eval_set().size() == 30);
  std::set<std::vector<int32_t>> held;
  for (size_t i = 0; i < a.eval_set().size(); ++i) {
    CHECK(a.eval_set()[i].src == b.eval_set()[i].src);  // independent of the run's seed
    held.insert(a.eval_set()[i].src);
  }
  CHECK(held.size() == 30);  // distinct
  std::set<std::vector<int32_t>> seen;
  for (int i = 0; i < 3000; ++i) {
    Example e = a.next();
    CHECK(held.count(e.src) == 0);
    seen.insert(e.src);
  }
  CHECK(seen.size() == 155 - 30);  // every other input does show up in training
}

// The "shape" of an input the held-out cap counts by: its length, or for addition the digit
// counts of both numbers (how many distinct inputs share it: s^L, or N(la) * N(lb)).
static std::pair<size_t, size_t> shape_of(const std::vector<int32_t>& src, bool addition) {
  if (!addition) return {src.size(), 0};
  size_t la = static_cast<size_t>(std::find(src.begin(), src.end(), kFirstSymbol + 10) - src.begin());
  return {la, src.size() - la - 1};
}

TEST_CASE("seq2seq: the held-out set leaves training at least half the inputs of every length") {
  // reverse 1-8 symbols: only 10 inputs of length 1 but ~62 of the 500 draws; addition of 1-2
  // digits: 100 sums of two 1-digit numbers but ~625 of the 2500 draws.
  struct Case {
    std::string task;
    int64_t hi, eval_size;
  };
  for (const Case& k : {Case{"reverse", 8, 500}, Case{"addition", 2, 2500}}) {
    CAPTURE(k.task);
    Seq2SeqConfig c = config(k.task, 1, k.hi);
    c.eval_size = k.eval_size;
    Seq2SeqTask t(c, 1);
    const bool addition = k.task == "addition";
    auto inputs_of_shape = [&](std::pair<size_t, size_t> s) {
      auto numbers = [](size_t digits) { return digits == 1 ? 10.0 : 9.0 * std::pow(10.0, double(digits) - 1); };
      return addition ? numbers(s.first) * numbers(s.second) : std::pow(10.0, double(s.first));
    };
    std::map<std::pair<size_t, size_t>, int64_t> held;
    for (const Example& e : t.eval_set()) held[shape_of(e.src, addition)]++;
    REQUIRE(static_cast<int64_t>(t.eval_set().size()) == k.eval_size);
    for (const auto& [shape, n] : held) {
      CAPTURE(shape.first);
      CAPTURE(shape.second);
      CHECK(double(n) <= inputs_of_shape(shape) / 2);
    }
    // The shortest shape, all of whose inputs the old draw held out, does reach training.
    std::set<std::vector<int32_t>> shortest;
    for (int i = 0; i < 20000; ++i) {
      Example e = t.next();
      if (shape_of(e.src, addition) == std::make_pair(size_t{1}, size_t{addition ? 1u : 0u})) shortest.insert(e.src);
    }
    std::pair<size_t, size_t> first{1, addition ? 1 : 0};
    CHECK(double(shortest.size()) == inputs_of_shape(first) - double(held[first]));
  }
}

TEST_CASE("seq2seq: seeded and resumable") {
  Seq2SeqConfig c = config("sort");
  Seq2SeqTask a(c, 5), b(c, 5), other(c, 6);
  CHECK(a.next().src == b.next().src);
  a.next_batch(7);
  nlohmann::json state = nlohmann::json::parse(a.get_state().dump());
  auto expected = a.next_batch(10);
  Seq2SeqTask resumed(c, 12345);
  resumed.set_state(state);
  auto got = resumed.next_batch(10);
  for (size_t i = 0; i < 10; ++i) CHECK(got[i].src == expected[i].src);
  CHECK(other.next_batch(5)[0].src != Seq2SeqTask(c, 5).next_batch(5)[0].src);
  Seq2SeqTask copy(config("copy"), 5);
  CHECK(error_of<DataError>([&] { copy.set_state(state); }) ==
        "data state in checkpoint: not a state of the \"copy\" task");
  for (const char* key : {"kind", "task"}) {  // not strings: the same message, not a JSON type error
    nlohmann::json odd = state;
    odd[key] = 7;
    CHECK(error_of<DataError>([&] { resumed.set_state(odd); }) ==
          "data state in checkpoint: not a state of the \"sort\" task");
  }
  nlohmann::json float_count = state;
  float_count["examples"] = 1e30;  // would be an undefined cast to int64
  CHECK(error_of<DataError>([&] { resumed.set_state(float_count); }) ==
        "data state in checkpoint: \"examples\": must be a 64-bit integer, got 1e+30");
  nlohmann::json negative_count = state;
  negative_count["examples"] = -1;
  CHECK(error_of<DataError>([&] { resumed.set_state(negative_count); }) ==
        "data state in checkpoint: \"examples\": must be an integer >= 0, got -1");
  nlohmann::json float_rng = state;
  float_rng["rng"][0] = 5.37e19;
  CHECK(error_of<DataError>([&] { resumed.set_state(float_rng); }) ==
        "data state in checkpoint: rng: a generator state must be an array of 4 unsigned integers");
}

TEST_CASE("seq2seq: collate pads, shifts the decoder and masks padding") {
  std::vector<Example> ex = {{{3, 4, 5}, {5, 4, 3}}, {{6}, {6}}};
  Seq2SeqBatch b = collate(ex);
  CHECK(b.src.shape == std::vector<int64_t>{2, 3});
  CHECK(b.src.data == std::vector<int32_t>{3, 4, 5, 6, kPad, kPad});
  CHECK(b.tgt_in.shape == std::vector<int64_t>{2, 4});
  CHECK(b.tgt_in.data == std::vector<int32_t>{kBos, 5, 4, 3, kBos, 6, kPad, kPad});
  CHECK(b.tgt_out.data == std::vector<int32_t>{5, 4, 3, kEos, 6, kEos, -100, -100});
  CHECK(b.src_pad_mask.shape() == Shape{2, 3});
  CHECK(b.src_pad_mask.to_vector() == std::vector<double>{0, 0, 0, 0, 1, 1});
  CHECK(b.tgt_pad_mask.to_vector() == std::vector<double>{0, 0, 0, 0, 0, 0, 1, 1});
  CHECK(b.src_len == std::vector<int64_t>{3, 1});
  CHECK(b.tgt_len == std::vector<int64_t>{4, 2});
  // Teacher-forced exact match: row 0 right, row 1 wrong at a real position; padding ignored.
  IntTensor pred({2, 4}, {5, 4, 3, kEos, 7, kEos, 9, 9});
  CHECK(count_exact_rows(pred, b.tgt_out) == 1);
  pred[4] = 6;
  CHECK(count_exact_rows(pred, b.tgt_out) == 2);
  CHECK(contains(error_of<ShapeError>([] { collate({}); }), "collate: empty batch"));
}

TEST_CASE("seq2seq: exact-match accuracy cuts predictions at <eos>") {
  std::vector<Example> ex = {{{3}, {3, 4}}, {{5}, {5}}, {{6}, {6, 6}}};
  std::vector<std::vector<int32_t>> pred = {{3, 4, kEos, 9, 9}, {5, 5}, {6, 6}};
  CHECK(exact_match_accuracy(pred, ex) == doctest::Approx(2.0 / 3.0));
  CHECK(contains(error_of<ShapeError>([&] { exact_match_accuracy({{}}, ex); }), "1 predictions for 3 examples"));
}

TEST_CASE("seq2seq: bad settings name the key") {
  CHECK(error_of<ConfigError>([] { Seq2SeqTask t(config("copy", 0, 0), 1); }) ==
        "data.task_min_len: must be >= 1, got 0");
  CHECK(error_of<ConfigError>([] { Seq2SeqTask t(config("copy", 3, 2), 1); }) ==
        "data.task_max_len: must be >= data.task_min_len (3), got 2");
  Seq2SeqConfig c = config("copy", 1, 1);
  c.eval_size = 5;  // 10 possible inputs
  CHECK(contains(error_of<ConfigError>([&] { Seq2SeqTask t(c, 1); }),
                 "data.task_eval_size: 5 held-out examples out of only 10 possible inputs"));
  c = config("copy", 64, 64);  // 2^64 inputs, more than any int64 holds
  c.num_symbols = 2;
  c.eval_size = int64_t(5'000'000'000'000'000'000);
  CHECK(contains(error_of<ConfigError>([&] { Seq2SeqTask t(c, 1); }),
                 "5000000000000000000 held-out examples out of only 18446744073709551616 possible inputs"));
  c = config("sort");
  c.num_symbols = 1;
  CHECK(error_of<ConfigError>([&] { Seq2SeqTask t(c, 1); }) == "data.task_symbols: must be in [2, 1000], got 1");
  CHECK(contains(error_of<ConfigError>([] { Seq2SeqTask t(config("addition", 1, 30), 1); }),
                 "data.task_max_len: addition supports up to 17 digits"));
}
