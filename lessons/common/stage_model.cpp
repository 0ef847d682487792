// stage_model.cpp: lesson 14's parameter formulas and the text it trains on (the seven models
// themselves are in build_gpt.cpp, where the lesson's text quotes them).
//
// Legend: B batch, T time, C channels, H heads, N blocks, V vocab.
#include "lessons/common/stage_model.h"

#include "autograd/errors.h"
#include "data/char_tokenizer.h"
#include "data/file_io.h"
#include "data/fortune_poems.h"
#include "data/tiny_shakespeare.h"

namespace sf::lessons {

Tensor StageModel::loss(const IntTensor& idx, const IntTensor& targets) {
  return cross_entropy(forward(idx), targets, -1);
}

int64_t stage_parameter_formula(const StageConfig& c) {
  const int64_t V = c.vocab_size, T = c.block_size, C = c.n_embd, N = c.n_layer;
  const int64_t base = V * C + T * C + C * V;  // wte, wpe, lm_head
  switch (c.stage) {
    case Stage::bigram: return V * V;
    case Stage::one_head:
    case Stage::heads: return base + 4 * C * C;  // q, k, v, output projection
    case Stage::feed_forward:
    case Stage::residual: return base + 12 * C * C;           // + C -> 4C -> C
    case Stage::layernorm: return base + 12 * C * C + 3 * C;  // + ln_1, ln_2, ln_f gains
    case Stage::blocks: return base + N * (12 * C * C + 2 * C) + C;
  }
  return 0;
}

std::string stage_formula_text(const StageConfig& c) {
  const std::string V = std::to_string(c.vocab_size), T = std::to_string(c.block_size), C = std::to_string(c.n_embd),
                    N = std::to_string(c.n_layer);
  const std::string base = V + "*" + C + " + " + T + "*" + C + " + " + C + "*" + V;
  switch (c.stage) {
    case Stage::bigram: return V + "*" + V;
    case Stage::one_head:
    case Stage::heads: return base + " + 4*" + C + "^2";
    case Stage::feed_forward:
    case Stage::residual: return base + " + 12*" + C + "^2";
    case Stage::layernorm: return base + " + 12*" + C + "^2 + 3*" + C;
    case Stage::blocks: return base + " + " + N + "*(12*" + C + "^2 + 2*" + C + ") + " + C;
  }
  return "";
}

std::string stage_explanation(Stage s, Lang lang) {
  const bool zh = lang == Lang::zh;
  switch (s) {
    case Stage::bigram:
      return zh ? "只看当前这一个字符，查表得到下一个字符的分布：没有上下文。"
                : "the current character alone picks a row of next-character logits: no context at all.";
    case Stage::one_head:
      return zh ? "加上位置嵌入和一个因果自注意力头：每个字符可以按内容去读它前面的字符。"
                : "position vectors and one causal self-attention head: each character can read the ones before it, by content.";
    case Stage::heads:
      return zh ? "把同样宽度分成 H 个头：几种不同的“看法”并行，参数一个也不多。"
                : "the same width split into H heads: several ways of looking at the past side by side, not one parameter more.";
    case Stage::feed_forward:
      return zh ? "注意力之后接前馈网络：每个位置独立地“思考”一下它收集到的东西。"
                : "a feed-forward layer after attention: each position computes on what it gathered, on its own.";
    case Stage::residual:
      return zh ? "残差连接，还没有层归一化：x = x + attn(x)，x = x + mlp(x)，每个字符自己的向量得以保留。"
                : "residual connections, no LayerNorm yet: x = x + attn(x), x = x + mlp(x), so each character keeps its own vector.";
    case Stage::layernorm:
      return zh ? "再加层归一化（Pre-LN 块）：每个子层读入的是归一化后的副本，残差通路本身不变。"
                : "LayerNorm added (one Pre-LN block): each sublayer reads a normalized copy, the residual path itself is untouched.";
    case Stage::blocks:
      return zh ? "把这样的块叠 N 层：后面的层可以在前面层的结果上继续组合。"
                : "N such blocks stacked: later layers build on what earlier ones found.";
  }
  return "";
}

static std::shared_ptr<const std::vector<int32_t>> slice_of(const std::vector<int32_t>& ids, size_t a, size_t b) {
  return std::make_shared<const std::vector<int32_t>>(ids.begin() + static_cast<std::ptrdiff_t>(a),
                                                      ids.begin() + static_cast<std::ptrdiff_t>(b));
}

StageData load_stage_data(const std::string& corpus) {
  std::string text;
  StageData d;
  if (corpus == "shakespeare") {
    data::ShakespeareOptions o;
    o.download = false;  // the text ships in data/corpora/
    text = data::read_text_file(data::ensure_tiny_shakespeare(o).string());
    d.description = "Tiny Shakespeare";
  } else if (corpus == "tang") {
    text = data::read_fortune_poems(data::fortune_poems_path("tang300"));
    d.description = "Tang poems (fortunes-zh tang300)";
  } else {
    throw ConfigError("lesson corpus: unknown '" + corpus + "' (valid: shakespeare, tang)");
  }
  auto tok = std::make_shared<data::CharTokenizer>(data::CharTokenizer::build(text, false, d.description));
  std::vector<int32_t> ids = tok->encode(text);
  size_t n_train = ids.size() * 9 / 10;
  d.train = slice_of(ids, 0, n_train);
  d.val = slice_of(ids, n_train, ids.size());
  d.tokenizer = tok;
  return d;
}

}  // namespace sf::lessons
