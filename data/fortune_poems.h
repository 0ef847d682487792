// fortune_poems.h: the Tang poems (唐诗三百首, file tang300) and Song poems (file song100) that
// Debian's fortunes-zh package installs, as plain training text.
//
// A fortune file holds one poem per entry, entries separated by a line "%"; each entry starts
// with a title line (《静夜思》, or 题目:《寒食》) and an author line (作者：李白), both wrapped in
// terminal colour escapes (ESC [ 32 m ... ESC [ m). The reader removes the escapes, the "%" lines,
// the titles and the authors, and keeps the poems' own lines, one blank line between poems: the
// model learns the poems' form (lines of 5 or 7 characters), not a catalogue.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

namespace sf::data {

// Where fortunes-zh puts a file ("tang300", "song100").
std::filesystem::path fortune_poems_path(const std::string& file);

// The poems of a fortune file's text, as described above.
std::string poems_from_fortune_text(std::string_view text);

// Reads `path` (DataError naming it, and saying to install fortunes-zh when it is missing).
std::string read_fortune_poems(const std::filesystem::path& path);

// Clauses: the runs of characters between punctuation marks (，。！？；：、 and their ASCII
// forms) and line breaks. The share of the non-empty clauses that have 5 or 7 characters: the
// regular lines of Tang poetry (about 95% of the tang300 poems' clauses, measured by a test).
double five_or_seven_share(std::string_view text, int64_t* clauses = nullptr);

// `text` up to and including its last punctuation mark or line break ("" when it has none): a
// generated sample cut off by a token budget, with the unfinished clause at its end removed.
std::string up_to_last_clause_end(std::string_view text);

}  // namespace sf::data
