// Char and byte-level BPE tokenizers: round trips, unknown characters, JSON save/load,
// the checkpoint vocabulary check, and BPE training speed on the shipped Tiny Shakespeare.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>

#include "autograd/errors.h"
#include "autograd/tensor.h"
#include "data/bpe_pretokenize.h"
#include "data/bpe_tokenizer.h"
#include "data/char_tokenizer.h"
#include "data/file_io.h"
#include "data/utf8.h"
#include "test_helpers.h"

using namespace std::string_literals;

using namespace sf;
using namespace sf::data;
using sf::test::contains;
using sf::test::error_of;

static const std::filesystem::path kShakespeare =
    std::filesystem::path(SF_SOURCE_DIR) / "data/corpora/tinyshakespeare.txt";

TEST_CASE("char tokenizer: one token per code point, exact round trip") {
  std::string text = "我喜欢苹果, I like apples!\n";
  CharTokenizer tok = CharTokenizer::build(text);
  CHECK(tok.encode("我喜欢苹果").size() == 5);
  CHECK(tok.decode(tok.encode(text)) == text);
  // ids follow code point order: '\n' < ' ' < '!' < ... < CJK
  auto ids = tok.encode("\n !");
  CHECK(ids == std::vector<int32_t>{0, 1, 2});
  CHECK(tok.vocab_size() == static_cast<int32_t>(tok.chars().size()));
}

TEST_CASE("char tokenizer: round trip on random text over all planes") {
  Generator gen(11);
  std::vector<char32_t> cps;
  for (int i = 0; i < 2000; ++i) {
    char32_t c;
    do c = static_cast<char32_t>(1 + gen.randint(0x10FFFF));
    while (c >= 0xD800 && c <= 0xDFFF);  // surrogates are not characters
    cps.push_back(c);
  }
  std::string text = utf8_encode(cps);
  CharTokenizer tok = CharTokenizer::build(text);
  auto ids = tok.encode(text);
  CHECK(ids.size() == cps.size());
  CHECK(tok.decode(ids) == text);
  auto loaded = tokenizer_from_json(nlohmann::json::parse(tok.to_json().dump()), "t.json");
  CHECK(loaded->encode(text) == ids);
}

TEST_CASE("char tokenizer: unknown characters are an error naming them, or <unk> when asked") {
  CharTokenizer tok = CharTokenizer::build("abc");
  // Which characters, where, and no advice about "unk" (a field of the saved tokenizer, not a
  // config key: a learner cannot act on it).
  std::string msg = error_of<DataError>([&] { tok.encode("abxcy"); });
  CHECK(msg ==
        "char tokenizer: the text contains characters the vocabulary does not have: 'x' (U+0078) at position 2, "
        "'y' (U+0079) at position 4 (the vocabulary is the 3 characters of the training text)");
  CHECK(contains(error_of<DataError>([&] { tok.encode("xxxxxxxa"); }), "at position 4, and 2 more (the vocabulary"));
  CharTokenizer with_unk = CharTokenizer::build("abc", /*use_unk=*/true);
  CHECK(with_unk.vocab_size() == 4);
  auto ids = with_unk.encode("ab苹c");
  CHECK(ids == std::vector<int32_t>{0, 1, 3, 2});
  CHECK(with_unk.decode(ids) ==
        "ab\xEF\xBF\xBD"
        "c");  // <unk> decodes to U+FFFD
  CHECK(contains(error_of<DataError>([&] {
                   tok.decode({0, 7});
                 }),
                 "token id 7 at position 1 is outside the vocabulary [0, 3)"));
}

TEST_CASE("char tokenizer: JSON save and load, and the checkpoint check") {
  sf::test::TempDir dir("chartok");
  CharTokenizer tok = CharTokenizer::build("hello, world 世界\n");
  tok.save(dir / "tokenizer.json");
  auto loaded = load_tokenizer(dir / "tokenizer.json");
  CHECK(loaded->kind() == "char");
  CHECK(loaded->to_json() == tok.to_json());
  CHECK(loaded->hash() == tok.hash());
  CHECK(loaded->decode(tok.encode("world, hello")) == "world, hello");
  check_same_tokenizer(tok, loaded->to_json(), "run/checkpoint.json");  // no throw

  CharTokenizer other = CharTokenizer::build("hello, World\n");
  std::string msg = error_of<DataError>([&] { check_same_tokenizer(other, tok.to_json(), "run/checkpoint.json"); });
  CHECK(contains(msg,
                 "run/checkpoint.json: the data's tokenizer does not match the checkpoint's "
                 "(char vocab of 10 vs checkpoint's char vocab of 12)"));
  CHECK(contains(msg, "first difference at id 3: \"W\" vs \"d\""));
  CHECK(other.hash() != tok.hash());
}

