// startup.cpp: start_program (startup.h).
#include "app/startup.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "autograd/cpu/blas.h"

namespace sf {

void start_program(char** argv) {
#if defined(__x86_64__)
  const bool avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const std::string core = blas::core_override(blas::core_name(), blas::cpu_has_avx512(), avx2_fma,
                                               std::getenv("OPENBLAS_CORETYPE") != nullptr);
  if (core.empty()) return;
  setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
  execv("/proc/self/exe", argv);  // returns only on failure
  unsetenv("OPENBLAS_CORETYPE");  // (children would otherwise get kernels this process does not run)
#else
  (void)argv;
#endif
}

}  // namespace sf
