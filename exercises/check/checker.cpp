// checker.cpp: the registry of exercises, running one exercise's checks, and what
// `scratchformer exercise check` and `exercise list` print.
#include "exercises/check/checker.h"

#include <algorithm>
#include <cstdio>
#include <ostream>

#include "autograd/errors.h"
#include "exercises/exercise.h"

namespace sf::exercise {

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::passed: return "passed";
    case Outcome::failed: return "failing";
    case Outcome::not_implemented: return "not implemented yet";
  }
  return "?";
}

std::string fail_mark() { return tr("FAIL  ", "未通过  "); }
std::string hint_mark() { return tr("      hint: ", "      提示："); }

static char crash_buffer[1024] = "";
const char* crash_message() { return crash_buffer; }

// Fills crash_buffer for the check about to run (empty `name`: no check running).
static void set_crash_message(const std::string& name) {
  std::string m;
  if (!name.empty())
    m = tr("\n  CRASH  your code crashed during the check \"" + name +
               "\": an index out of range or a null or dangling pointer is the usual cause (for example v[i] on "
               "an empty vector, such as cache->layers[i] before the layers exist; v.at(i) throws a clear error "
               "instead). Exit code 139 (SIGSEGV) or 134 (SIGABRT).\n",
           "\n  崩溃  你的代码在检查“" + name +
               "”时崩溃了：常见原因是下标越界或空指针、悬空指针（例如对空的 vector 用 v[i]，像 layers 还没建好时的 "
               "cache->layers[i]；v.at(i) 会抛出清楚的错误）。退出码 139（SIGSEGV）或 134（SIGABRT）。\n");
  const size_t n = std::min(m.size(), sizeof crash_buffer - 1);
  m.copy(crash_buffer, n);
  crash_buffer[n] = '\0';
}

void Report::add_line(const std::string& line) {
  lines_.push_back(line);
  if (echo_ != nullptr) *echo_ << "  " << line << "\n" << std::flush;
}

bool Report::check(const std::string& name_en, const std::function<std::string()>& f, const std::string& hint_en) {
  // Each check's name and hint are written in English at the check; zh_texts.cpp has them in Chinese.
  const std::string name = chinese() ? zh_text(name_en) : name_en;
  const std::string hint = chinese() ? zh_text(hint_en) : hint_en;
  if (outcome_ != Outcome::passed) return false;  // an earlier check already ended the exercise
  std::string problem;
  set_crash_message(name);
  try {
    problem = f();
    set_crash_message("");
  } catch (const NotImplemented& e) {
    set_crash_message("");
    outcome_ = Outcome::not_implemented;
    add_line(
        tr("not implemented yet: " + std::string(e.what()) + " still calls todo(); its comment says what to compute",
           "尚未实现：" + std::string(e.what()) + " 还在调用 todo()；它的注释说明了要计算什么"));
    return false;
  } catch (const CheckFailed& e) {
    set_crash_message("");
    problem = e.what();
  } catch (const std::exception& e) {  // sf::ShapeError from a misused op, std::out_of_range, ...
    set_crash_message("");
    problem = tr("your code threw an error: ", "你的代码抛出了错误：") + e.what();
  }
  if (problem.empty()) {
    ++passed_;
    add_line(tr("ok    ", "通过  ") + name);
    return true;
  }
  outcome_ = Outcome::failed;
  add_line(fail_mark() + name + tr(": ", "：") + problem);
  add_line(hint_mark() + hint);
  return false;
}

