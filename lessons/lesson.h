// lesson.h: the lessons registry and the few printing helpers every lesson shares.
//
// A lesson is a function `run_lesson_<name>(std::ostream& out)` that takes one module apart with
// the framework's public API and prints what happens inside, step by step. It also returns the
// key numbers it printed (a small struct declared in the lesson's own header, lessons/NAME.h) so
// tests/lessons/ can assert them. Each lesson's text is the markdown file beside its .cpp; docs.h
// keeps the two in step.
#pragma once
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "autograd/tensor.h"

namespace sf::lessons {

// The language a lesson prints its headings and explanations in; the numbers are the same in
// both. The language travels with the stream (set_language(out, Lang::zh)), so a lesson needs no
// extra argument and two streams can print two languages at once.
enum class Lang { en, zh };
void set_language(std::ostream& out, Lang lang);
Lang language(std::ostream& out);
// "en" or "zh" -> Lang; anything else throws ConfigError naming `where` and the valid values.
Lang parse_language(const std::string& text, const std::string& where);
// The language asked for by the environment: SF_LANG ("en" or "zh"), else English.
Lang language_from_environment();
// The text of the stream's language: out << tr(out, "Scores", "注意力分数").
const char* tr(std::ostream& out, const char* en, const char* zh);

// Where a lesson draws its pictures (PNG): lesson_docs sets lessons/images/ of the source tree;
// "" (the default) draws none. What the lesson prints is the same either way.
void set_image_dir(std::ostream& out, const std::string& dir);
std::string image_dir(std::ostream& out);

struct Lesson {
  std::string name;      // what `scratchformer lesson NAME` takes, e.g. "attention"
  std::string title;     // one line for the list
  std::string title_zh;  // the same line in Chinese
  std::function<void(std::ostream&)> run;
  // A lesson that trains for minutes. The doc check runs it once, in English, and checks the
  // Chinese text's output blocks by their numbers against that run (docs.h, same_printed_numbers).
  bool slow = false;
  // Set by the course (course.cpp) from the lesson's place in it:
  int number = 0;      // 1, 2, ... : the reading order
  std::string file{};  // the stem of its .cpp/.md in lessons/ (and lessons/zh/), e.g. "attention"
  int part = 0;        // its part: an index into course_parts()
};

// Each lesson declares its own entry at the end of its .cpp, `Lesson lesson_STEM()` with STEM
// its file's stem, and lessons/course.cpp lists the entries part by part in reading order.
// `printing` wraps a lesson function that returns its key numbers into one that only prints.
template <class F>
std::function<void(std::ostream&)> printing(F f) {
  return [f](std::ostream& out) { (void)f(out); };
}

// A part of the course: a few lessons that belong together.
struct Part {
  std::string title;     // "The pieces"
  std::string title_zh;  // "模型的部件"
  std::string about;     // one line: what the part is for
  std::string about_zh;
  std::vector<const Lesson*> lessons;  // in reading order
};

// Every lesson, in reading order (numbers 1, 2, ...).
const std::vector<Lesson>& all_lessons();
// The parts, in reading order.
const std::vector<Part>& course_parts();
// A lesson by name ("attention"), file stem ("mixed_precision") or number ("5"); nullptr if
// there is none.
const Lesson* find_lesson(const std::string& name_or_number);
// Runs a lesson into a string in the given language (what the tests and the doc checker read).
std::string lesson_output(const Lesson& lesson, Lang lang = Lang::en);
// The lessons part by part, one line each (number, name, title), in the stream's language.
void print_lesson_list(std::ostream& out);

// ---- printing helpers ----
// A numbered step heading: "== 2. Scale by sqrt(d_k) ==". The markdown's output blocks refer to
// steps by these numbers.
void heading(std::ostream& out, int step, const std::string& title);
// The same heading in the stream's language.
void heading(std::ostream& out, int step, const char* en, const char* zh);
// x with `precision` digits after the point ("0.2750"); -0 prints as 0, inf as "inf".
std::string fmt(double x, int precision = 4);
// x in scientific notation with `digits` digits after the point ("6.1035e-05"), "inf", "nan".
std::string fmt_sci(double x, int digits = 4);
// [a, b, c] with fmt for each value.
std::string fmt_vec(const std::vector<double>& v, int precision = 4);
// "label = Tensor(shape=..., ...)\n[...]" rounded to `precision` digits; tensors of more than
// `threshold` elements show only the first and last 3 entries of each dimension.
void show(std::ostream& out, const std::string& label, const Tensor& t, int precision = 4, int64_t threshold = 64);
// A matrix (rows, cols) as a terminal heat map: one shade character per cell,
// " .:-=+*#%@" from 0 to `max_value`, with row and column labels.
void heat_map(std::ostream& out, const std::vector<double>& values, int64_t rows, int64_t cols,
              const std::vector<std::string>& row_labels, const std::vector<std::string>& col_labels,
              double max_value = 1.0);
// The largest |a_i - b_i| (the vectors must have the same length).
double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace sf::lessons
