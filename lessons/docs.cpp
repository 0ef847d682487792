// docs.cpp: excerpts from the lesson sources, output steps, and the markdown blocks that show them.
#include "lessons/docs.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>

#include "autograd/errors.h"

namespace sf::lessons {

static std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

static std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// "prefix NAME suffix" -> NAME, or "" when the line is not of that form.
static std::string between(const std::string& line, const std::string& prefix, const std::string& suffix) {
  std::string t = trim(line);
  if (t.size() < prefix.size() + suffix.size() || t.compare(0, prefix.size(), prefix) != 0 ||
      t.compare(t.size() - suffix.size(), suffix.size(), suffix) != 0)
    return "";
  return trim(t.substr(prefix.size(), t.size() - prefix.size() - suffix.size()));
}

std::map<std::string, std::string> extract_excerpts(const std::string& cpp_source) {
  std::map<std::string, std::string> excerpts;
  std::vector<std::string> lines = split_lines(cpp_source);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string name = between(lines[i], "// [excerpt:", "]");
    if (name.empty()) continue;
    std::vector<std::string> body;
    size_t j = i + 1;
    for (; j < lines.size() && trim(lines[j]) != "// [/excerpt]"; ++j) body.push_back(lines[j]);
    if (j == lines.size()) throw Error("excerpt '" + name + "' has no // [/excerpt] line");
    size_t indent = std::string::npos;  // the common indentation of the non-empty lines
    for (const auto& l : body)
      if (!trim(l).empty()) indent = std::min(indent, l.find_first_not_of(' '));
    std::string text;
    for (const auto& l : body) text += (trim(l).empty() ? "" : l.substr(indent)) + "\n";
    excerpts[name] = text;
    i = j;
  }
  return excerpts;
}

std::map<std::string, std::string> output_sections(const std::string& output) {
  std::map<std::string, std::string> sections{{"all", output}};
  std::string key, text;
  for (const std::string& line : split_lines(output)) {
    if (line.rfind("== ", 0) == 0 && line.find('.') != std::string::npos) {
      if (!key.empty()) sections[key] = text;
      key = line.substr(3, line.find('.') - 3);
      text.clear();
    }
    if (!key.empty()) text += line + "\n";
  }
  if (!key.empty()) sections[key] = text;
  for (auto& [k, v] : sections)  // no blank lines at the end of a block
    while (v.size() >= 2 && v[v.size() - 1] == '\n' && v[v.size() - 2] == '\n') v.pop_back();
  return sections;
}

// A fenced block starts at `open` (the ``` line); returns the index of its closing fence.
static size_t closing_fence(const std::vector<std::string>& lines, size_t open) {
  for (size_t j = open + 1; j < lines.size(); ++j)
    if (trim(lines[j]) == "```") return j;
  return lines.size();
}

static bool parse_tag(const std::string& line, std::string& kind, std::string& key) {
  for (const char* k : {"excerpt", "output"}) {
    std::string name = between(line, std::string("<!-- ") + k + ":", "-->");
    if (!name.empty()) {
      kind = k;
      key = name;
      return true;
    }
  }
  return false;
}

std::vector<DocBlock> tagged_blocks(const std::string& markdown) {
  std::vector<DocBlock> blocks;
  std::vector<std::string> lines = split_lines(markdown);
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    DocBlock b;
    if (!parse_tag(lines[i], b.kind, b.key) || trim(lines[i + 1]).rfind("```", 0) != 0) continue;
    size_t close = closing_fence(lines, i + 1);
    for (size_t j = i + 2; j < close; ++j) b.text += lines[j] + "\n";
    b.line = static_cast<int>(i + 1);
    blocks.push_back(b);
    i = close;
  }
  return blocks;
}

