#!/usr/bin/env bash
# check_aarch64.sh: build scratchformer for ARM64 (64-bit ARM Linux: Raspberry Pi 4/5, ARM cloud
# machines, Linux on Apple Silicon) on this x86-64 Debian machine and test it under qemu-user.
#   scripts/check_aarch64.sh [BUILD_DIR]      (default build-aarch64)
# It installs what is missing (scripts/setup.sh --with-aarch64: the cross compiler, qemu-user and
# the ARM64 libraries through multiarch), cross-compiles with cmake/aarch64-linux-gnu.cmake only
# the two test programs it runs, and runs them emulated:
#   test_autograd   the engine's and kernels' tests: small_gemm, softmax, LayerNorm, fp16/bf16
#                   rounding, attention (whole and in tiles), threads, every op's float64
#                   gradient check, and PyTorch parity (against the committed reference files);
#   test_emulated   every module's and model's float64 gradient check, and a small GPT trained
#                   from a config that must learn, stop at a step, and resume to the same losses.
# Emulation is 170-450x slower than the CPU itself, so the rest of the suite (lessons, full
# training runs) is left to a native ARM64 build: `./run.sh test` there.
# On an ARM64 machine, build natively instead (README.md, "Supported CPUs").
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-aarch64}
jobs=$(nproc 2>/dev/null || echo 2)

if [[ $(uname -m) != x86_64 ]]; then
  echo "check_aarch64.sh: this cross-builds on an x86-64 Debian machine; on $(uname -m) build natively (README.md)" >&2
  exit 2
fi
scripts/setup.sh --with-aarch64

# Release without -g (no debugger runs under qemu here) and no -march=native: the host's CPU is not
# the target's. SF_WERROR: a warning only ARM64 sees (char is unsigned there) fails the check.
start=$SECONDS
cmake -S . -B "$dir" --toolchain cmake/aarch64-linux-gnu.cmake -DCMAKE_BUILD_TYPE=Release -DSF_NATIVE=OFF \
      -DSF_WERROR=ON >/dev/null
cmake --build "$dir" -j "$jobs" --target test_autograd test_emulated
echo "check_aarch64.sh: built in $((SECONDS - start)) s"

# -L /: the ARM64 loader and libraries of multiarch (/lib/aarch64-linux-gnu). With the cross
# compiler's copies (-L /usr/aarch64-linux-gnu) a program that starts a thread hangs.
run() {
  local t=$SECONDS
  echo "check_aarch64.sh: qemu-aarch64 $*"
  qemu-aarch64 -L / "$@"
  echo "check_aarch64.sh: $(basename "$1") passed in $((SECONDS - t)) s"
}
export SF_NUM_THREADS=2
run "$dir/tests/autograd/test_autograd"
# The ops' gradient checks ran in test_autograd above.
run "$dir/tests/emulated/test_emulated" --test-case-exclude='*every op'
echo "check_aarch64.sh: ARM64 build checked in $((SECONDS - start)) s"
