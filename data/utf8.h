// utf8.h: UTF-8 <-> Unicode code points, strict (no overlong forms, no surrogates, <= U+10FFFF).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace sf::data {

// Decodes `text` into code points. Throws DataError "<where>: invalid UTF-8 at byte offset N ..."
// on the first malformed sequence (bad lead byte, truncated, overlong, surrogate, > U+10FFFF).
std::vector<char32_t> utf8_decode(std::string_view text, const std::string& where = "text");

// Byte offset of the first malformed sequence, or -1 when `text` is valid UTF-8.
long long utf8_first_error(std::string_view text);

// Appends the 1-4 byte UTF-8 form of code point `cp` to `out`.
void utf8_append(char32_t cp, std::string& out);
std::string utf8_encode(const std::vector<char32_t>& cps);

// Bytes in, valid UTF-8 out, for text that arrives in pieces (sampling writes each token as it
// is drawn, and a byte-level BPE token can end in the middle of a character). push() returns the
// complete characters available so far and holds back an incomplete sequence at the end until
// the next bytes complete it; a byte that can start or continue no valid sequence comes out as
// U+FFFD. finish() returns what is still held back, as one U+FFFD, and says whether there was any.
class Utf8Stream {
 public:
  std::string push(std::string_view bytes);
  std::string finish(bool* incomplete_tail = nullptr);

 private:
  std::string pending_;
};

// A code point as people read it in an error message: 'a' (U+0061), or just U+000A for controls.
std::string describe_code_point(char32_t cp);

}  // namespace sf::data
