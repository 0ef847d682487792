// lesson.cpp: finding and listing the lessons (their order is course.cpp's), and the printing
// helpers they share.
#include "lessons/lesson.h"

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <memory>
#include <sstream>

#include "autograd/errors.h"

namespace sf::lessons {

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
  const bool zh = language(out) == Lang::zh;
  out << tr(out, "The course, part by part (text in lessons/NAME.md; run one with `scratchformer lesson NAME`):\n",
            "课程，按部分排列（正文在 lessons/zh/NAME.md；运行其中一课：`scratchformer lesson NAME`）：\n");
  for (size_t p = 0; p < course_parts().size(); ++p) {
    const Part& part = course_parts()[p];
    out << "\n"
        << tr(out, "Part ", "第 ") << p + 1 << (zh ? " 部分：" : ": ") << (zh ? part.title_zh : part.title)
        << (zh ? "（" : " (") << (zh ? part.about_zh : part.about) << (zh ? "）\n" : ")\n");
    for (const Lesson* l : part.lessons)
      out << std::setw(3) << l->number << "  " << std::left << std::setw(16) << l->name << std::right
          << (zh ? l->title_zh : l->title) << "\n";
  }
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

// Display width of a UTF-8 string: CJK characters take two terminal columns.
static int display_width(const std::string& s) {
  int w = 0;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    int len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    uint32_t cp = len == 1 ? c : c & (0x7F >> len);
    for (int k = 1; k < len && i + static_cast<size_t>(k) < s.size(); ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + static_cast<size_t>(k)]) & 0x3F);
    bool wide = (cp >= 0x2E80 && cp <= 0x9FFF) || (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) ||
                (cp >= 0xFF00 && cp <= 0xFF60);
    w += wide ? 2 : 1;
    i += static_cast<size_t>(len);
  }
  return w;
}

static std::string pad(const std::string& s, int width) {
  return s + std::string(static_cast<size_t>(std::max(0, width - display_width(s))), ' ');
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
  for (const auto& l : col_labels) out << " " << pad(l, col_w);
  out << "\n";
  for (int64_t r = 0; r < rows; ++r) {
    out << pad(row_labels[static_cast<size_t>(r)], label_w) << " |";
    for (int64_t c = 0; c < cols; ++c) {
      double v = values[static_cast<size_t>(r * cols + c)] / max_value;
      int level = static_cast<int>(std::lround(std::clamp(v, 0.0, 1.0) * 4));
      out << " " << pad(shades[level], col_w);
    }
    out << "\n";
  }
  out << tr(out, "(shades: '  ' 0, ░ 0.25, ▒ 0.5, ▓ 0.75, █ ", "（灰度：'  ' 0，░ 0.25，▒ 0.5，▓ 0.75，█ ")
      << fmt(max_value, 2) << tr(out, ")\n", "）\n");
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return a.size() == b.size() ? m : INFINITY;
}

}  // namespace sf::lessons
