// Lesson 18: looking inside a trained transformer. The lesson trains the default experiment
// (configs/default.json: a character-level GPT on Tiny Shakespeare) and the reverse task
// (configs/reverse.json: an encoder-decoder), exactly as `scratchformer train` would, then looks
// at them with the inspect tools (train/inspect.h): the default GPT is trained from two
// seeds and every head scored (train/head_scores.h: previous-token and word-start on
// held-out text, induction on repeated random characters), heat maps of one prompt and of one
// repeated sequence, and the decoder's cross-attention. Text: inside.md.
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
#include "train/head_scores.h"
#include "lessons/lesson.h"
#include "lessons/inside.h"
#include "lessons/common/pictures.h"
#include "train/checkpoint.h"
#include "train/config.h"
#include "train/inspect.h"
#include "train/task.h"
#include "train/train.h"

namespace fs = std::filesystem;

namespace sf::lessons {

static const char* kPrompt = "ROMEO:\nI love thee, and I love thee not.\n";

// configs/NAME.json with the lesson's overrides, training into `run_dir` (progress on stderr).
// eval_iters 0 keeps the config's own.
static TrainResult train_config(const std::string& name, int64_t steps, bool full_val, int64_t eval_iters,
                                const std::string& run_dir, int64_t seed = 0) {
  std::vector<std::string> overrides = {"train.steps=" + std::to_string(steps),
                                        std::string("train.eval_full=") + (full_val ? "true" : "false"),
                                        "schedule.warmup_steps=" + std::to_string(std::min<int64_t>(100, steps / 10)),
                                        "train.eval_interval=" + std::to_string(steps),
                                        "train.samples=0",
                                        "output.run_dir=\"" + run_dir + "\""};
  if (eval_iters > 0) overrides.push_back("train.eval_iters=" + std::to_string(eval_iters));
  if (seed > 0) overrides.push_back("train.seed=" + std::to_string(seed));
  Config c = load_config(std::string(SF_SOURCE_DIR) + "/configs/" + name + ".json", overrides);
  TrainOptions o;
  o.out = &std::cerr;
  return train(c, o);
}

// [excerpt: scores]
std::vector<HeadScore> score_heads(GPT& model, const data::Tokenizer& tokenizer, const std::vector<int32_t>& val,
                                   int64_t windows, int64_t sequences, HeadScoreBaselines* baselines) {
  const int64_t T = model.config().block_size, period = T / 2;
  if (windows < 1 || sequences < 1 || static_cast<int64_t>(val.size()) < T + windows)
    throw ConfigError("score_heads: needs at least one window and one sequence, and a val split longer than " +
                      std::to_string(T + windows) + " tokens");
  std::vector<HeadScore> scores;
  double even_word_start = 0;
  auto add = [&](const AttentionMaps& m, auto score_of) {  // adds one input's scores to every head
    if (scores.empty())
      for (int64_t l = 0; l < m.layers(); ++l)
        for (int64_t h = 0; h < m.heads(); ++h) scores.push_back({l, h, 0, 0, 0});
    for (HeadScore& s : scores) score_of(s, m.weights[static_cast<size_t>(s.layer)][static_cast<size_t>(s.head)]);
  };
  // Previous-token and word-start scores on windows of held-out text, spread over the val split.
  const size_t stride = (val.size() - static_cast<size_t>(T)) / static_cast<size_t>(windows);
  for (int64_t w = 0; w < windows; ++w) {
    auto begin = val.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(w) * stride);
    std::vector<int32_t> ids(begin, begin + T);
    std::vector<std::string> characters;
    for (int32_t id : ids) characters.push_back(tokenizer.decode({id}));
    const std::vector<bool> starts = word_starts(characters);
    even_word_start += word_start_baseline(starts) / static_cast<double>(windows);
    add(attention_maps(model, ids, std::vector<std::string>(ids.size())), [&](HeadScore& s, const AttentionMatrix& a) {
      s.prev += previous_token_score(a) / static_cast<double>(windows);
      s.word_start += word_start_score(a, starts) / static_cast<double>(windows);
    });
  }
  // Induction: `period` random tokens, then the same again; seeds 1, 2, ... (the same for every model).
  for (int64_t i = 0; i < sequences; ++i) {
    std::vector<int32_t> ids = repeated_random_tokens(period, tokenizer.vocab_size(), static_cast<uint64_t>(i + 1));
    add(attention_maps(model, ids, std::vector<std::string>(ids.size())), [&](HeadScore& s, const AttentionMatrix& a) {
      s.induction += induction_score(a, period) / static_cast<double>(sequences);
    });
  }
  if (baselines) *baselines = {previous_token_baseline(T), induction_baseline(period), even_word_start};
  return scores;
}
// [/excerpt]

