#!/usr/bin/env bash
# run.sh: the two quick-start commands.
#   ./run.sh          install what is missing, build, and train the default experiment
#   ./run.sh test     install what is missing, build (normal + ASan/UBSan), run every test, check
#                     the ARM64 build under emulation (scripts/check_aarch64.sh), then a short
#                     fuzzing pass over every reader (scripts/ci_fuzz.sh)
#   ./run.sh exercise N  rebuild what changed in exercises/ and check exercise N (or all; no N:
#                     the list; ./run.sh exercise hint N [tier] for a hint; show N [--lang zh]:
#                     the task; capstone: train a GPT with your pieces)
#   ./run.sh course   build the course site (every lesson in English and Chinese, the attention
#                     explorer) into build/course/; open build/course/index.html
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
  # browser test does; clang-format: the test that the tree is formatted does; python3-torch: the
  # two tests that run PyTorch itself do (nanoGPT's recipe replayed, a nanoGPT checkpoint
  # converted); pandoc and KaTeX: the course site's test builds the site and loads every page
  # in Chromium. Both builds treat a new compiler warning as an error (SF_WERROR).
  scripts/setup.sh --with-valgrind --with-browser --with-format --with-torch --with-course
  build build -DSF_WERROR=ON
  (cd build && ctest --output-on-failure -j "$jobs")
  # Same suite under AddressSanitizer + UndefinedBehaviorSanitizer.
  build build-asan -DSF_SANITIZE=ON -DSF_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j "$jobs")
  # The ARM64 build: cross-compiled, its kernel tests, gradient checks and a short training run
  # under qemu-user (x86-64 hosts only; on an ARM64 machine the builds above are the native ones).
  if [[ $(uname -m) == x86_64 ]]; then
    scripts/check_aarch64.sh
  fi
  # Then every libFuzzer target on the committed seeds and regressions, briefly (clang build).
  exec scripts/ci_fuzz.sh
fi

if [[ "${1:-}" == "exercise" ]]; then
  # A learner's loop: edit exercises/NN_name.cpp, then ./run.sh exercise N. Only the CLI (and so
  # the edited exercise) is rebuilt, and compile errors in it show here.
  shift
  scripts/setup.sh
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
  if [[ -x build/scratchformer ]]; then
    echo "run.sh: rebuilding build/scratchformer with your edits (seconds)" >&2
  else
    echo "run.sh: the first build compiles the whole framework: about 12 minutes on 2 cores," >&2
    echo "        seconds after that for each edit. Progress (full log: build/exercise_build.log):" >&2
  fi
  # The compiler's output goes to the log; its [ NN%] progress is shown on one line that updates.
  set +e
  cmake --build build -j "$jobs" --target scratchformer 2>&1 | tee build/exercise_build.log |
    while IFS= read -r line; do
      if [[ "$line" =~ ^\[\ *([0-9]+)%\] ]]; then printf '\r  built %3s%%' "${BASH_REMATCH[1]}" >&2; fi
    done
  build_status=${PIPESTATUS[0]}
  set -e
  echo >&2
  if [[ $build_status -ne 0 ]]; then
    grep -v '^\[' build/exercise_build.log >&2
    echo "run.sh: the build failed (the compiler's messages are above); fix your file and run it again" >&2
    exit 2
  fi
  if [[ $# -eq 0 || "$1" == "list" ]]; then
    exec build/scratchformer exercise list
  fi
  if [[ "$1" == "hint" || "$1" == "show" || "$1" == "capstone" ]]; then
    exec build/scratchformer exercise "$@"
  fi
  exec build/scratchformer exercise check "$@"
fi

if [[ "${1:-}" == "course" ]]; then
  # The site needs only the CLI (it reads the lessons' registry and trains the explorer's models).
  shift
  scripts/setup.sh --with-course
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build -j "$jobs" --target scratchformer
  exec python3 course/build_site.py --binary build/scratchformer --out build/course "$@"
fi

scripts/setup.sh
build build
if [[ $# -eq 0 ]]; then
  exec build/scratchformer train configs/default.json
fi
exec build/scratchformer "$@"
