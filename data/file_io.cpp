// file_io.cpp: POSIX file reading and atomic writing.
#include "data/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "autograd/errors.h"
#include "data/utf8.h"

namespace sf::data {

namespace fs = std::filesystem;

// What a path that is not a regular file is, in words.
static std::string file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a named pipe (FIFO)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string read_file_bytes(const fs::path& path, uintmax_t max_bytes) {
  // O_NONBLOCK: opening a named pipe must not wait for a writer; the type is checked right after.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) throw DataError(path.string() + ": no such file");
    throw DataError(path.string() + ": cannot open for reading (" + std::strerror(err) + ")");
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    std::string kind = S_ISDIR(st.st_mode) ? "is a directory, expected a file"
                                           : "is " + file_kind(st.st_mode) + ", expected a regular file";
    ::close(fd);
    throw DataError(path.string() + ": " + kind);
  }
  if (static_cast<uintmax_t>(st.st_size) > max_bytes) {
    ::close(fd);
    throw DataError(path.string() + ": " + std::to_string(st.st_size) + " bytes, more than the limit of " +
                    std::to_string(max_bytes) + " bytes for this kind of file");
  }
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < bytes.size()) {  // a file that shrinks while it is read ends early; one that grows is cut
    ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      std::string reason = std::strerror(errno);
      ::close(fd);
      throw DataError(path.string() + ": read error (" + reason + ")");
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  bytes.resize(got);
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
  std::string bytes = read_file_bytes(path, kMaxTextBytes);
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
    throw DataError(path.string() + ": cannot create temporary file " + tmp.string() + " (" + reason + ")");
  }
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      fail("write failed");
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail("fsync failed");
  }
  if (::close(fd) != 0) fail("close failed");
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail("rename failed");
}

}  // namespace sf::data
