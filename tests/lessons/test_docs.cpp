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
