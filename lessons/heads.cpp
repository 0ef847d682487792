// Lesson 19: how many heads. The same width (C = 128) split into 1, 2, 4 and 8 heads of size
// 128, 64, 32 and 16: the same parameters, the same budget, each trained from two seeds. The
// lesson prints each model's val loss per seed and scores every head (lesson inside's scores,
// train/head_scores.h): previous-token and word-start on val windows, induction on random
// characters repeated once. Text: heads.md.
//
// Legend: T time, C channels, H heads, D head size (C / H).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <numeric>
#include <ostream>
#include <sstream>

#include "autograd/errors.h"
#include "lessons/common/cost_common.h"
#include "lessons/lesson.h"
#include "lessons/heads.h"
#include "lessons/common/pictures.h"

namespace sf::lessons {

namespace {

GPTConfig heads_model(int64_t vocab_size, int64_t block_size, int64_t n_head, int64_t seed) {
  GPTConfig c;
  c.vocab_size = vocab_size;
  c.block_size = block_size;
  c.n_layer = 2;
  c.n_head = n_head;  // D = 128 / n_head: more heads, each narrower
  c.n_embd = 128;
  c.bias = false;
  c.seed = static_cast<uint64_t>(seed);  // initial weights
  return c;
}

struct Trained {
  std::vector<int64_t> params;
  std::vector<std::vector<double>> val_loss;                // [model][seed]
  std::vector<std::vector<std::vector<HeadScore>>> scores;  // [model][seed][head]
  HeadScoreBaselines even;
  AttentionMaps widest_maps;  // the model with the most heads (first seed), over the prompt
};

const Trained& trained(const HeadsOptions& o) {
  static std::map<std::string, Trained> done;
  std::ostringstream key;
  key << o.training.steps << " " << o.training.batch_size << " " << o.val_windows << " " << o.role_windows << " "
      << o.induction_sequences;
  for (int64_t h : o.heads) key << " h" << h;
  for (int64_t s : o.seeds) key << " s" << s;
  if (auto it = done.find(key.str()); it != done.end()) return it->second;
  const CharCorpus& corpus = shakespeare_chars();
  Trained r;
  const int64_t runs = static_cast<int64_t>(o.heads.size() * o.seeds.size());
  std::cerr << "lesson heads: training " << runs << " GPTs of width 128 with 1 to 8 heads (" << o.training.steps
            << " steps each)\n";
  Progress progress = lesson_progress(runs * o.training.steps);
  int64_t first_step = 0;
  for (size_t i = 0; i < o.heads.size(); ++i) {
    r.val_loss.emplace_back();
    r.scores.emplace_back();
    for (int64_t seed : o.seeds) {
      // [excerpt: train]
      GPT model(heads_model(corpus.vocab_size, o.training.block_size, o.heads[i], seed));
      SmallTraining t = o.training;
      t.seed = static_cast<uint64_t>(seed);  // batches
      train_small(model, corpus, t, progress, first_step);
      r.val_loss[i].push_back(val_loss_of(model, corpus, t.block_size, o.val_windows));
      r.scores[i].push_back(
          score_heads(model, *corpus.tokenizer, *corpus.val, o.role_windows, o.induction_sequences, &r.even));
      // [/excerpt]
      first_step += o.training.steps;
      if (r.params.size() == i) r.params.push_back(model.num_parameters());
      if (i + 1 == o.heads.size() && seed == o.seeds[0]) {
        std::vector<int32_t> ids = corpus.tokenizer->encode(o.prompt);
        std::vector<std::string> labels;
        for (int32_t id : ids) labels.push_back(token_label(corpus.tokenizer->decode({id})));
        r.widest_maps = attention_maps(model, ids, labels);
      }
    }
  }
  progress.finish();
  return done[key.str()] = r;
}

// How many heads of one model reach each threshold.
struct Counts {
  int prev = 0, induction = 0, word_start = 0;
};
Counts count_over(const std::vector<HeadScore>& scores, const HeadScoreBaselines& even) {
  Counts c;
  for (const HeadScore& s : scores) {
    c.prev += s.prev >= kPreviousTokenThreshold;
    c.induction += s.induction >= kInductionThreshold;
    c.word_start += s.word_start >= kWordStartFactor * even.word_start;
  }
  return c;
}

}  // namespace

HeadsResult run_lesson_heads(std::ostream& out, const HeadsOptions& o) {
  if (o.seeds.empty() || o.heads.empty()) throw ConfigError("lesson heads: at least one head count and one seed");
  HeadsResult r;
  const Trained& t = trained(o);
  heading(out, 1, "One width, four ways to split it", "同一个宽度，四种拆法");
  out << tr(out, "GPTs of 2 layers, C = 128, trained ", "2 层、C = 128 的 GPT，每个训练 ") << o.training.steps
      << tr(out, " steps each on windows of ", " 步，窗口长度 ") << o.training.block_size
      << tr(out, " characters, from seeds ", " 个字符，种子 ");
  for (size_t k = 0; k < o.seeds.size(); ++k) out << (k ? tr(out, ", ", "，") : "") << o.seeds[k];
  out << tr(out, " (initial weights and batches)\n", "（初始权重和批次）\n");
  out << "    H     D   " << tr(out, "parameters", "参数个数") << "\n";
  for (size_t i = 0; i < o.heads.size(); ++i)
    out << "  " << std::string(3 - std::to_string(o.heads[i]).size(), ' ') << o.heads[i] << "   "
        << std::string(3 - std::to_string(128 / o.heads[i]).size(), ' ') << 128 / o.heads[i] << "   " << t.params[i]
        << "\n";
  out << tr(out, "the head count changes how Q, K, V are cut, not how many weights there are\n",
            "头数改变的只是 Q、K、V 怎么切分，而不是权重的多少\n");
  r.params = t.params;

  heading(out, 2, "Val loss", "验证损失");
  out << tr(out, "        ", "        ");
  for (int64_t s : o.seeds) out << tr(out, "   seed ", "   种子 ") << s;
  out << tr(out, "   mean\n", "   平均\n");
  for (size_t i = 0; i < o.heads.size(); ++i) {
    out << "  H = " << o.heads[i] << ":";
    double sum = 0;
    for (double v : t.val_loss[i]) out << "       " << fmt(v, 2), sum += v;
    out << "   " << fmt(sum / static_cast<double>(t.val_loss[i].size()), 2) << "\n";
  }
  out << tr(out, "the head counts from lowest val loss to highest, seed by seed:\n",
            "按验证损失从低到高排列的头数，逐个种子：\n");
  for (size_t k = 0; k < o.seeds.size(); ++k) {
    std::vector<size_t> order(o.heads.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return t.val_loss[a][k] < t.val_loss[b][k]; });
    out << tr(out, "  seed ", "  种子 ") << o.seeds[k] << tr(out, ":", "：");
    for (size_t j = 0; j < order.size(); ++j) out << (j == 0 ? tr(out, " ", "") : " ") << o.heads[order[j]];
    out << "\n";
  }
  r.val_loss = t.val_loss;

