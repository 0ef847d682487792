// The one doctest main shared by every test executable. Like the scratchformer executable, it
// starts with start_program (app/startup.h), so the tests compute with the BLAS kernels the CLI
// they start computes with.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "app/startup.h"

int main(int argc, char** argv) {
  sf::start_program(argv);
  return doctest::Context(argc, argv).run();
}
