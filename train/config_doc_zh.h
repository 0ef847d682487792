// config_doc_zh.h: the Chinese edition of the config reference, configs/README.zh.md
// (`scratchformer config-doc --lang zh`; config_doc_markdown in config.h writes both editions).
//
// The English texts live beside what they describe: each key's line in config.h, each ready
// config's "description" in its JSON file. The Chinese edition gives each of them its own text,
// keyed by the same name; the keys, types and defaults of its tables come from the same structs.
// tests/train/test_config.cpp fails when a section, key or ready config has no Chinese text, when a
// text names one that no longer exists, and when a Chinese text's numbers differ from the English.
#pragma once
#include <map>
#include <string>

namespace sf {

// One edition of the config reference: the words around its tables, and the texts of the
// sections, keys and ready configs, each keyed by its name.
struct ConfigDocTexts {
  std::string intro;                            // from the top of the file to the first section
  std::string key_table;                        // the header of each section's table of keys
  std::string ready_table;                      // the heading and the header of the ready configs' table
  std::map<std::string, std::string> sections;  // "model" -> what the section holds
  std::map<std::string, std::string> fields;    // "model.n_layer" -> what the key does
  std::map<std::string, std::string> configs;   // "default.json" -> what it trains
};

// The Chinese edition (config_doc_zh.cpp).
const ConfigDocTexts& config_doc_zh();

}  // namespace sf
