// atomic_file.cpp: temp file + fsync + rename + fsync(dir).
#include "train/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "autograd/errors.h"

namespace sf {

namespace fs = std::filesystem;

void fsync_directory(const std::string& dir) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // best effort: some file systems do not allow opening folders
  ::fsync(fd);
  ::close(fd);
}

void atomic_write_file(const std::string& path, std::string_view bytes) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  auto fail = [&](const std::string& what, int fd) {
    std::string reason = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    throw Error(path + ": " + what + " (" + reason + ")");
  };
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot create a temporary file", -1);
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("write failed", fd);
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) fail("fsync failed", fd);
  if (::close(fd) != 0) fail("close failed", -1);
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail("rename failed", -1);
  fsync_directory(fs::path(path).parent_path().string());
}

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot read (" + std::strerror(errno) + ")");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace sf
