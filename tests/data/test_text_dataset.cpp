// Text LM dataset: files and folders, the token cache, the train/val split, random and
// sequential windows, resuming, and one clear error per kind of bad input.
#include <doctest/doctest.h>

#include <cmath>

#include <fstream>
#include <tuple>

#include "autograd/errors.h"
#include "data/char_tokenizer.h"
#include "data/lm_batches.h"
#include "data/text_dataset.h"
#include "data/token_cache.h"
#include "test_helpers.h"

using namespace sf;
using namespace sf::data;
using sf::test::contains;
using sf::test::error_of;
using sf::test::write_bytes;

static std::string sample_text(int lines) {
  std::string s;
  for (int i = 0; i < lines; ++i) s += "line " + std::to_string(i) + ": the quick brown fox jumps.\n";
  return s;
}

TEST_CASE("text dataset: the split floors the train part as nanoGPT's int(n * 0.9) does") {
  sf::test::TempDir dir("textds_floor");
  write_bytes(dir / "s.txt", "abcdefghijklmnopqrstuvwx");  // 24 characters: 21.6 train
  LmData d = load_text_dataset(sf::test::text_cfg(dir / "s.txt", 0.1, 2, /*cache=*/false), TokenizerConfig{});
  CHECK(d.train->size() == 21);  // rounding the val part (2.4 -> 2) would give 22
  CHECK(d.val->size() == 3);
}

TEST_CASE("text dataset: a file is tokenized and split by position") {
  sf::test::TempDir dir("textds");
  std::string text = sample_text(40);
  write_bytes(dir / "a.txt", text);
  TextDataConfig cfg = sf::test::text_cfg(dir / "a.txt", 0.25, 16, /*cache=*/false);
  LmData d = load_text_dataset(cfg, TokenizerConfig{});
  std::vector<int32_t> all = *d.train;
  all.insert(all.end(), d.val->begin(), d.val->end());
  CHECK(all == d.tokenizer->encode(text));
  // nanoGPT's rule: the first int(n * (1 - val_fraction)) tokens train
  CHECK(static_cast<int64_t>(d.train->size()) == static_cast<int64_t>(std::floor(double(all.size()) * 0.75)));
  CHECK(d.tokenizer->decode(*d.train) + d.tokenizer->decode(*d.val) == text);
  CHECK(contains(d.description, "char tokens"));
  CHECK(sf::test::count_files(dir.path) == 1);  // no cache written when cache = false
}

TEST_CASE("text dataset: a folder's .txt files are read in name order") {
  sf::test::TempDir dir("textfolder");
  write_bytes(dir / "b.txt", "second file. " + sample_text(10));
  write_bytes(dir / "a.txt", "first file. " + sample_text(10));
  write_bytes(dir / "notes.md", "\xFF not read");
  std::vector<std::filesystem::path> files;
  std::string text = read_corpus(dir.path, &files);
  REQUIRE(files.size() == 2);
  CHECK(files[0].filename() == "a.txt");
  CHECK(text.rfind("first file. ", 0) == 0);
  LmData d = load_text_dataset(sf::test::text_cfg(dir.path, 0.1, 8, true), TokenizerConfig{});
  CHECK(std::filesystem::exists(dir / ".tokens.bin"));
  CHECK(d.tokenizer->decode(*d.train).rfind("first file. ", 0) == 0);
  // The cache can live elsewhere (when the text's folder is shared or read-only).
  sf::test::TempDir elsewhere("textfolder_cache");
  TextDataConfig moved = sf::test::text_cfg(dir.path, 0.1, 8, true);
  moved.cache_path = elsewhere / "corpus.tokens.bin";
  LmData d2 = load_text_dataset(moved, TokenizerConfig{});
  CHECK(*d2.train == *d.train);
  CHECK(std::filesystem::exists(elsewhere / "corpus.tokens.bin"));
  CHECK(contains(load_text_dataset(moved, TokenizerConfig{}).notes.at(0), "read "));
}

