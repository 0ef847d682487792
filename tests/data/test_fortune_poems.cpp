// The Tang and Song poems of Debian's fortunes-zh as training text (data/fortune_poems.h), and
// the poem-form measure: the share of clauses of 5 or 7 characters.
#include <doctest/doctest.h>

#include <filesystem>

#include "autograd/errors.h"
#include "data/fortune_poems.h"

using namespace sf::data;

TEST_CASE("fortune poems: escapes, separators, titles and authors go, the poem lines stay") {
  const std::string raw =
      "\x1b[32m《静夜思》\x1b[m\n\x1b[33m作者：李白\x1b[m\n床前明月光，疑是地上霜。\n举头望明月，低头思故乡。\n%\n"
      "\x1b[32m题目:《寒食》\x1b[m\n\x1b[33m作者:王禹偁\x1b[m\n今年寒食在商山，山里风光亦可怜：\n%\n";
  CHECK(poems_from_fortune_text(raw) ==
        "床前明月光，疑是地上霜。\n举头望明月，低头思故乡。\n\n今年寒食在商山，山里风光亦可怜：\n");
}

TEST_CASE("poem form: the share of clauses with 5 or 7 characters") {
  int64_t clauses = 0;
  CHECK(five_or_seven_share("床前明月光，疑是地上霜。\n举头望明月，低头思故乡。\n", &clauses) == 1.0);
  CHECK(clauses == 4);
  // 4 characters, 7 characters, 6 characters: one clause in three is regular.
  CHECK(five_or_seven_share("春眠不觉，今年寒食在商山，处处闻啼鸟鸟。", &clauses) == doctest::Approx(1.0 / 3));
  CHECK(clauses == 3);
  CHECK(five_or_seven_share("", &clauses) == 0.0);
  CHECK(clauses == 0);
}

TEST_CASE("poem form: a sample cut off inside a clause loses only that clause") {
  CHECK(up_to_last_clause_end("床前明月光，疑是地上霜。\n举头望") == "床前明月光，疑是地上霜。\n");
  CHECK(up_to_last_clause_end("床前明月光，疑是") == "床前明月光，");
  CHECK(up_to_last_clause_end("举头望明月") == "");
  CHECK(up_to_last_clause_end("") == "");
}

TEST_CASE("the Tang poems of fortunes-zh: poem lines only, and most clauses are 5 or 7 characters") {
  std::filesystem::path tang = fortune_poems_path("tang300");
  if (!std::filesystem::exists(tang)) {
    MESSAGE("skipped: " << tang.string() << " is missing (apt-get install fortunes-zh; scripts/setup.sh installs it)");
    return;
  }
  std::string poems = read_fortune_poems(tang);
  CHECK(poems.find("作者") == std::string::npos);
  CHECK(poems.rfind("《", 0) == std::string::npos);  // no title line (a preface may quote one)
  CHECK(poems.find("\n《") == std::string::npos);
  CHECK(poems.find('\x1b') == std::string::npos);
  int64_t clauses = 0;
  double share = five_or_seven_share(poems, &clauses);
  MESSAGE("tang300: " << poems.size() << " bytes of poems, " << clauses << " clauses, " << 100 * share
                      << "% of 5 or 7 characters");
  CHECK(clauses > 3000);
  CHECK(share > 0.9);  // regular verse; the rest are the irregular lines of the ancient-style poems
  CHECK_THROWS_WITH_AS(read_fortune_poems("/usr/share/games/fortunes/no_such_file"), doctest::Contains("fortunes-zh"),
                       sf::DataError);
}