// The table of exercises in course order: number, title, the lesson that teaches it, the file,
// the difficulty (1..5) and its checks. A new exercise is one more line here, its checks in a
// check_*.cpp file, its hints in hints.cpp and its files in exercises/CMakeLists.txt.
const std::vector<Exercise>& all_exercises() {
  static const std::vector<Exercise> exercises = {
      {1, "tanh backward", "autograd", "01_tanh_backward", 1, check_tanh_backward},
      {2, "reduce a gradient over broadcast dimensions", "broadcasting", "02_sum_to_shape", 2, check_sum_to_shape},
      {3, "embedding backward (scatter-add)", "embeddings", "03_embedding_backward", 2, check_embedding_backward},
      {4, "sinusoidal positions", "positions", "04_sinusoidal_positions", 1, check_sinusoidal_positions},
      {5, "softmax forward", "attention", "05_softmax_forward", 2, check_softmax_forward},
      {6, "softmax backward", "attention", "06_softmax_backward", 4, check_softmax_backward},
      {7, "cross-entropy from log-softmax", "attention", "07_cross_entropy", 3, check_cross_entropy},
      {8, "scaled dot-product attention, causal", "attention", "08_causal_attention", 3, check_causal_attention},
      {9, "the online softmax", "online-softmax", "09_online_softmax", 3, check_online_softmax},
      {10, "split and merge heads", "multihead", "10_split_merge_heads", 2, check_split_merge_heads},
      {11, "LayerNorm forward", "layernorm", "11_layer_norm_forward", 2, check_layer_norm_forward},
      {12, "LayerNorm backward", "layernorm", "12_layer_norm_backward", 5, check_layer_norm_backward},
      {13, "GELU forward and backward", "feedforward", "13_gelu", 3, check_gelu},
      {14, "KV-cache append", "decoder", "14_kv_cache_append", 1, check_kv_cache_append},
      {15, "warmup + cosine schedule", "training", "15_warmup_cosine", 2, check_warmup_cosine},
      {16, "global-norm gradient clipping", "training", "16_clip_grad_norm", 2, check_clip_grad_norm},
      {17, "the AdamW update", "training", "17_adamw_step", 3, check_adamw_step},
      {18, "dynamic loss scaling", "mixed-precision", "18_loss_scaling", 2, check_loss_scaler},
      // 19-23: the assembly exercises (check_assembly.cpp).
      {19, "causal self-attention from your pieces", "build-gpt", "19_self_attention", 3, check_self_attention},
      {20, "a Pre-LN transformer block", "build-gpt", "20_transformer_block", 2, check_transformer_block},
      {21, "the GPT forward: logits and loss", "build-gpt", "21_gpt_forward", 3, check_gpt_forward},
      {22, "one training step", "build-gpt", "22_train_step", 4, check_train_step},
      {23, "sampling and generate() with the KV cache", "build-gpt", "23_generate", 4, check_generate},
      // 24 on: attention's backward by hand, then the cost and scale lessons (check_cost.cpp).
      {24, "attention backward by hand (dq, dk, dv)", "attention", "24_attention_backward", 5,
       check_attention_backward},
      {25, "attention's work and memory, counted", "attention-cost", "25_attention_cost", 2, check_attention_cost},
      {26, "the entropy of attention weights", "scaling", "26_softmax_entropy", 2, check_softmax_entropy},
      {27, "merging partial rows of attention", "online-softmax", "27_partial_rows", 3, check_partial_rows},
      {28, "a sliding-window mask", "windows", "28_sliding_window_mask", 2, check_sliding_window},
      {29, "KV-cache bytes per token: MHA, GQA, MQA", "kv-cache", "29_kv_cache_bytes", 1, check_kv_cache_bytes},
      {30, "RoPE's rotation and ALiBi's bias", "extrapolation", "30_rope_alibi", 3, check_rope_alibi},
      {31, "gradient accumulation over unequal micro-batches", "scaling-out", "31_grad_accumulation", 2,
       check_grad_accumulation},
  };
  return exercises;
}

const Exercise& find_exercise(const std::string& number) {
  const auto& all = all_exercises();
  bool digits = !number.empty() && number.size() <= 3 && number.find_first_not_of("0123456789") == std::string::npos;
  if (digits) {
    int n = std::stoi(number);
    for (const Exercise& e : all)
      if (e.number == n) return e;
  }
  std::string valid;  // "1 to 31": the numbers in runs, e.g. "1 to 18, 24 to 31"
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j + 1 < all.size() && all[j + 1].number == all[j].number + 1) ++j;
    if (!valid.empty()) valid += ", ";
    valid += std::to_string(all[i].number);
    if (j > i) valid += " to " + std::to_string(all[j].number);
    i = j + 1;
  }
  throw ConfigError("exercise '" + number + "': no such exercise (valid: " + valid +
                    ", or all; `exercise list` shows them)");
}

