// The Chinese texts keep one terminology and Chinese typography: no term the glossary rejects
// (lessons/zh/terms_rejected.txt), no ASCII double quote around Chinese words (they take “”),
// and no line break inside a paragraph (in Chinese it shows as a stray space in a browser).
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "lessons/docs.h"
#include "lessons/lesson.h"

using namespace sf::lessons;
namespace fs = std::filesystem;

namespace {

struct Rejected {
  std::string form, preferred;
};

std::vector<Rejected> rejected_terms() {
  std::vector<Rejected> out;
  std::string text = read_text_file(std::string(SF_SOURCE_DIR) + "/lessons/zh/terms_rejected.txt");
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty() || line[0] == '#') continue;
    size_t tab = line.find('\t');
    REQUIRE_MESSAGE(tab != std::string::npos, "terms_rejected.txt: no tab in line: " << line);
    out.push_back({line.substr(0, tab), line.substr(tab + 1)});
  }
  return out;
}

// The code point starting at s[i] if it is a three-byte UTF-8 sequence, else 0. Every CJK
// ideograph and every full-width punctuation mark is one (U+0800..U+FFFF).
uint32_t three_byte_code_point(const std::string& s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  if (i + 2 >= s.size()) return 0;
  if ((b(i) & 0xF0) != 0xE0 || (b(i + 1) & 0xC0) != 0x80 || (b(i + 2) & 0xC0) != 0x80) return 0;
  return ((b(i) & 0x0Fu) << 12) | ((b(i + 1) & 0x3Fu) << 6) | (b(i + 2) & 0x3Fu);
}

bool is_chinese(uint32_t cp) {
  return (cp >= 0x3000 && cp <= 0x303F) || (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0xFF00 && cp <= 0xFFEF);
}

bool has_chinese(const std::string& s) {
  for (size_t i = 0; i < s.size(); ++i)
    if (is_chinese(three_byte_code_point(s, i))) return true;
  return false;
}

// The Chinese character ending just before byte i, or starting at byte i.
bool chinese_before(const std::string& s, size_t i) { return i >= 3 && is_chinese(three_byte_code_point(s, i - 3)); }
bool chinese_at(const std::string& s, size_t i) { return is_chinese(three_byte_code_point(s, i)); }

// Removes the spans between open and close: inline code, and full-width parentheses, where an
// English gloss such as 层归一化（LayerNorm） is welcome (a rejected Chinese form is not).
std::string without_spans(std::string s, const std::string& open, const std::string& close) {
  for (size_t a; (a = s.find(open)) != std::string::npos;) {
    size_t b = s.find(close, a + open.size());
    if (b == std::string::npos) break;
    s.erase(a, b + close.size() - a);
  }
  return s;
}

bool is_ascii_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Where `form` occurs in `line` as a term: an ASCII form must not sit inside an ASCII word.
bool uses(const std::string& line, const std::string& form) {
  bool ascii = std::all_of(form.begin(), form.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  for (size_t at = line.find(form); at != std::string::npos; at = line.find(form, at + 1)) {
    if (!ascii) return true;
    bool left = at > 0 && is_ascii_word_char(line[at - 1]);
    bool right = at + form.size() < line.size() && is_ascii_word_char(line[at + form.size()]);
    if (!left && !right) return true;
  }
  return false;
}

// One line of Chinese text to check, with where it comes from.
enum class Kind {
  prose,    // a line of a markdown text outside code blocks
  block,    // a line inside a code block: output blocks are checked through their source, the
            // Chinese literals of the lessons (module names such as LayerNorm(16) stay English)
  literal,  // a C++ string literal with Chinese in it
};
struct Line {
  std::string where, text;
  Kind kind;
};

// The lines of a markdown text.
std::vector<Line> markdown_lines(const fs::path& file) {
  std::vector<Line> out;
  std::string text = read_text_file(file.string());
  bool in_fence = false, in_math = false;
  size_t pos = 0;
  for (int number = 1; pos < text.size(); ++number) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    // The path from the source tree: two of the files are README.zh.md.
    std::string where = fs::relative(file, SF_SOURCE_DIR).string() + ":" + std::to_string(number);
    if (line.rfind("```", 0) == 0) {
      in_fence = !in_fence;
      out.push_back({where, "", Kind::block});
      continue;
    }
    // A display formula ($$ on a line of its own, as in a list item "   $$") is a block like code.
    std::string trimmed = line.substr(std::min(line.find_first_not_of(' '), line.size()));
    if (!in_fence && trimmed == "$$") {
      in_math = !in_math;
      out.push_back({where, "", Kind::block});
      continue;
    }
    // A line that is one HTML comment (a block's tag and its width rules) is markup the reader
    // does not see, like a fenced block.
    bool comment = line.rfind("<!--", 0) == 0 && line.size() >= 7 && line.compare(line.size() - 3, 3, "-->") == 0;
    out.push_back({where, line, in_fence || in_math || comment ? Kind::block : Kind::prose});
  }
  return out;
}

