// The key numbers of lesson 25 (tokenizing Chinese), each against a count made here from the
// raw text, independently of the tokenizers.
#include <doctest/doctest.h>

#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "data/fortune_poems.h"
#include "data/utf8.h"
#include "lessons/lesson.h"
#include "lessons/tokenize_zh.h"

using namespace sf::lessons;

static bool have_poems() {
  for (const char* f : {"tang300", "song100"})
    if (!std::filesystem::exists(sf::data::fortune_poems_path(f))) {
      MESSAGE("skipped: " << sf::data::fortune_poems_path(f).string()
                          << " is missing (apt-get install fortunes-zh; scripts/setup.sh installs it)");
      return false;
    }
  return true;
}

// Characters counted as the bytes that are not UTF-8 continuation bytes (10xxxxxx).
static int64_t lead_bytes(const std::string& s) {
  int64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

TEST_CASE("lesson 25: 我喜欢苹果 and the Tang poems as characters, bytes and BPE tokens") {
  if (!have_poems()) return;
  std::ostringstream out;
  TokenizeZhResult r = run_lesson_tokenize_zh(out);
  std::string tang = sf::data::read_fortune_poems(sf::data::fortune_poems_path("tang300"));
  std::string song = sf::data::read_fortune_poems(sf::data::fortune_poems_path("song100"));

  // The sentence: five characters, three bytes each.
  CHECK(r.sentence_chars == std::vector<std::string>{"我", "喜", "欢", "苹", "果"});
  CHECK(r.sentence_bytes == 15);

  // The poems: characters, bytes, distinct characters, occurrences.
  CHECK(r.tang_bytes == static_cast<int64_t>(tang.size()));
  CHECK(r.tang_chars == lead_bytes(tang));
  std::vector<char32_t> cps = sf::data::utf8_decode(tang);
  std::set<char32_t> distinct(cps.begin(), cps.end());
  CHECK(r.char_vocab == static_cast<int64_t>(distinct.size()));
  CHECK(r.char_vocab == 2500);
  CHECK(r.sentence_counts == std::vector<int64_t>{45, 3, 13, 3, 1});
  CHECK(r.word_count == 0);
  int64_t unknown = 0;
  for (char32_t cp : sf::data::utf8_decode(song)) unknown += distinct.count(cp) == 0;
  CHECK(r.song_unknown == unknown);
  CHECK(r.song_unknown > 0);

  // The first merge is the most frequent pair of adjacent non-ASCII bytes (such a pair always
  // lies inside one pre-split chunk): ef bc, the first two bytes of '，' (U+FF0C).
  std::map<std::pair<unsigned char, unsigned char>, int64_t> pairs;
  for (size_t i = 0; i + 1 < tang.size(); ++i) {
    unsigned char a = static_cast<unsigned char>(tang[i]), b = static_cast<unsigned char>(tang[i + 1]);
    if (a >= 0x80 && b >= 0x80) ++pairs[{a, b}];
  }
  auto top = pairs.begin();
  for (auto it = pairs.begin(); it != pairs.end(); ++it)
    if (it->second > top->second) top = it;
  REQUIRE(r.first_merges.size() == 12);
  CHECK(r.first_merges[0] == std::string{static_cast<char>(top->first.first), static_cast<char>(top->first.second)});
  CHECK(r.first_merges[0] == "\xef\xbc");
  CHECK(r.first_merges[1] == "，");
  CHECK(r.first_merges[3] == "。");
  CHECK(r.first_char == "不");
  CHECK(r.first_char_rank == 21);
  CHECK(r.first_word == "不见");
  CHECK(r.first_word_rank == 440);

  // Tokens per character: bytes at 256, then falling with every doubling, by less each time;
  // worse on the unseen Song poems than on the Tang poems the merges were learned from.
  REQUIRE(r.vocab_sizes == std::vector<int64_t>{256, 512, 1024, 2048, 4096});
  CHECK(r.tang_tokens_per_char[0] == doctest::Approx(static_cast<double>(tang.size()) / lead_bytes(tang)));
  CHECK(r.song_tokens_per_char[0] == doctest::Approx(static_cast<double>(song.size()) / lead_bytes(song)));
  for (size_t i = 1; i < 5; ++i) {
    CHECK(r.tang_tokens_per_char[i] < r.tang_tokens_per_char[i - 1]);
    CHECK(r.song_tokens_per_char[i] > r.tang_tokens_per_char[i]);
  }
  for (size_t i = 2; i < 5; ++i)
    CHECK(r.tang_tokens_per_char[i - 1] - r.tang_tokens_per_char[i] <
          r.tang_tokens_per_char[i - 2] - r.tang_tokens_per_char[i - 1]);
  CHECK(r.tang_tokens_per_char[3] == doctest::Approx(1.002).epsilon(1e-3));
  CHECK(r.sentence_tokens == std::vector<int64_t>{15, 10, 8, 8, 7});

  // The trade-off table: V * 384 weights, 256 / (tokens per char) characters in the context.
  REQUIRE(r.embedding_params.size() == 6);
  for (size_t i = 0; i < 5; ++i) {
    CHECK(r.embedding_params[i] == r.vocab_sizes[i] * 384);
    CHECK(r.chars_in_context[i] == doctest::Approx(256.0 / r.tang_tokens_per_char[i]));
  }
  CHECK(r.embedding_params[5] == 2500 * 384);
  CHECK(r.bytes_vs_chars_length == doctest::Approx(r.tang_tokens_per_char[0]));
}

TEST_CASE("lesson 25 prints the same numbers in Chinese") {
  if (!have_poems()) return;
  std::ostringstream en, zh;
  set_language(zh, Lang::zh);
  TokenizeZhResult a = run_lesson_tokenize_zh(en), b = run_lesson_tokenize_zh(zh);
  CHECK(en.str() != zh.str());
  CHECK(zh.str().find("按字切分") != std::string::npos);
  CHECK(a.tang_tokens_per_char == b.tang_tokens_per_char);
  CHECK(a.song_tokens_per_char == b.song_tokens_per_char);
  // Every table line (a line starting with a vocabulary size) is the same in both languages.
  auto table = [](const std::string& text) {
    std::vector<std::string> rows;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
      if (line.size() > 4 && std::isdigit(static_cast<unsigned char>(line[0])) && line.find(" | ") != std::string::npos)
        rows.push_back(line);
    return rows;
  };
  CHECK(table(en.str()).size() == 11);
  CHECK(table(en.str()) == table(zh.str()));
}
