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
#include "autograd/quiet_xsimd.h"

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

// "<!-- output: 7 | RULES -->" -> kind "output", key "7", rules "RULES" (empty without a `|`).
static bool parse_tag(const std::string& line, std::string& kind, std::string& key, std::string* rules = nullptr) {
  for (const char* k : {"excerpt", "output"}) {
    std::string name = between(line, std::string("<!-- ") + k + ":", "-->");
    if (!name.empty()) {
      kind = k;
      size_t bar = name.find('|');
      key = trim(name.substr(0, bar));
      if (rules) *rules = bar == std::string::npos ? "" : name.substr(bar + 1);
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
    std::string rules;
    if (!parse_tag(lines[i], b.kind, b.key, &rules) || trim(lines[i + 1]).rfind("```", 0) != 0) continue;
    size_t close = closing_fence(lines, i + 1);
    for (size_t j = i + 2; j < close; ++j) b.text += lines[j] + "\n";
    b.line = static_cast<int>(i + 1);
    try {
      b.rules = parse_width_rules(rules);
    } catch (const Error& e) { throw Error("line " + std::to_string(b.line) + ": " + e.what()); }
    if (!b.rules.empty() && b.kind != "output")
      throw Error("line " + std::to_string(b.line) + ": only an output block has width rules");
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

// ---- blocks that print differently with another vector width ----

int build_vector_width() { return static_cast<int>(xsimd::batch<float>::size); }

// A quoted string at `s[i]` ("..." with \" \\ \n escapes); moves i past it.
static std::string quoted(const std::string& s, size_t& i, const std::string& what) {
  while (i < s.size() && s[i] == ' ') ++i;
  if (i >= s.size() || s[i] != '"') throw Error(what + ": expected a quoted string in '" + trim(s) + "'");
  std::string out;
  for (++i; i < s.size() && s[i] != '"'; ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      ++i;
      out += s[i] == 'n' ? '\n' : s[i];
    } else {
      out += s[i];
    }
  }
  if (i >= s.size()) throw Error(what + ": unterminated string in '" + trim(s) + "'");
  ++i;
  return out;
}

// `word` as a non-negative number (a whole one when `integer`), or an error naming the rule.
static double rule_number(const std::string& word, bool integer, const std::string& rule) {
  char* end = nullptr;
  double v = std::strtod(word.c_str(), &end);
  if (word.empty() || *end != '\0' || !(v >= 0) || (integer && v != std::floor(v)) || v > 1e9)
    throw Error("width rule '" + rule + "': '" + word + "' is not a " + (integer ? "count" : "tolerance"));
  return v;
}

std::vector<WidthRule> parse_width_rules(const std::string& spec) {
  std::vector<WidthRule> rules;
  if (trim(spec).empty()) return rules;
  size_t i = 0;
  while (true) {
    size_t start = i;
    WidthRule r;
    r.line_start = quoted(spec, i, "width rule");
    size_t bar = spec.find('|', i);
    std::string rule = trim(spec.substr(start, bar == std::string::npos ? std::string::npos : bar - start));
    std::istringstream words(spec.substr(i, bar == std::string::npos ? std::string::npos : bar - i));
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    const std::string pm = "\u00b1";  // ±
    if (r.line_start.empty()) throw Error("width rule '" + rule + "': the line start is empty");
    if (w.size() == 2 && w[0] == "sample") {
      r.sample_chars = static_cast<int>(rule_number(w[1], true, rule));
      if (r.sample_chars == 0) throw Error("width rule '" + rule + "': a sample of 0 characters");
    } else if ((w.size() == 1 || w.size() == 2) && w[0].rfind(pm, 0) == 0) {
      r.tolerance = rule_number(w[0].substr(pm.size()), false, rule);
      if (w.size() == 2) {
        if (w[1].size() < 2 || w[1][0] != '+')
          throw Error("width rule '" + rule + "': expected +N after the tolerance");
        r.more_lines = static_cast<int>(rule_number(w[1].substr(1), true, rule));
      }
    } else {
      throw Error("width rule '" + rule + "': expected \"START\" \u00b1T [+N] or \"START\" sample N");
    }
    rules.push_back(r);
    if (bar == std::string::npos) break;
    i = bar + 1;
  }
  return rules;
}

// The UTF-8 characters of `s`, one string each.
static std::vector<std::string> utf8_characters(const std::string& s) {
  std::vector<std::string> out;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80 || out.empty()) out.emplace_back(1, static_cast<char>(c));
    else out.back() += static_cast<char>(c);
  return out;
}

TextMachine text_machine(const std::string& markdown) {
  TextMachine m;
  for (const std::string& line : split_lines(markdown)) {
    std::string width = between(line, "<!-- vector width:", "-->");
    if (!width.empty()) m.vector_width = static_cast<int>(rule_number(width, true, trim(line)));
    std::string chars = between(line, "<!-- sample characters:", "-->");
    if (chars.empty()) continue;
    size_t i = 0;
    std::vector<std::string> listed = utf8_characters(quoted(chars, i, trim(line)));
    m.sample_characters.clear();
    for (size_t k = 0; k < listed.size(); ++k) {
      if (k + 2 < listed.size() && listed[k + 1] == "-" && listed[k].size() == 1 && listed[k + 2].size() == 1) {
        for (int c = listed[k][0]; c <= listed[k + 2][0]; ++c)
          m.sample_characters.emplace_back(1, static_cast<char>(c));
        k += 2;
      } else {
        m.sample_characters.push_back(listed[k]);
      }
    }
  }
  return m;
}

// A block cut by its width rules: numbers (with the tolerance of their rule, or -1), words, and
// samples (their text, and whether N characters and a line break were there).
struct Piece {
  Token token;
  double tolerance = -1;
  bool sample = false;
  bool whole = false;  // a sample: all of its characters, then a line break
};

static std::vector<Piece> pieces(const std::string& text, const std::vector<WidthRule>& rules) {
  std::vector<Piece> out;
  auto add = [&](const std::string& s, double tolerance) {
    std::vector<Token> tokens = tokenize(s);
    for (size_t k = 0; k < tokens.size(); ++k) {
      // A signed difference's "+" belongs to its number, which may print "-" on another build.
      if (tolerance >= 0 && !tokens[k].number && k + 1 < tokens.size() && !tokens[k].text.empty() &&
          tokens[k].text.back() == '+')
        tokens[k].text.pop_back();
      out.push_back(Piece{tokens[k], tokens[k].number ? tolerance : -1});
    }
  };
  std::string plain;  // lines no rule covers, compared as usual
  size_t pos = 0;
  auto next_line = [&]() {
    size_t end = text.find('\n', pos);
    end = end == std::string::npos ? text.size() : end + 1;
    std::string line = text.substr(pos, end - pos);
    pos = end;
    return line;
  };
  while (pos < text.size()) {
    std::string line = next_line();
    std::string shown = line.substr(std::min(line.size(), line.find_first_not_of(' ')));
    const WidthRule* rule = nullptr;
    for (const WidthRule& r : rules)
      if (shown.rfind(r.line_start, 0) == 0) {
        rule = &r;
        break;
      }
    if (!rule) {
      plain += line;
      continue;
    }
    add(plain, -1);
    plain.clear();
    if (rule->sample_chars == 0) {
      for (int k = 0; k < rule->more_lines && pos < text.size(); ++k) line += next_line();
      add(line, rule->tolerance);
      continue;
    }
    add(line, -1);
    Piece sample{Token{false, ""}, -1, true, false};
    int n = 0;
    while (pos < text.size() && n < rule->sample_chars) {
      size_t len = 1;
      while (pos + len < text.size() && (static_cast<unsigned char>(text[pos + len]) & 0xC0) == 0x80) ++len;
      sample.token.text += text.substr(pos, len);
      pos += len;
      ++n;
    }
    // A sample whose last character is a line break and that ends its step has lost the line
    // break printed after it: a step's trailing blank lines are dropped (output_sections).
    sample.whole = n == rule->sample_chars && ((pos < text.size() && text[pos] == '\n') ||
                                               (pos == text.size() && sample.token.text.back() == '\n'));
    if (pos < text.size() && text[pos] == '\n') ++pos;  // the line break ends the sample
    out.push_back(sample);
  }
  add(plain, -1);
  return out;
}

// A sample of the right form: every character one of the text's sample characters.
static bool sample_form(const Piece& p, const TextMachine& machine) {
  if (!p.whole) return false;
  for (const std::string& c : utf8_characters(p.token.text))
    if (std::find(machine.sample_characters.begin(), machine.sample_characters.end(), c) ==
        machine.sample_characters.end())
      return false;
  return true;
}

// Two pieces at the same place, on a build of another width.
static bool same_piece_across_widths(const Piece& x, const Piece& y, const TextMachine& machine) {
  if (x.sample != y.sample) return false;
  if (x.sample) return sample_form(x, machine) && sample_form(y, machine);
  if (x.token.number != y.token.number) return false;
  if (!x.token.number) return trim(x.token.text) == trim(y.token.text);
  if (x.tolerance != y.tolerance) return false;
  if (x.tolerance < 0) return same_number(x.token, y.token);
  return x.token.decimals == y.token.decimals &&
         (same_number(x.token, y.token) || std::fabs(x.token.value - y.token.value) <= x.tolerance * (1 + 1e-9));
}

static std::vector<Piece> numbers_and_samples(const std::string& text, const std::vector<WidthRule>& rules) {
  std::vector<Piece> kept;
  for (const Piece& p : pieces(text, rules))
    if (p.sample || p.token.number) kept.push_back(p);
  return kept;
}

static bool all_same(const std::vector<Piece>& a, const std::vector<Piece>& b, const TextMachine& machine) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!same_piece_across_widths(a[i], b[i], machine)) return false;
  return true;
}