std::string heads_over_thresholds(std::ostream& out, const std::vector<HeadScore>& scores,
                                  const HeadScoreBaselines& even, int64_t only_layer) {
  const double word_start_threshold = kWordStartFactor * even.word_start;
  std::string prev, induction, word_start;
  auto add = [](std::string& line, const HeadScore& s, double score) {
    line += (line.empty() ? "" : ", ") + std::to_string(s.layer) + "." + std::to_string(s.head) + " (" + fmt(score, 2) +
            ")";
  };
  for (const HeadScore& s : scores) {
    if (only_layer >= 0 && s.layer != only_layer) continue;
    if (s.prev >= kPreviousTokenThreshold) add(prev, s, s.prev);
    if (s.induction >= kInductionThreshold) add(induction, s, s.induction);
    if (s.word_start >= word_start_threshold) add(word_start, s, s.word_start);
  }
  (void)out;  // the score names are the same in both languages
  return "  prev: " + (prev.empty() ? std::string("-") : prev) +
         "\n  induction: " + (induction.empty() ? std::string("-") : induction) +
         "\n  word-start: " + (word_start.empty() ? std::string("-") : word_start) + "\n";
}

// The two header lines of a score table: the three scores, a column per seed under each.
std::string score_table_header(const std::vector<int64_t>& seeds) {
  const int width = 7 * static_cast<int>(seeds.size());
  char line[160];
  std::snprintf(line, sizeof line, "          %*s%*s%*s\nlayer head", width, "prev", width + 2, "induction", width + 2,
                "word-start");
  std::string out = line;
  for (int score = 0; score < 3; ++score) {
    if (score > 0) out += "  ";
    for (int64_t seed : seeds) {
      std::snprintf(line, sizeof line, "%7lld", static_cast<long long>(seed));
      out += line;
    }
  }
  return out + "\n";
}

// One row of a score table: layer, head, then each score for each seed.
std::string score_table_row(const std::vector<std::vector<HeadScore>>& per_seed, size_t h) {
  char line[32];
  std::snprintf(line, sizeof line, "%5lld %4lld", static_cast<long long>(per_seed[0][h].layer),
                static_cast<long long>(per_seed[0][h].head));
  std::string out = line;
  for (int score = 0; score < 3; ++score) {
    if (score > 0) out += "  ";
    for (const auto& scores : per_seed) {
      const HeadScore& s = scores[h];
      std::snprintf(line, sizeof line, "  %5.3f", score == 0 ? s.prev : score == 1 ? s.induction : s.word_start);
      out += line;
    }
  }
  return out + "\n";
}

// The val split of Tiny Shakespeare in the model's characters (the last 10%, as training splits it).
static std::vector<int32_t> shakespeare_val(const data::Tokenizer& tokenizer) {
  data::ShakespeareOptions so;
  so.download = false;
  std::vector<int32_t> ids = tokenizer.encode(data::read_text_file(data::ensure_tiny_shakespeare(so)));
  return std::vector<int32_t>(ids.begin() + static_cast<std::ptrdiff_t>(ids.size() * 9 / 10), ids.end());
}

