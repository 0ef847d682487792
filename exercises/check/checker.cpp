// checker.cpp: the registry of exercises, running one exercise's checks, and what
// `scratchformer exercise check` and `exercise list` print.
#include "exercises/check/checker.h"

#include <cstdio>
#include <ostream>

#include "autograd/errors.h"
#include "exercises/exercise.h"
#include "lessons/lesson.h"

namespace sf::exercise {

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::passed: return "passed";
    case Outcome::failed: return "failing";
    case Outcome::not_implemented: return "not implemented yet";
  }
  return "?";
}

bool Report::check(const std::string& name, const std::function<std::string()>& f, const std::string& hint) {
  if (outcome_ != Outcome::passed) return false;  // an earlier check already ended the exercise
  std::string problem;
  try {
    problem = f();
  } catch (const NotImplemented& e) {
    outcome_ = Outcome::not_implemented;
    lines_.push_back("not implemented yet: " + std::string(e.what()) +
                     " still calls todo(); its comment says what to compute");
    return false;
  } catch (const CheckFailed& e) {
    problem = e.what();
  } catch (const std::exception& e) {  // sf::ShapeError from a misused op, std::out_of_range, ...
    problem = std::string("your code threw an error: ") + e.what();
  }
  if (problem.empty()) {
    ++passed_;
    lines_.push_back("ok    " + name);
    return true;
  }
  outcome_ = Outcome::failed;
  lines_.push_back("FAIL  " + name + ": " + problem);
  lines_.push_back("      hint: " + hint);
  return false;
}

const std::vector<Exercise>& all_exercises() {
  static const std::vector<Exercise> exercises = {
      {1, "tanh backward", "autograd", "01_tanh_backward", check_tanh_backward},
      {2, "reduce a gradient over broadcast dimensions", "broadcasting", "02_sum_to_shape", check_sum_to_shape},
      {3, "embedding backward (scatter-add)", "embeddings", "03_embedding_backward", check_embedding_backward},
      {4, "sinusoidal positions", "positions", "04_sinusoidal_positions", check_sinusoidal_positions},
      {5, "softmax forward", "attention", "05_softmax_forward", check_softmax_forward},
      {6, "softmax backward", "attention", "06_softmax_backward", check_softmax_backward},
      {7, "cross-entropy from log-softmax", "attention", "07_cross_entropy", check_cross_entropy},
      {8, "scaled dot-product attention, causal", "attention", "08_causal_attention", check_causal_attention},
      {9, "the online softmax", "online-softmax", "09_online_softmax", check_online_softmax},
      {10, "split and merge heads", "multihead", "10_split_merge_heads", check_split_merge_heads},
      {11, "LayerNorm forward", "layernorm", "11_layer_norm_forward", check_layer_norm_forward},
      {12, "LayerNorm backward", "layernorm", "12_layer_norm_backward", check_layer_norm_backward},
      {13, "GELU forward and backward", "feedforward", "13_gelu", check_gelu},
      {14, "KV-cache append", "decoder", "14_kv_cache_append", check_kv_cache_append},
      {15, "warmup + cosine schedule", "training", "15_warmup_cosine", check_warmup_cosine},
      {16, "global-norm gradient clipping", "training", "16_clip_grad_norm", check_clip_grad_norm},
      {17, "the AdamW update", "training", "17_adamw_step", check_adamw_step},
      {18, "dynamic loss scaling", "mixed-precision", "18_loss_scaling", check_loss_scaler},
      {19, "causal self-attention from your pieces", "build-gpt", "19_self_attention", check_self_attention},
      {20, "a Pre-LN transformer block", "build-gpt", "20_transformer_block", check_transformer_block},
      {21, "the GPT forward: logits and loss", "build-gpt", "21_gpt_forward", check_gpt_forward},
      {22, "one training step", "build-gpt", "22_train_step", check_train_step},
      {23, "sampling and generate() with the KV cache", "build-gpt", "23_generate", check_generate},
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
  throw ConfigError("exercise '" + number + "': no such exercise (valid: 1 to " + std::to_string(all.back().number) +
                    ", or all; `exercise list` shows them)");
}

Report run_exercise(const Exercise& e) {
  Report r;
  // The checks catch what the learner's code throws; this catches a bug in a check itself, so a
  // run over all exercises still reports the others.
  try {
    e.run(r);
  } catch (const std::exception& ex) {
    r.check(
        "the checker itself", [&] { return std::string("internal error: ") + ex.what(); },
        "this is a bug in the checker, not in your code: please report it");
  }
  return r;
}

static std::string lesson_label(const std::string& name) {
  const lessons::Lesson* l = lessons::find_lesson(name);
  return l ? "lesson " + std::to_string(l->number) + " " + name : "lesson " + name;
}

static void print_one(const Exercise& e, const Report& r, std::ostream& out) {
  out << "exercise " << e.number << ": " << e.title << " (" << lesson_label(e.lesson) << "; edit exercises/" << e.file
      << ".cpp)\n";
  for (const std::string& line : r.lines()) out << "  " << line << "\n";
  switch (r.outcome()) {
    case Outcome::passed: out << "  passed: all " << r.checks_passed() << " checks hold\n"; break;
    case Outcome::failed: out << "  failing: fix the check marked FAIL and run it again\n"; break;
    case Outcome::not_implemented: break;
  }
}

int print_check(const std::string& which, std::ostream& out) {
  if (which != "all") {
    const Exercise& e = find_exercise(which);
    Report r = run_exercise(e);
    print_one(e, r, out);
    return r.outcome() == Outcome::passed ? 0 : 1;
  }
  int counts[3] = {0, 0, 0};
  for (const Exercise& e : all_exercises()) {
    Report r = run_exercise(e);
    print_one(e, r, out);
    out << "\n";
    ++counts[static_cast<int>(r.outcome())];
  }
  out << counts[0] << " passed, " << counts[1] << " failing, " << counts[2] << " not implemented yet (of "
      << all_exercises().size() << ")\n";
  return counts[0] == static_cast<int>(all_exercises().size()) ? 0 : 1;
}

void print_list(std::ostream& out) {
  char line[256];
  std::snprintf(line, sizeof line, "%3s  %-44s %-26s %s\n", "#", "exercise", "lesson", "your copy");
  out << line;
  for (const Exercise& e : all_exercises()) {
    Report r = run_exercise(e);
    std::snprintf(line, sizeof line, "%3d  %-44s %-26s %s\n", e.number, e.title.c_str(), lesson_label(e.lesson).c_str(),
                  outcome_name(r.outcome()));
    out << line;
  }
  out << "Edit exercises/NN_name.cpp, then: scratchformer exercise check N (or ./run.sh exercise N)\n";
}

}  // namespace sf::exercise
