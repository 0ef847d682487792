// Every lesson runs, and its markdown text shows exactly its compiled code and its real output.
#include <doctest/doctest.h>

#include <filesystem>

#include "lessons/docs.h"
#include "lessons/lesson.h"

using namespace sf::lessons;

TEST_CASE("the course numbers its lessons in reading order, part by part, findable by name and number") {
  const auto& lessons = all_lessons();
  REQUIRE(!lessons.empty());
  for (size_t i = 0; i < lessons.size(); ++i) CHECK(lessons[i].number == static_cast<int>(i + 1));
  for (size_t i = 1; i < lessons.size(); ++i) CHECK(lessons[i - 1].part <= lessons[i].part);
  for (const Lesson& l : lessons) {
    CAPTURE(l.name);
    CHECK(find_lesson(l.name) == &l);
    CHECK(find_lesson(l.file) == &l);
    CHECK(find_lesson(std::to_string(l.number)) == &l);
    CHECK(std::filesystem::exists(std::string(SF_SOURCE_DIR) + "/lessons/" + l.file + ".cpp"));
  }
  CHECK(find_lesson("no-such-lesson") == nullptr);
  // Every lesson is in exactly one part, and the parts hold them in the same order.
  std::vector<const Lesson*> by_part;
  for (const Part& p : course_parts()) {
    CHECK(!p.lessons.empty());
    by_part.insert(by_part.end(), p.lessons.begin(), p.lessons.end());
  }
  REQUIRE(by_part.size() == lessons.size());
  for (size_t i = 0; i < lessons.size(); ++i) CHECK(by_part[i] == &lessons[i]);
  CHECK(all_lessons().front().name == "task");  // a model learns in the first lesson
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
  CHECK(!same_printed_text("fp16 (2, 3)", "fp17 (2, 3)"));  // digits in a word are text
}

TEST_CASE("same_printed_numbers compares the numbers only, in order") {
  CHECK(same_printed_numbers("weights = [0.2750, 0.3444]", "权重 = [0.2751, 0.3444]"));
  CHECK(!same_printed_numbers("weights = [0.2750, 0.3444]", "权重 = [0.3444, 0.2750]"));
  CHECK(!same_printed_numbers("step 3 of 4", "第 3 步"));
  CHECK(!same_printed_numbers("0.27", "0.2700"));
  CHECK(same_printed_numbers("dW[0, 0] in float32: 2", "float32 下的 dW[0, 0]：2"));
}

TEST_CASE("width rules are read from the output tag, and a malformed one is an error naming it") {
  auto blocks = tagged_blocks(
      "<!-- output: 7 | \"val loss:\" \u00b10.02 | \"layer head\" \u00b10.004 +16 | \"sample (seed 1):\" sample 200 -->\n"
      "```text\nx\n```\n");
  REQUIRE(blocks.size() == 1);
  CHECK(blocks[0].key == "7");
  REQUIRE(blocks[0].rules.size() == 3);
  CHECK(blocks[0].rules[0].line_start == "val loss:");
  CHECK(blocks[0].rules[0].tolerance == doctest::Approx(0.02));
  CHECK(blocks[0].rules[1].more_lines == 16);
  CHECK(blocks[0].rules[2].sample_chars == 200);
  CHECK(tagged_blocks("<!-- output: 3 -->\n```text\nx\n```\n")[0].rules.empty());
  for (const char* bad : {"\"a\" 0.02", "\"a\" \u00b1x", "\"a\" \u00b1-1", "\"a\" sample", "\"a\" sample 2.5",
                          "\"a\" sample 0", "a \u00b10.1", "\"a \u00b10.1", "\"\" \u00b10.1", "\"a\" \u00b10.1 16"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_width_rules(bad), sf::Error);
  }
  CHECK_THROWS_WITH_AS(tagged_blocks("\n<!-- output: 2 | \"a\" 5 -->\n```text\nx\n```\n"),
                       doctest::Contains("line 2: width rule '\"a\" 5'"), sf::Error);
  CHECK_THROWS_AS(tagged_blocks("<!-- excerpt: e | \"a\" \u00b10.1 -->\n```cpp\nx\n```\n"), sf::Error);
}

