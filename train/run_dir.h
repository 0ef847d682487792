// run_dir.h: a run folder is the user's data. The rules that keep it so:
//
//   recognised, never assumed   A fresh run goes into a folder that is new, empty, or already a
//                               scratchformer run (then only with output.overwrite). A run folder
//                               is marked by RUN/run.json, written when the run starts; any other
//                               folder is refused and nothing in it is touched.
//   one writer                  train and train --resume hold an advisory lock (flock) on
//                               RUN/.lock for as long as they run; a second process is refused
//                               with the holder's pid. The lock ends with the process, even on
//                               kill -9, so a crash never leaves a stale lock.
//   only our files              overwrite removes the files a run writes (kRunFiles), nothing else.
//
// A comparison study's folder (scratchformer compare) follows the same rules (end of this file).
#pragma once
#include <string>
#include <vector>

namespace sf {

// The files and folders a run writes into its folder (what overwrite may remove).
extern const std::vector<std::string> kRunFiles;

enum class RunDirKind {
  absent,  // no such path
  empty,   // a folder with nothing in it, or only our lock file and what a killed write of ours left
  run,     // a scratchformer run: run.json, or (runs from before run.json) config.json + checkpoints/
  other,   // anything else: the user's folder, or a file
};
RunDirKind classify_run_dir(const std::string& dir);

// The run's identity from RUN/run.json ("" for a run made before run.json existed).
std::string read_run_id(const std::string& dir);

// Refuses (ConfigError naming output.run_dir) a fresh run into `dir` unless it is absent, empty,
// or a run and `overwrite` is set. Touches nothing.
void check_fresh_run_dir(const std::string& dir, bool overwrite);

// The advisory lock on RUN/.lock, held until destruction (or process exit). The folder must exist.
// Error "output.run_dir: RUN is in use by another scratchformer process (pid N) ..." when taken.
class RunLock {
 public:
  explicit RunLock(const std::string& dir);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  int fd_ = -1;
};

// Refuses, as RunLock would, a folder whose lock another process holds; creates no lock file.
// A fresh run checks this first, so that a folder being trained is not called merely "a run" with
// advice (--resume, overwrite) that the lock would then refuse.
void check_not_in_use(const std::string& dir);

// For a fresh run, after check_fresh_run_dir and with the lock held: checks the folder again (it
// may have changed while the data loaded), removes an old run's files, and writes RUN/run.json
// with a new run id, which it returns.
std::string start_fresh_run(const std::string& dir, bool overwrite);

// ---- a comparison study's folder (scratchformer compare): the same rules ----
// A study folder is marked by DIR/study.json (a study written before the marker: report.md and
// grad_norms.csv). A fresh study goes into a new or empty folder, or replaces a study with
// output.overwrite; any other folder, a training run's too, is refused and nothing in it touched.
// The study holds RunLock on DIR/.lock while it runs, as train does.

// The files and folders a study writes into its folder (what overwrite may remove).
extern const std::vector<std::string> kStudyFiles;

// `run` here means "a study".
RunDirKind classify_study_dir(const std::string& dir);

// Refuses (ConfigError naming output.run_dir) a study into `dir` unless it is absent, empty, or a
// study and `overwrite` is set. Touches nothing.
void check_fresh_study_dir(const std::string& dir, bool overwrite);

// With the lock held: checks the folder again, removes an old study's files, writes DIR/study.json.
void start_fresh_study(const std::string& dir, bool overwrite);

}  // namespace sf
