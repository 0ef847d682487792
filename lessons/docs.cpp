// docs.cpp: excerpts from the lesson sources, output steps, and the markdown blocks that show them.
#include "lessons/docs.h"

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
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
static std::string between(const std::string& line, const std::string& prefix,
                           const std::string& suffix) {
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

std::string sync_markdown(const std::string& markdown,
                          const std::map<std::string, std::string>& excerpts,
                          const std::map<std::string, std::string>& outputs,
                          std::vector<std::string>& problems) {
  std::vector<std::string> lines = split_lines(markdown);
  std::string result;
  for (size_t i = 0; i < lines.size(); ++i) {
    result += lines[i] + "\n";
    std::string kind, key;
    if (!parse_tag(lines[i], kind, key) || i + 1 >= lines.size() ||
        trim(lines[i + 1]).rfind("```", 0) != 0)
      continue;
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
    bool starts_number = digit(i) || (s[i] == '-' && digit(i + 1) &&
                                      (i == 0 || !std::isalnum(static_cast<unsigned char>(s[i - 1]))));
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
      tokens.back().text += s[i++];
    }
  }
  return tokens;
}

bool same_printed_text(const std::string& a, const std::string& b) {
  std::vector<Token> ta = tokenize(a), tb = tokenize(b);
  if (ta.size() != tb.size()) return false;
  for (size_t i = 0; i < ta.size(); ++i) {
    const Token &x = ta[i], &y = tb[i];
    if (x.number != y.number) return false;
    if (!x.number) {
      // Column padding may shift by a character when a sign flips on -0.0000 vs 0.0000.
      if (trim(x.text) != trim(y.text)) return false;
      continue;
    }
    if (x.text == y.text) continue;
    if (x.decimals != y.decimals) return false;
    double tol = x.decimals >= 0 ? 1.5 * std::pow(10.0, -x.decimals)
                                 : 1e-3 * std::max(std::fabs(x.value), std::fabs(y.value));
    if (std::fabs(x.value - y.value) > tol) return false;
  }
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
