// docs.h: keeps each lesson's markdown in step with its compiled code and its real output.
//
// In a lesson's .cpp, a region between the lines `// [excerpt: NAME]` and `// [/excerpt]` is an
// excerpt. In its .md, a fenced block right after `<!-- excerpt: NAME -->` must equal that region
// (de-indented), and a fenced block right after `<!-- output: N -->` must equal step N of what the
// lesson prints (from its "== N. ..." heading to the next heading; `output: all` is everything).
// `lesson_docs` rewrites those blocks; tests/lessons/ checks that they are up to date.
//
// Every lesson has two texts, lessons/NAME.md (English) and lessons/zh/NAME.md (Chinese),
// with the same set of tagged blocks. The Chinese excerpts equal the code like the English ones;
// the Chinese output blocks equal what the lesson prints in Chinese. A slow lesson (one that
// trains for minutes, Lesson::slow) is run once per check, in English, and its Chinese output
// blocks are checked by their numbers against that run.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "lessons/lesson.h"

namespace sf::lessons {

// NAME -> the lines between the markers, common indentation removed, markers excluded.
std::map<std::string, std::string> extract_excerpts(const std::string& cpp_source);
// "all" -> the whole output; "N" -> step N with its heading line.
std::map<std::string, std::string> output_sections(const std::string& output);

// What may print differently on a build whose float vectors are wider or narrower than those of
// the build that made a text (its kernels then add floats in another order). Written after the
// step of an output tag, each rule after a `|`:
//   <!-- output: 7 | "val loss:" ±0.02 | "sample (seed 1337):" sample 200 -->
// - `"START" ±T`: the numbers of the line that starts with START (leading spaces aside) may
//   differ by up to T; `"START" ±T +N` covers that line and the N lines after it.
// - `"START" sample N`: the line that starts with START is followed by a sample of N characters
//   (and a line break), checked for its form only: N characters, each one of the text's
//   `<!-- sample characters: "..." -->`.
// On a build of the text's own width (`<!-- vector width: W -->` in the text) the rules are not
// used: every number within 1.5 units of its last digit, every word and sample exactly.
struct WidthRule {
  std::string line_start;
  double tolerance = 0;  // a number rule: the largest difference allowed
  int more_lines = 0;    // a number rule: the lines after the START line that it covers
  int sample_chars = 0;  // > 0: a sample rule
};
// The rules of a tag's text after its key (`"val loss:" ±0.02 | ...`); throws sf::Error naming
// what is wrong.
std::vector<WidthRule> parse_width_rules(const std::string& spec);

struct DocBlock {
  std::string kind;              // "excerpt" or "output"
  std::string key;               // the excerpt name or the step number
  std::string text;              // the block's current content (without the fences)
  int line = 0;                  // 1-based line of the <!-- ... --> marker
  std::vector<WidthRule> rules;  // an output block's width rules (above)
};

// The floats in one vector of this build's kernels: 16 with AVX-512, 8 with AVX2, 4 with NEON.
int build_vector_width();
// A text's `<!-- vector width: W -->` (0 when it has none) and the characters its samples may
// hold, from `<!-- sample characters: "..." -->`: listed one by one, `\n` a line break, `a-z` a
// range (a `-` first or last is itself). Throws sf::Error on a malformed line.
struct TextMachine {
  int vector_width = 0;
  std::vector<std::string> sample_characters;  // one UTF-8 character each
};
TextMachine text_machine(const std::string& markdown);
// Every tagged block of a markdown text, in order.
std::vector<DocBlock> tagged_blocks(const std::string& markdown);
// The ```cpp blocks of a markdown text that are NOT tagged as excerpts (1-based line numbers):
// code that nothing checks.
std::vector<int> untagged_cpp_blocks(const std::string& markdown);

// The markdown with every tagged block replaced by its current content. Unknown excerpt names
// or steps are listed in `problems` and leave the block as it was.
std::string sync_markdown(const std::string& markdown, const std::map<std::string, std::string>& excerpts,
                          const std::map<std::string, std::string>& outputs, std::vector<std::string>& problems);

// True when two printed texts are the same apart from the last printed digit of a number
// (|a - b| <= 1.5 units of the last digit shown): floating-point sums may round differently
// on another CPU or BLAS thread count, everything else must match exactly.
bool same_printed_text(const std::string& a, const std::string& b);
// True when two texts print the same numbers in the same order, each to its last printed digit
// as above, whatever the words around them (an English and a Chinese run of one lesson).
bool same_printed_numbers(const std::string& a, const std::string& b);
// The same two comparisons on a build of another vector width than the text's: the numbers its
// rules name within their tolerances, the samples by their form (the rules' samples in both), the
// rest as above. `text` is a block, `printed` a run's step; for the numbers-only comparison each
// side has its own rules (the two languages' lines start differently), and they must give every
// number the same tolerance.
bool same_printed_text_across_widths(const std::string& text, const std::string& printed,
                                     const std::vector<WidthRule>& rules, const TextMachine& machine);
bool same_printed_numbers_across_widths(const std::string& text, const std::vector<WidthRule>& text_rules,
                                        const std::string& printed, const std::vector<WidthRule>& printed_rules,
                                        const TextMachine& machine);
// Whether two blocks' rules cover the same numbers with the same tolerances and the same samples
// (an English and a Chinese block of one step).
bool same_width_rules(const std::string& a, const std::vector<WidthRule>& a_rules, const std::string& b,
                      const std::vector<WidthRule>& b_rules);

// The paths of a lesson's two texts under the repository root `root`.
std::string text_path(const std::string& root, const Lesson& lesson, Lang lang);
// Everything wrong with a lesson's two texts, one line each naming the file and line: a missing
// text, an untagged ```cpp block, block sets that differ between the languages, an excerpt or
// output block that is not current, numbers that differ between the two languages' runs.
// Runs the lesson twice (en, zh), or once (en) when it is slow. Empty when all is well.
// With SlowLessons::texts_only a slow lesson is not run at all (its full run takes minutes, too
// long for every test run): its excerpts, its block sets, and the numbers of its Chinese output
// blocks against its English ones are checked, the texts against each other.
enum class SlowLessons { run, texts_only };
std::vector<std::string> check_lesson_texts(const std::string& root, const Lesson& lesson,
                                            SlowLessons slow = SlowLessons::run);
// Rewrites the tagged blocks of both texts from the code and from a run in each language
// (a slow lesson computes its numbers once per process, so both print the same training; lessons
// 14 and 18 keep their first run's numbers), and has
// the English run draw its pictures into ROOT/lessons/images/. Returns the paths it changed; unknown names or steps go
// to `problems` and leave their blocks as they were.
std::vector<std::string> sync_lesson_texts(const std::string& root, const Lesson& lesson,
                                           std::vector<std::string>& problems);

// Rewrites only the excerpt blocks of both texts from the code, leaving every output block as it
// is, without running the lesson: after a change to the code that cannot change what it prints
// (a rename, formatting). Returns the paths it changed.
std::vector<std::string> sync_lesson_excerpts(const std::string& root, const Lesson& lesson,
                                              std::vector<std::string>& problems);

std::string read_text_file(const std::string& path);  // throws sf::Error naming the file
// Writes atomically: a temporary file in the same directory, flushed, then renamed.
void write_text_file(const std::string& path, const std::string& text);

}  // namespace sf::lessons