TEST_CASE("token cache: written once, trusted only when tokenizer and text match") {
  sf::test::TempDir dir("cache");
  std::string text = sample_text(30);
  write_bytes(dir / "c.txt", text);
  auto cache = dir / "c.txt.tokens.bin";
  CharTokenizer tok = CharTokenizer::build(text);

  CachedTokens first = encode_with_cache(text, tok, cache);
  CHECK_FALSE(first.from_cache);
  CHECK(contains(first.note, "(no cache yet)"));
  CHECK(std::filesystem::file_size(cache) == 64 + 4 * text.size());
  CachedTokens second = encode_with_cache(text, tok, cache);
  CHECK(second.from_cache);
  CHECK(second.ids == first.ids);

  // Another tokenizer, then another text: rebuilt each time.
  std::string edited = text;
  edited[5] = 'X';
  CharTokenizer tok2 = CharTokenizer::build(edited);
  CachedTokens stale = encode_with_cache(edited, tok2, cache);
  CHECK_FALSE(stale.from_cache);
  CHECK(contains(stale.note, "different tokenizer"));  // tok2's fingerprint differs first
  CachedTokens changed = encode_with_cache(text, tok2, cache);
  CHECK_FALSE(changed.from_cache);
  CHECK(contains(changed.note, "the text has changed"));

  // A truncated or corrupted file is not trusted.
  encode_with_cache(text, tok, cache);
  std::filesystem::resize_file(cache, 64 + 10);
  CachedTokens trunc = encode_with_cache(text, tok, cache);
  CHECK_FALSE(trunc.from_cache);
  CHECK(contains(trunc.note, "truncated"));
  CHECK(trunc.ids == first.ids);
  {
    std::fstream f(cache, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(64);
    const char big[4] = {'\x7f', '\x7f', '\x7f', '\x7f'};  // an id far outside the vocabulary
    f.write(big, 4);
  }
  CachedTokens corrupt = encode_with_cache(text, tok, cache);
  CHECK_FALSE(corrupt.from_cache);
  CHECK(contains(corrupt.note, "id out of range at 0"));
  write_bytes(cache, "garbage that is long enough to hold a header but has the wrong magic....");
  CHECK(contains(encode_with_cache(text, tok, cache).note, "bad magic"));
  CHECK(encode_with_cache(text, tok, cache).from_cache);
  // Only the text and its cache: no temp files.
  CHECK(sf::test::count_files(dir.path) == 2);
}

TEST_CASE("text dataset: bad inputs are one clear line naming the file or key") {
  sf::test::TempDir dir("badtext");
  TokenizerConfig tc;
  auto load = [&](const std::filesystem::path& p, int64_t block = 8, double val = 0.1) {
    return load_text_dataset(sf::test::text_cfg(p, val, block, true), tc);
  };
  std::string missing = (dir / "missing.txt").string();
  CHECK(error_of<DataError>([&] { load(dir / "missing.txt"); }) == missing + ": no such file or folder (data.path)");
  write_bytes(dir / "empty.txt", "");
  CHECK(error_of<DataError>([&] { load(dir / "empty.txt"); }) == (dir / "empty.txt").string() + ": file is empty");
  write_bytes(dir / "short.txt", "hello");
  CHECK(error_of<DataError>([&] { load(dir / "short.txt", 8); }) ==
        (dir / "short.txt").string() +
            ": 5 tokens, shorter than block_size + 1 = 9 needed for one window (use more text or a "
            "smaller data.block_size)");
  write_bytes(dir / "mid.txt", std::string(40, 'a'));
  CHECK(contains(error_of<DataError>([&] { load(dir / "mid.txt", 8, 0.1); }),
                 "40 tokens split into 36 train + 4 val, but each split needs at least block_size + 1 = 9"));
  write_bytes(dir / "model.bin", std::string("\x7f"
                                             "ELF\x02\x01\x01\0\0\0",
                                             10));
  CHECK(contains(error_of<DataError>([&] { load(dir / "model.bin"); }),
                 "model.bin: looks binary (NUL byte at offset 7)"));
  CHECK(error_of<ConfigError>([&] { load(dir / "mid.txt", 8, 1.0); }) ==
        "data.val_fraction: must be in [0, 1), got 1.000000");
  CHECK(error_of<ConfigError>([&] { load(dir / "mid.txt", 0); }) == "data.block_size: must be >= 1, got 0");
  std::filesystem::create_directories(dir / "empty_folder");
  CHECK(contains(error_of<DataError>([&] { load(dir / "empty_folder"); }),
                 "empty_folder: folder has no .txt files (data.path)"));
  // A checkpoint's tokenizer that lacks a character of this text: names the file and the char.
  auto ckpt_tok = std::make_shared<CharTokenizer>(CharTokenizer::build("abc"));
  write_bytes(dir / "new.txt", "abcabcabcabcabcabcabcabcz");
  CHECK(contains(
      error_of<DataError>([&] { load_text_dataset(sf::test::text_cfg(dir / "new.txt", 0.0, 8, false), tc, ckpt_tok); }),
      "new.txt: char tokenizer: the text contains characters the vocabulary does not have: 'z' (U+007A) at "
      "position 24"));
  // Nothing half-written: no cache files and no temp files for the failed loads.
  for (auto& e : std::filesystem::directory_iterator(dir.path))
    CHECK_FALSE(contains(e.path().filename().string(), ".tmp."));
}

TEST_CASE("random windows: seeded, shifted targets, resumable bit for bit") {
  auto tokens = std::make_shared<const std::vector<int32_t>>([] {
    std::vector<int32_t> v(500);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(i);
    return v;
  }());
  RandomWindows a(tokens, 16, 4, 42), b(tokens, 16, 4, 42), c(tokens, 16, 4, 43);
  LmBatch x = a.next(), y = b.next(), z = c.next();
  CHECK(x.inputs.shape == std::vector<int64_t>{4, 16});
  CHECK(x.inputs.data == y.inputs.data);
  CHECK(x.inputs.data != z.inputs.data);
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t t = 0; t < 16; ++t) {
      CHECK(x.targets[r * 16 + t] == x.inputs[r * 16 + t] + 1);  // ids equal positions here
      if (t > 0) CHECK(x.inputs[r * 16 + t] == x.inputs[r * 16 + t - 1] + 1);
    }
  // Save after 3 batches, continue, and compare with a fresh sampler restored from the state.
  a.next();
  a.next();
  nlohmann::json state = nlohmann::json::parse(a.get_state().dump());  // through text, as in a checkpoint
  std::vector<int32_t> expected;
  for (int i = 0; i < 5; ++i) {
    auto bt = a.next().inputs.data;
    expected.insert(expected.end(), bt.begin(), bt.end());
  }
  RandomWindows resumed(tokens, 16, 4, 999);
  resumed.set_state(state);
  CHECK(resumed.batches_drawn() == 3);
  std::vector<int32_t> got;
  for (int i = 0; i < 5; ++i) {
    auto bt = resumed.next().inputs.data;
    got.insert(got.end(), bt.begin(), bt.end());
  }
  CHECK(got == expected);
  // A state from other data is refused.
  RandomWindows other(std::make_shared<const std::vector<int32_t>>(300, 0), 16, 4, 42);
  CHECK(contains(error_of<DataError>([&] { other.set_state(state); }),
                 "data state in checkpoint: saved for 500 tokens, the data now has 300"));
  // Counts and seeds must be integers that fit: nlohmann would cast 1e30 to int64 (undefined) and
  // wrap 2^63 to a negative count. Each is refused, and the sampler is left as it was.
  const int64_t drawn_before = resumed.batches_drawn();
  for (auto [key, value, message] :
       {std::tuple{"batches", nlohmann::json(1e30), "\"batches\": must be a 64-bit integer, got 1e+30"},
        std::tuple{"batches", nlohmann::json(uint64_t(1) << 63),
                   "\"batches\": must be a 64-bit integer, got 9223372036854775808"},
        std::tuple{"batches", nlohmann::json(-3), "\"batches\": must be an integer >= 0, got -3"},
        std::tuple{"seed", nlohmann::json(-1), "\"seed\": must be an integer >= 0, got -1"},
        std::tuple{"seed", nlohmann::json(4.2e19), "\"seed\": must be an integer >= 0"},
        std::tuple{"tokens", nlohmann::json(500.0), "\"tokens\": must be an integer >= 0"},
        std::tuple{"block_size", nlohmann::json(1e300), "\"block_size\": must be a 64-bit integer"}}) {
    nlohmann::json bad = state;
    bad[key] = value;
    CAPTURE(std::string(key));
    CHECK(contains(error_of<DataError>([&] { resumed.set_state(bad); }),
                   std::string("data state in checkpoint: ") + message));
  }
  nlohmann::json no_tokens = state;
  no_tokens.erase("tokens");
  CHECK(contains(error_of<DataError>([&] { resumed.set_state(no_tokens); }),
                 "data state in checkpoint: missing \"tokens\""));
  CHECK(resumed.batches_drawn() == drawn_before);
  CHECK(contains(
      error_of<DataError>([&] { RandomWindows(std::make_shared<const std::vector<int32_t>>(10, 0), 16, 4, 1); }),
      "train split: 10 tokens, but one window needs block_size + 1 = 17"));
}

