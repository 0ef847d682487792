// threads.h: the one place that decides how many threads the framework uses.
// BLAS (OpenBLAS's own pthread pool) gets all cores by default; SF_NUM_THREADS or a config's
// train.threads overrides it.
#pragma once

namespace sf {

// Sets the number of threads for BLAS (and any parallel kernel). n <= 0 means "all cores".
void set_num_threads(int n);
int num_threads();
// Reads SF_NUM_THREADS from the environment (if set) and applies it; called by the CLI at start.
void init_threads_from_env();

}  // namespace sf
