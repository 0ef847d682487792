// The one doctest main shared by every test executable. Like the scratchformer executable, it
// first asks OpenBLAS for the kernels of this CPU when the library does not know it (blas.h), so
// the tests compute with the kernels the CLI they start computes with.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "autograd/cpu/blas.h"

int main(int argc, char** argv) {
  sf::blas::reexec_with_better_kernels(argv);
  return doctest::Context(argc, argv).run();
}
