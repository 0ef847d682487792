// bpe_pretokenize.h: a hand-written approximation of GPT-2's regex pre-split,
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// BPE merges never cross a chunk boundary, so words keep their leading space (" the") and
// punctuation stays apart from letters. Works on bytes: any byte >= 0x80 counts as a letter
// (so UTF-8 letters of every script stay in words), and any byte string is accepted.
#pragma once
#include <string_view>
#include <vector>

namespace sf::data {

// Splits `text` into chunks whose concatenation is exactly `text`.
std::vector<std::string_view> pretokenize_gpt2(std::string_view text);

}  // namespace sf::data