TEST_CASE("a text names its vector width and its samples' characters") {
  TextMachine m = text_machine("# T\n<!-- vector width: 16 -->\n<!-- sample characters: \"-\\n a-c!\" -->\n");
  CHECK(m.vector_width == 16);
  CHECK(m.sample_characters == std::vector<std::string>{"-", "\n", " ", "a", "b", "c", "!"});
  CHECK(text_machine("<!-- sample characters: \"你好\" -->").sample_characters == std::vector<std::string>{"你", "好"});
  CHECK(text_machine("no markers").vector_width == 0);
  CHECK_THROWS_AS(text_machine("<!-- vector width: wide -->"), sf::Error);
  CHECK(build_vector_width() >= 4);
}

TEST_CASE("across vector widths, a ruled number may move by its tolerance and no further") {
  TextMachine m{8, {}};
  auto rules = parse_width_rules("\"val loss:\" \u00b10.02");
  const std::string text = "== 7. Stage ==\nparameters: 59712\nval loss: 1.97 (1.97, 1.97)\n";
  CHECK(same_printed_text_across_widths(text, "== 7. Stage ==\nparameters: 59712\nval loss: 1.99 (1.96, 1.98)\n", rules,
                                        m));
  CHECK(!same_printed_text_across_widths(text, "== 7. Stage ==\nparameters: 59712\nval loss: 2.00 (1.97, 1.97)\n",
                                         rules, m));
  // the other numbers keep the 1.5 units, the words stay exact
  CHECK(!same_printed_text_across_widths(text, "== 7. Stage ==\nparameters: 59715\nval loss: 1.97 (1.97, 1.97)\n",
                                         rules, m));
  CHECK(!same_printed_text_across_widths(text, "== 7. Stage ==\nparameters: 59712\nval lost: 1.97 (1.97, 1.97)\n",
                                         rules, m));
  CHECK(!same_printed_text_across_widths(text, "== 7. Stage ==\nparameters: 59712\nval loss: 1.970 (1.97, 1.97)\n",
                                         rules, m));
  // a signed difference may change its sign within the tolerance
  auto change = parse_width_rules("\"change\" \u00b10.04");
  CHECK(same_printed_text_across_widths("change: +0.01 -0.02\n", "change: -0.01 +0.01\n", change, m));
  CHECK(!same_printed_text_across_widths("change: +0.01 -0.02\n", "change: -0.04 +0.01\n", change, m));
  CHECK(!same_printed_text_across_widths("plus +0.01\n", "plus -0.01\n", change, m));  // no rule: the sign is a word
  // +N covers the N lines after the start line, and no more
  auto table = parse_width_rules("\"head\" \u00b10.005 +2");
  const std::string t2 = "head score\n0 0.100\n1 0.200\n2 0.300\n";
  CHECK(same_printed_text_across_widths(t2, "head score\n0 0.105\n1 0.196\n2 0.301\n", table, m));
  CHECK(!same_printed_text_across_widths(t2, "head score\n0 0.106\n1 0.200\n2 0.300\n", table, m));
  CHECK(!same_printed_text_across_widths(t2, "head score\n0 0.100\n1 0.200\n2 0.303\n", table, m));
}

