// train.h: running an experiment from its config: the training loop, evaluation, checkpoints.
#pragma once
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "train/config.h"
#include "train/resume_checks.h"
#include "train/task.h"

namespace sf {

struct TrainOptions {
  bool resume = false;          // continue the run in config.output.run_dir from checkpoint `last`
  int64_t stop_after = -1;      // stop (as if interrupted) once this many steps are done; -1: never
  std::ostream* out = nullptr;  // progress and summary (default std::cout)
  bool progress_bar = true;     // a bar when `out` is std::cout on a terminal; log lines otherwise
  bool stop_on_signal = false;  // Ctrl-C (SIGINT) or SIGTERM: finish the current step, save `last`,
                                // return; a second Ctrl-C aborts at once (the CLI sets this)
  ConfigOrigin origin;          // where a resumed run's config came from (named when a key changed)
};

struct TrainResult {
  std::vector<double> losses;  // the training loss of each step run in this part of the run
  int64_t first_step = 0;      // the step this part started from (k when resumed at k)
  int64_t steps_done = 0;      // total steps done when it returned
  int stopped_by_signal = 0;   // SIGINT or SIGTERM when a signal stopped the run early, else 0
  double val_loss = -1;        // the last estimate (nanoGPT's eval_iters batches)
  EvalReport full;             // the whole val split / held-out set (at the end only)
  double entropy_floor = -1;
  int64_t clipped_steps = 0;
  int64_t skipped_steps = 0;
  double seconds = 0;
  int ranks = 1;                 // processes that trained (mpirun -np N), each with the same result
  double allreduce_seconds = 0;  // time this rank spent in the gradient all-reduce
};

// Trains as the config says; see train.cpp for the loop. The config must be validated. Throws
// ConfigError/DataError before anything is written, so a failing config leaves no run directory.
TrainResult train(const Config& config, const TrainOptions& options = {});

// The saved config of a run (RUN_DIR/config.json), validated.
Config load_run_config(const std::string& run_dir);

}  // namespace sf