std::vector<int> untagged_cpp_blocks(const std::string& markdown) {
  std::vector<int> found;
  std::vector<std::string> lines = split_lines(markdown);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (trim(lines[i]).rfind("```", 0) != 0) continue;
    std::string kind, key;
    bool tagged = i > 0 && parse_tag(lines[i - 1], kind, key) && kind == "excerpt";
    if (trim(lines[i]) == "```cpp" && !tagged) found.push_back(static_cast<int>(i + 1));
    i = closing_fence(lines, i);
  }
  return found;
}

std::string sync_markdown(const std::string& markdown, const std::map<std::string, std::string>& excerpts,
                          const std::map<std::string, std::string>& outputs, std::vector<std::string>& problems) {
  std::vector<std::string> lines = split_lines(markdown);
  std::string result;
  for (size_t i = 0; i < lines.size(); ++i) {
    result += lines[i] + "\n";
    std::string kind, key;
    if (!parse_tag(lines[i], kind, key) || i + 1 >= lines.size() || trim(lines[i + 1]).rfind("```", 0) != 0) continue;
    const auto& source = kind == "excerpt" ? excerpts : outputs;
    auto it = source.find(key);
    size_t close = closing_fence(lines, i + 1);
    if (it == source.end()) {
      problems.push_back("line " + std::to_string(i + 1) + ": no " + kind + " named '" + key + "'");
      continue;  // keep the block as it is
    }
    result += lines[i + 1] + "\n" + it->second + "```\n";
    i = close;
  }
  return result;
}

// Splits printed text into numbers and runs of other characters.
struct Token {
  bool number;
  std::string text;
  double value = 0;
  int decimals = 0;
};

static std::vector<Token> tokenize(const std::string& s) {
  std::vector<Token> tokens;
  size_t i = 0;
  auto digit = [&](size_t k) { return k < s.size() && s[k] >= '0' && s[k] <= '9'; };
  while (i < s.size()) {
    bool starts_number =
        digit(i) || (s[i] == '-' && digit(i + 1) && (i == 0 || !std::isalnum(static_cast<unsigned char>(s[i - 1]))));
    if (starts_number && (i == 0 || !std::isalpha(static_cast<unsigned char>(s[i - 1])))) {
      size_t j = i + (s[i] == '-');
      while (digit(j)) ++j;
      int decimals = 0;
      if (j < s.size() && s[j] == '.' && digit(j + 1)) {
        ++j;
        while (digit(j)) ++j, ++decimals;
      }
      if (j < s.size() && (s[j] == 'e' || s[j] == 'E') &&
          (digit(j + 1) || ((s[j + 1] == '-' || s[j + 1] == '+') && digit(j + 2)))) {
        size_t k = j + 1;
        if (s[k] == '-' || s[k] == '+') ++k;
        while (digit(k)) ++k;
        j = k;
        decimals = -1;  // scientific: compare relatively
      }
      Token t{true, s.substr(i, j - i)};
      t.value = std::strtod(t.text.c_str(), nullptr);
      t.decimals = decimals;
      tokens.push_back(t);
      i = j;
    } else {
      if (tokens.empty() || tokens.back().number) tokens.push_back(Token{false, ""});
      // A word is text to its end: the digits of "fp16" or "x1" are not numbers.
      bool word = std::isalpha(static_cast<unsigned char>(s[i]));
      do tokens.back().text += s[i++];
      while (word && i < s.size() && std::isalnum(static_cast<unsigned char>(s[i])));
    }
  }
  return tokens;
}

// Two printed numbers agree to the last digit shown (1.5 units of it; relatively for 1e-05).
static bool same_number(const Token& x, const Token& y) {
  if (x.text == y.text) return true;
  if (x.decimals != y.decimals) return false;
  double tol =
      x.decimals >= 0 ? 1.5 * std::pow(10.0, -x.decimals) : 1e-3 * std::max(std::fabs(x.value), std::fabs(y.value));
  return std::fabs(x.value - y.value) <= tol;
}