TEST_CASE("across vector widths, a sample is checked for its form: length, characters, line break") {
  TextMachine m{16, {"\n", " ", "a", "b", "c", "A"}};
  auto rules = parse_width_rules("\"sample:\" sample 6");
  const std::string text = "sample:\nab c\nA\nend 1\n";
  CHECK(same_printed_text_across_widths(text, "sample:\nc\nbbaa\nend 1\n", rules, m));
  CHECK(!same_printed_text_across_widths(text, "sample:\nc\nbbaaa\nend 1\n", rules, m));  // 7 characters
  CHECK(!same_printed_text_across_widths(text, "sample:\nc\nbba\nend 1\n", rules, m));    // 5, then "e"
  CHECK(!same_printed_text_across_widths(text, "sample:\nc\nbbxa\nend 1\n", rules, m));   // x is no sample character
  CHECK(!same_printed_text_across_widths(text, "sample:\nc\nbbaa\nend 7\n", rules, m));   // after it, as usual
  CHECK(!same_printed_text_across_widths(text, "sample:\nc\nbbaa\n", rules, m));          // the line after is missing
  CHECK(!same_printed_text_across_widths(text, "sampled:\nc\nbbaa\nend 1\n", rules, m));  // no sample there
  CHECK(!same_printed_text_across_widths(text, "sample:\nc\nbb", rules, m));              // cut short
  // at the end of a step, a sample ending in a line break has lost the one printed after it
  CHECK(same_printed_text_across_widths("sample:\nab c\nA\n", "sample:\nc\nbba\n", rules, m));
  CHECK(!same_printed_text_across_widths("sample:\nab c\nA\n", "sample:\nc\nbbab", rules, m));
  // the numbers-only comparison of two languages: each side finds its sample by its own rule
  auto zh = parse_width_rules("\"样本：\" sample 6");
  CHECK(same_printed_numbers_across_widths("样本：\nab c\nA\n结束 1\n", zh, "sample:\nc3bbaa\nend 1\n", rules,
                                           TextMachine{16, {"\n", " ", "a", "b", "c", "A", "3"}}));
  CHECK(!same_printed_numbers_across_widths("样本：\nab c\nA\n结束 1\n", zh, "sample:\nc3bbaa\nend 7\n", rules,
                                            TextMachine{16, {"\n", " ", "a", "b", "c", "A", "3"}}));
}

TEST_CASE("the two languages' rules must cover the same numbers and samples") {
  auto en = parse_width_rules("\"val loss:\" \u00b10.02");
  auto zh = parse_width_rules("\"验证损失：\" \u00b10.02");
  CHECK(same_width_rules("params 5\nval loss: 1.97\n", en, "参数 5\n验证损失：1.97\n", zh));
  CHECK(!same_width_rules("params 5\nval loss: 1.97\n", en, "参数 5\n验证损失：1.97\n",
                          parse_width_rules("\"验证损失：\" \u00b10.03")));
  CHECK(!same_width_rules("params 5\nval loss: 1.97\n", en, "参数 5\n验证损失：1.97\n", {}));
}

// A lesson and its two texts in a scratch folder, to see what the checker reports.
struct FakeLesson {
  std::filesystem::path root;
  Lesson lesson;
  int runs = 0;
  explicit FakeLesson(const std::string& tag) {
    root = std::filesystem::temp_directory_path() / ("sf_test_docs_" + tag);
    std::filesystem::remove_all(root);
    std::filesystem::create_directories(root / "lessons" / "zh");
    write("lessons/99_fake.cpp", "// [excerpt: code]\nint x = 1;\n// [/excerpt]\n");
    lesson = {"fake", "A fake lesson", "假课程", [this](std::ostream& out) {
                ++runs;
                heading(out, 1, "Step", "步骤");
                out << tr(out, "loss ", "损失 ") << fmt(2.5, 2) << "\n";
              }};
    lesson.number = 99;
    lesson.file = "99_fake";
  }
  ~FakeLesson() { std::filesystem::remove_all(root); }
  void write(const std::string& rel, const std::string& text) { write_text_file((root / rel).string(), text); }
  std::vector<std::string> check() { return check_lesson_texts(root.string(), lesson); }
};

static std::string text(const std::string& words, const std::string& output) {
  return words + "\n<!-- excerpt: code -->\n```cpp\nint x = 1;\n```\n<!-- output: 1 -->\n```text\n" + output + "```\n";
}

static bool mentions(const std::vector<std::string>& problems, const std::string& what) {
  for (const auto& p : problems)
    if (p.find(what) != std::string::npos) return true;
  return false;
}

