// lesson.cpp: the registry of lessons and the printing helpers they share.
#include "lessons/lesson.h"

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <memory>
#include <sstream>

#include "autograd/errors.h"

#include "lessons/lesson_functions.h"

namespace sf::lessons {

// Wraps a lesson function that returns its key numbers into one that only prints.
template <class F>
static std::function<void(std::ostream&)> printing(F f) {
  return [f](std::ostream& out) { (void)f(out); };
}

const std::vector<Lesson>& all_lessons() {
  static const std::vector<Lesson> lessons = {
      {1, "autograd", "Autograd by hand: a scalar graph, the chain rule, finite differences",
       "手写自动微分：标量计算图、链式法则、有限差分", "autograd", printing(run_lesson_autograd)},
      {2, "broadcasting", "Tensors, broadcasting and gradcheck: why backward reduces",
       "张量、广播与 gradcheck：反向传播为什么要求和", "broadcasting", printing(run_lesson_broadcasting)},
      {3, "embeddings", "Token embeddings: a lookup is a one-hot matmul, its gradient a scatter-add",
       "词嵌入：查表就是独热矩阵乘法，梯度是散射累加", "embeddings", printing(run_lesson_embeddings)},
      {4, "positions", "Positional encoding: sinusoids, learned, RoPE, ALiBi; why order matters",
       "位置编码：正弦、可学习、RoPE、ALiBi；顺序为什么重要", "positions", printing(run_lesson_positions)},
      {5, "attention", "Attention by hand: 我 / 喜欢 / 苹果, then causal and padding masks",
       "手算注意力：我 / 喜欢 / 苹果，再加因果掩码和填充掩码", "attention", printing(run_lesson_attention)},
      {6, "multihead", "Multi-head attention: split and merge, 2,359,296 weights, per-head heat maps",
       "多头注意力：拆分与合并、2,359,296 个权重、每个头的热图", "multihead", printing(run_lesson_multihead)},
      {7, "layernorm", "LayerNorm: statistics per token, scale invariance, its gradient",
       "层归一化：逐词元统计、尺度不变性、它的梯度", "layernorm", printing(run_lesson_layernorm)},
      {8, "feedforward", "Feed-forward: GELU versus ReLU, the 4x expansion", "前馈网络与 GELU：与 ReLU 对比、4 倍扩展",
       "feedforward", printing(run_lesson_feedforward)},
      {9, "encoder", "Encoder block: residual paths, hidden-state norms per sublayer",
       "编码器块：残差连接、每个子层之后的隐藏状态范数", "encoder", printing(run_lesson_encoder)},
      {10, "decoder", "Decoder block: causal self-attention, cross-attention, the KV cache",
       "解码器块与 KV 缓存：因果自注意力、交叉注意力、缓存与重算", "decoder", printing(run_lesson_decoder)},
      {11, "prenorm", "Pre-LN versus Post-LN: norms of hidden states and gradients per layer",
       "Pre-LN 与 Post-LN：逐层的隐藏状态范数和梯度范数", "prenorm", printing(run_lesson_prenorm)},
      {12, "training", "The training loop: warmup schedules, clipping a real spike, AdamW by hand",
       "训练循环：学习率预热与调度、裁剪一次真实的梯度尖峰、手算 AdamW", "training", printing(run_lesson_training)},
      {13, "mixed-precision", "Mixed precision: fp16/bf16 grids, underflow, loss scaling, skipped steps",
       "混合精度：fp16/bf16 网格、下溢、损失缩放、跳过的更新", "mixed_precision", printing(run_lesson_mixed_precision)},
      {14, "build-gpt", "Let's build a GPT: bigram, one head, heads, FFN, residual+LN, N blocks, trained",
       "一步步搭出 GPT：二元组表、一个头、多个头、前馈、残差与 LN、N 个块，逐个训练", "build_gpt",
       printing([](std::ostream& out) { return run_lesson_build_gpt(out); }), true},
      {15, "inside", "Looking inside a trained transformer: head roles, heat maps, cross-attention",
       "看看训练好的 Transformer 里面：注意力头的分工、热图、交叉注意力", "inside",
       printing([](std::ostream& out) { return run_lesson_inside(out); }), true},
      {16, "tokenize-zh", "Tokenizing Chinese: characters, UTF-8 bytes, BPE merges on the Tang poems",
       "中文分词与词元化：按字、按 UTF-8 字节、在唐诗上学 BPE 合并", "tokenize_zh", printing(run_lesson_tokenize_zh)},
      {17, "errata", "Errata: the source articles' examples recomputed, and a GPT trained without its mask",
       "勘误：重算源文章的例子，再训练一个丢了掩码的 GPT", "errata", printing(run_lesson_errata), true},
      {18, "scaling-out", "Scaling out: accumulation = a bigger batch, the ring all-reduce, its cost at 1024 GPUs",
       "横向扩展：梯度累积等于更大的批次、环形 all-reduce、1024 个 GPU 时的代价", "scaling_out",
       printing(run_lesson_scaling_out)},
      {19, "attention-cost", "What attention costs: T x T scores, memory and time against T, measured",
       "注意力的代价：T x T 的分数矩阵，内存和时间随 T 的变化，实测", "attention_cost",
       printing([](std::ostream& out) { return run_lesson_attention_cost(out); }), true},
      {20, "scaling", "Why divide by sqrt(d_k): the largest weight, entropy and gradient against d_k",
       "为什么要除以 √d_k：最大权重、熵和梯度随 d_k 的变化", "scaling", printing(run_lesson_scaling)},
      {21, "online-softmax", "The online softmax: running max and rescaling, tile by tile; no T x T matrix",
       "在线 softmax：逐块更新当前最大值并重新缩放；不需要 T x T 矩阵", "online_softmax",
       printing(run_lesson_online_softmax)},
      {22, "windows", "Sliding windows: one GPT trained with windows 4, 8, 16 and full; val loss and cost",
       "滑动窗口：同一个 GPT 分别用窗口 4、8、16 和全注意力训练；验证损失与代价", "windows",
       printing([](std::ostream& out) { return run_lesson_windows(out); }), true},
      {23, "kv-cache", "The KV cache's memory: bytes per token for MHA, GQA, MQA; sampling with and without it",
       "KV 缓存的内存：MHA、GQA、MQA 每个词元的字节数；有无缓存的采样速度", "kv_cache",
       printing([](std::ostream& out) { return run_lesson_kv_cache(out); }), true},
      {24, "extrapolation",
       "Positions past the training length: learned, sinusoidal, RoPE, ALiBi trained on 64, scored to 256",
       "超出训练长度的位置：可学习、正弦、RoPE、ALiBi 在 64 上训练，在 256 上评估", "extrapolation",
       printing([](std::ostream& out) { return run_lesson_extrapolation(out); }), true},
      {25, "heads", "How many heads: one width as 1, 2, 4, 8 heads; val loss and what the heads attend to",
       "多少个头：同一宽度拆成 1、2、4、8 个头；验证损失与各个头在看什么", "heads",
       printing([](std::ostream& out) { return run_lesson_heads(out); }), true},
  };
  return lessons;
}

const Lesson* find_lesson(const std::string& key) {
  for (const Lesson& l : all_lessons())
    if (l.name == key || std::to_string(l.number) == key || l.file == key) return &l;
  return nullptr;
}

std::string lesson_output(const Lesson& lesson, Lang lang) {
  std::ostringstream out;
  set_language(out, lang);
  lesson.run(out);
  return out.str();
}

void print_lesson_list(std::ostream& out) {
  out << tr(out, "Lessons (text in lessons/NAME.md; run one with `scratchformer lesson NAME`):\n",
            "课程列表（正文在 lessons/zh/NAME.md；运行其中一课：`scratchformer lesson NAME`）：\n");
  for (const Lesson& l : all_lessons())
    out << std::setw(3) << l.number << "  " << std::left << std::setw(16) << l.name << std::right
        << (language(out) == Lang::zh ? l.title_zh : l.title) << "\n";
}

// ---- language ----

// The slot in every stream's private storage (std::ios_base::iword) that holds its language.
static int language_slot() {
  static const int slot = std::ios_base::xalloc();
  return slot;
}

void set_language(std::ostream& out, Lang lang) { out.iword(language_slot()) = lang == Lang::zh ? 1 : 0; }

Lang language(std::ostream& out) { return out.iword(language_slot()) == 1 ? Lang::zh : Lang::en; }

Lang parse_language(const std::string& text, const std::string& where) {
  if (text == "en") return Lang::en;
  if (text == "zh") return Lang::zh;
  throw ConfigError(where + ": unknown language '" + text + "' (valid: en, zh)");
}

Lang language_from_environment() {
  const char* value = std::getenv("SF_LANG");
  return value && *value ? parse_language(value, "SF_LANG") : Lang::en;
}

const char* tr(std::ostream& out, const char* en, const char* zh) { return language(out) == Lang::zh ? zh : en; }

// ---- pictures ----

// The image folder lives with the stream (like its language), in a string the stream points to.
static int image_slot() {
  static const int slot = std::ios_base::xalloc();
  return slot;
}

void set_image_dir(std::ostream& out, const std::string& dir) {
  static std::vector<std::unique_ptr<std::string>> dirs;  // kept for the program's life
  dirs.push_back(std::make_unique<std::string>(dir));
  out.pword(image_slot()) = dirs.back().get();
}

std::string image_dir(std::ostream& out) {
  void* p = out.pword(image_slot());
  return p ? *static_cast<std::string*>(p) : std::string();
}

// ---- printing helpers ----

void heading(std::ostream& out, int step, const std::string& title) {
  out << "\n== " << step << ". " << title << " ==\n";
}

void heading(std::ostream& out, int step, const char* en, const char* zh) {
  heading(out, step, std::string(tr(out, en, zh)));
}

std::string fmt(double x, int precision) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  std::ostringstream os;
  os << std::fixed << std::setprecision(precision) << x;
  std::string s = os.str();
  if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);  // -0.00
  return s;
}

