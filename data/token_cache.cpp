// token_cache.cpp: the binary token cache (format in token_cache.h).
#include "data/token_cache.h"

#include <cstring>

#include "autograd/errors.h"
#include "data/file_io.h"
#include "data/sha256.h"

namespace sf::data {

static constexpr char kMagic[8] = {'S', 'F', 'T', 'O', 'K', 'E', 'N', 'S'};
static constexpr uint32_t kVersion = 1;
static constexpr size_t kHeader = 64;

static void put_u32(std::string& s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + i] = static_cast<char>(v >> (8 * i));
}
static void put_u64(std::string& s, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) s[at + i] = static_cast<char>(v >> (8 * i));
}
static uint64_t get_le(const std::string& s, size_t at, int nbytes) {
  uint64_t v = 0;
  for (int i = 0; i < nbytes; ++i) v |= uint64_t(static_cast<unsigned char>(s[at + i])) << (8 * i);
  return v;
}

std::string cache_problem(const std::string& bytes, const std::string& text_sha, const Tokenizer& tok) {
  if (bytes.size() < kHeader) return "file is shorter than its 64-byte header";
  if (std::memcmp(bytes.data(), kMagic, 8) != 0) return "not a token cache (bad magic)";
  if (get_le(bytes, 8, 4) != kVersion) return "format version " + std::to_string(get_le(bytes, 8, 4));
  if (get_le(bytes, 12, 4) != 4) return "unexpected id size";
  if (bytes.compare(16, 16, tok.hash()) != 0) return "made with a different tokenizer";
  if (bytes.compare(32, 16, text_sha.substr(0, 16)) != 0) return "the text has changed";
  uint64_t n = get_le(bytes, 48, 8);
  if (n > (bytes.size() - kHeader) / 4 || bytes.size() != kHeader + 4 * n)
    return "truncated or padded (header says " + std::to_string(n) + " ids)";
  uint64_t vocab = static_cast<uint64_t>(tok.vocab_size());
  for (uint64_t i = 0; i < n; ++i)
    if (get_le(bytes, kHeader + 4 * i, 4) >= vocab) return "id out of range at " + std::to_string(i);
  return "";
}

CachedTokens encode_with_cache(const std::string& text, const Tokenizer& tok, const std::filesystem::path& cache_path) {
  CachedTokens out;
  if (cache_path.empty()) {
    out.ids = tok.encode(text);
    return out;
  }
  // Raw digest bytes of the text: the cache must have been made from exactly this text.
  Sha256 h;
  h.update(text);
  auto digest = h.digest();
  std::string text_sha(reinterpret_cast<const char*>(digest.data()), digest.size());

  std::string why = "no cache yet";
  std::error_code ec;
  if (std::filesystem::exists(cache_path, ec)) {
    std::string bytes = read_file_bytes(cache_path);
    why = cache_problem(bytes, text_sha, tok);
    if (why.empty()) {
      uint64_t n = get_le(bytes, 48, 8);
      out.ids.resize(n);
      for (uint64_t i = 0; i < n; ++i) out.ids[i] = static_cast<int32_t>(get_le(bytes, kHeader + 4 * i, 4));
      out.from_cache = true;
      out.note = "read " + std::to_string(n) + " token ids from " + cache_path.string();
      return out;
    }
  }
  out.ids = tok.encode(text);
  std::string bytes(kHeader + 4 * out.ids.size(), '\0');
  std::memcpy(bytes.data(), kMagic, 8);
  put_u32(bytes, 8, kVersion);
  put_u32(bytes, 12, 4);
  std::string fingerprint = tok.hash();
  std::memcpy(bytes.data() + 16, fingerprint.data(), 16);
  std::memcpy(bytes.data() + 32, text_sha.data(), 16);
  put_u64(bytes, 48, out.ids.size());
  for (size_t i = 0; i < out.ids.size(); ++i) put_u32(bytes, kHeader + 4 * i, static_cast<uint32_t>(out.ids[i]));
  try {
    write_file_atomic(cache_path, bytes);
    out.note = "wrote token cache " + cache_path.string() + " (" + why + ")";
  } catch (const DataError& e) { out.note = std::string("token cache not written: ") + e.what(); }
  return out;
}

}  // namespace sf::data
