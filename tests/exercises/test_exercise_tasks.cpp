// Every exercise's task exists in Chinese (exercises/zh/NN_name.md) next to the English one (the
// header comment of exercises/NN_name.cpp), the stub points to it, and the two cannot drift apart
// silently: every code name, every shape and every command of the English header must appear, as
// written, in the Chinese text, and the Chinese may name none that the English does not.
// `scratchformer exercise show N` prints either one.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "exercises/check/checker.h"
#include "tests/bad_inputs/cli_runner.h"

using namespace sf::exercise;
namespace fs = std::filesystem;

static std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The stub's header comment without its comment marks, and the line that points to the Chinese.
struct Header {
  std::string english;
  std::string pointer;
};

static Header header_of(const Exercise& e) {
  std::ifstream in(fs::path(SF_SOURCE_DIR) / "exercises" / (e.file + ".cpp"));
  Header h;
  std::string line;
  while (std::getline(in, line) && line.rfind("//", 0) == 0) {
    if (line.find("exercises/zh/") != std::string::npos) h.pointer = line;
    else h.english += line.substr(2) + "\n";
  }
  return h;
}

// What the Chinese text must repeat exactly: code names (a name called, `name(`; a name with `_`,
// `::`, `->` or `.` in it, `sf::ShapeError`, `cache.k.defined`; a CamelCase name, `PartialRow`,
// but LayerNorm in prose),
// shapes ("(B, T, C)", "(3C)", "(..., N)", "()": single capitals, numbers and `...`, joined by
// commas and + - * /), and the commands that check the exercise and give its hints.
static std::set<std::string> must_repeat(const Exercise& e, const std::string& english) {
  std::set<std::string> need;
  const std::regex name(R"([A-Za-z_]\w*(?:(?:::|->|\.)[A-Za-z_]\w*)*)");
  for (std::sregex_iterator m(english.begin(), english.end(), name), end; m != end; ++m) {
    const std::string t = m->str();
    const size_t after = static_cast<size_t>(m->position() + m->length());
    const bool called = after < english.size() && english[after] == '(';
    // LayerNorm in prose is a term the Chinese translates (层归一化, lessons/zh/glossary.md).
    const bool camel = std::regex_match(t, std::regex(R"([A-Z][a-z]+[A-Z]\w*)")) && t != "LayerNorm";
    if (called || camel || t.find_first_of("_:>.") != std::string::npos) need.insert(t);
  }
  const std::string item = R"((?:\.\.\.|\d*[A-Z](?![A-Z])\w*|\d+)(?: ?[-+*/] ?\w+)*)";
  const std::regex shape("\\((?:" + item + "(?:, " + item + ")*)?\\)");
  for (std::sregex_iterator m(english.begin(), english.end(), shape), end; m != end; ++m) {
    const std::string s = m->str();
    if (s == "()" || s.find(',') != std::string::npos || std::regex_search(s, std::regex("[A-Z]"))) need.insert(s);
  }
  need.insert("scratchformer exercise check " + std::to_string(e.number));
  need.insert("scratchformer exercise hint " + std::to_string(e.number));
  return need;
}

TEST_CASE("every exercise has its task in Chinese, and the stub points to it") {
  REQUIRE(all_exercises().size() >= 31);
  for (const Exercise& e : all_exercises()) {
    CAPTURE(e.file);
    const fs::path zh = fs::path(SF_SOURCE_DIR) / "exercises" / "zh" / (e.file + ".md");
    REQUIRE(fs::is_regular_file(zh));
    const std::string text = read_text(zh);
    // The heading names the exercise and its lesson as the English does: "# 练习 19（第 14 课 build-gpt）：".
    const std::string heading = "# 练习 " + std::to_string(e.number) + "（第 ";
    CHECK(text.rfind(heading, 0) == 0);
    CHECK(text.find(" 课 " + e.lesson) != std::string::npos);
    CHECK(header_of(e).pointer == "// 中文说明：exercises/zh/" + e.file + ".md（或 scratchformer exercise show " +
                                      std::to_string(e.number) + " --lang zh）");
  }
  // No Chinese task without its exercise (a renamed stub leaves none behind).
  for (const auto& entry : fs::directory_iterator(fs::path(SF_SOURCE_DIR) / "exercises" / "zh")) {
    const std::string stem = entry.path().stem().string();
    CAPTURE(stem);
    CHECK(fs::is_regular_file(fs::path(SF_SOURCE_DIR) / "exercises" / (stem + ".cpp")));
  }
}

TEST_CASE("each Chinese task names the same code, shapes and commands as the English header, and no others") {
  size_t compared = 0;
  for (const Exercise& e : all_exercises()) {
    CAPTURE(e.file);
    const std::string english = header_of(e).english;
    const std::string chinese = read_text(fs::path(SF_SOURCE_DIR) / "exercises" / "zh" / (e.file + ".md"));
    for (const std::string& s : must_repeat(e, english)) {
      CAPTURE(s);
      CHECK(chinese.find(s) != std::string::npos);
      ++compared;
    }
    // And the other way: a name or shape left in the Chinese after the English changed it. The
    // English may wrap a command across comment lines: compared with its spaces collapsed.
    const std::string flat = std::regex_replace(english, std::regex(R"(\s+)"), " ");
    for (const std::string& s : must_repeat(e, chinese)) {
      CAPTURE(s);
      CHECK(flat.find(s) != std::string::npos);
    }
  }
  CHECK(compared > 250);  // the extraction still finds the names and shapes (about 9 an exercise)
}

TEST_CASE("the comparison sees a name or a shape that only the English has") {
  const Exercise& e = find_exercise("19");
  const std::set<std::string> need =
      must_repeat(e, "x (B, T, C) -> (B, T, 4C); calls your_gelu(x), sf::ShapeError, PartialRow (D values)\n");
  for (const char* s : {"(B, T, C)", "(B, T, 4C)", "your_gelu", "sf::ShapeError", "PartialRow",
                        "scratchformer exercise check 19", "scratchformer exercise hint 19"})
    CHECK(need.count(s) == 1);
  CHECK(need.count("(D values)") == 0);  // words in parentheses are prose, not a shape
  CHECK(need.count("x") == 0);
}

TEST_CASE("scratchformer exercise show N prints the task, in English or in Chinese") {
  using sf::test::run_cli;
  auto en = run_cli({"exercise", "show", "19"});
  CHECK(en.exit_code == 0);
  CHECK(en.out.rfind("Exercise 19 (lesson 14 build-gpt): ", 0) == 0);
  CHECK(en.out.find("attn.c_attn->weight (3C, C)") != std::string::npos);
  CHECK(en.out.find("//") == std::string::npos);
  CHECK(en.out.find("中文") == std::string::npos);

  auto zh = run_cli({"exercise", "show", "4", "--lang", "zh"});
  CHECK(zh.exit_code == 0);
  CHECK(zh.out.rfind("# 练习 4（第 8 课 positions）", 0) == 0);
  CHECK(zh.out.find("PE[t, 2i]     = sin(p / 10000^(2i / C))") != std::string::npos);
  CHECK(zh.out.find("```") == std::string::npos);

  // The list, where a learner starts, says where the task is.
  auto list = run_cli({"exercise", "list", "--lang", "zh"});
  CHECK(list.out.find("练习 N 的中文说明：scratchformer exercise show N --lang zh") != std::string::npos);

  auto bad = run_cli({"exercise", "show", "99"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.rfind("error: exercise '99': no such exercise", 0) == 0);
}