bool same_printed_text(const std::string& a, const std::string& b) {
  std::vector<Token> ta = tokenize(a), tb = tokenize(b);
  if (ta.size() != tb.size()) return false;
  for (size_t i = 0; i < ta.size(); ++i) {
    const Token &x = ta[i], &y = tb[i];
    if (x.number != y.number) return false;
    // Column padding may shift by a character when a sign flips on -0.0000 vs 0.0000.
    if (x.number ? !same_number(x, y) : trim(x.text) != trim(y.text)) return false;
  }
  return true;
}

static std::vector<Token> numbers_of(const std::string& s) {
  std::vector<Token> numbers;
  for (const Token& t : tokenize(s))
    if (t.number) numbers.push_back(t);
  return numbers;
}

bool same_printed_numbers(const std::string& a, const std::string& b) {
  std::vector<Token> na = numbers_of(a), nb = numbers_of(b);
  if (na.size() != nb.size()) return false;
  for (size_t i = 0; i < na.size(); ++i)
    if (!same_number(na[i], nb[i])) return false;
  return true;
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text_file(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw Error("cannot write " + tmp);
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) {
      ::close(fd);
      throw Error("cannot write " + tmp);
    }
    done += static_cast<size_t>(n);
  }
  bool ok = ::fsync(fd) == 0;
  ok = ::close(fd) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) throw Error("cannot write " + path);
}

}  // namespace sf::lessons

// ---- a lesson's two texts ----

namespace sf::lessons {

std::string text_path(const std::string& root, const Lesson& lesson, Lang lang) {
  return root + (lang == Lang::zh ? "/lessons/zh/" : "/lessons/") + lesson.file + ".md";
}

// "excerpt NAME" / "output N" for every tagged block, sorted: the set both texts must share.
static std::vector<std::string> block_set(const std::vector<DocBlock>& blocks) {
  std::vector<std::string> set;
  for (const DocBlock& b : blocks) set.push_back(b.kind + " " + b.key);
  std::sort(set.begin(), set.end());
  return set;
}

static std::string joined(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ", ") + i;
  return s.empty() ? "(none)" : s;
}

// The text at `path`, or nothing and a problem saying it is missing.
static std::optional<std::string> read_lesson_text(const std::string& path, std::vector<std::string>& problems) {
  if (std::filesystem::exists(path)) return read_text_file(path);
  problems.push_back(path + ": missing (every lesson has an English and a Chinese text)");
  return std::nullopt;
}

