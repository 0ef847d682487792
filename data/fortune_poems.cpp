// fortune_poems.cpp: fortunes-zh poem files -> training text; the poem-form measure.
#include "data/fortune_poems.h"

#include <cstdint>
#include <vector>

#include "autograd/errors.h"
#include "data/file_io.h"
#include "data/utf8.h"

namespace sf::data {

namespace fs = std::filesystem;

fs::path fortune_poems_path(const std::string& file) { return fs::path("/usr/share/games/fortunes") / file; }

// The text without terminal escapes ESC [ digits/semicolons letter.
static std::string strip_escapes(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
      size_t j = i + 2;
      while (j < text.size() && ((text[j] >= '0' && text[j] <= '9') || text[j] == ';')) ++j;
      i = j;  // skip the final letter too (the loop's ++i steps past it)
      continue;
    }
    out += text[i];
  }
  return out;
}

static bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::string poems_from_fortune_text(std::string_view raw) {
  std::string text = strip_escapes(raw), out, poem;
  auto end_poem = [&] {
    if (!poem.empty()) out += (out.empty() ? "" : "\n") + poem;
    poem.clear();
  };
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string_view line(text.data() + pos, nl - pos);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    pos = nl + 1;
    if (line == "%") {
      end_poem();
      continue;
    }
    if (line.empty() || starts_with(line, "《") || starts_with(line, "题目") || starts_with(line, "作者")) continue;
    poem += std::string(line) + "\n";
  }
  end_poem();
  return out;
}

std::string read_fortune_poems(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw DataError(path.string() +
                    ": not found; the Tang and Song poems come from Debian's fortunes-zh package "
                    "(apt-get install fortunes-zh, or scripts/setup.sh)");
  std::string poems = poems_from_fortune_text(read_text_file(path));
  if (poems.empty()) throw DataError(path.string() + ": no poem lines in it (not a fortunes-zh poem file?)");
  return poems;
}

static const std::u32string kClauseMarks = U"，。！？；：、,.!?;:\n";

double five_or_seven_share(std::string_view text, int64_t* clauses_out) {
  const std::u32string& marks = kClauseMarks;
  int64_t clauses = 0, regular = 0, length = 0;
  auto end_clause = [&] {
    if (length > 0) ++clauses, regular += (length == 5 || length == 7);
    length = 0;
  };
  for (char32_t cp : utf8_decode(text)) {
    if (marks.find(cp) != std::u32string::npos) end_clause();
    else if (cp != U' ' && cp != U'\u3000') ++length;
  }
  end_clause();
  if (clauses_out) *clauses_out = clauses;
  return clauses ? static_cast<double>(regular) / static_cast<double>(clauses) : 0.0;
}

std::string up_to_last_clause_end(std::string_view text) {
  std::vector<char32_t> cps = utf8_decode(text);
  size_t end = cps.size();
  while (end > 0 && kClauseMarks.find(cps[end - 1]) == std::u32string::npos) --end;
  cps.resize(end);
  return utf8_encode(cps);
}

}  // namespace sf::data
