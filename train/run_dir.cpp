// run_dir.cpp: recognising a run folder, locking it, and starting a fresh run in it.
#include "train/run_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include <nlohmann/json.hpp>

#include "autograd/errors.h"
#include "train/atomic_file.h"

namespace sf {

namespace fs = std::filesystem;
using json = nlohmann::json;

const std::vector<std::string> kRunFiles = {"run.json",      "config.json", "tokenizer.json", "checkpoints",
                                            "metrics.jsonl", "metrics.csv", "loss.png",       "summary.json"};
static const char* kMarker = "run.json";
static const char* kLockFile = ".lock";

// What a kill -9 (or a power cut) can leave of an atomic write (atomic_file.cpp): the temporary
// "<name>.tmp.<pid>" of one of the folder's own files `names`. A run killed while it wrote its
// first run.json leaves only that and the lock: still our folder, not the user's.
static bool is_write_leftover(const std::string& file, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    const std::string prefix = name + ".tmp.";
    if (file.size() > prefix.size() && file.compare(0, prefix.size(), prefix) == 0 &&
        std::all_of(file.begin() + static_cast<std::ptrdiff_t>(prefix.size()), file.end(),
                    [](char c) { return c >= '0' && c <= '9'; }))
      return true;
  }
  return false;
}

// Removes the write leftovers of `names` from `dir` (a fresh run or study replaces them too).
static void remove_write_leftovers(const std::string& dir, const std::vector<std::string>& names) {
  std::vector<fs::path> leftovers;
  for (const auto& e : fs::directory_iterator(dir))
    if (is_write_leftover(e.path().filename().string(), names)) leftovers.push_back(e.path());
  for (const fs::path& p : leftovers) fs::remove(p);
}

// What `dir` is: absent, other (a file), `run` when `ours(dir)` finds our marker in the folder,
// else empty (nothing but our lock file and write leftovers of `names`) or other. Run folders and
// study folders differ only in their markers and file names.
template <class Ours>
static RunDirKind classify_folder(const std::string& dir, const std::vector<std::string>& names, Ours ours) {
  std::error_code ec;
  fs::file_status st = fs::status(dir, ec);
  if (!fs::exists(st)) return RunDirKind::absent;
  if (!fs::is_directory(st)) return RunDirKind::other;
  if (ours(fs::path(dir))) return RunDirKind::run;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string file = e.path().filename().string();
    if (file != kLockFile && !is_write_leftover(file, names)) return RunDirKind::other;
  }
  if (ec) return RunDirKind::other;  // cannot even list it: not ours to write into
  return RunDirKind::empty;
}

static bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

RunDirKind classify_run_dir(const std::string& dir) {
  return classify_folder(dir, kRunFiles, [](const fs::path& d) {
    std::error_code ec;
    return is_file(d / kMarker) || (is_file(d / "config.json") && fs::is_directory(d / "checkpoints", ec));
  });
}

std::string read_run_id(const std::string& dir) {
  fs::path marker = fs::path(dir) / kMarker;
  std::error_code ec;
  if (!fs::is_regular_file(marker, ec)) return "";
  json j = json::parse(read_whole_file(marker.string()), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("run_id") || !j["run_id"].is_string())
    throw CheckpointError(marker.string() + ": not a scratchformer run marker (corrupt JSON or no \"run_id\")");
  return j["run_id"].get<std::string>();
}

void check_fresh_run_dir(const std::string& dir, bool overwrite) {
  switch (classify_run_dir(dir)) {
    case RunDirKind::absent:
    case RunDirKind::empty: return;
    case RunDirKind::run:
      if (overwrite) return;
      throw ConfigError("output.run_dir: " + dir + " already holds a run; continue it with --resume " + dir +
                        ", replace it with --set output.overwrite=true, or pick another output.run_dir");
    case RunDirKind::other:
      if (!fs::is_directory(dir)) throw ConfigError("output.run_dir: " + dir + " is a file, not a folder");
      throw ConfigError("output.run_dir: " + dir + " is not empty and is not a scratchformer run (no run.json); " +
                        "nothing in it was touched; pick a new or empty folder");
  }
}