std::string fmt_sci(double x, int digits) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  std::ostringstream os;
  os << std::scientific << std::setprecision(digits) << x;
  return os.str();
}

std::string fmt_vec(const std::vector<double>& v, int precision) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + fmt(v[i], precision);
  return s + "]";
}

void show(std::ostream& out, const std::string& label, const Tensor& t, int precision, int64_t threshold) {
  PrintOptions options;
  options.precision = precision;
  options.threshold = threshold;
  std::string text = to_string(t, options);
  // Print -0.0000 as 0.0000 (the sign of a rounded zero says nothing).
  std::string zero = "-" + fmt(0.0, precision);
  for (size_t p; (p = text.find(zero)) != std::string::npos;) text[p] = ' ';
  out << label << " = " << text << "\n";
}

// The columns a code point takes in a terminal. The ranges are the East Asian Width classes W
// (wide) and F (full-width) of Unicode's EastAsianWidth.txt, merged into blocks; class A
// (ambiguous: ░▒▓█, “”, ±) counts 1, as terminals outside CJK locales draw it.
static int code_point_width(uint32_t cp) {
  struct Range {
    uint32_t first, last;
  };
  // Combining marks and zero-width characters: drawn on top of the previous character.
  static const Range zero[] = {{0x0300, 0x036F}, {0x200B, 0x200F}, {0xFE00, 0xFE0F}};
  static const Range wide[] = {
      {0x1100, 0x115F},    // Hangul Jamo initial consonants
      {0x2E80, 0x303E},    // CJK radicals, Kangxi radicals, CJK symbols and punctuation (、。「」)
      {0x3041, 0x33FF},    // kana, Bopomofo, Hangul compatibility Jamo, CJK strokes, enclosed CJK
      {0x3400, 0x4DBF},    // CJK ideographs, extension A
      {0x4E00, 0x9FFF},    // CJK unified ideographs
      {0xA000, 0xA4CF},    // Yi
      {0xA960, 0xA97F},    // Hangul Jamo extended A
      {0xAC00, 0xD7A3},    // Hangul syllables
      {0xF900, 0xFAFF},    // CJK compatibility ideographs
      {0xFE10, 0xFE19},    // vertical forms
      {0xFE30, 0xFE6F},    // CJK compatibility forms, small form variants
      {0xFF00, 0xFF60},    // full-width ASCII and punctuation (，：；（）！？)
      {0xFFE0, 0xFFE6},    // full-width signs (￥)
      {0x1F300, 0x1F64F},  // pictographs and emoticons
      {0x1F900, 0x1F9FF},  // supplemental pictographs
      {0x20000, 0x3FFFD},  // CJK ideographs, extensions B and later
  };
  for (const Range& r : zero)
    if (cp >= r.first && cp <= r.last) return 0;
  for (const Range& r : wide)
    if (cp >= r.first && cp <= r.last) return 2;
  return 1;
}