bool same_printed_text_across_widths(const std::string& text, const std::string& printed,
                                     const std::vector<WidthRule>& rules, const TextMachine& machine) {
  return all_same(pieces(text, rules), pieces(printed, rules), machine);
}

bool same_printed_numbers_across_widths(const std::string& text, const std::vector<WidthRule>& text_rules,
                                        const std::string& printed, const std::vector<WidthRule>& printed_rules,
                                        const TextMachine& machine) {
  return all_same(numbers_and_samples(text, text_rules), numbers_and_samples(printed, printed_rules), machine);
}

bool same_width_rules(const std::string& a, const std::vector<WidthRule>& a_rules, const std::string& b,
                      const std::vector<WidthRule>& b_rules) {
  std::vector<Piece> pa = numbers_and_samples(a, a_rules), pb = numbers_and_samples(b, b_rules);
  if (pa.size() != pb.size()) return false;
  for (size_t i = 0; i < pa.size(); ++i)
    if (pa[i].sample != pb[i].sample || pa[i].tolerance != pb[i].tolerance ||
        (pa[i].sample && utf8_characters(pa[i].token.text).size() != utf8_characters(pb[i].token.text).size()))
      return false;
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
  std::map<Lang, TextMachine> machines;
  std::map<Lang, std::map<std::string, DocBlock>> blocks_of;  // output blocks by step
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
    machines[lang] = text_machine(md);
    const TextMachine& machine = machines[lang];
    // The width rules apply on a build whose vectors differ from those that made the text, and
    // only to what was run here (a texts_only check compares the texts with each other).
    const bool other_width = !texts_only && machine.vector_width != build_vector_width();
    for (const DocBlock& b : blocks) {
      std::string where = path + ":" + std::to_string(b.line) + ": " + b.kind + " " + b.key;
      if (b.kind == "output") blocks_of[lang][b.key] = b;
      if (!b.rules.empty() && machine.vector_width == 0)
        problems.push_back(where + ": width rules, but the text has no <!-- vector width: W --> line");
      for (const WidthRule& r : b.rules)
        if (r.sample_chars > 0 && machine.sample_characters.empty())
          problems.push_back(where + ": a sample rule, but the text has no <!-- sample characters: \"...\" --> line");
      const auto& source = b.kind == "excerpt" ? excerpts : outputs;
      auto it = source.find(b.key);
      if (it == source.end()) {
        problems.push_back(where + ": no such " + (b.kind == "excerpt" ? "excerpt" : "step"));
        continue;
      }
      // The English rules find the numbers and samples of an English run.
      const std::vector<WidthRule>& printed_rules =
          by_numbers && !texts_only && blocks_of[Lang::en].count(b.key) ? blocks_of[Lang::en][b.key].rules : b.rules;
      bool same =
          b.kind == "excerpt" ? b.text == it->second
          : other_width && machine.vector_width > 0
              ? (by_numbers ? same_printed_numbers_across_widths(b.text, b.rules, it->second, printed_rules, machine)
                            : same_printed_text_across_widths(b.text, it->second, b.rules, machine))
          : by_numbers ? same_printed_numbers(b.text, it->second)
                       : same_printed_text(b.text, it->second);
      if (!same) problems.push_back(where + ": out of date (run lesson_docs)");
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
  // Both texts were made by one build, and their rules let the same numbers and samples differ.
  if (machines.size() == 2) {
    const TextMachine &en = machines[Lang::en], &zh = machines[Lang::zh];
    if (en.vector_width != zh.vector_width || en.sample_characters != zh.sample_characters)
      problems.push_back(lesson.file + ": the two texts name different vector widths or sample characters");
    for (const auto& [key, b] : blocks_of[Lang::en]) {
      auto z = blocks_of[Lang::zh].find(key);
      if (z != blocks_of[Lang::zh].end() && !same_width_rules(b.text, b.rules, z->second.text, z->second.rules))
        problems.push_back(text_path(root, lesson, Lang::zh) + ":" + std::to_string(z->second.line) + ": output " +
                           key + ": its width rules cover other numbers or samples than the English text's");
    }
  }
  return problems;
}

// Rewrites both texts of a lesson: the excerpt blocks from the code, the output blocks from
// outputs_of(lang, text). Returns the paths it changed.
// The markdown with its `<!-- vector width: W -->` line, if it has one, saying `width`.
static std::string with_vector_width(const std::string& markdown, int width) {
  std::string out;
  for (const std::string& line : split_lines(markdown))
    out +=
        (between(line, "<!-- vector width:", "-->").empty() ? line
                                                            : "<!-- vector width: " + std::to_string(width) + " -->") +
        "\n";
  return out;
}

template <class OutputsOf>
static std::vector<std::string> sync_texts(const std::string& root, const Lesson& lesson,
                                           std::vector<std::string>& problems, bool rewrites_outputs,
                                           OutputsOf outputs_of) {
  std::vector<std::string> changed;
  auto excerpts = extract_excerpts(read_text_file(root + "/lessons/" + lesson.file + ".cpp"));
  for (Lang lang : {Lang::en, Lang::zh}) {
    std::string path = text_path(root, lesson, lang);
    std::optional<std::string> text = read_lesson_text(path, problems);
    if (!text) continue;
    std::vector<std::string> found;
    std::string synced = sync_markdown(*text, excerpts, outputs_of(lang, *text), found);
    if (rewrites_outputs) synced = with_vector_width(synced, build_vector_width());
    for (const auto& p : found) problems.push_back(path + ": " + p);
    if (synced == *text) continue;
    write_text_file(path, synced);
    changed.push_back(path);
  }
  return changed;
}

std::vector<std::string> sync_lesson_texts(const std::string& root, const Lesson& lesson,
                                           std::vector<std::string>& problems) {
  return sync_texts(root, lesson, problems, /*rewrites_outputs=*/true, [&](Lang lang, const std::string&) {
    std::ostringstream printed;
    set_language(printed, lang);
    if (lang == Lang::en) set_image_dir(printed, root + "/lessons/images");  // the pictures, once
    lesson.run(printed);
    return output_sections(printed.str());
  });
}

std::vector<std::string> sync_lesson_excerpts(const std::string& root, const Lesson& lesson,
                                              std::vector<std::string>& problems) {
  return sync_texts(root, lesson, problems, /*rewrites_outputs=*/false, [](Lang, const std::string& text) {
    std::map<std::string, std::string> outputs;  // each output block stays as it is
    for (const DocBlock& b : tagged_blocks(text))
      if (b.kind == "output") outputs[b.key] = b.text;
    return outputs;
  });
}

}  // namespace sf::lessons
