// utf8.cpp: strict UTF-8 decoding and encoding (RFC 3629) with utfcpp, and the stream that holds
// back a character split across pieces.
#include "data/utf8.h"

#include <cstdio>
#include <iterator>

#include <utf8.h>

#include "autograd/errors.h"

namespace sf::data {

// Validation and decoding are utfcpp's (Debian's libutfcpp-dev, header-only): strict like
// RFC 3629, it rejects overlong forms, surrogates and code points past U+10FFFF.

long long utf8_first_error(std::string_view text) {
  auto bad = utf8::find_invalid(text.begin(), text.end());
  return bad == text.end() ? -1 : static_cast<long long>(bad - text.begin());
}

std::vector<char32_t> utf8_decode(std::string_view text, const std::string& where) {
  long long bad = utf8_first_error(text);
  if (bad >= 0) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(text[static_cast<size_t>(bad)]));
    throw DataError(where + ": invalid UTF-8 at byte offset " + std::to_string(bad) + " (byte " + hex +
                    "); is this a text file?");
  }
  std::vector<char32_t> out;
  out.reserve(text.size());
  utf8::unchecked::utf8to32(text.begin(), text.end(), std::back_inserter(out));  // valid: checked above
  return out;
}

// The length of the sequence a lead byte starts (1-4), or 0 for a byte no sequence starts with.
static int sequence_length(unsigned char b0) {
  if (b0 < 0x80) return 1;
  if ((b0 & 0xE0) == 0xC0) return 2;
  if ((b0 & 0xF0) == 0xE0) return 3;
  if ((b0 & 0xF8) == 0xF0) return 4;
  return 0;
}

static const char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

std::string Utf8Stream::push(std::string_view bytes) {
  pending_.append(bytes);
  std::string out;
  size_t i = 0;
  while (i < pending_.size()) {
    // The valid characters from i on go out whole.
    size_t bad = static_cast<size_t>(
        utf8::find_invalid(pending_.begin() + static_cast<std::ptrdiff_t>(i), pending_.end()) - pending_.begin());
    out.append(pending_, i, bad - i);
    i = bad;
    if (i == pending_.size()) break;
    // Malformed here: either the start of a sequence whose remaining bytes have not come yet
    // (hold it back), or a byte that can never be valid (replace it and go on).
    int need = sequence_length(static_cast<unsigned char>(pending_[i]));
    bool waiting = need > 0 && i + static_cast<size_t>(need) > pending_.size();
    for (size_t k = i + 1; waiting && k < pending_.size(); ++k)
      waiting = (static_cast<unsigned char>(pending_[k]) & 0xC0) == 0x80;
    if (waiting) break;
    out += kReplacement;
    ++i;
  }
  pending_.erase(0, i);
  return out;
}

std::string Utf8Stream::finish(bool* incomplete_tail) {
  bool any = !pending_.empty();
  if (incomplete_tail) *incomplete_tail = any;
  pending_.clear();
  return any ? std::string(kReplacement) : std::string();
}

void utf8_append(char32_t cp, std::string& out) {
  utf8::append(static_cast<uint32_t>(cp),
               std::back_inserter(out));  // throws utf8::invalid_code_point past U+10FFFF or for a surrogate
}

std::string utf8_encode(const std::vector<char32_t>& cps) {
  std::string out;
  out.reserve(cps.size());
  for (char32_t cp : cps) utf8_append(cp, out);
  return out;
}

std::string describe_code_point(char32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(cp));
  if (cp < 0x20 || cp == 0x7F) return buf;  // control characters are unreadable when printed
  std::string s = "'";
  utf8_append(cp, s);
  return s + "' (" + buf + ")";
}

}  // namespace sf::data
