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