RunLock::RunLock(const std::string& dir) {
  std::string path = (fs::path(dir) / kLockFile).string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error("output.run_dir: cannot create the lock file " + path + " (" + std::strerror(errno) + ")");
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    char buf[32] = {0};
    ssize_t n = ::pread(fd_, buf, sizeof buf - 1, 0);
    std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK)
      throw Error("output.run_dir: " + dir + " is in use by another scratchformer process" +
                  (pid.empty() ? std::string() : " (pid " + pid + ")") +
                  "; wait for it to finish or stop it (Ctrl-C saves its checkpoint) before starting another");
    throw Error("output.run_dir: cannot lock " + path + " (" + std::strerror(err) + ")");
  }
  std::string me = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, me.data(), me.size(), 0) < 0) {
    // The pid is only for the other process's message; the lock itself holds.
  }
}

RunLock::~RunLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the flock
}

void check_not_in_use(const std::string& dir) {
  std::error_code ec;
  if (fs::is_regular_file(fs::path(dir) / kLockFile, ec)) RunLock probe(dir);  // released at once
}

static std::string new_run_id() {
  std::random_device rd;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%08x%08x", rd(), rd());
  return buf;
}

std::string start_fresh_run(const std::string& dir, bool overwrite) {
  check_fresh_run_dir(dir, overwrite);  // again: the folder may have changed while the data loaded
  try {
    // run.json (first in the list) goes last: a crash half-way still leaves a recognisable run.
    for (auto f = kRunFiles.rbegin(); f != kRunFiles.rend(); ++f) fs::remove_all(fs::path(dir) / *f);
    remove_write_leftovers(dir, kRunFiles);
  } catch (const fs::filesystem_error& e) {
    throw Error("output.run_dir: cannot clear the old run in " + dir + " (" + e.code().message() + ")");
  }
  std::string id = new_run_id();
  json marker = {{"format", "scratchformer run"}, {"version", 1}, {"run_id", id}};
  atomic_write_file((fs::path(dir) / kMarker).string(), marker.dump(2) + "\n");
  return id;
}

// ---- a comparison study's folder ----

const std::vector<std::string> kStudyFiles = {
    "study.json",      "report.md",        "runs",          "grad_norms.csv", "depth.csv",   "hidden_norms.csv",
    "runs.csv",        "curves.csv",       "grad_norms.gp", "grad_norms.png", "depth.gp",    "depth.png",
    "hidden_norms.gp", "hidden_norms.png", "curves.gp",     "curves.png",     "lr_sweep.gp", "lr_sweep.png"};
static const char* kStudyMarker = "study.json";

RunDirKind classify_study_dir(const std::string& dir) {
  return classify_folder(dir, kStudyFiles, [](const fs::path& d) {
    return is_file(d / kStudyMarker) ||
           (is_file(d / "report.md") && is_file(d / "grad_norms.csv"));  // a study written before study.json
  });
}

void check_fresh_study_dir(const std::string& dir, bool overwrite) {
  switch (classify_study_dir(dir)) {
    case RunDirKind::absent:
    case RunDirKind::empty: return;
    case RunDirKind::run:
      if (overwrite) return;
      throw ConfigError("output.run_dir: " + dir + " already holds a compare study; replace it with --set " +
                        "output.overwrite=true, or pick another output.run_dir");
    case RunDirKind::other:
      if (!fs::is_directory(dir)) throw ConfigError("output.run_dir: " + dir + " is a file, not a folder");
      throw ConfigError("output.run_dir: " + dir + " is not empty and is not a compare study (no study.json); " +
                        "nothing in it was touched; pick a new or empty folder");
  }
}

void start_fresh_study(const std::string& dir, bool overwrite) {
  check_fresh_study_dir(dir, overwrite);
  try {
    // study.json (first in the list) goes last: a crash half-way still leaves a recognisable study.
    for (auto f = kStudyFiles.rbegin(); f != kStudyFiles.rend(); ++f) fs::remove_all(fs::path(dir) / *f);
    remove_write_leftovers(dir, kStudyFiles);
  } catch (const fs::filesystem_error& e) {
    throw Error("output.run_dir: cannot clear the old study in " + dir + " (" + e.code().message() + ")");
  }
  json marker = {{"format", "scratchformer compare study"}, {"version", 1}};
  atomic_write_file((fs::path(dir) / kStudyMarker).string(), marker.dump(2) + "\n");
}

}  // namespace sf