// The string literals with Chinese in them, line by line, of the lessons' C++ files: the
// Chinese side of their tr() calls and the Chinese titles of the registry.
std::vector<Line> chinese_literals(const fs::path& file) {
  std::vector<Line> out;
  std::string text = read_text_file(file.string());
  size_t pos = 0;
  for (int number = 1; pos < text.size(); ++number) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] != '"' || (i > 0 && line[i - 1] == '\'')) continue;
      size_t j = i + 1;
      while (j < line.size() && line[j] != '"') j += line[j] == '\\' ? 2 : 1;
      std::string literal = line.substr(i + 1, j - i - 1);
      if (has_chinese(literal))
        out.push_back({file.filename().string() + ":" + std::to_string(number), literal, Kind::literal});
      i = j;
    }
  }
  return out;
}

std::vector<fs::path> chinese_markdown_files() {
  std::vector<fs::path> files{fs::path(SF_SOURCE_DIR) / "README.zh.md",
                              fs::path(SF_SOURCE_DIR) / "configs" / "README.zh.md"};  // the config reference
  for (const auto& e : fs::directory_iterator(fs::path(SF_SOURCE_DIR) / "lessons" / "zh"))
    if (e.path().extension() == ".md" && e.path().filename() != "glossary.md") files.push_back(e.path());
  for (const auto& e : fs::directory_iterator(fs::path(SF_SOURCE_DIR) / "exercises" / "zh"))  // the exercises' tasks
    if (e.path().extension() == ".md") files.push_back(e.path());
  for (const auto& e : fs::directory_iterator(fs::path(SF_SOURCE_DIR) / "docs" / "zh"))  // the user pages
    if (e.path().extension() == ".md") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<fs::path> lesson_sources() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(SF_SOURCE_DIR) / "lessons"))
    if (e.path().extension() == ".cpp") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<Line> all_chinese_lines() {
  std::vector<Line> lines;
  for (const fs::path& f : chinese_markdown_files())
    for (Line& l : markdown_lines(f)) lines.push_back(std::move(l));
  for (const fs::path& f : lesson_sources())
    for (Line& l : chinese_literals(f)) lines.push_back(std::move(l));
  return lines;
}

// The rejected forms a line uses, as "file:line: 'form' (use 'preferred')".
std::vector<std::string> term_problems(const std::vector<Line>& lines, const std::vector<Rejected>& terms) {
  std::vector<std::string> problems;
  for (const Line& l : lines) {
    if (l.kind == Kind::block) continue;
    std::string chinese = without_spans(l.text, "`", "`");
    std::string glosses_removed = without_spans(chinese, "（", "）");
    for (const Rejected& r : terms)
      if (uses(has_chinese(r.form) ? chinese : glosses_removed, r.form))
        problems.push_back(l.where + ": '" + r.form + "' (use '" + r.preferred + "')");
  }
  return problems;
}

// ASCII double quotes touching a Chinese character, in prose or in a Chinese literal.
std::vector<std::string> quote_problems(const std::vector<Line>& lines) {
  std::vector<std::string> problems;
  for (const Line& l : lines) {
    if (l.kind == Kind::block) continue;
    std::string checked = l.kind == Kind::prose ? without_spans(l.text, "`", "`") : l.text;
    for (size_t i = 0; i < checked.size(); ++i) {
      if (checked[i] != '"') continue;
      size_t before = (i > 0 && checked[i - 1] == '\\') ? i - 1 : i;  // \" inside a C++ literal
      if (chinese_before(checked, before) || chinese_at(checked, i + 1)) {
        problems.push_back(l.where + ": ASCII \" beside Chinese text (use “”)");
        break;
      }
    }
  }
  return problems;
}

// A markdown line that starts a block of its own rather than continuing a paragraph (an HTML
// line such as <details> or <!-- output: 1 --> among them).
bool starts_block(std::string s) {
  if (s.empty() || s.rfind("    ", 0) == 0) return true;  // a blank line, indented code
  s.erase(0, s.find_first_not_of(' '));                   // a nested list item starts one too
  if (s.empty()) return true;
  if (s.rfind("- ", 0) == 0 || s.rfind("* ", 0) == 0 || s.rfind("|", 0) == 0 || s.rfind("#", 0) == 0 ||
      s.rfind("<", 0) == 0 || s.rfind("    ", 0) == 0 || s.rfind(">", 0) == 0 || s.rfind("![", 0) == 0 ||
      s.rfind("$$", 0) == 0)
    return true;
  size_t d = 0;
  while (d < s.size() && std::isdigit(static_cast<unsigned char>(s[d]))) ++d;
  return d > 0 && d + 1 < s.size() && s[d] == '.' && s[d + 1] == ' ';
}

}  // namespace

