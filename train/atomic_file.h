// atomic_file.h: writing a file so that a crash (or kill -9) leaves either the old file or the
// new one, never half of one: write a temporary file in the same folder, fsync it, rename it over
// the target, then fsync the folder so the rename itself is on disk.
#pragma once
#include <string>
#include <string_view>

namespace sf {

// Replaces `path` with `bytes` atomically. Throws Error naming the path (and the OS reason).
void atomic_write_file(const std::string& path, std::string_view bytes);

// fsync of a directory, so renames and new files inside it survive a power cut.
void fsync_directory(const std::string& dir);

// The whole content of a file; Error naming the path when it cannot be read.
std::string read_whole_file(const std::string& path);

}  // namespace sf