TEST_CASE("the checker reads both texts: each against the run in its own language") {
  FakeLesson f("both");
  f.write("lessons/99_fake.md", text("Words.", "== 1. Step ==\nloss 2.50\n"));
  f.write("lessons/zh/99_fake.md", text("文字。", "== 1. 步骤 ==\n损失 2.50\n"));
  CHECK(f.check().empty());
  CHECK(f.runs == 2);                                                              // once in each language
  f.write("lessons/zh/99_fake.md", text("文字。", "== 1. Step ==\nloss 2.50\n"));  // English output
  CHECK(mentions(f.check(), "zh/99_fake.md:6: output 1: out of date"));
  f.write("lessons/zh/99_fake.md", text("文字。", "== 1. 步骤 ==\n损失 2.60\n"));
  CHECK(mentions(f.check(), "zh/99_fake.md:6: output 1: out of date"));
}

TEST_CASE("the checker fails a lesson without its Chinese text, or with other blocks in it") {
  FakeLesson f("sets");
  f.write("lessons/99_fake.md", text("Words.", "== 1. Step ==\nloss 2.50\n"));
  CHECK(mentions(f.check(), "zh/99_fake.md: missing"));
  f.write("lessons/zh/99_fake.md", "只有文字，没有代码块。\n");
  auto problems = f.check();
  CHECK(mentions(problems, "only in English: excerpt code, output 1; only in Chinese: (none)"));
  CHECK(mentions(problems, "zh/99_fake.md: needs at least one excerpt block and one output block"));
}

TEST_CASE("a slow lesson runs once, and its Chinese output blocks are checked by their numbers") {
  FakeLesson f("slow");
  f.lesson.slow = true;
  f.write("lessons/99_fake.md", text("Words.", "== 1. Step ==\nloss 2.50\n"));
  f.write("lessons/zh/99_fake.md", text("文字。", "== 1. 步骤 ==\n损失 2.50\n"));
  CHECK(f.check().empty());
  CHECK(f.runs == 1);
  f.write("lessons/zh/99_fake.md", text("文字。", "== 1. 步骤 ==\n损失 2.70\n"));
  CHECK(mentions(f.check(), "zh/99_fake.md:6: output 1: out of date"));
}

TEST_CASE("texts_only checks a slow lesson without running it: code, block sets, the Chinese numbers") {
  FakeLesson f("texts_only");
  f.lesson.slow = true;
  f.write("lessons/99_fake.md", text("Words.", "== 1. Step ==\nloss 2.50\n"));
  f.write("lessons/zh/99_fake.md", text("文字。", "== 1. 步骤 ==\n损失 2.50\n"));
  CHECK(check_lesson_texts(f.root.string(), f.lesson, SlowLessons::texts_only).empty());
  CHECK(f.runs == 0);
  f.write("lessons/zh/99_fake.md", text("文字。", "== 1. 步骤 ==\n损失 2.70\n"));
  CHECK(mentions(check_lesson_texts(f.root.string(), f.lesson, SlowLessons::texts_only),
                 "zh/99_fake.md:6: output 1: out of date"));
  f.write("lessons/99_fake.cpp", "// [excerpt: code]\nint x = 2;\n// [/excerpt]\n");
  CHECK(mentions(check_lesson_texts(f.root.string(), f.lesson, SlowLessons::texts_only),
                 "99_fake.md:2: excerpt code: out of date"));
  CHECK(f.runs == 0);
}