TEST_CASE("tokenizer JSON: malformed files are clear errors") {
  sf::test::TempDir dir("badtok");
  sf::test::write_bytes(dir / "t.json", "{\"type\": \"wordpiece\"}");
  CHECK(contains(error_of<DataError>([&] { load_tokenizer(dir / "t.json"); }), "unknown tokenizer type \"wordpiece\""));
  sf::test::write_bytes(dir / "t.json", "{not json");
  CHECK(contains(error_of<DataError>([&] { load_tokenizer(dir / "t.json"); }), "t.json: not valid JSON"));
  sf::test::write_bytes(dir / "t.json", "{\"type\": \"bpe\", \"merges\": [[300, 1]]}");
  CHECK(contains(error_of<DataError>([&] { load_tokenizer(dir / "t.json"); }),
                 "merge 0 (300, 1) uses a token that does not exist yet"));
  // 2^32 + 65 would narrow to 65 in get<int32_t> and pass as a valid merge of two bytes.
  sf::test::write_bytes(dir / "t.json", "{\"type\": \"bpe\", \"merges\": [[4294967361, 66]]}");
  CHECK(contains(error_of<DataError>([&] { load_tokenizer(dir / "t.json"); }), "merge 0 must be a pair of token ids"));
  sf::test::write_bytes(dir / "t.json", "{\"type\": \"char\", \"chars\": \"\"}");  // found by fuzzing
  CHECK(contains(error_of<DataError>([&] { load_tokenizer(dir / "t.json"); }),
                 "t.json: char tokenizer field \"chars\" is empty"));
}

TEST_CASE("gpt2 pre-split: chunks like GPT-2's regex, concatenating to the input") {
  auto chunks = pretokenize_gpt2("Hello world, it's 2024!!  \n  Ok");
  std::vector<std::string> got(chunks.begin(), chunks.end());
  std::vector<std::string> want = {"Hello", " world", ",", " it", "'s", " 2024", "!!", "  \n ", " Ok"};
  CHECK(got == want);
}

TEST_CASE("bpe: learns merges, round trips any byte string exactly") {
  std::string corpus;
  for (int i = 0; i < 50; ++i) corpus += "the cat sat on the mat. the hat is on the cat! ";
  for (bool split : {true, false}) {
    BpeTokenizer tok = BpeTokenizer::train(corpus, 300, split);
    CHECK(tok.vocab_size() > 256);
    CHECK(tok.vocab_size() <= 300);
    auto ids = tok.encode(corpus);
    CHECK(ids.size() < corpus.size() / 3);  // merges compress the training text
    CHECK(tok.decode(ids) == corpus);
    // Any bytes, including invalid UTF-8 and NUL, come back exactly.
    Generator gen(7);
    for (int trial = 0; trial < 20; ++trial) {
      std::string bytes(static_cast<size_t>(gen.randint(200)), '\0');
      for (char& ch : bytes) ch = static_cast<char>(gen.randint(256));
      CHECK(tok.decode(tok.encode(bytes)) == bytes);
    }
    std::string mixed = "我喜欢苹果 the cat\xFF\xFE sat\0on"s;
    CHECK(tok.decode(tok.encode(mixed)) == mixed);
  }
}

TEST_CASE("bpe: the first merge is the most frequent pair and encoding replays merges by rank") {
  // "ab" appears 3 times, "bc" twice: the first merge is (a, b) -> 256.
  BpeTokenizer tok = BpeTokenizer::train("abcabcab", 258, /*gpt2_split=*/false);
  REQUIRE(tok.merges().size() >= 1);
  CHECK(tok.merges()[0].left == 'a');
  CHECK(tok.merges()[0].right == 'b');
  CHECK(tok.token_bytes(256) == "ab");
  CHECK(tok.encode("ab") == std::vector<int32_t>{256});
  // Overlapping pairs merge left to right: "aaa" -> (aa) a.
  BpeTokenizer rep = BpeTokenizer::train("aaaaaaa", 257, false);
  CHECK(rep.encode("aaa") == std::vector<int32_t>{256, 'a'});
}

TEST_CASE("bpe: JSON round trip and vocab_size errors") {
  sf::test::TempDir dir("bpejson");
  BpeTokenizer tok = BpeTokenizer::train("low lower lowest newer newest wider widest", 280);
  tok.save(dir / "tok.json");
  auto loaded = load_tokenizer(dir / "tok.json");
  CHECK(loaded->to_json() == tok.to_json());
  CHECK(loaded->encode("lowest newer") == tok.encode("lowest newer"));
  CHECK(error_of<ConfigError>([] { BpeTokenizer::train("abc", 100); }) ==
        "BPE training: vocab_size 100 is out of range for byte-level BPE (256 .. 1048576)");
}

TEST_CASE("bpe: trains on 1 MB of Tiny Shakespeare in seconds") {
  std::string text = read_text_file(kShakespeare).substr(0, 1000000);
  auto t0 = std::chrono::steady_clock::now();
  BpeTokenizer tok = BpeTokenizer::train(text, 1024, /*gpt2_split=*/true);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("bpe training, 1 MB, vocab 1024, gpt2 split: " << seconds << " s");
  CHECK(tok.vocab_size() == 1024);
  auto ids = tok.encode(text);
  MESSAGE("compression: " << double(text.size()) / double(ids.size()) << " bytes/token");
  CHECK(tok.decode(ids) == text);
#if defined(NDEBUG) && !defined(__SANITIZE_ADDRESS__)
  CHECK(seconds < 10.0);  // the speed promise holds for optimized builds (measured: ~0.3 s)
#endif
}