int display_width(const std::string& s) {
  int width = 0;
  for (size_t i = 0; i < s.size();) {
    unsigned char lead = static_cast<unsigned char>(s[i]);
    // The sequence's length from its lead byte; a byte that cannot start one counts 1 on its own.
    size_t len = lead < 0x80             ? 1
                 : (lead & 0xE0) == 0xC0 ? 2
                 : (lead & 0xF0) == 0xE0 ? 3
                 : (lead & 0xF8) == 0xF0 ? 4
                                         : 0;
    bool whole = len > 0 && i + len <= s.size();
    uint32_t cp = len == 1 ? lead : lead & (0x7Fu >> len);
    for (size_t k = 1; whole && k < len; ++k) {
      unsigned char next = static_cast<unsigned char>(s[i + k]);
      whole = (next & 0xC0) == 0x80;
      cp = (cp << 6) | (next & 0x3Fu);
    }
    if (!whole) {
      width += 1;
      i += 1;
      continue;
    }
    width += code_point_width(cp);
    i += len;
  }
  return width;
}

std::string pad_right(const std::string& s, int width) {
  return s + std::string(static_cast<size_t>(std::max(0, width - display_width(s))), ' ');
}

void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows,
                 const std::vector<int>& min_widths, const std::string& separator, const std::string& indent) {
  std::vector<int> widths = min_widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t c = 0; c + 1 < row.size(); ++c) widths[c] = std::max(widths[c], display_width(row[c]));
  }
  for (const auto& row : rows) {
    out << indent;
    for (size_t c = 0; c < row.size(); ++c) {
      if (c > 0) out << separator;
      out << (c + 1 < row.size() ? pad_right(row[c], widths[c]) : row[c]);
    }
    out << "\n";
  }
}

