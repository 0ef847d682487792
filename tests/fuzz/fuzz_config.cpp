// fuzz_config.cpp: the JSON experiment config: load_config (file -> overrides -> structs ->
// validation), then the resolved config written back as JSON and read again.
//
// Input layout: the config file's bytes, then optionally NUL-separated `--set` overrides
// ("<json>\0optim.lr=3e-4\0model.type=x"); JSON text never holds a raw NUL.
#include <nlohmann/json.hpp>

#include "fuzz_common.h"
#include "train/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  size_t nul = in.find('\0');
  std::string_view file = in.substr(0, nul);
  std::vector<std::string> overrides;
  while (nul != std::string_view::npos) {
    size_t next = in.find('\0', nul + 1);
    overrides.emplace_back(in.substr(nul + 1, next == std::string_view::npos ? next : next - nul - 1));
    nul = next;
  }
  const std::string& path = sf::fuzz::scratch_path("config.json");
  sf::fuzz::write_scratch(path, file);
  sf::fuzz::guarded([&] {
    sf::Config c = sf::load_config(path, overrides);
    // A config that passed validation is saved in the run directory: it must serialize, and
    // reading the saved text back must give the same config.
    std::string saved = sf::config_to_json(c).dump(2);
    nlohmann::json again = sf::config_to_json(sf::config_from_json(nlohmann::json::parse(saved)));
    if (again.dump(2) != saved) sf::fuzz::bug("config does not round-trip:\n" + saved + "\nvs\n" + again.dump(2));
    sf::validate_config(sf::config_from_json(nlohmann::json::parse(saved)));
  });
  return 0;
}
