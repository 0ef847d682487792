// tokenize_zh.h: what lesson tokenize_zh returns, the key numbers it prints, so tests/lessons/ can
// assert them (the lesson itself: tokenize_zh.cpp).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace sf::lessons {

// Tokenizing Chinese: 我喜欢苹果 and the Tang poems as characters, bytes and BPE tokens.
struct TokenizeZhResult {
  std::vector<std::string> sentence_chars;    // 我 喜 欢 苹 果
  int64_t sentence_bytes = 0;                 // 15
  int64_t tang_chars = 0, tang_bytes = 0;     // the tang300 poems
  int64_t char_vocab = 0;                     // distinct characters in them
  std::vector<int64_t> sentence_counts;       // how often 我 喜 欢 苹 果 occur in the poems
  int64_t word_count = 0;                     // ... and the word 喜欢
  int64_t comma_count = 0, period_count = 0;  // ， and 。
  int64_t song_unknown = 0;                   // characters of the song100 poems not in that vocabulary
  std::vector<std::string> first_merges;      // the bytes of the first 12 merged tokens
  int32_t first_char_rank = -1;               // the first merge that makes a whole CJK ideograph
  int32_t first_word_rank = -1;               // ... and one of two or more ideographs
  std::string first_char, first_word;
  std::vector<int64_t> vocab_sizes;  // 256 512 1024 2048 4096
  std::vector<double> tang_tokens_per_char, song_tokens_per_char;
  std::vector<int64_t> sentence_tokens;  // 我喜欢苹果 at each vocabulary size
  double char_tokens_per_char = 1.0;
  std::vector<int64_t> embedding_params;  // V * 384, for each vocab and then the characters
  std::vector<double> chars_in_context;   // characters that 256 tokens hold
  double bytes_vs_chars_length = 0;       // tokens per character with bytes alone
};
TokenizeZhResult run_lesson_tokenize_zh(std::ostream& out);

}  // namespace sf::lessons
