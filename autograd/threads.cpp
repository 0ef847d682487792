// threads.cpp: thread counts for OpenBLAS.
#include "autograd/threads.h"

#include <cstdlib>
#include <string>
#include <thread>

#include "autograd/errors.h"

extern "C" void openblas_set_num_threads(int);  // declared here: <cblas.h> clashes with xtensor-blas

namespace sf {

static int g_threads = 0;

void set_num_threads(int n) {
  if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
  if (n <= 0) n = 1;
  g_threads = n;
  openblas_set_num_threads(n);
}

int num_threads() {
  if (g_threads == 0) {
    int n = static_cast<int>(std::thread::hardware_concurrency());
    return n > 0 ? n : 1;
  }
  return g_threads;
}

void init_threads_from_env() {
  const char* v = std::getenv("SF_NUM_THREADS");
  if (!v || !*v) return;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 0 || n > 1024)
    throw ConfigError(std::string("SF_NUM_THREADS: expected a whole number from 0 (all cores) to 1024, got '") + v + "'");
  set_num_threads(static_cast<int>(n));
}

}  // namespace sf
