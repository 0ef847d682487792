// cmd_inspect.cpp: `scratchformer inspect RUN --prompt TEXT [--out DIR]`: a trained GPT's
// attention over the prompt, printed, drawn (one PNG per layer) and as an HTML page, with the
// measured role of every head (see train/inspect.h).
#include <filesystem>
#include <cstdio>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "app/commands.h"
#include "autograd/errors.h"
#include "data/tokenizer.h"
#include "train/atomic_file.h"
#include "train/config.h"
#include "train/inspect.h"
#include "train/saved_run.h"
#include "train/task.h"

namespace sf {

namespace {
struct InspectArgs {
  std::string run, prompt, out;
  bool quiet = false;
};
}  // namespace

void add_inspect_command(CLI::App& app) {
  auto a = std::make_shared<InspectArgs>();
  auto* cmd = app.add_subcommand("inspect",
                                 "a trained GPT's attention over a prompt: printed, as heat maps "
                                 "(PNG per layer) and an HTML page, with each head's measured role");
  cmd->add_option("run", a->run, "a run directory or a checkpoint .json")->required();
  cmd->add_option("--prompt", a->prompt, "the text to look at (at most block_size tokens); GPT runs only");
  cmd->add_option("--out", a->out, "where the images and the page go (default RUN/inspect)");
  cmd->add_flag("--quiet", a->quiet, "print only the head-role table, not every head's matrix");
  cmd->callback([a] {
    namespace fs = std::filesystem;
    SavedRun run = open_saved_run(a->run);
    const Config& c = run.config;
    const std::string& record_path = run.record_path;
    AttentionMaps maps;
    std::string report;  // printed after the maps
    std::string title;   // of the HTML page
    if (is_seq2seq_dataset(c.data.dataset)) {
      // Encoder-decoder: the decoder's cross-attention on held-out examples (generated from the
      // config, so the run folder is all it needs), and where it looks.
      if (!a->prompt.empty())
        throw ConfigError("--prompt: " + a->run +
                          " is an encoder-decoder run; it is inspected on its held-out examples");
      std::unique_ptr<Task> task = load_saved_task(run);
      CrossAttentionReport r = cross_attention_report(*task, 64);
      maps = r.first;
      title = "cross-attention of " + a->run + " on its first held-out example";
      std::ostringstream text;
      text << "cross-attention (decoder queries, encoder keys) of the first held-out example is drawn below.\n";
      if (r.alignment.empty()) {
        text << "task \"" << option_name(c.data.dataset)
             << "\": no fixed source position per output token, so no alignment share\n";
      } else {
        text << "share of cross-attention on the " << r.alignment << " source position (mean over heads, " << r.examples
             << " held-out examples, " << r.positions << " output tokens):\n";
        for (size_t l = 0; l < r.aligned_share.size(); ++l) {
          char line[64];
          std::snprintf(line, sizeof line, "  decoder layer %zu: %.3f\n", l, r.aligned_share[l]);
          text << line;
        }
      }
      report = text.str();
    } else {
      if (a->prompt.empty()) throw ConfigError("--prompt: give the text to look at, e.g. --prompt \"ROMEO:\"");
      SavedGPT saved = load_saved_gpt(run, "inspect");
      GPT* model = saved.model.get();
      data::Tokenizer* tokenizer = saved.tokenizer.get();
      std::vector<int32_t> ids = encode_prompt(*tokenizer, a->prompt, a->run);
      std::vector<std::string> labels;
      for (int32_t id : ids) labels.push_back(token_label(tokenizer->decode({id})));
      maps = attention_maps(*model, ids, labels);
      title = "attention of " + a->run + " over \"" + a->prompt + "\"";
      report =
          "head roles (mean attention on the previous token, the first token, earlier copies of the "
          "current token; row entropy in nats):\n" +
          format_head_roles(head_roles(maps));
    }

    // RUN/inspect by default (a checkpoint record lives in RUN/checkpoints/).
    fs::path run_dir = fs::is_directory(a->run) ? fs::path(a->run) : fs::path(a->run).parent_path().parent_path();
    fs::path out = a->out.empty() ? run_dir / "inspect" : fs::path(a->out);
    fs::create_directories(out);
    std::cout << record_path << " (step " << run.record["step"].get<int64_t>() << "): " << maps.length() << " tokens, "
              << maps.layers() << " layers x " << maps.heads() << " heads\n\n";
    if (!a->quiet)
      for (int64_t l = 0; l < maps.layers(); ++l)
        for (int64_t h = 0; h < maps.heads(); ++h) std::cout << format_attention(maps, l, h) << "\n";
    std::cout << report << "\n";
    for (int64_t l = 0; l < maps.layers(); ++l) {
      std::string png = (out / ("attention_layer" + std::to_string(l) + ".png")).string();
      std::string note = draw_attention_png(maps, l, png, fs::path(a->run).filename().string());
      std::cout << (note.empty() ? png : note) << "\n";
    }
    atomic_write_file((out / "attention.json").string(), attention_json(maps) + "\n");
    atomic_write_file((out / "attention.html").string(), attention_html(maps, title));
    std::cout << (out / "attention.html").string() << " (open it in a browser: choose a layer, hover a token)\n";
  });
}

}  // namespace sf
