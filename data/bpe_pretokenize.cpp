// bpe_pretokenize.cpp: the GPT-2 pre-split as a small hand-written scanner.
#include "data/bpe_pretokenize.h"

namespace sf::data {

enum class CharClass { letter, digit, space, other };

static CharClass classify(unsigned char c) {
  if (c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return CharClass::letter;
  if (c >= '0' && c <= '9') return CharClass::digit;
  if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') return CharClass::space;
  return CharClass::other;
}

// Length of an English contraction ('s 't 'm 'd 're 've 'll) starting at text[i], or 0.
static size_t contraction_length(std::string_view text, size_t i) {
  if (text[i] != '\'' || i + 1 >= text.size()) return 0;
  char a = text[i + 1];
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (i + 2 >= text.size()) return 0;
  char b = text[i + 2];
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

std::vector<std::string_view> pretokenize_gpt2(std::string_view text) {
  std::vector<std::string_view> chunks;
  const size_t n = text.size();
  auto cls = [&](size_t k) { return classify(static_cast<unsigned char>(text[k])); };
  size_t i = 0;
  while (i < n) {
    // 's 't 're 've 'm 'll 'd
    if (size_t len = contraction_length(text, i)) {
      chunks.push_back(text.substr(i, len));
      i += len;
      continue;
    }
    // " ?" followed by a run of letters, of digits, or of other symbols.
    size_t j = (text[i] == ' ' && i + 1 < n && cls(i + 1) != CharClass::space) ? i + 1 : i;
    if (cls(j) != CharClass::space) {
      CharClass c = cls(j);
      size_t k = j + 1;
      while (k < n && cls(k) == c) ++k;
      chunks.push_back(text.substr(i, k - i));
      i = k;
      continue;
    }
    // Whitespace: all of it at the end of the text; otherwise all but the last character,
    // which then starts the next chunk (" word"), as \s+(?!\S) does.
    size_t k = i;
    while (k < n && cls(k) == CharClass::space) ++k;
    size_t end = (k == n || k - i == 1) ? k : k - 1;
    chunks.push_back(text.substr(i, end - i));
    i = end;
  }
  return chunks;
}

}  // namespace sf::data
