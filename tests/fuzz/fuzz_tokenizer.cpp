// fuzz_tokenizer.cpp: tokenizer.json files (char and byte-level BPE), as saved with every run:
// load_tokenizer, then the loaded tokenizer used on text, saved and compared with itself.
//
// Input layout: the tokenizer file's bytes, then optionally a NUL and a text to encode.
#include "data/tokenizer.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  size_t nul = in.find('\0');
  std::string_view file = in.substr(0, nul);
  std::string_view text = nul == std::string_view::npos ? std::string_view("hello, world") : in.substr(nul + 1);
  const std::string& path = sf::fuzz::scratch_path("tokenizer.json");
  sf::fuzz::write_scratch(path, file);
  std::unique_ptr<sf::data::Tokenizer> tok;
  sf::fuzz::guarded([&] { tok = sf::data::load_tokenizer(path); });
  if (!tok) return 0;

  // A loaded tokenizer must describe itself, fingerprint itself and equal itself.
  nlohmann::json j;
  sf::fuzz::guarded([&] {
    j = tok->to_json();
    (void)tok->hash();
    sf::data::check_same_tokenizer(*tok, j, "self");
  });
  if (tok->vocab_size() < 1) sf::fuzz::bug("loaded tokenizer has an empty vocabulary");

  // Encoding may refuse text (unknown characters, invalid UTF-8) with a DataError; what it
  // accepts must decode back exactly (the char tokenizer without <unk>, and BPE on any bytes).
  sf::fuzz::guarded([&] {
    std::vector<int32_t> ids = tok->encode(text);
    for (int32_t id : ids)
      if (id < 0 || id >= tok->vocab_size()) sf::fuzz::bug("encode produced an id outside the vocabulary");
    std::string back = tok->decode(ids);
    bool has_unk = j.contains("unk") && j["unk"] == true;
    if (!has_unk && back != text) sf::fuzz::bug("decode(encode(text)) != text");
  });
  // Every id decodes; one past the end is a DataError.
  sf::fuzz::guarded([&] {
    for (int32_t id = 0; id < tok->vocab_size() && id < 4096; ++id) (void)tok->decode({id});
  });
  sf::fuzz::guarded([&] {
    (void)tok->decode({tok->vocab_size()});
    sf::fuzz::bug("decode accepted id == vocab_size");
  });
  return 0;
}