TEST_CASE("the term check finds rejected forms, and not inside code, glosses or English words") {
  std::vector<Rejected> terms{{"内核", "核函数"}, {"nats", "奈特"}, {"LayerNorm", "层归一化"}};
  std::vector<Line> lines{{"a:1", "融合内核很快", Kind::prose},          {"a:2", "损失 0.5 nats。", Kind::prose},
                          {"a:3", "层归一化（LayerNorm）", Kind::prose}, {"a:4", "调用 `LayerNorm` 模块", Kind::prose},
                          {"a:5", "the donats are", Kind::prose},        {"a:6", "再加 LayerNorm", Kind::prose}};
  std::vector<std::string> p = term_problems(lines, terms);
  REQUIRE(p.size() == 3);
  CHECK(p[0] == "a:1: '内核' (use '核函数')");
  CHECK(p[1] == "a:2: 'nats' (use '奈特')");
  CHECK(p[2] == "a:6: 'LayerNorm' (use '层归一化')");
  std::vector<Line> quoted{{"b:1", "每个位置\"思考\"一下", Kind::prose},
                           {"b:2", "`\"data\": {\"tokenizer\": \"char\"}`", Kind::prose},
                           {"b:3", "独立地\\\"思考\\\"", Kind::literal},
                           {"b:4", "a \"quoted\" word", Kind::prose}};
  std::vector<std::string> q = quote_problems(quoted);
  REQUIRE(q.size() == 2);
  CHECK(q[0].rfind("b:1:", 0) == 0);
  CHECK(q[1].rfind("b:3:", 0) == 0);
  CHECK(starts_block("- item"));
  CHECK(starts_block("12. item"));
  CHECK(starts_block("  - nested item"));
  CHECK(starts_block("    indented code"));
  CHECK(!starts_block("一个句子的后半"));
  CHECK(!starts_block("   a list item's second line"));
}

TEST_CASE("the Chinese texts use no term the glossary rejects") {
  std::vector<Rejected> terms = rejected_terms();
  REQUIRE(terms.size() >= 10);
  std::vector<Line> lines = all_chinese_lines();
  REQUIRE(lines.size() > 1000);  // the texts and literals were found
  for (const std::string& p : term_problems(lines, terms)) FAIL_CHECK(p);
}

TEST_CASE("the Chinese texts quote with “” and not with ASCII quotes") {
  for (const std::string& p : quote_problems(all_chinese_lines())) FAIL_CHECK(p);
}

TEST_CASE("no Chinese paragraph is broken across lines") {
  for (const fs::path& f : chinese_markdown_files()) {
    std::vector<Line> lines = markdown_lines(f);
    for (size_t i = 0; i + 1 < lines.size(); ++i) {
      const Line& a = lines[i];
      const Line& b = lines[i + 1];
      if (a.kind != Kind::prose || b.kind != Kind::prose || a.text.empty() || starts_block(b.text)) continue;
      const std::string& t = a.text;
      if (t.rfind("|", 0) == 0 || t.rfind("#", 0) == 0 || t.rfind("<", 0) == 0 || t.rfind("    ", 0) == 0) continue;
      FAIL_CHECK(a.where << ": the paragraph goes on on the next line (join it into one line)");
    }
  }
}

TEST_CASE("every lesson has one Chinese title: its text, the registry, both indexes") {
  const std::string readme = read_text_file(std::string(SF_SOURCE_DIR) + "/README.zh.md");
  const std::string index = read_text_file(std::string(SF_SOURCE_DIR) + "/lessons/zh/README.md");
  for (const Lesson& l : all_lessons()) {
    CAPTURE(l.name);
    // The registry's line is "title：what the lesson shows".
    const std::string title = l.title_zh.substr(0, l.title_zh.find("："));
    REQUIRE(!title.empty());
    std::string text = read_text_file(std::string(SF_SOURCE_DIR) + "/lessons/zh/" + l.file + ".md");
    CHECK(text.substr(0, text.find('\n')) == "# 第 " + std::to_string(l.number) + " 课：" + title);
    CHECK(readme.find("[" + title + "](lessons/zh/" + l.file + ".md)") != std::string::npos);
    CHECK(index.find("[" + title + "]") != std::string::npos);
    // And a link to its English text.
    CHECK(text.find("English: [" + l.file + ".md](../" + l.file + ".md)") != std::string::npos);
  }
}
