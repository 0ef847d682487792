// fuzz_token_cache.cpp: the binary token cache next to a text file (data/token_cache.h).
// Whatever the cache file holds, encode_with_cache must return ids in the vocabulary: the cached
// ones when the file is valid, else the text's own encoding (and then a cache that reads back).
//
// Input layout: one control byte, then the cache file's bytes. When the control byte is odd, the
// harness writes the true tokenizer fingerprint and text digest into the header (bytes 16..47),
// so the fuzzer gets past those two checks to the length and id checks behind them.
#include <cstring>

#include "data/char_tokenizer.h"
#include "data/sha256.h"
#include "data/token_cache.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const std::string text = "to be, or not to be: that is the question.\n";
  static const auto tok = sf::data::CharTokenizer::build(text);
  static const std::vector<int32_t> expected = tok.encode(text);
  std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  if ((data[0] & 1) && bytes.size() >= 48) {
    sf::data::Sha256 h;
    h.update(text);
    auto digest = h.digest();
    std::memcpy(bytes.data() + 16, tok.hash().data(), 16);
    std::memcpy(bytes.data() + 32, digest.data(), 16);
  }
  const std::string& path = sf::fuzz::scratch_path("tokens.bin");
  sf::fuzz::write_scratch(path, bytes);
  sf::fuzz::guarded([&] {
    sf::data::CachedTokens got = sf::data::encode_with_cache(text, tok, path);
    for (int32_t id : got.ids)
      if (id < 0 || id >= tok.vocab_size()) sf::fuzz::bug("cache returned an id outside the vocabulary");
    if (!got.from_cache && got.ids != expected) sf::fuzz::bug("rebuilt ids differ from encode(text)");
    if (got.note.find('\n') != std::string::npos) sf::fuzz::bug("note spans lines");
    if (!got.from_cache) {  // it rewrote the cache: that one must be valid and equal
      sf::data::CachedTokens again = sf::data::encode_with_cache(text, tok, path);
      if (!again.from_cache || again.ids != expected) sf::fuzz::bug("rewritten cache does not read back");
    }
  });
  return 0;
}
