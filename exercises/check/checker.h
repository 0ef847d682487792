// checker.h: how an exercise is checked, and the helpers every check uses.
//
// An exercise's checks run in order (forward values, then a float64 gradient check of the
// learner's backward, then edge cases). The first one that does not hold ends the exercise with
// what a learner can act on: the check's name, where it differs, the expected and the actual
// value, and a hint. A stub (NotImplemented) ends it as "not implemented yet". The same checking
// code is linked once against the learner's exercises/ and once against exercises/solutions/.
#pragma once
#include <functional>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/tensor.h"

namespace sf::exercise {

enum class Outcome { passed, failed, not_implemented };
const char* outcome_name(Outcome o);  // "passed", "failing", "not implemented yet"

// A check that does not hold, thrown from inside helpers (e.g. a backward returning the wrong
// shape while gradcheck runs it); Report::check turns it into the check's failure text.
struct CheckFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The run of one exercise: the lines to print and how it ended.
class Report {
 public:
  // Runs one check: `f` returns "" when it holds, else what differs ("at (0, 2): expected ...").
  // NotImplemented ends the exercise as not implemented; any other exception from the learner's
  // code fails the check, quoting its message. Once a check has not held, later ones are skipped
  // (they would repeat the first problem). Returns whether this check held.
  bool check(const std::string& name, const std::function<std::string()>& f, const std::string& hint);
  // Prints each line to `out` as soon as its check ends (`exercise check`: the lines before a
  // crash of the learner's code are then on the screen).
  void echo_to(std::ostream* out) { echo_ = out; }
  Outcome outcome() const { return outcome_; }
  int checks_passed() const { return passed_; }
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  void add_line(const std::string& line);
  Outcome outcome_ = Outcome::passed;
  int passed_ = 0;
  std::vector<std::string> lines_;
  std::ostream* echo_ = nullptr;
};

struct Exercise {
  int number;          // 1, 2, ...: the course order
  std::string title;   // "softmax forward"
  std::string lesson;  // the name of the lesson that teaches it ("attention")
  std::string file;    // "05_softmax_forward": exercises/<file>.cpp, exercises/solutions/<file>.cpp
  int difficulty;      // 1 (type what the lesson shows) .. 5 (derive it on paper first)
  std::function<void(Report&)> run;
};

// The exercise's title in Chinese, and in the language set (set_chinese).
std::string title_zh(const Exercise& e);
std::string title_of(const Exercise& e);
// How a check's lines start, in the language set: "FAIL  " and "      hint: ".
std::string fail_mark();
std::string hint_mark();

// Every exercise, in course order.
const std::vector<Exercise>& all_exercises();
// An exercise by number ("5" or "05"); anything else throws ConfigError naming the valid numbers.
const Exercise& find_exercise(const std::string& number);
// Runs one exercise's checks; the learner's code cannot make it throw. With `echo`, each line is
// printed there as its check ends.
Report run_exercise(const Exercise& e, std::ostream* echo = nullptr);

// How the printouts name an exercise's lesson, from the lesson's name ("lesson 5 attention"). The
// course's list of lessons sits above the exercises, so the program that prints passes it in.
using LessonLabel = std::function<std::string(const std::string& lesson)>;

// What to print if the learner's code crashes (a signal such as SIGSEGV) during the check that
// is running: its name and the likely causes, in the checker's language. A fixed buffer, so that
// a signal handler can write it (the CLI's handler, app/cmd_exercise.cpp); "" between checks.
const char* crash_message();

// `exercise check N|all`: prints each exercise's checks; returns 0 when all passed, else 1.
int print_check(const std::string& which, std::ostream& out, const LessonLabel& lesson_label);
// `exercise list`: each exercise, its lesson, its difficulty and whether the learner's copy is
// done, failing or still to do; the first one not done is marked next. In Chinese when zh.
void print_list(std::ostream& out, const LessonLabel& lesson_label, bool zh = false);

// The hints of one exercise, in tiers: 1 the idea, 2 the formula, 3 the code-level hint
// (hints.cpp). A stub's comment gives shapes, the contract and the idea only.
struct HintTiers {
  const char* en[3];
  const char* zh[3];
};
const HintTiers& hints_of(int number);
// `exercise hint N [tier]`: tiers 1 .. tier (default 1) of exercise N in the stream's language;
// a tier outside 1..3 throws ConfigError.
void print_hint(const std::string& which, int tier, std::ostream& out, bool zh = false);

// ---- the language of what a learner reads (check_util.cpp) ----
// English unless set_chinese(true) (`exercise check N` with SF_LANG=zh): every FAIL line, hint and
// diagnosis exists in both languages, the Chinese in the course's terms (lessons/zh/glossary.md).
void set_chinese(bool zh);
bool chinese();
// `en` or `zh`, in the language set.
std::string tr(const std::string& en, const std::string& zh);
// A check's name or hint (English, as written at the check) in Chinese, from the table in
// zh_texts.cpp; a text the table lacks is returned as it is and remembered in untranslated(),
// which a test requires to stay empty.
std::string zh_text(const std::string& en);
const std::vector<std::string>& untranslated();
// The table's Chinese for `en` if it has one, else `en` (a text already in Chinese passes as is).
std::string zh_text_if_known(const std::string& en);

// ---- helpers for the checks (check_util.cpp) ----

// "" when got equals expected within |e - g| <= atol + rtol |e| everywhere (equal infinities and
// NaN against NaN count as equal), else "at (1, 2): expected 0.268941, got 0.5 (3 of 12 values
// differ)". Names the shape when the shapes differ and says so when `got` is undefined.
std::string compare(const Tensor& expected, const Tensor& got, double atol = 1e-9, double rtol = 1e-7);
std::string compare(const std::vector<double>& expected, const std::vector<double>& got, double atol = 1e-9,
                    double rtol = 1e-7);
std::string compare(double expected, double got, double atol = 1e-9, double rtol = 1e-7);

// A likely mistake: its name and what code with that mistake returns.
struct Mistake {
  std::string what;
  Tensor value;
};
// `problem` with its likely cause appended: "...; this is exactly what you get when <what>".
std::string with_cause(const std::string& problem, const std::string& what);
// `problem` (a compare() result) with the first mistake whose value `got` matches appended
// ("...; this is what you get when <what>"), so a learner sees the likely cause, not only the
// number. Unchanged when `problem` is empty or no mistake matches.
std::string diagnose(std::string problem, const Tensor& got, const std::vector<Mistake>& mistakes, double atol = 1e-9,
                     double rtol = 1e-7);

// "" when `got` has `dtype`, else what differs ("float64 for float32 inputs: ...").
std::string same_dtype(const Tensor& got, DType dtype);

// "" when f throws (any exception other than NotImplemented, which passes through: a stub is
// not written yet), else "<what> was accepted".
std::string refuses(const std::function<void()>& f, const std::string& what);

// A float64 tensor of normal(0, stddev) values, seeded (checks are deterministic).
Tensor random_f64(const Shape& shape, uint64_t seed, double stddev = 1.0);

// The learner's backward, as the graph calls it: from the op's inputs, its output and dout, the
// gradient of each input (undefined for an input without one).
using LearnerBackward =
    std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs, const Tensor& out, const Tensor& dout)>;