Report run_exercise(const Exercise& e, std::ostream* echo) {
  Report r;
  r.echo_to(echo);
  // The checks catch what the learner's code throws; this catches a bug in a check itself, so a
  // run over all exercises still reports the others.
  try {
    e.run(r);
  } catch (const std::exception& ex) {
    r.check(
        tr("the checker itself", "检查器本身"), [&] { return tr("internal error: ", "内部错误：") + ex.what(); },
        tr("this is a bug in the checker, not in your code: please report it",
           "这是检查器的缺陷，不是你的代码的问题：请报告它"));
  }
  return r;
}

std::string title_zh(const Exercise& e) {
  static const char* zh[] = {
      "",
      "tanh 的反向传播",
      "把梯度沿广播的维度求和还原",
      "词嵌入的反向传播（scatter-add）",
      "正弦位置编码",
      "softmax 的前向计算",
      "softmax 的反向传播",
      "由 log-softmax 算交叉熵",
      "带因果掩码的缩放点积注意力",
      "在线 softmax",
      "拆分与合并多头",
      "层归一化的前向计算",
      "层归一化的反向传播",
      "GELU 的前向计算与反向传播",
      "向 KV 缓存追加",
      "学习率预热 + 余弦衰减",
      "按全局范数做梯度裁剪",
      "AdamW 的一次更新",
      "动态损失缩放",
      "用你的零件写因果自注意力",
      "Pre-LN Transformer 块",
      "GPT 的前向计算：logits 与损失",
      "一步训练",
      "采样与带 KV 缓存的 generate()",
      "手写注意力的反向传播（dq、dk、dv）",
      "数一数注意力的计算量和内存",
      "注意力权重的熵",
      "合并注意力的部分行",
      "滑动窗口掩码",
      "每个词元的 KV 缓存字节数：MHA、GQA、MQA",
      "RoPE 的旋转与 ALiBi 的偏置",
      "大小不等的微批次上的梯度累积",
  };
  const bool known = e.number > 0 && e.number < static_cast<int>(sizeof zh / sizeof zh[0]);
  return known ? std::string(zh[e.number]) : e.title;
}

std::string title_of(const Exercise& e) { return chinese() ? title_zh(e) : e.title; }

// Prints the exercise's heading, runs its checks printing each line as it ends, then the verdict.
static Report check_one(const Exercise& e, std::ostream& out, const LessonLabel& lesson_label) {
  out << tr("exercise ", "练习 ") << e.number << tr(": ", "：") << title_of(e) << tr(" (", "（")
      << lesson_label(e.lesson) << tr("; edit exercises/", "；编辑 exercises/") << e.file << tr(".cpp)\n", ".cpp）\n")
      << std::flush;
  Report r = run_exercise(e, &out);
  switch (r.outcome()) {
    case Outcome::passed:
      out << tr("  passed: all ", "  通过：全部 ") << r.checks_passed() << tr(" checks hold\n", " 项检查都成立\n");
      break;
    case Outcome::failed:
      out << tr("  failing: fix the check marked FAIL and run it again (more help: scratchformer exercise hint ",
                "  未通过：改好标着“未通过”的那项检查，再运行一次（更多帮助：scratchformer exercise hint ")
          << e.number << tr(" 2, then 3)\n", " 2，然后 3）\n");
      break;
    case Outcome::not_implemented: break;
  }
  return r;
}

int print_check(const std::string& which, std::ostream& out, const LessonLabel& lesson_label) {
  if (which != "all") {
    const Exercise& e = find_exercise(which);
    Report r = check_one(e, out, lesson_label);
    return r.outcome() == Outcome::passed ? 0 : 1;
  }
  int counts[3] = {0, 0, 0};
  for (const Exercise& e : all_exercises()) {
    Report r = check_one(e, out, lesson_label);
    out << "\n";
    ++counts[static_cast<int>(r.outcome())];
  }
  out << counts[0] << tr(" passed, ", " 个通过，") << counts[1] << tr(" failing, ", " 个未通过，") << counts[2]
      << tr(" not implemented yet (of ", " 个尚未实现（共 ") << all_exercises().size() << tr(")\n", " 个）\n");
  return counts[0] == static_cast<int>(all_exercises().size()) ? 0 : 1;
}

