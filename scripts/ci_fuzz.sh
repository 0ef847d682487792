#!/usr/bin/env bash
# ci_fuzz.sh: the CI fuzzing step (.ci/run runs it after the tests). Installs clang and
# libFuzzer (Debian packages) when missing, builds the libFuzzer targets, replays every committed
# seed and regression input, then fuzzes each target for a short bounded time
# (SF_CI_FUZZ_SECONDS, default 20 s each; six targets, 2 minutes plus the clang build).
# Fails on any crash, leak, sanitizer report or unexpected exception.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --with-fuzz
scripts/fuzz.sh --regress
scripts/fuzz.sh "${SF_CI_FUZZ_SECONDS:-20}"
echo "ci_fuzz.sh: done in ${SECONDS}s"
