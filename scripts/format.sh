#!/usr/bin/env bash
# format.sh: formats every C++ file git tracks with the repository's .clang-format (clang-format 14,
# Debian's `clang-format` package), or with --check only lists the files that differ (exit 1).
# After formatting, `build/lessons/lesson_docs --excerpts` copies the changed code into the
# lessons' texts, and README.md's snippets are the files in examples/ (tests: readme_snippets).
set -euo pipefail
cd "$(dirname "$0")/.."
# Exit 77 (ctest: Skipped) when clang-format is missing; scripts/setup.sh --with-format installs it.
command -v clang-format >/dev/null 2>&1 || { echo "format.sh: clang-format is not installed (apt-get install clang-format)" >&2; exit 77; }
mapfile -t files < <(git ls-files '*.cpp' '*.h')
if [[ "${1:-}" == "--check" ]]; then
  bad=0
  for f in "${files[@]}"; do
    if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
      echo "format.sh: $f is not formatted (run scripts/format.sh)" >&2
      bad=1
    fi
  done
  exit $bad
fi
clang-format -i "${files[@]}"