void heat_map(std::ostream& out, const std::vector<double>& values, int64_t rows, int64_t cols,
              const std::vector<std::string>& row_labels, const std::vector<std::string>& col_labels,
              double max_value) {
  static const char* shades[] = {"  ", "░░", "▒▒", "▓▓", "██"};
  int label_w = 0;
  for (const auto& l : row_labels) label_w = std::max(label_w, display_width(l));
  int col_w = 2;
  for (const auto& l : col_labels) col_w = std::max(col_w, display_width(l));
  out << std::string(static_cast<size_t>(label_w), ' ') << " |";
  for (const auto& l : col_labels) out << " " << pad_right(l, col_w);
  out << "\n";
  for (int64_t r = 0; r < rows; ++r) {
    out << pad_right(row_labels[static_cast<size_t>(r)], label_w) << " |";
    for (int64_t c = 0; c < cols; ++c) {
      double v = values[static_cast<size_t>(r * cols + c)] / max_value;
      int level = static_cast<int>(std::lround(std::clamp(v, 0.0, 1.0) * 4));
      out << " " << pad_right(shades[level], col_w);
    }
    out << "\n";
  }
  out << tr(out, "(shades: '  ' 0, ░ 0.25, ▒ 0.5, ▓ 0.75, █ ", "（灰度：“  ”0，░ 0.25，▒ 0.5，▓ 0.75，█ ")
      << fmt(max_value, 2) << tr(out, ")\n", "）\n");
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return a.size() == b.size() ? m : INFINITY;
}

}  // namespace sf::lessons