std::vector<std::string> check_lesson_texts(const std::string& root, const Lesson& lesson, SlowLessons slow) {
  std::vector<std::string> problems;
  auto excerpts = extract_excerpts(read_text_file(root + "/lessons/" + lesson.file + ".cpp"));
  const bool texts_only = lesson.slow && slow == SlowLessons::texts_only;
  // Not run: the outputs as the English text shows them, which its Chinese text must match.
  std::map<std::string, std::string> shown;
  if (texts_only && std::filesystem::exists(text_path(root, lesson, Lang::en)))
    for (const DocBlock& b : tagged_blocks(read_text_file(text_path(root, lesson, Lang::en))))
      if (b.kind == "output") shown[b.key] = b.text;
  std::string en_output = texts_only ? "" : lesson_output(lesson, Lang::en);
  std::string zh_output = lesson.slow ? "" : lesson_output(lesson, Lang::zh);
  if (!lesson.slow && !same_printed_numbers(en_output, zh_output))
    problems.push_back(lesson.file + ": the English and Chinese runs print different numbers");
  std::map<Lang, std::vector<std::string>> sets;
  for (Lang lang : {Lang::en, Lang::zh}) {
    std::string path = text_path(root, lesson, lang);
    std::optional<std::string> text = read_lesson_text(path, problems);
    if (!text) continue;
    const std::string& md = *text;
    for (int line : untagged_cpp_blocks(md))
      problems.push_back(path + ":" + std::to_string(line) + ": a ```cpp block with no excerpt tag");
    // A slow lesson's Chinese blocks are checked by their numbers against the English run.
    bool by_numbers = lang == Lang::zh && lesson.slow;
    auto outputs = texts_only ? shown : output_sections(lang == Lang::zh && !lesson.slow ? zh_output : en_output);
    std::vector<DocBlock> blocks = tagged_blocks(md);
    sets[lang] = block_set(blocks);
    for (const DocBlock& b : blocks) {
      std::string where = path + ":" + std::to_string(b.line) + ": " + b.kind + " " + b.key;
      const auto& source = b.kind == "excerpt" ? excerpts : outputs;
      auto it = source.find(b.key);
      if (it == source.end()) problems.push_back(where + ": no such " + (b.kind == "excerpt" ? "excerpt" : "step"));
      else if (b.kind == "excerpt" ? b.text != it->second
               : by_numbers        ? !same_printed_numbers(b.text, it->second)
                                   : !same_printed_text(b.text, it->second))
        problems.push_back(where + ": out of date (run lesson_docs)");
    }
    if (std::count_if(blocks.begin(), blocks.end(), [](const DocBlock& b) { return b.kind == "excerpt"; }) == 0 ||
        std::count_if(blocks.begin(), blocks.end(), [](const DocBlock& b) { return b.kind == "output"; }) == 0)
      problems.push_back(path + ": needs at least one excerpt block and one output block");
  }
  if (sets.size() == 2 && sets[Lang::en] != sets[Lang::zh]) {
    std::vector<std::string> only_en, only_zh;
    std::set_difference(sets[Lang::en].begin(), sets[Lang::en].end(), sets[Lang::zh].begin(), sets[Lang::zh].end(),
                        std::back_inserter(only_en));
    std::set_difference(sets[Lang::zh].begin(), sets[Lang::zh].end(), sets[Lang::en].begin(), sets[Lang::en].end(),
                        std::back_inserter(only_zh));
    problems.push_back(lesson.file + ": the two texts tag different blocks (only in English: " + joined(only_en) +
                       "; only in Chinese: " + joined(only_zh) + ")");
  }
  return problems;
}

// Rewrites both texts of a lesson: the excerpt blocks from the code, the output blocks from
// outputs_of(lang, text). Returns the paths it changed.
template <class OutputsOf>
static std::vector<std::string> sync_texts(const std::string& root, const Lesson& lesson,
                                           std::vector<std::string>& problems, OutputsOf outputs_of) {
  std::vector<std::string> changed;
  auto excerpts = extract_excerpts(read_text_file(root + "/lessons/" + lesson.file + ".cpp"));
  for (Lang lang : {Lang::en, Lang::zh}) {
    std::string path = text_path(root, lesson, lang);
    std::optional<std::string> text = read_lesson_text(path, problems);
    if (!text) continue;
    std::vector<std::string> found;
    std::string synced = sync_markdown(*text, excerpts, outputs_of(lang, *text), found);
    for (const auto& p : found) problems.push_back(path + ": " + p);
    if (synced == *text) continue;
    write_text_file(path, synced);
    changed.push_back(path);
  }
  return changed;
}

std::vector<std::string> sync_lesson_texts(const std::string& root, const Lesson& lesson,
                                           std::vector<std::string>& problems) {
  return sync_texts(root, lesson, problems, [&](Lang lang, const std::string&) {
    std::ostringstream printed;
    set_language(printed, lang);
    if (lang == Lang::en) set_image_dir(printed, root + "/lessons/images");  // the pictures, once
    lesson.run(printed);
    return output_sections(printed.str());
  });
}

std::vector<std::string> sync_lesson_excerpts(const std::string& root, const Lesson& lesson,
                                              std::vector<std::string>& problems) {
  return sync_texts(root, lesson, problems, [](Lang, const std::string& text) {
    std::map<std::string, std::string> outputs;  // each output block stays as it is
    for (const DocBlock& b : tagged_blocks(text))
      if (b.kind == "output") outputs[b.key] = b.text;
    return outputs;
  });
}

}  // namespace sf::lessons
