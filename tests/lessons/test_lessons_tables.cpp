// Tables line up in a terminal in both languages: the printer pads by display width (a Chinese
// character or a full-width mark takes two columns), so every row's separators fall in the same
// columns however many characters, bytes or code points its cells hold.
#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "data/fortune_poems.h"
#include "lessons/lesson.h"
#include "lessons/errata.h"
#include "lessons/tokenize_zh.h"

using namespace sf::lessons;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The display columns at which `mark` starts in `line` (display_width of what comes before it).
std::vector<int> columns_of(const std::string& line, const std::string& mark) {
  std::vector<int> cols;
  for (size_t at = line.find(mark); at != std::string::npos; at = line.find(mark, at + mark.size()))
    cols.push_back(display_width(line.substr(0, at)));
  return cols;
}

// Every run of consecutive lines holding " | " has its separators in the same display columns;
// returns the number of table rows seen.
int check_tables_line_up(const std::string& text) {
  std::vector<std::string> lines = lines_of(text);
  int rows = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find(" | ") == std::string::npos) continue;
    const std::string& header = lines[i];
    ++rows;
    for (; i + 1 < lines.size() && lines[i + 1].find(" | ") != std::string::npos; ++i, ++rows)
      CHECK_MESSAGE(columns_of(lines[i + 1], " | ") == columns_of(header, " | "),
                    "the row '" << lines[i + 1] << "' against its header '" << header << "'");
  }
  return rows;
}

}  // namespace

TEST_CASE("display width counts wide and full-width characters twice") {
  CHECK(display_width("") == 0);
  CHECK(display_width("abc 123") == 7);
  CHECK(display_width("我喜欢苹果") == 10);
  CHECK(display_width("，。（）：") == 10);  // full-width punctuation
  CHECK(display_width("U+6211 我") == 9);
  CHECK(display_width("░▒▓█") == 4);  // ambiguous width: one column
  CHECK(display_width("“”") == 2);
  CHECK(display_width("e\xCC\x81") == 1);         // e and a combining acute accent
  CHECK(display_width("\xF0\x9F\x98\x80") == 2);  // an emoji, four bytes
  CHECK(display_width("\xF0\xA0\x80\x80") == 2);  // U+20000, CJK extension B
  CHECK(display_width("\xFF") == 1);              // a byte that starts nothing
  CHECK(display_width("\xE6\x88") == 2);          // a cut sequence: its bytes one by one
  CHECK(pad_right("我", 4) == "我  ");
  CHECK(pad_right("我喜欢", 4) == "我喜欢");
}

TEST_CASE("a mixed Chinese and ASCII table lines up, row by row") {
  std::ostringstream out;
  print_table(out,
              {{"词表", "vocab", "唐诗：词元/字", "end"},
               {"256", "宋词（未见过）", "2.847", "x"},
               {"4096", "U+6211 我", "0.8", "我喜欢苹果"},
               {"a", "b", "c", "“，”"}},
              {}, " | ", "  ");
  std::vector<std::string> lines = lines_of(out.str());
  REQUIRE(lines.size() == 4);
  // Every row is as wide up to its last cell, which adds its own width.
  std::vector<int> widths;
  for (const std::string& l : lines) widths.push_back(display_width(l));
  CHECK(widths[0] == 2 + 4 + 3 + 14 + 3 + 13 + 3 + 3);
  CHECK(widths[1] == widths[0] - 3 + 1);
  CHECK(widths[2] == widths[0] - 3 + 10);
  CHECK(widths[3] == widths[0] - 3 + 4);
  CHECK(check_tables_line_up(out.str()) == 4);
  // Padded by bytes (词表 is 6 bytes, so 256 gets 3 spaces), a table would not line up, and
  // check_tables_line_up would say so.
  CHECK(columns_of("词表 | x", " | ") != columns_of("256    | x", " | "));
  // Least widths widen a column; they never narrow one.
  std::ostringstream wide;
  print_table(wide, {{"位置", "x"}, {"0", "y"}}, {8});
  CHECK(wide.str() == "位置     | x\n0        | y\n");
}

TEST_CASE("the Chinese tables of lessons 16 and 17 line up") {
  std::ostringstream zh;
  set_language(zh, Lang::zh);
  ErrataResult errata;
  errata_articles(zh, errata);
  bool poems = std::filesystem::exists(sf::data::fortune_poems_path("tang300")) &&
               std::filesystem::exists(sf::data::fortune_poems_path("song100"));
  if (poems) run_lesson_tokenize_zh(zh);
  else MESSAGE("lesson 16 skipped: the fortunes-zh poems are missing (scripts/setup.sh installs them)");
  int rows = check_tables_line_up(zh.str());
  CHECK(rows >= (poems ? 4 + 6 + 7 : 4));
}