  heading(out, 3, "What the heads attend to", "这些头在看什么");
  out << tr(out, "prev and word-start: mean over ", "prev 和 word-start：在 ") << o.role_windows
      << tr(out, " val windows of ", " 个长度为 ") << o.training.block_size
      << tr(out, " characters; induction: mean over ", " 个字符的验证窗口上取平均；induction：在 ")
      << o.induction_sequences << tr(out, " sequences of ", " 个序列上取平均，每个是 ") << o.training.block_size / 2
      << tr(out, " random characters repeated once\n", " 个随机字符再重复一遍\n");
  for (size_t i = 0; i < o.heads.size(); ++i) {
    out << "H = " << o.heads[i] << ":\n" << score_table_header(o.seeds);
    for (size_t h = 0; h < t.scores[i][0].size(); ++h) out << score_table_row(t.scores[i], h);
  }
  out << tr(out, "even attention over the past scores: prev ", "对过去平均分配的注意力得分：prev ")
      << fmt(t.even.prev, 3) << tr(out, ", induction ", "，induction ") << fmt(t.even.induction, 3)
      << tr(out, ", word-start ", "，word-start ") << fmt(t.even.word_start, 3) << "\n"
      << tr(out, "thresholds: prev >= ", "阈值：prev >= ") << fmt(kPreviousTokenThreshold, 2)
      << tr(out, ", induction >= ", "，induction >= ") << fmt(kInductionThreshold, 2)
      << tr(out, ", word-start >= 2 x ", "，word-start >= 2 x ") << fmt(t.even.word_start, 3) << " = "
      << fmt(kWordStartFactor * t.even.word_start, 2) << "\n"
      << tr(out, "heads at or over each threshold, seed by seed (", "达到各阈值的头数，逐个种子（");
  for (size_t k = 0; k < o.seeds.size(); ++k) out << (k ? " / " : "") << o.seeds[k];
  out << tr(out, "):\n", "）：\n");
  for (size_t i = 0; i < o.heads.size(); ++i) {
    std::string prev, induction, word_start;
    for (size_t k = 0; k < o.seeds.size(); ++k) {
      Counts c = count_over(t.scores[i][k], t.even);
      prev += (k ? " / " : "") + std::to_string(c.prev);
      induction += (k ? " / " : "") + std::to_string(c.induction);
      word_start += (k ? " / " : "") + std::to_string(c.word_start);
    }
    out << "  H = " << o.heads[i] << tr(out, " (", "（") << 2 * o.heads[i]
        << tr(out, " heads): prev ", " 个头）：prev ") << prev << tr(out, ", induction ", "，induction ") << induction
        << tr(out, ", word-start ", "，word-start ") << word_start << "\n";
  }
  r.scores = t.scores;
  r.even = t.even;

  heading(out, 4, "The 8 heads of layer 0 over a line", "8 个头（第 0 层）在一行文字上的注意力");
  out << tr(out, "prompt: ", "提示：") << "\"" << o.prompt << "\"" << tr(out, ", the model of seed ", "，种子 ")
      << o.seeds[0] << tr(out, "\n", " 的模型\n");
  draw_attention(out, "heads_layer0.png", t.widest_maps, 0, "8 heads");  // the picture adds ", layer 0"
  out << tr(out, "its layer-0 heads at or over a threshold (layer.head):\n", "它第 0 层达到阈值的头（层.头）：\n")
      << heads_over_thresholds(out, t.scores.back()[0], t.even, 0);
  r.prompt_length = t.widest_maps.length();
  return r;
}

HeadsResult run_lesson_heads(std::ostream& out) { return run_lesson_heads(out, {}); }

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_heads() {
  return {"heads", "How many heads: one width as 1, 2, 4, 8 heads; val loss and what the heads attend to",
          "多少个头：同一宽度拆成 1、2、4、8 个头；验证损失与各个头在看什么",
          printing([](std::ostream& out) { return run_lesson_heads(out); }),
          /*slow=*/true};
}

}  // namespace sf::lessons