// An op whose forward is the framework's `forward` and whose backward is the learner's: what
// gradcheck runs to test a hand-written backward. A gradient of the wrong shape, or an undefined
// one, throws CheckFailed naming `input_names[i]`.
Tensor op_with_backward(const std::vector<Tensor>& inputs,
                        const std::function<Tensor(const std::vector<Tensor>&)>& forward,
                        const LearnerBackward& backward, const std::vector<std::string>& input_names);

// Float64 finite differences against backward() for f (sf::gradcheck, torch's tolerances), in
// the learner's words: "" when it holds, else "d out(0, 1) / d x(0, 2): backward gives 0.5,
// finite differences give 0.25". A result without gradient history is named as such.
std::string gradient_check(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                           const std::vector<Tensor>& inputs, const std::vector<std::string>& input_names);

// Each exercise's checks, one function per exercise (check_*.cpp).
void check_tanh_backward(Report& r);
void check_sum_to_shape(Report& r);
void check_embedding_backward(Report& r);
void check_sinusoidal_positions(Report& r);
void check_softmax_forward(Report& r);
void check_softmax_backward(Report& r);
void check_cross_entropy(Report& r);
void check_causal_attention(Report& r);
void check_online_softmax(Report& r);
void check_split_merge_heads(Report& r);
void check_layer_norm_forward(Report& r);
void check_layer_norm_backward(Report& r);
void check_gelu(Report& r);
void check_kv_cache_append(Report& r);
void check_warmup_cosine(Report& r);
void check_clip_grad_norm(Report& r);
void check_adamw_step(Report& r);
void check_loss_scaler(Report& r);
void check_self_attention(Report& r);
void check_transformer_block(Report& r);
void check_gpt_forward(Report& r);
void check_train_step(Report& r);
void check_generate(Report& r);
void check_attention_backward(Report& r);
void check_attention_cost(Report& r);
void check_softmax_entropy(Report& r);
void check_partial_rows(Report& r);
void check_sliding_window(Report& r);
void check_kv_cache_bytes(Report& r);
void check_rope_alibi(Report& r);
void check_grad_accumulation(Report& r);

}  // namespace sf::exercise
