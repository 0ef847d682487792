// file_io.h: reading data files with errors that name the file, and writing files atomically
// (temp file in the same folder + fsync + rename), so a crash never leaves a half-written file.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace sf::data {

// Limits on what is read into memory: a file larger than this is refused before it is read.
inline constexpr uintmax_t kMaxFileBytes = uintmax_t{8} << 30;  // 8 GiB: any file (token caches, ...)
inline constexpr uintmax_t kMaxTextBytes = uintmax_t{1} << 30;  // 1 GiB: training text, per file and in all

// All bytes of a regular file, at most max_bytes. DataError naming the path: "no such file", "is a
// directory", "is a named pipe (FIFO), expected a regular file" (also devices and sockets: they
// could block forever or never end), "N bytes, more than the limit", "cannot open (reason)".
std::string read_file_bytes(const std::filesystem::path& path, uintmax_t max_bytes = kMaxFileBytes);

// A text file for training (at most kMaxTextBytes): read_file_bytes plus DataError when it is empty, contains a NUL
// byte ("looks binary (NUL byte at offset N)") or is not valid UTF-8 (names the byte offset).
std::string read_text_file(const std::filesystem::path& path);

// Checks that `text` read from `where` is non-empty, NUL-free UTF-8 (the rules above).
void check_text(std::string_view text, const std::string& where);

// Writes `bytes` to `path` atomically: <path>.tmp.<pid> is written, fsync'ed and renamed over
// `path`. On any failure the temp file is removed and DataError names `path`.
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes);

}  // namespace sf::data
