// Every lesson runs, and its markdown text shows exactly its compiled code and its real output.
#include <doctest/doctest.h>

#include <filesystem>

#include "lessons/docs.h"
#include "lessons/lesson.h"

using namespace sf::lessons;

static std::string lesson_path(const Lesson& l, const char* ext) {
  return std::string(SF_SOURCE_DIR) + "/lessons/" + l.file + ext;
}

TEST_CASE("the registry lists the lessons in order, findable by name and number") {
  const auto& lessons = all_lessons();
  REQUIRE(!lessons.empty());
  for (size_t i = 1; i < lessons.size(); ++i) CHECK(lessons[i - 1].number < lessons[i].number);
  for (const Lesson& l : lessons) {
    CHECK(find_lesson(l.name) == &l);
    CHECK(find_lesson(std::to_string(l.number)) == &l);
  }
  CHECK(find_lesson("no-such-lesson") == nullptr);
}

TEST_CASE("excerpts are the marked regions, de-indented") {
  auto ex = extract_excerpts("a\n  // [excerpt: x]\n  int y = 1;\n\n    f(y);\n  // [/excerpt]\nb\n");
  REQUIRE(ex.count("x") == 1);
  CHECK(ex["x"] == "int y = 1;\n\n  f(y);\n");
  CHECK_THROWS_AS(extract_excerpts("// [excerpt: open]\nint x;\n"), sf::Error);
}

TEST_CASE("output steps are cut at the numbered headings") {
  auto s = output_sections("\n== 1. First ==\na\n\n== 2. Second ==\nb\n");
  CHECK(s["1"] == "== 1. First ==\na\n");  // trailing blank lines dropped
  CHECK(s["2"] == "== 2. Second ==\nb\n");
  CHECK(s["all"].find("Second") != std::string::npos);
}

TEST_CASE("sync_markdown replaces tagged blocks and reports unknown names") {
  std::string md = "text\n<!-- excerpt: x -->\n```cpp\nold\n```\n<!-- output: 9 -->\n```text\nkept\n```\n";
  std::vector<std::string> problems;
  std::string synced = sync_markdown(md, {{"x", "new\n"}}, {{"1", "one\n"}}, problems);
  CHECK(synced == "text\n<!-- excerpt: x -->\n```cpp\nnew\n```\n<!-- output: 9 -->\n```text\nkept\n```\n");
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].find("'9'") != std::string::npos);
  CHECK(untagged_cpp_blocks("```cpp\nx\n```\n<!-- excerpt: y -->\n```cpp\ny\n```\n") == std::vector<int>{1});
}

TEST_CASE("printed text compares numbers to their last digit, everything else exactly") {
  CHECK(same_printed_text("w = [0.2750, 0.3444]", "w = [0.2751, 0.3444]"));
  CHECK(!same_printed_text("w = [0.2750, 0.3444]", "w = [0.2760, 0.3444]"));
  CHECK(!same_printed_text("w = [0.2750]", "v = [0.2750]"));
  CHECK(!same_printed_text("0.27", "0.2700"));
  CHECK(same_printed_text("[ -0.0000]", "[  0.0000]"));
  CHECK(same_printed_text("fp16 (2, 3) 1e-08", "fp16 (2, 3) 1e-08"));
}

// One test per lesson: it runs, every tagged block of its .md is current, and no ```cpp block
// of the text escapes the check.
TEST_CASE("every lesson's text shows its compiled code and its real output") {
  for (const Lesson& l : all_lessons()) {
    CAPTURE(l.file);
    REQUIRE(std::filesystem::exists(lesson_path(l, ".md")));
    std::string md = read_text_file(lesson_path(l, ".md"));
    auto excerpts = extract_excerpts(read_text_file(lesson_path(l, ".cpp")));
    std::string output = lesson_output(l);
    auto outputs = output_sections(output);
    CHECK(untagged_cpp_blocks(md).empty());
    auto blocks = tagged_blocks(md);
    int n_excerpts = 0, n_outputs = 0;
    for (const DocBlock& b : blocks) {
      CAPTURE(b.line);
      CAPTURE(b.key);
      if (b.kind == "excerpt") {
        ++n_excerpts;
        REQUIRE(excerpts.count(b.key) == 1);
        CHECK(b.text == excerpts[b.key]);
      } else {
        ++n_outputs;
        REQUIRE(outputs.count(b.key) == 1);
        CHECK(same_printed_text(b.text, outputs[b.key]));
      }
    }
    CHECK(n_excerpts >= 1);
    CHECK(n_outputs >= 1);
  }
}