// Every number the lesson prints, computed once per process (lesson_docs prints it twice).
static const InsideResult& look_inside(const InsideOptions& opt) {
  static std::map<std::string, InsideResult> done;
  std::string key = std::to_string(opt.gpt_steps) + " " + std::to_string(opt.reverse_steps) + " " +
                    std::to_string(opt.role_windows) + " " + std::to_string(opt.induction_sequences) + " " +
                    std::to_string(opt.full_val) + " " + std::to_string(opt.eval_iters);
  for (int64_t seed : opt.seeds) key += " " + std::to_string(seed);
  if (auto it = done.find(key); it != done.end()) return it->second;
  if (opt.seeds.empty()) throw ConfigError("lesson inside: at least one seed is needed");
  InsideResult r;
  const fs::path tmp = fs::temp_directory_path() / ("scratchformer-lesson15-" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  try {
    for (size_t i = 0; i < opt.seeds.size(); ++i) {
      const std::string dir = (tmp / ("default-" + std::to_string(opt.seeds[i]))).string();
      // [excerpt: gpt]
      TrainResult trained = train_config("default", opt.gpt_steps, opt.full_val, opt.eval_iters, dir, opt.seeds[i]);
      std::string record_path = find_checkpoint(dir, "best");
      nlohmann::json record = read_checkpoint_record(record_path);
      Config c = config_from_json(record.at("config"));
      auto tokenizer = data::tokenizer_from_json(record.at("tokenizer"), record_path);
      std::unique_ptr<GPT> model = make_gpt(c, tokenizer->vocab_size());
      load_checkpoint_weights(record_path, record, *model);
      // [/excerpt]
      r.gpt_val_loss.push_back(opt.full_val ? trained.full.loss : trained.val_loss);
      r.gpt_steps = trained.steps_done;
      r.block_size = c.model.block_size;
      r.scores.push_back(score_heads(*model, *tokenizer, shakespeare_val(*tokenizer), opt.role_windows,
                                     opt.induction_sequences, &r.even));
      if (i > 0) continue;
      // The first seed's model over the prompt, and over the repeated sequence of seed 1 at the
      // layer of its strongest induction head.
      std::vector<int32_t> prompt = tokenizer->encode(kPrompt);
      std::vector<std::string> labels;
      for (int32_t id : prompt) labels.push_back(token_label(tokenizer->decode({id})));
      r.prompt_maps = attention_maps(*model, prompt, labels);
      const HeadScore* best = &r.scores[0][0];
      for (const HeadScore& s : r.scores[0])
        if (s.induction > best->induction) best = &s;
      r.induction_layer = best->layer;
      std::vector<int32_t> repeated = repeated_random_tokens(c.model.block_size / 2, tokenizer->vocab_size(), 1);
      labels.clear();
      for (int32_t id : repeated) labels.push_back(token_label(tokenizer->decode({id})));
      r.induction_maps = attention_maps(*model, repeated, labels);
    }

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
  const size_t n_seeds = opt.seeds.size();

  heading(out, 1, "The default model, trained from two seeds", "从两个种子训练的默认模型");
  out << tr(out, "configs/default.json (4 layers x 4 heads, 128 wide, block 64) trained for ",
            "configs/default.json（4 层 x 4 个头，宽 128，上下文长度 64）训练了 ")
      << r.gpt_steps << tr(out, " steps from each seed\n", " 步，每个种子一次\n");
  for (size_t i = 0; i < n_seeds; ++i)
    out << tr(out, "  seed ", "  种子 ") << opt.seeds[i] << tr(out, ": full val loss ", "：整个验证集上的验证损失 ")
        << fmt(r.gpt_val_loss[i], 2) << "\n";

  heading(out, 2, "Three scores per head", "每个头的三个分数");
  const int64_t T = r.block_size;
  out << tr(out, "prev and word-start: mean over ", "prev 和 word-start：在验证集的 ") << opt.role_windows
      << tr(out, " windows of ", " 个 ") << T << tr(out, " val characters\n", " 字符窗口上取平均\n")
      << tr(out, "induction: mean over ", "induction：在 ") << opt.induction_sequences
      << tr(out, " sequences of ", " 个序列上取平均，每个是 ") << T / 2
      << tr(out, " random characters repeated once\n", " 个随机字符再重复一遍\n") << score_table_header(opt.seeds);
  for (size_t h = 0; h < r.scores[0].size(); ++h) out << score_table_row(r.scores, h);
  out << tr(out, "even attention over the past scores: prev ", "对过去平均分配的注意力得分：prev ")
      << fmt(r.even.prev, 3) << tr(out, ", induction ", "，induction ") << fmt(r.even.induction, 3)
      << tr(out, ", word-start ", "，word-start ") << fmt(r.even.word_start, 3) << "\n"
      << tr(out, "thresholds: prev >= ", "阈值：prev >= ") << fmt(kPreviousTokenThreshold, 2)
      << tr(out, ", induction >= ", "，induction >= ") << fmt(kInductionThreshold, 2)
      << tr(out, ", word-start >= 2 x ", "，word-start >= 2 x ") << fmt(r.even.word_start, 3) << " = "
      << fmt(kWordStartFactor * r.even.word_start, 2) << "\n";
  for (size_t i = 0; i < n_seeds; ++i)
    out << tr(out, "heads at or over a threshold, seed ", "达到阈值的头，种子 ") << opt.seeds[i]
        << tr(out, " (layer.head):\n", "（层.头）：\n") << heads_over_thresholds(out, r.scores[i], r.even);

  heading(out, 3, "Heat maps over one prompt", "一个提示上的热图");
  out << tr(out, "prompt: ", "提示：") << token_label(kPrompt) << tr(out, " (", "（") << r.prompt_maps.length()
      << tr(out, " characters), the model of seed ", " 个字符），种子 ") << opt.seeds[0] << tr(out, "\n", " 的模型\n");
  for (int64_t l = 0; l < r.prompt_maps.layers(); ++l) {
    draw_attention(out, "inside_default_layer" + std::to_string(l) + ".png", r.prompt_maps, l, "default model");
    out << tr(out, "layer ", "第 ") << l << tr(out, "'s heads at or over a threshold:\n", " 层达到阈值的头：\n")
        << heads_over_thresholds(out, r.scores[0], r.even, l);
  }

  heading(out, 4, "Repeated random characters", "重复的随机字符");
  out << tr(out, "the model of seed ", "种子 ") << opt.seeds[0] << tr(out, " over ", " 的模型，看 ") << r.block_size / 2
      << tr(out, " random characters repeated once; layer ", " 个随机字符再重复一遍；第 ") << r.induction_layer
      << tr(out, " holds its highest induction score\n", " 层有它最高的归纳分数\n");
  draw_attention(out, "inside_induction.png", r.induction_maps, r.induction_layer,
                 "default model, repeated random characters");

  heading(out, 5, "Cross-attention of the reverse model", "反转模型的交叉注意力");
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
    draw_attention(out, "inside_reverse_layer" + std::to_string(l) + ".png", r.cross.first, l,
                   "reverse model, cross-attention");
  return r;
}

InsideResult run_lesson_inside(std::ostream& out) { return run_lesson_inside(out, InsideOptions{}); }

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_inside() {
  return {"inside", "Looking inside a trained transformer: head scores over two seeds, heat maps, cross-attention",
          "看看训练好的 Transformer 里面：两个种子上的注意力头分数、热图、交叉注意力",
          printing([](std::ostream& out) { return run_lesson_inside(out); }),
          /*slow=*/true};
}

}  // namespace sf::lessons