TEST_CASE("on a build of another vector width the checker applies the texts' rules, on its own the tight check") {
  FakeLesson f("widths");
  f.lesson.slow = true;
  auto texts = [&](int width, const std::string& en_loss, const std::string& zh_loss, const std::string& zh_rule) {
    std::string w = "<!-- vector width: " + std::to_string(width) + " -->\n";
    f.write("lessons/99_fake.md", w + "Words.\n<!-- excerpt: code -->\n```cpp\nint x = 1;\n```\n" +
                                      "<!-- output: 1 | \"loss\" \u00b10.1 -->\n```text\n== 1. Step ==\nloss " +
                                      en_loss + "\n```\n");
    f.write("lessons/zh/99_fake.md", w + "文字。\n<!-- excerpt: code -->\n```cpp\nint x = 1;\n```\n" +
                                         "<!-- output: 1 | \"" + zh_rule +
                                         "\" \u00b10.1 -->\n```text\n== 1. 步骤 ==\n损失 " + zh_loss + "\n```\n");
  };
  const int other = 1;                   // no build has 1-float vectors
  texts(other, "2.45", "2.45", "损失");  // the run prints 2.50
  CHECK(f.check().empty());
  texts(other, "2.38", "2.45", "损失");
  CHECK(mentions(f.check(), "lessons/99_fake.md:7: output 1: out of date"));
  texts(other, "2.45", "2.38", "损失");
  CHECK(mentions(f.check(), "zh/99_fake.md:7: output 1: out of date"));
  texts(build_vector_width(), "2.45", "2.45", "损失");  // the text's own width: 1.5 units of 0.01
  CHECK(mentions(f.check(), "lessons/99_fake.md:7: output 1: out of date"));
  texts(build_vector_width(), "2.51", "2.51", "损失");
  CHECK(f.check().empty());
  texts(build_vector_width(), "2.51", "2.51", "没有这一行");  // the Chinese rule covers nothing
  CHECK(mentions(f.check(), "output 1: its width rules cover other numbers or samples than the English text's"));
  f.write("lessons/99_fake.md", text("Words.", "== 1. Step ==\nloss 2.50\n"));
  f.write("lessons/zh/99_fake.md", text("文字。", "== 1. 步骤 ==\n损失 2.50\n"));
  f.write("lessons/99_fake.md", "<!-- output: 1 | \"loss\" \u00b10.1 -->\n```text\n== 1. Step ==\nloss 2.50\n```\n");
  CHECK(mentions(f.check(), "width rules, but the text has no <!-- vector width: W --> line"));
}

TEST_CASE("sync_lesson_texts rewrites both texts from the runs in their languages") {
  FakeLesson f("sync");
  f.write("lessons/99_fake.md", text("Words.", "old\n"));
  f.write("lessons/zh/99_fake.md", text("文字。", "旧\n"));
  std::vector<std::string> problems;
  CHECK(sync_lesson_texts(f.root.string(), f.lesson, problems).size() == 2);
  CHECK(problems.empty());
  CHECK(read_text_file((f.root / "lessons/zh/99_fake.md").string()) == text("文字。", "== 1. 步骤 ==\n损失 2.50\n"));
  CHECK(f.check().empty());
}

// One test per lesson: it runs in both languages, and every tagged block of both its texts is
// current (check_lesson_texts lists what is not).
TEST_CASE("every lesson's two texts show its compiled code and its real output") {
  for (const Lesson& l : all_lessons()) {
    CAPTURE(l.file);
    // A slow lesson trains for minutes: here its texts are checked against each other and its
    // code; `lesson_docs --check` runs it (tests/lessons/test_lessons_train.cpp runs it reduced).
    std::vector<std::string> problems = check_lesson_texts(SF_SOURCE_DIR, l, SlowLessons::texts_only);
    for (const auto& p : problems) FAIL_CHECK(p);
    CHECK(!l.title_zh.empty());
  }
}

// A text's prose numbers: HTML comments and link targets removed.
static std::string prose(std::string md) {
  for (size_t a, b; (a = md.find("<!--")) != std::string::npos && (b = md.find("-->", a)) != std::string::npos;)
    md.erase(a, b + 3 - a);
  for (size_t a, b; (a = md.find("](")) != std::string::npos && (b = md.find(')', a)) != std::string::npos;)
    md.erase(a, b + 1 - a);
  return md;
}

TEST_CASE("the Chinese study report quotes the English one's numbers, all of them, in order") {
  std::string root = std::string(SF_SOURCE_DIR) + "/lessons/";
  std::string en = read_text_file(root + "prenorm_study.md");
  std::string zh = read_text_file(root + "zh/prenorm_study.md");
  CHECK(same_printed_numbers(prose(en), prose(zh)));
  CHECK(prose("a [b 1](x/2.md) <!-- 3 --> 4") == "a [b 1  4");
}
