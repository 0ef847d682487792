// file_io.h: reading data files with errors that name the file, and writing files atomically
// (temp file in the same folder + fsync + rename), so a crash never leaves a half-written file.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

namespace sf::data {

// All bytes of a file. DataError "<path>: no such file" / "is a directory" / "cannot read".
std::string read_file_bytes(const std::filesystem::path& path);

// A text file for training: read_file_bytes plus DataError when it is empty, contains a NUL
// byte ("looks binary (NUL byte at offset N)") or is not valid UTF-8 (names the byte offset).
std::string read_text_file(const std::filesystem::path& path);

// Checks that `text` read from `where` is non-empty, NUL-free UTF-8 (the rules above).
void check_text(std::string_view text, const std::string& where);

// Writes `bytes` to `path` atomically: <path>.tmp.<pid> is written, fsync'ed and renamed over
// `path`. On any failure the temp file is removed and DataError names `path`.
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes);

}  // namespace sf::data
