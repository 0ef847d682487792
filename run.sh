#!/usr/bin/env bash
# run.sh: the two quick-start commands.
#   ./run.sh          install what is missing, build, and train the default experiment
#   ./run.sh test     install what is missing, build (normal + ASan/UBSan), run every test, then
#                     a short fuzzing pass over every reader (scripts/ci_fuzz.sh)
# Any other arguments are passed to the scratchformer CLI: ./run.sh sample runs/default
set -euo pipefail
cd "$(dirname "$0")"
jobs=$(nproc 2>/dev/null || echo 2)

build() {  # build DIR [cmake options...]
  local dir=$1; shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
}

if [[ "${1:-}" == "test" ]]; then
  # valgrind: the memcheck test runs instead of reporting Skipped; chromium: the inspect page's
  # browser test does.
  scripts/setup.sh --with-valgrind --with-browser
  build build
  (cd build && ctest --output-on-failure -j "$jobs")
  # Same suite under AddressSanitizer + UndefinedBehaviorSanitizer.
  build build-asan -DSF_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j "$jobs")
  # Then every libFuzzer target on the committed seeds and regressions, briefly (clang build).
  exec scripts/ci_fuzz.sh
fi

scripts/setup.sh
build build
if [[ $# -eq 0 ]]; then
  exec build/scratchformer train configs/default.json
fi
exec build/scratchformer "$@"
