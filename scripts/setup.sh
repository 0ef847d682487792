#!/usr/bin/env bash
# setup.sh: install the Debian/Ubuntu packages scratchformer needs (only the missing ones).
# Usage: scripts/setup.sh [--with-torch] [--with-fuzz] [--with-valgrind] [--with-browser] [--with-format]
#                         [--with-course] [--with-aarch64]
#   --with-torch adds python3-torch (PyTorch 1.13) for the tests that run it (run.sh test installs
#   it), the reference generators and the benchmarks; --with-fuzz clang and libFuzzer
#   (scripts/fuzz.sh); --with-valgrind valgrind, for the memcheck test (CI installs it);
#   --with-browser Debian's chromium, which the test of `inspect`'s HTML page runs headless;
#   --with-format clang-format, for the test that the tree is formatted (scripts/format.sh);
#   --with-course pandoc (Markdown to HTML, with its own code highlighter), libjs-katex (KaTeX,
#   which renders the math in the browser; the site carries a copy, so it works offline) and
#   python3, which builds the course site (./run.sh course, course/build_site.py);
#   --with-aarch64 the ARM64 cross compiler, qemu-user and the ARM64 libraries through Debian's
#   multiarch (it adds the arm64 architecture to dpkg), for scripts/check_aarch64.sh.
# graphviz (`dot`) lays out and draws the lessons' pictures of ideas (the autograd graph, Q/K/V,
# heads, the residual stream, the encoder-decoder, the GPT stack) without overlapping labels.
# fonts-wqy-zenhei is a CJK font, so Chinese tokens in the heat maps are drawn, not boxes;
# fortunes-zh holds the Tang and Song poems (datasets "tang" and "song"). libssl-dev (OpenSSL's
# libcrypto) computes SHA-256 and libutfcpp-dev validates UTF-8: well-kept libraries instead of
# code of our own. libkainjow-mustache-dev (header-only Mustache) fills the Pre-LN/Post-LN study's
# report template (studies/compare_ln_report.md). libopenmpi-dev and openmpi-bin (Open MPI) run data-parallel training,
# `mpirun -np N scratchformer train CONFIG`; the build works without them (one process).
set -euo pipefail

foreign_arch=""
packages=(g++ cmake make libxtensor-dev libxtensor-blas-dev xtl-dev libxsimd-dev libopenblas-dev
          nlohmann-json3-dev doctest-dev libcli11-dev libssl-dev libutfcpp-dev libkainjow-mustache-dev gnuplot-nox graphviz fonts-wqy-zenhei
          fortunes-zh libopenmpi-dev openmpi-bin)
for arg in "$@"; do
  case "$arg" in
    --with-torch) packages+=(python3-torch python3-numpy) ;;
    --with-fuzz) packages+=(clang libclang-rt-14-dev) ;;
    --with-valgrind) packages+=(valgrind) ;;
    --with-browser) packages+=(chromium) ;;
    --with-format) packages+=(clang-format) ;;
    --with-course) packages+=(pandoc libjs-katex python3) ;;
    --with-aarch64) packages+=(g++-aarch64-linux-gnu qemu-user libc6:arm64 libstdc++6:arm64 libopenblas-dev:arm64
                               libssl-dev:arm64)
                    foreign_arch=arm64 ;;
    *) echo "setup.sh: unknown option '$arg' (valid: --with-torch, --with-fuzz, --with-valgrind, --with-browser, --with-format, --with-course, --with-aarch64)" >&2; exit 2 ;;
  esac
done

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  echo "setup.sh: this system has no apt. Install by hand: a C++20 compiler (g++ >= 12), CMake >= 3.20," >&2
  echo "  xtensor 0.24, xtensor-blas 0.20, xtl, xsimd, OpenBLAS, nlohmann-json 3.11, doctest, CLI11, OpenSSL (libcrypto), utfcpp," >&2
  echo "  kainjow's header-only Mustache (kainjow/mustache.hpp, 4.1), and gnuplot and graphviz (optional); README.md shows a Mac's." >&2
  exit 1
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

echo "setup.sh: installing ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null 2>&1 || { echo "setup.sh: not root and no sudo; run: apt-get install ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
if [[ -n "$foreign_arch" ]] && ! dpkg --print-foreign-architectures | grep -qx "$foreign_arch"; then
  $sudo dpkg --add-architecture "$foreign_arch"
fi
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
