#!/usr/bin/env bash
# fuzz.sh: build the libFuzzer targets (clang) and run each on its committed seed corpus.
#
#   scripts/fuzz.sh                  every target for 30 s
#   scripts/fuzz.sh 600 config text  these targets for 10 minutes each
#   scripts/fuzz.sh --regress        only replay the seeds and every saved regression input, once
#
# New interesting inputs go to build-fuzz/corpus/<target>/ (not committed); a crash is saved as
# build-fuzz/crashes/<target>-crash-<sha1> and makes the script fail. To replay one:
#   build-fuzz/fuzz_<target> build-fuzz/crashes/<target>-crash-...
# A crash that is fixed gets its input copied to tests/fuzz/regressions/<target>/ (replayed by
# --regress and by CI) and, when it is a file a person could hand the CLI, a case in
# tests/bad_inputs/.
# Environment: SF_FUZZ_BUILD (default build-fuzz), SF_FUZZ_BUILD_JOBS (compile jobs, default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."

all_targets=(config safetensors tokenizer text token_cache checkpoint)
seconds=30
regress=0
targets=()
for arg in "$@"; do
  case "$arg" in
    --regress) regress=1 ;;
    ''|*[!0-9]*) targets+=("$arg") ;;
    *) seconds=$arg ;;
  esac
done
build=${SF_FUZZ_BUILD:-build-fuzz}
cxx=${CXX_FUZZ:-clang++}
command -v "$cxx" >/dev/null || { echo "fuzz.sh: $cxx not found (scripts/setup.sh --with-fuzz installs clang)" >&2; exit 1; }

cmake -S tests/fuzz -B "$build" -DCMAKE_CXX_COMPILER="$cxx" >/dev/null
cmake --build "$build" -j "${SF_FUZZ_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}" >/dev/null || {
  echo "fuzz.sh: building the fuzz targets failed; rerun: cmake --build $build" >&2; exit 1; }

if [[ ${#targets[@]} -eq 0 ]]; then
  for t in "${all_targets[@]}"; do [[ -x "$build/fuzz_$t" ]] && targets+=("$t"); done
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
mkdir -p "$build/crashes"
failed=()
for t in "${targets[@]}"; do
  exe="$build/fuzz_$t"
  [[ -x "$exe" ]] || { echo "fuzz.sh: no target $t (built: ${all_targets[*]})" >&2; exit 2; }
  seeds=tests/fuzz/corpus/$t
  regressions=tests/fuzz/regressions/$t
  inputs=("$seeds")
  [[ -d "$regressions" ]] && inputs+=("$regressions")
  if [[ $regress -eq 1 ]]; then
    echo "== $t: replaying $(cat <(ls "${inputs[@]}") | wc -l) inputs"
    "$exe" -runs=0 "${inputs[@]}" >"$build/$t.log" 2>&1 || { failed+=("$t"); tail -40 "$build/$t.log"; }
    continue
  fi
  work=$build/corpus/$t
  mkdir -p "$work"
  dict=()
  [[ -f tests/fuzz/$t.dict ]] && dict=(-dict="tests/fuzz/$t.dict")
  max_len=8192
  [[ $t == checkpoint ]] && max_len=65536  # a record and two tensor files of a small model
  echo "== $t: fuzzing for ${seconds}s"
  if "$exe" "$work" "${inputs[@]}" "${dict[@]}" -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len="$max_len" -print_final_stats=1 \
        -artifact_prefix="$build/crashes/$t-" >"$build/$t.log" 2>&1; then
    grep -E "stat::number_of_executed_units|cov:" "$build/$t.log" | tail -2 | sed 's/^/   /'
  else
    failed+=("$t")
    grep -E "ERROR|FUZZ BUG|runtime error|Test unit written" "$build/$t.log" | head -5 | sed 's/^/   /'
    echo "   full log: $build/$t.log"
  fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz.sh: ok (${targets[*]})"
