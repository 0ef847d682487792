// Lesson 19: how many heads. The same width (C = 128) split into 1, 2, 4 and 8 heads of size
// 128, 64, 32 and 16: the same parameters, the same budget. The lesson prints each model's val
// loss and what its heads attend to, measured with experiments/inspect.h over val windows: the
// share on the previous token, on the first token, on earlier copies of the current token, and
// the entropy of each head's rows. Text: heads.md.
//
// Legend: T time, C channels, H heads, D head size (C / H).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <ostream>
#include <sstream>

#include "lessons/common/cost_common.h"
#include "lessons/lesson.h"
#include "lessons/heads.h"
#include "lessons/common/pictures.h"

namespace sf::lessons {

namespace {

GPTConfig heads_model(int64_t vocab_size, int64_t block_size, int64_t n_head) {
  GPTConfig c;
  c.vocab_size = vocab_size;
  c.block_size = block_size;
  c.n_layer = 2;
  c.n_head = n_head;  // D = 128 / n_head: more heads, each narrower
  c.n_embd = 128;
  c.bias = false;
  return c;
}

// [excerpt: roles]
// Each head's role, averaged over `windows` val windows of T characters.
std::vector<HeadRole> mean_roles(GPT& model, const CharCorpus& corpus, int64_t T, int64_t windows) {
  std::vector<HeadRole> mean;
  std::vector<int64_t> same_count;
  for (int64_t w = 0; w < windows; ++w) {
    std::vector<int32_t> ids(corpus.val->begin() + w * T, corpus.val->begin() + (w + 1) * T);
    std::vector<std::string> labels;
    for (int32_t id : ids) labels.push_back(token_label(corpus.tokenizer->decode({id})));
    std::vector<HeadRole> roles = head_roles(attention_maps(model, ids, labels));  // per layer and head
    if (mean.empty()) mean = roles, mean.assign(roles.size(), HeadRole{}), same_count.assign(roles.size(), 0);
    for (size_t i = 0; i < roles.size(); ++i) {
      mean[i].layer = roles[i].layer, mean[i].head = roles[i].head;
      mean[i].prev += roles[i].prev / static_cast<double>(windows);
      mean[i].first += roles[i].first / static_cast<double>(windows);
      mean[i].entropy += roles[i].entropy / static_cast<double>(windows);
      if (roles[i].has_same) mean[i].same += roles[i].same, ++same_count[i];
    }
  }
  for (size_t i = 0; i < mean.size(); ++i)
    if ((mean[i].has_same = same_count[i] > 0)) mean[i].same /= static_cast<double>(same_count[i]);
  return mean;
}
// [/excerpt]

struct Trained {
  std::vector<double> val_loss;
  std::vector<int64_t> params;
  std::vector<std::vector<HeadRole>> roles;
  AttentionMaps widest_maps;  // the model with the most heads, over the prompt
};

const Trained& trained(const HeadsOptions& o) {
  static std::map<std::string, Trained> done;
  std::ostringstream key;
  key << o.training.steps << " " << o.training.batch_size << " " << o.val_windows << " " << o.role_windows;
  for (int64_t h : o.heads) key << " " << h;
  if (auto it = done.find(key.str()); it != done.end()) return it->second;
  const CharCorpus& corpus = shakespeare_chars();
  Trained r;
  std::cerr << "lesson heads: training " << o.heads.size() << " GPTs of width 128 with 1 to 8 heads ("
            << o.training.steps << " steps each)\n";
  Progress progress = lesson_progress(static_cast<int64_t>(o.heads.size()) * o.training.steps);
  for (size_t i = 0; i < o.heads.size(); ++i) {
    GPT model(heads_model(corpus.vocab_size, o.training.block_size, o.heads[i]));
    r.params.push_back(model.num_parameters());
    train_small(model, corpus, o.training, progress, static_cast<int64_t>(i) * o.training.steps);
    r.val_loss.push_back(val_loss_of(model, corpus, o.training.block_size, o.val_windows));
    r.roles.push_back(mean_roles(model, corpus, o.training.block_size, o.role_windows));
    if (i + 1 == o.heads.size()) {
      std::vector<int32_t> ids = corpus.tokenizer->encode(o.prompt);
      std::vector<std::string> labels;
      for (int32_t id : ids) labels.push_back(token_label(corpus.tokenizer->decode({id})));
      r.widest_maps = attention_maps(model, ids, labels);
    }
  }
  progress.finish();
  return done[key.str()] = r;
}

}  // namespace

HeadsResult run_lesson_heads(std::ostream& out, const HeadsOptions& o) {
  HeadsResult r;
  const Trained& t = trained(o);
  heading(out, 1, "One width, four ways to split it", "同一个宽度，四种拆法");
  out << tr(out, "GPTs of 2 layers, C = 128, trained ", "2 层、C = 128 的 GPT，每个训练 ") << o.training.steps
      << tr(out, " steps each on windows of ", " 步，窗口长度 ") << o.training.block_size
      << tr(out, " characters\n", " 个字符\n");
  out << "    H     D   " << tr(out, "parameters", "参数个数") << "\n";
  for (size_t i = 0; i < o.heads.size(); ++i)
    out << "  " << std::string(3 - std::to_string(o.heads[i]).size(), ' ') << o.heads[i] << "   "
        << std::string(3 - std::to_string(128 / o.heads[i]).size(), ' ') << 128 / o.heads[i] << "   " << t.params[i]
        << "\n";
  out << tr(out, "the head count changes how Q, K, V are cut, not how many weights there are\n",
            "头数改变的只是 Q、K、V 怎么切分，而不是权重的多少\n");
  r.params = t.params;

  heading(out, 2, "Val loss", "验证损失");
  for (size_t i = 0; i < o.heads.size(); ++i) out << "  H = " << o.heads[i] << ": " << fmt(t.val_loss[i], 2) << "\n";
  r.val_loss = t.val_loss;

  heading(out, 3, "What the heads attend to", "这些头在看什么");
  out << tr(out, "averaged over ", "在 ") << o.role_windows << tr(out, " val windows of ", " 个长度为 ")
      << o.training.block_size
      << tr(out,
            " characters: prev = weight on the previous character,\nfirst = on the first one, same = on earlier copies of "
            "the current character, entropy in nats\n(uniform over the past: about ",
            " 个字符的验证窗口上取平均：prev = 落在前一个字符上的权重，\nfirst = 落在第一个字符上的，same = 落在当前字符"
            "更早出现处的，entropy 以奈特计\n（对过去均匀分布时约为 ");
  double uniform = 0;
  for (int64_t q = 0; q < o.training.block_size; ++q) uniform += std::log(static_cast<double>(q + 1));
  uniform /= static_cast<double>(o.training.block_size);
  out << fmt(uniform, 2) << tr(out, ")\n", "）\n");
  for (size_t i = 0; i < o.heads.size(); ++i) {
    out << "H = " << o.heads[i] << ":\n" << format_head_roles(t.roles[i]);
    double best_prev = 0, min_entropy = INFINITY;
    for (const HeadRole& h : t.roles[i])
      best_prev = std::max(best_prev, h.prev), min_entropy = std::min(min_entropy, h.entropy);
    r.best_prev.push_back(best_prev);
    r.min_entropy.push_back(min_entropy);
  }
  r.roles = t.roles;
  out << tr(out, "the strongest previous-character head and the sharpest head of each model:\n",
            "每个模型里最强的“前一个字符”头和最尖锐的头：\n");
  for (size_t i = 0; i < o.heads.size(); ++i)
    out << "  H = " << o.heads[i] << ": prev " << fmt(r.best_prev[i], 3) << ", entropy " << fmt(r.min_entropy[i], 3)
        << "\n";

  heading(out, 4, "The 8 heads of layer 0 over a line", "8 个头（第 0 层）在一行文字上的注意力");
  out << tr(out, "prompt: ", "提示：") << "\"" << o.prompt << "\"\n";
  draw_attention(out, "25_heads_layer0.png", t.widest_maps, 0, "8 heads");  // the picture adds ", layer 0"
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
