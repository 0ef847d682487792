# aarch64-linux-gnu.cmake: cross-compile for 64-bit ARM Linux on a Debian x86-64 host.
#   cmake -S . -B build-aarch64 --toolchain cmake/aarch64-linux-gnu.cmake -DSF_NATIVE=OFF
# scripts/check_aarch64.sh installs what this needs and runs the result under qemu-user:
#   g++-aarch64-linux-gnu   the cross compiler (GCC 12)
#   libopenblas-dev:arm64, libssl-dev:arm64, libstdc++6:arm64   ARM64 libraries through Debian's
#                           multiarch (dpkg --add-architecture arm64), in /usr/lib/aarch64-linux-gnu
#   qemu-user               runs ARM64 programs on the host (ctest uses it: CMAKE_CROSSCOMPILING_EMULATOR)
# The header-only libraries (xtensor, xtl, xsimd, xtensor-blas, utfcpp, nlohmann-json, CLI11,
# doctest) are the host's: their headers are the same for every CPU, and xtl-dev:arm64 cannot be
# installed beside the host's. Their CMake files live in the host's library folder, named below.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# Libraries and their CMake files: only ARM64 ones (/usr/lib/aarch64-linux-gnu), never the host's
# x86-64 ones; programs (cmake's helpers) are the host's.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# pkg-config (FindOpenSSL asks it first) reports the ARM64 libraries, not the host's.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)

# The header-only packages' CMake files (arch-independent content).
foreach(pkg xtensor xtensor-blas xsimd utf8cpp)
  set(${pkg}_DIR /usr/lib/x86_64-linux-gnu/cmake/${pkg} CACHE PATH "")
endforeach()

# Open MPI is not cross-installed: the host's mpicxx would link x86-64 libraries. One process only.
set(CMAKE_DISABLE_FIND_PACKAGE_MPI ON CACHE BOOL "")

# ctest and doctest's test discovery run ARM64 programs through qemu-user. `-L /`: the ARM64
# loader and libraries are the multiarch ones in /lib/aarch64-linux-gnu (libc6:arm64,
# libstdc++6:arm64). The cross compiler's own copies under /usr/aarch64-linux-gnu are not used at
# run time: with them a program that starts a thread hangs under qemu.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /)