// `text` padded with spaces to `width` columns; a CJK character or full-width punctuation mark
// takes two columns on a terminal, anything else one (what printf's %-Ns cannot know).
static std::string padded(const std::string& text, size_t width) {
  size_t columns = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte
    columns += c >= 0xE1 ? 2 : 1;      // lead bytes of U+1000 and up: CJK and full-width forms
  }
  return columns >= width ? text + " " : text + std::string(width - columns, ' ');
}

void print_list(std::ostream& out, const LessonLabel& lesson_label, bool zh) {
  auto tr = [zh](std::ostream&, const char* en, const char* zh_text) { return zh ? zh_text : en; };
  out << "  #  " << padded(tr(out, "exercise", "练习"), 51) << padded(tr(out, "lesson", "课"), 27)
      << padded(tr(out, "difficulty", "难度"), 11) << tr(out, "your copy", "你的代码") << "\n";
  bool next_marked = false;
  int done = 0;
  for (const Exercise& e : all_exercises()) {
    Outcome o = run_exercise(e).outcome();
    std::string status = o == Outcome::passed   ? tr(out, "done", "完成")
                         : o == Outcome::failed ? tr(out, "failing", "未通过")
                                                : tr(out, "to do", "待做");
    if (o == Outcome::passed) ++done;
    if (o != Outcome::passed && !next_marked) {
      status += tr(out, "  <- next", "  <- 下一个");
      next_marked = true;
    }
    std::string stars(static_cast<size_t>(e.difficulty), '*');
    char number[8];
    std::snprintf(number, sizeof number, "%3d  ", e.number);
    out << number << padded(zh ? title_zh(e) : e.title, 51) << padded(lesson_label(e.lesson), 27) << padded(stars, 11)
        << status << "\n";
  }
  out << done << tr(out, " of ", " / ") << all_exercises().size() << tr(out, " done. ", " 已完成。")
      << tr(out, "The task of exercise N: scratchformer exercise show N.\n",
            "练习 N 的中文说明：scratchformer exercise show N --lang zh。\n")
      << tr(out,
            "Edit exercises/NN_name.cpp, then: scratchformer exercise check N (or ./run.sh exercise N);\n"
            "stuck? scratchformer exercise hint N (tier 1 the idea, 2 the formula, 3 the code)\n",
            "编辑 exercises/NN_name.cpp，然后运行 scratchformer exercise check N（或 ./run.sh exercise N）；\n"
            "卡住了？scratchformer exercise hint N（第 1 层是思路，第 2 层是公式，第 3 层是代码提示）\n");
}

void print_hint(const std::string& which, int tier, std::ostream& out, bool zh) {
  const Exercise& e = find_exercise(which);
  if (tier < 1 || tier > 3)
    throw ConfigError("exercise hint " + which + ": tier " + std::to_string(tier) +
                      " (valid: 1 the idea, 2 the formula, 3 the code-level hint)");
  const HintTiers& h = hints_of(e.number);
  static const char* names_en[3] = {"the idea", "the formula", "the code"};
  static const char* names_zh[3] = {"思路", "公式", "代码提示"};
  out << (zh ? "练习 " : "exercise ") << e.number << (zh ? "：" : ": ") << (zh ? title_zh(e) : e.title) << "\n";
  for (int t = 1; t <= tier; ++t)
    out << "  " << (zh ? "第 " : "tier ") << t << (zh ? " 层，" : ", ") << (zh ? names_zh[t - 1] : names_en[t - 1])
        << (zh ? "：" : ": ") << (zh ? h.zh[t - 1] : h.en[t - 1]) << "\n";
  if (tier < 3)
    out << (zh ? "  还卡住？scratchformer exercise hint " : "  still stuck? scratchformer exercise hint ") << e.number
        << " " << tier + 1 << "\n";
}

}  // namespace sf::exercise
