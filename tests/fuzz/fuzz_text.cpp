// fuzz_text.cpp: a training text file: the UTF-8 decoder, the text checks (empty, binary,
// invalid UTF-8), the char tokenizer built from it and, on short texts, BPE training.
#include "data/bpe_tokenizer.h"
#include "data/char_tokenizer.h"
#include "data/file_io.h"
#include "data/utf8.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);

  // The decoder and the error locator agree, and valid text re-encodes to the same bytes.
  long long first_error = sf::data::utf8_first_error(text);
  bool decoded = false;
  sf::fuzz::guarded([&] {
    std::vector<char32_t> cps = sf::data::utf8_decode(text, "fuzz.txt");
    decoded = true;
    if (sf::data::utf8_encode(cps) != text) sf::fuzz::bug("utf8_encode(utf8_decode(x)) != x");
    for (char32_t c : cps) (void)sf::data::describe_code_point(c);
  });
  if (decoded != (first_error < 0)) sf::fuzz::bug("utf8_decode and utf8_first_error disagree");
  if (first_error >= static_cast<long long>(size)) sf::fuzz::bug("utf8_first_error past the end");

  // The file reader: refuses with a DataError or returns the bytes unchanged.
  const std::string& path = sf::fuzz::scratch_path("text.txt");
  sf::fuzz::write_scratch(path, text);
  bool readable = false;
  sf::fuzz::guarded([&] {
    std::string got = sf::data::read_text_file(path);
    readable = true;
    if (got != text) sf::fuzz::bug("read_text_file changed the bytes");
  });
  if (!readable) return 0;

  // A char vocabulary built from the text encodes it and decodes it back.
  sf::fuzz::guarded([&] {
    auto tok = sf::data::CharTokenizer::build(text, false, "fuzz.txt");
    if (tok.decode(tok.encode(text)) != text) sf::fuzz::bug("char tokenizer round trip failed");
    auto again = sf::data::CharTokenizer::from_json(tok.to_json(), "saved");
    if (again.to_json() != tok.to_json()) sf::fuzz::bug("char tokenizer JSON round trip failed");
  });
  // BPE learned from a short text: exact round trip on the text itself, and JSON round trip.
  if (size <= 512) {
    sf::fuzz::guarded([&] {
      auto bpe = sf::data::BpeTokenizer::train(text, 256 + 32, size % 2 == 0);
      if (bpe.decode(bpe.encode(text)) != text) sf::fuzz::bug("BPE round trip failed");
      auto again = sf::data::BpeTokenizer::from_json(bpe.to_json(), "saved");
      if (again.encode(text) != bpe.encode(text)) sf::fuzz::bug("BPE JSON round trip changed the encoding");
    });
  }
  return 0;
}