TEST_CASE("torch windows: nanoGPT's get_batch on a shared generator, the next batch drawn ahead, resumable") {
  auto tokens = std::make_shared<const std::vector<int32_t>>([] {
    std::vector<int32_t> v(500);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(i);
    return v;
  }());
  auto gen = std::make_shared<sf::TorchGenerator>(1337);
  TorchWindows train(tokens, 16, 4, gen, /*prefetch=*/true);  // draws batch 0 now
  TorchWindows eval(tokens, 16, 4, gen, /*prefetch=*/false);
  LmBatch e = eval.next();    // an evaluation between: after batch 0 was drawn
  LmBatch b0 = train.next();  // hands out batch 0, draws batch 1

  // The same stream by hand: starts = randint(500 - 16) four times per batch.
  sf::TorchGenerator ref(1337);
  auto starts = [&] {
    std::vector<int32_t> s;
    for (int r = 0; r < 4; ++r) s.push_back(static_cast<int32_t>(ref.randint(500 - 16)));
    return s;
  };
  auto firsts = [](const LmBatch& b) {  // ids equal positions here, so the first input is the start
    std::vector<int32_t> s;
    for (int64_t r = 0; r < 4; ++r) s.push_back(b.inputs[r * 16]);
    return s;
  };
  std::vector<int32_t> s0 = starts(), se = starts(), s1 = starts();
  CHECK(firsts(b0) == s0);
  CHECK(firsts(e) == se);
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t t = 0; t < 16; ++t) CHECK(b0.targets[r * 16 + t] == b0.inputs[r * 16 + t] + 1);

  // Saved with batch 1 pending; the generator is saved by its owner.
  nlohmann::json state = nlohmann::json::parse(train.get_state().dump());
  const std::string gen_state = gen->state();
  LmBatch b1 = train.next(), b2 = train.next();
  CHECK(firsts(b1) == s1);
  auto gen2 = std::make_shared<sf::TorchGenerator>(1);
  TorchWindows resumed(tokens, 16, 4, gen2, /*prefetch=*/true);
  resumed.set_state(state);
  gen2->set_state(gen_state);
  CHECK(resumed.batches_drawn() == 1);
  CHECK(resumed.next().inputs.data == b1.inputs.data);
  CHECK(resumed.next().inputs.data == b2.inputs.data);

  // States that do not fit are refused with the reason.
  RandomWindows own(tokens, 16, 4, 42);
  CHECK(contains(error_of<DataError>([&] { resumed.set_state(own.get_state()); }), "saved with another train.rng"));
  CHECK(contains(error_of<DataError>([&] { own.set_state(state); }), "not a random-window sampler state"));
  nlohmann::json odd_kind = own.get_state();
  odd_kind["kind"] = 7;  // not a string: the same message, not a JSON type error
  CHECK(contains(error_of<DataError>([&] { own.set_state(odd_kind); }), "not a random-window sampler state"));
  nlohmann::json outside = state;
  outside["pending"][0] = 484;  // starts are in [0, 484)
  CHECK(
      contains(error_of<DataError>([&] { resumed.set_state(outside); }), "a pending window start is outside the data"));
  nlohmann::json short_pending = state;
  short_pending["pending"].erase(0);
  CHECK(contains(error_of<DataError>([&] { resumed.set_state(short_pending); }), "\"pending\" has the wrong length"));
  nlohmann::json wrong_type = state;
  wrong_type["pending"] = "x";
  CHECK(contains(error_of<DataError>([&] { resumed.set_state(wrong_type); }), "\"pending\" must be an array"));
  nlohmann::json float_start = state;
  float_start["pending"][0] = 1e30;  // would be an undefined cast to int64
  CHECK(contains(error_of<DataError>([&] { resumed.set_state(float_start); }),
                 "a pending window start: must be a 64-bit integer, got 1e+30"));
  nlohmann::json negative_count = state;
  negative_count["batches"] = -1;
  CHECK(contains(error_of<DataError>([&] { resumed.set_state(negative_count); }),
                 "\"batches\": must be an integer >= 0, got -1"));
}

