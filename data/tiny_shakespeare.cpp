// tiny_shakespeare.cpp: find a verified copy, or download one with curl/wget.
#include "data/tiny_shakespeare.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "autograd/errors.h"
#include "data/file_io.h"
#include "data/sha256.h"

extern char** environ;

namespace sf::data {

namespace fs = std::filesystem;

fs::path shipped_tiny_shakespeare() { return fs::path(SF_CORPUS_DIR) / "tinyshakespeare.txt"; }

std::vector<fs::path> default_shakespeare_search() {
  return {shipped_tiny_shakespeare(), fs::path("data") / "corpora" / "tinyshakespeare.txt"};
}

fs::path default_cache_dir() {
  if (const char* d = std::getenv("SF_DATA_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "scratchformer";
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "scratchformer";
  return fs::path(".cache") / "scratchformer";
}

int run_command(const std::vector<std::string>& argv, const fs::path& stderr_file) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return 127;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return 127;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

// sha256 of a file's contents, or "" when it cannot be read.
static std::string file_sha256(const fs::path& p) {
  try {
    return sha256_hex(read_file_bytes(p));
  } catch (const DataError&) { return ""; }
}

// The last non-empty line of a small text file (a tool's error message).
static std::string last_line(const fs::path& p) {
  std::string text;
  try {
    text = read_file_bytes(p);
  } catch (const DataError&) { return ""; }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  size_t nl = text.find_last_of('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

fs::path ensure_tiny_shakespeare(const fs::path& cache_dir) {
  ShakespeareOptions o;
  o.cache_dir = cache_dir;
  return ensure_tiny_shakespeare(o);
}

fs::path ensure_tiny_shakespeare(const ShakespeareOptions& o) {
  const std::string want = kTinyShakespeareSha256;
  std::error_code ec;
  // 1. an explicit file
  if (const char* env = std::getenv("SF_TINYSHAKESPEARE"); o.use_env && env && *env) {
    std::string got = file_sha256(env);
    if (got.empty()) throw DataError(std::string(env) + ": no such file (from $SF_TINYSHAKESPEARE)");
    if (got != want)
      throw DataError(std::string(env) + " (from $SF_TINYSHAKESPEARE): sha256 is " + got + ", expected " + want +
                      "; this is not Tiny Shakespeare's input.txt");
    return env;
  }
  // 2. an earlier download, 3. a copy on the search list
  const fs::path target = o.cache_dir / "tinyshakespeare.txt";
  std::string note;
  if (fs::exists(target, ec)) {
    if (file_sha256(target) == want) return target;
    note = " (the existing " + target.string() + " has the wrong sha256 and was not used)";
  }
  for (const fs::path& p : o.search)
    if (fs::is_regular_file(p, ec) && file_sha256(p) == want) return p;

  // 4. download into a temp file in the cache, check it, move it into place
  const std::string offline_help = ". If this machine is offline, download " + o.url +
                                   " elsewhere and put the file at " + target.string() +
                                   " (or set SF_TINYSHAKESPEARE=/path/to/input.txt); its sha256 must be " + want + note;
  if (!o.download) throw DataError("Tiny Shakespeare not found and downloading is off" + offline_help);
  fs::create_directories(o.cache_dir, ec);
  if (ec) throw DataError(o.cache_dir.string() + ": cannot create the data cache folder (" + ec.message() + ")");
  const std::string suffix = ".part." + std::to_string(::getpid());
  const fs::path part = target.string() + suffix, err = target.string() + ".log" + suffix;
  auto cleanup = [&] {
    fs::remove(part, ec);
    fs::remove(err, ec);
  };
  const std::string t = std::to_string(o.timeout_seconds);
  int rc = run_command({"curl", "-fsSL", "--max-time", t, "-o", part.string(), o.url}, err);
  std::string tool = "curl";
  if (rc == 127) {  // no curl: try wget
    tool = "wget";
    rc = run_command({"wget", "-q", "-T", t, "-O", part.string(), o.url}, err);
  }
  if (rc != 0) {
    std::string why = rc == 127 ? "neither curl nor wget is installed" : tool + " exited with " + std::to_string(rc);
    std::string msg = last_line(err);
    cleanup();
    throw DataError("could not download Tiny Shakespeare from " + o.url + " (" + why + (msg.empty() ? "" : ": " + msg) +
                    ")" + offline_help);
  }
  std::string bytes;
  try {
    bytes = read_file_bytes(part);
  } catch (const DataError&) {
    cleanup();
    throw;
  }
  cleanup();
  std::string got = sha256_hex(bytes);
  if (got != want)
    throw DataError("downloaded " + o.url + " but its sha256 is " + got + ", expected " + want + "; nothing was saved" +
                    offline_help);
  write_file_atomic(target, bytes);
  return target;
}

}  // namespace sf::data
