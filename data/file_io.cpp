// file_io.cpp: POSIX file reading and atomic writing.
#include "data/file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "autograd/errors.h"
#include "data/utf8.h"

namespace sf::data {

namespace fs = std::filesystem;

std::string read_file_bytes(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw DataError(path.string() + ": no such file");
  if (fs::is_directory(path, ec)) throw DataError(path.string() + ": is a directory, expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(path.string() + ": cannot open for reading (" + std::strerror(errno) + ")");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw DataError(path.string() + ": read error");
  return bytes;
}

void check_text(std::string_view text, const std::string& where) {
  if (text.empty()) throw DataError(where + ": file is empty");
  size_t nul = text.find('\0');
  if (nul != std::string_view::npos)
    throw DataError(where + ": looks binary (NUL byte at offset " + std::to_string(nul) +
                    "), expected a UTF-8 text file");
  utf8_decode(text, where);  // throws naming the byte offset
}

std::string read_text_file(const fs::path& path) {
  std::string bytes = read_file_bytes(path);
  check_text(bytes, path.string());
  return bytes;
}

void write_file_atomic(const fs::path& path, std::string_view bytes) {
  fs::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  auto fail = [&](const std::string& what) {
    std::string reason = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw DataError(path.string() + ": " + what + " (" + reason + ")");
  };
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::string reason = std::strerror(errno);
    throw DataError(path.string() + ": cannot create temporary file " + tmp.string() + " (" +
                    reason + ")");
  }
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) { ::close(fd); fail("write failed"); }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) { ::close(fd); fail("fsync failed"); }
  if (::close(fd) != 0) fail("close failed");
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail("rename failed");
}

}  // namespace sf::data