TEST_CASE("concat_rows stacks batches row after row, and refuses mixed block sizes") {
  auto tokens = std::make_shared<const std::vector<int32_t>>([] {
    std::vector<int32_t> v(200);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(i);
    return v;
  }());
  RandomWindows w(tokens, 8, 3, 5);
  std::vector<LmBatch> batches = {w.next(), w.next(), w.next()};
  LmBatch both = concat_rows(batches, 1, 3);
  CHECK(both.inputs.shape == std::vector<int64_t>{6, 8});
  CHECK(both.targets.shape == std::vector<int64_t>{6, 8});
  std::vector<int32_t> expected = batches[1].inputs.data;
  expected.insert(expected.end(), batches[2].inputs.data.begin(), batches[2].inputs.data.end());
  CHECK(both.inputs.data == expected);
  CHECK(both.targets[5 * 8 + 7] == batches[2].targets[2 * 8 + 7]);
  RandomWindows other(tokens, 4, 3, 5);
  batches.push_back(other.next());
  CHECK(contains(error_of<ShapeError>([&] { concat_rows(batches, 2, 4); }), "batches of different block sizes"));
  CHECK(contains(error_of<ShapeError>([&] { concat_rows(batches, 2, 2); }), "empty or out-of-range"));
}

TEST_CASE("sequential windows: each target once, in order, and the tail is reported") {
  std::vector<int32_t> v(103);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(i);
  SequentialWindows sw(std::make_shared<const std::vector<int32_t>>(v), 10, 4);
  CHECK(sw.num_windows() == 10);     // (103 - 1) / 10
  CHECK(sw.num_batches() == 3);      // 4 + 4 + 2 rows
  CHECK(sw.dropped_targets() == 2);  // targets 101 and 102
  std::vector<int32_t> targets;
  for (int64_t i = 0; i < sw.num_batches(); ++i) {
    LmBatch b = sw.batch(i);
    CHECK(b.inputs.shape[0] == (i < 2 ? 4 : 2));
    targets.insert(targets.end(), b.targets.data.begin(), b.targets.data.end());
  }
  REQUIRE(targets.size() == 100);
  for (int32_t k = 0; k < 100; ++k) CHECK(targets[static_cast<size_t>(k)] == k + 1);
  CHECK(sw.batch(0).inputs.data ==
        SequentialWindows(std::make_shared<const std::vector<int32_t>>(v), 10, 4).batch(0).inputs.data);
}
