// cmd_config_doc.cpp: `scratchformer config-doc` prints configs/README.md, generated from the
// field list in train/config.h (so the documentation of every key cannot go stale);
// `config-doc --lang zh` prints its Chinese edition, configs/README.zh.md.
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>

#include "app/commands.h"
#include "autograd/errors.h"
#include "lessons/lesson.h"
#include "train/config.h"

namespace sf {

void add_config_doc_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("config-doc", "print the config reference (configs/README.md) generated from the code");
  auto configs_dir = std::make_shared<std::string>();
  auto lang = std::make_shared<std::string>("en");
  cmd->add_option("--configs", *configs_dir,
                  "folder of ready configs to list with their descriptions (default: configs/ in the working "
                  "folder, else the source tree's)");
  // The default is English whatever SF_LANG says, so `config-doc > configs/README.md` stays English.
  cmd->add_option("--lang", *lang,
                  "the language of the reference: en (configs/README.md, the default) or zh (configs/README.zh.md)");
  cmd->callback([configs_dir, lang] {
    namespace fs = std::filesystem;
    // --lang takes what `lesson --lang` takes (en, zh), and a bad value gets the same error.
    DocLang doc_lang =
        lessons::parse_language(*lang, "config-doc --lang") == lessons::Lang::zh ? DocLang::zh : DocLang::en;
    std::string dir = *configs_dir;
    if (!dir.empty() && !fs::is_directory(dir))
      throw ConfigError("config-doc --configs: " + dir + " is not a folder; give the folder of ready configs " +
                        "(e.g. --configs " + SF_CONFIGS_DIR + ")");
    if (dir.empty()) dir = fs::is_directory("configs") ? "configs" : SF_CONFIGS_DIR;
    if (!fs::is_directory(dir)) {  // (a binary moved away from its source tree)
      std::cerr << "note: no configs folder found (not ./configs, not " << SF_CONFIGS_DIR
                << "): the \"Ready configs\" section is left out; give it with --configs DIR\n";
      dir.clear();
    }
    std::cout << config_doc_markdown(dir, doc_lang);
  });
}

}  // namespace sf
