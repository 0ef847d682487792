// utf8.cpp: a strict UTF-8 decoder and encoder (RFC 3629).
#include "data/utf8.h"

#include <cstdio>

#include "autograd/errors.h"

namespace sf::data {

// Decodes one code point starting at text[i]. Returns its length in bytes, or 0 when malformed.
static int decode_one(std::string_view text, size_t i, char32_t& cp) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char b0 = byte(i);
  int len;
  char32_t min;  // smallest code point allowed at this length (rejects overlong forms)
  if (b0 < 0x80) { cp = b0; return 1; }
  else if ((b0 & 0xE0) == 0xC0) { len = 2; cp = b0 & 0x1F; min = 0x80; }
  else if ((b0 & 0xF0) == 0xE0) { len = 3; cp = b0 & 0x0F; min = 0x800; }
  else if ((b0 & 0xF8) == 0xF0) { len = 4; cp = b0 & 0x07; min = 0x10000; }
  else return 0;  // a continuation byte or 0xF8..0xFF cannot start a character
  if (i + static_cast<size_t>(len) > text.size()) return 0;  // truncated
  for (int k = 1; k < len; ++k) {
    unsigned char b = byte(i + static_cast<size_t>(k));
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

long long utf8_first_error(std::string_view text) {
  char32_t cp;
  for (size_t i = 0; i < text.size();) {
    int len = decode_one(text, i, cp);
    if (len == 0) return static_cast<long long>(i);
    i += static_cast<size_t>(len);
  }
  return -1;
}

std::vector<char32_t> utf8_decode(std::string_view text, const std::string& where) {
  std::vector<char32_t> out;
  out.reserve(text.size());
  char32_t cp;
  for (size_t i = 0; i < text.size();) {
    int len = decode_one(text, i, cp);
    if (len == 0) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(text[i]));
      throw DataError(where + ": invalid UTF-8 at byte offset " + std::to_string(i) + " (byte " +
                      hex + "); is this a text file?");
    }
    out.push_back(cp);
    i += static_cast<size_t>(len);
  }
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
  char32_t cp;
  while (i < pending_.size()) {
    int len = decode_one(pending_, i, cp);
    if (len > 0) {
      out.append(pending_, i, static_cast<size_t>(len));
      i += static_cast<size_t>(len);
      continue;
    }
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
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
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
