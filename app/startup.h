// startup.h: what every program of the project does first in main(), before any thread or MPI
// starts. The CLI, lesson_docs, the benchmarks and the test executables all call it, so that
// they all compute with the same BLAS kernels.
#pragma once

namespace sf {

// OpenBLAS picks its kernels once, as it loads, and a CPU newer than the library gets its generic
// SSE3 kernels ("Prescott"; blas.h). When that happened on a CPU with AVX2 or AVX-512, sets
// OPENBLAS_CORETYPE to the family it runs (blas::core_override) and re-executes the program
// (same pid, arguments and the rest of the environment), so OpenBLAS loads again with those
// kernels. Returns when there is nothing to do, or when the exec failed (the program then runs on
// as it was). Never overrides an OPENBLAS_CORETYPE the user set.
void start_program(char** argv);

}  // namespace sf
