// Lesson 18: looking inside a trained transformer. The lesson trains the default experiment
// (configs/default.json: a character-level GPT on Tiny Shakespeare) and the reverse task
// (configs/reverse.json: an encoder-decoder), exactly as `scratchformer train` would, then looks
// at them with the inspect tools (experiments/inspect.h): every head's role measured on held-out
// text, heat maps of one prompt, and the decoder's cross-attention. Text: inside.md.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>

#include "autograd/errors.h"
#include "data/file_io.h"
#include "data/tiny_shakespeare.h"
#include "data/tokenizer.h"
#include "experiments/checkpoint.h"
#include "experiments/config.h"
#include "experiments/inspect.h"
#include "experiments/task.h"
#include "experiments/train.h"
#include "lessons/lesson.h"
#include "lessons/inside.h"
#include "lessons/common/pictures.h"

namespace fs = std::filesystem;

namespace sf::lessons {

static const char* kPrompt = "ROMEO:\nI love thee, and I love thee not.\n";

// configs/NAME.json with the lesson's overrides, training into `run_dir` (progress on stderr).
// eval_iters 0 keeps the config's own.
static TrainResult train_config(const std::string& name, int64_t steps, bool full_val, int64_t eval_iters,
                                const std::string& run_dir) {
  std::vector<std::string> overrides = {"train.steps=" + std::to_string(steps),
                                        std::string("train.eval_full=") + (full_val ? "true" : "false"),
                                        "schedule.warmup_steps=" + std::to_string(std::min<int64_t>(100, steps / 10)),
                                        "train.eval_interval=" + std::to_string(steps),
                                        "train.samples=0",
                                        "output.run_dir=\"" + run_dir + "\""};
  if (eval_iters > 0) overrides.push_back("train.eval_iters=" + std::to_string(eval_iters));
  Config c = load_config(std::string(SF_SOURCE_DIR) + "/configs/" + name + ".json", overrides);
  TrainOptions o;
  o.out = &std::cerr;
  return train(c, o);
}

// The role a head's numbers say it plays, by the thresholds the text states.
static std::string head_kind(const HeadRole& r, double uniform_entropy, Lang lang) {
  const bool zh = lang == Lang::zh;
  if (r.prev >= 0.5) return zh ? "看前一个字符" : "previous character";
  if (r.first >= 0.5) return zh ? "停在第一个字符" : "rests on the first character";
  if (r.has_same && r.same >= 0.3) return zh ? "找同一字符的早先出现" : "earlier copies of the current character";
  if (r.entropy >= 0.75 * uniform_entropy) return zh ? "宽泛地平均过去" : "broad average over the past";
  return zh ? "混合，随内容而变" : "mixed, depends on content";
}

// Every number the lesson prints, computed once per process (lesson_docs prints it twice).
static const InsideResult& look_inside(const InsideOptions& opt) {
  static std::map<std::string, InsideResult> done;
  const std::string key = std::to_string(opt.gpt_steps) + " " + std::to_string(opt.reverse_steps) + " " +
                          std::to_string(opt.role_windows) + " " + std::to_string(opt.full_val) + " " +
                          std::to_string(opt.eval_iters);
  if (auto it = done.find(key); it != done.end()) return it->second;
  InsideResult r;
  const fs::path tmp = fs::temp_directory_path() / ("scratchformer-lesson15-" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  try {
    // [excerpt: gpt]
    TrainResult trained =
        train_config("default", opt.gpt_steps, opt.full_val, opt.eval_iters, (tmp / "default").string());
    std::string record_path = find_checkpoint((tmp / "default").string(), "best");
    nlohmann::json record = read_checkpoint_record(record_path);
    Config c = config_from_json(record.at("config"));
    auto tokenizer = data::tokenizer_from_json(record.at("tokenizer"), record_path);
    std::unique_ptr<GPT> model = make_gpt(c, tokenizer->vocab_size());
    load_checkpoint_weights(record_path, record, *model);
    // [/excerpt]
    r.gpt_val_loss = opt.full_val ? trained.full.loss : trained.val_loss;
    r.gpt_steps = trained.steps_done;

    // Roles on held-out text: `role_windows` windows of block_size characters from the val split.
    // [excerpt: roles]
    data::ShakespeareOptions so;
    so.download = false;
    std::string text = data::read_text_file(data::ensure_tiny_shakespeare(so));
    std::vector<int32_t> ids = tokenizer->encode(text);
    const size_t T = static_cast<size_t>(c.model.block_size), val_start = ids.size() * 9 / 10;
    const size_t stride = (ids.size() - val_start - T) / static_cast<size_t>(opt.role_windows);
    std::vector<std::vector<HeadRole>> per_window;
    for (int64_t w = 0; w < opt.role_windows; ++w) {
      auto begin = ids.begin() + static_cast<std::ptrdiff_t>(val_start + static_cast<size_t>(w) * stride);
      std::vector<int32_t> window(begin, begin + static_cast<std::ptrdiff_t>(T));
      std::vector<std::string> labels(T, "");
      per_window.push_back(head_roles(attention_maps(*model, window, labels)));
    }
    // [/excerpt]
    r.roles = per_window[0];
    for (size_t h = 0; h < r.roles.size(); ++h) {  // the mean over windows
      HeadRole& m = r.roles[h];
      m.prev = m.first = m.same = m.entropy = 0;
      int64_t with_same = 0;
      for (const auto& roles : per_window) {
        m.prev += roles[h].prev, m.first += roles[h].first, m.entropy += roles[h].entropy;
        if (roles[h].has_same) m.same += roles[h].same, ++with_same;
      }
      const double n = static_cast<double>(per_window.size());
      m.prev /= n, m.first /= n, m.entropy /= n;
      m.has_same = with_same > 0;
      if (with_same) m.same /= static_cast<double>(with_same);
    }
    for (size_t t = 0; t < T; ++t) r.uniform_entropy += std::log(static_cast<double>(t + 1)) / static_cast<double>(T);

    std::vector<int32_t> prompt = tokenizer->encode(kPrompt);
    std::vector<std::string> labels;
    for (int32_t id : prompt) labels.push_back(token_label(tokenizer->decode({id})));
    r.prompt_maps = attention_maps(*model, prompt, labels);

    // The reverse task: cross-attention of the decoder on held-out examples.
    TrainResult rev = train_config("reverse", opt.reverse_steps, true, opt.eval_iters, (tmp / "reverse").string());
    r.reverse_steps = rev.steps_done;
    r.reverse_accuracy = rev.full.accuracy;
    std::string rev_path = find_checkpoint((tmp / "reverse").string(), "best");
    nlohmann::json rev_record = read_checkpoint_record(rev_path);
    Config rc = config_from_json(rev_record.at("config"));
    std::unique_ptr<Task> task = make_task(rc, rev_record.at("tokenizer"));
    restore_checkpoint(rev_path, rev_record, *task, nullptr, nullptr);
    r.cross = cross_attention_report(*task, 64);
  } catch (...) {
    fs::remove_all(tmp);
    throw;
  }
  fs::remove_all(tmp);
  return done[key] = r;
}

InsideResult run_lesson_inside(std::ostream& out, const InsideOptions& opt) {
  const InsideResult& r = look_inside(opt);
  const Lang lang = language(out);

  heading(out, 1, "The default model, trained", "训练好的默认模型");
  out << tr(out, "configs/default.json (4 layers x 4 heads, 128 wide, block 64) trained for ",
            "configs/default.json（4 层 x 4 个头，宽 128，块长 64）训练了 ")
      << r.gpt_steps << tr(out, " steps\n", " 步\n") << tr(out, "full val loss: ", "完整验证集损失：")
      << fmt(r.gpt_val_loss, 2) << "\n";

  heading(out, 2, "What each head does, measured", "每个头在做什么：测出来的");
  out << tr(out, "mean over ", "在验证集的 ") << opt.role_windows
      << tr(out, " windows of 64 val characters (uniform attention would have entropy ",
            " 个 64 字符窗口上取平均（均匀注意力的熵为 ")
      << fmt(r.uniform_entropy, 3) << tr(out, " nats):\n", " 奈特）：\n") << format_head_roles(r.roles);
  out << tr(out, "reading the table (prev >= 0.5, first >= 0.5, same >= 0.3, entropy >= 0.75 x uniform):\n",
            "按表读出（prev >= 0.5、first >= 0.5、same >= 0.3、熵 >= 0.75 x 均匀）：\n");
  for (const HeadRole& h : r.roles)
    out << "  " << tr(out, "layer ", "第 ") << h.layer << tr(out, " head ", " 层 头 ") << h.head << ": "
        << head_kind(h, r.uniform_entropy, lang) << "\n";

  heading(out, 3, "Heat maps over one prompt", "一个提示上的热图");
  out << tr(out, "prompt: ", "提示：") << token_label(kPrompt) << " (" << r.prompt_maps.length()
      << tr(out, " characters)\n", " 个字符）\n");
  for (int64_t l = 0; l < r.prompt_maps.layers(); ++l)
    draw_attention(out, "15_default_layer" + std::to_string(l) + ".png", r.prompt_maps, l, "default model");

  heading(out, 4, "Cross-attention of the reverse model", "反转模型的交叉注意力");
  out << tr(out, "configs/reverse.json trained for ", "configs/reverse.json 训练了 ") << r.reverse_steps
      << tr(out, " steps; exact-match accuracy on held-out sequences: ", " 步；留出序列上的完全正确率：")
      << fmt(r.reverse_accuracy, 3) << "\n"
      << tr(out, "share of cross-attention on the mirrored source position (", "交叉注意力落在镜像源位置上的比例（")
      << r.cross.examples << tr(out, " held-out examples):\n", " 个留出样例）：\n");
  for (size_t l = 0; l < r.cross.aligned_share.size(); ++l)
    out << "  " << tr(out, "decoder layer ", "解码器第 ") << l << tr(out, ": ", " 层：")
        << fmt(r.cross.aligned_share[l], 3) << "\n";
  out << tr(out, "first example: ", "第一个样例：") << r.cross.first.length()
      << tr(out, " output tokens over ", " 个输出词元对 ") << r.cross.first.key_length()
      << tr(out, " source tokens\n", " 个源词元\n");
  for (int64_t l = 0; l < r.cross.first.layers(); ++l)
    draw_attention(out, "15_reverse_layer" + std::to_string(l) + ".png", r.cross.first, l,
                   "reverse model, cross-attention");
  return r;
}

InsideResult run_lesson_inside(std::ostream& out) { return run_lesson_inside(out, InsideOptions{}); }

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_inside() {
  return {"inside", "Looking inside a trained transformer: head roles, heat maps, cross-attention",
          "看进训练好的 transformer：注意力头的分工、热图、交叉注意力",
          printing([](std::ostream& out) { return run_lesson_inside(out); }),
          /*slow=*/true};
}

}  // namespace sf::lessons
