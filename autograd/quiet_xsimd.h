// quiet_xsimd.h: <xsimd/xsimd.hpp> without GCC's false "uninitialized" warnings about it.
//
// GCC before 12.3 (Debian 12 ships 12.2) reports the `__m512i __Y = __Y;` idiom of its own AVX-512
// intrinsic headers as (maybe-)uninitialized wherever xsimd's code is inlined into a function built
// with -march=native on an AVX-512 CPU (GCC bug 105593): a full build printed 234 such warnings,
// none of them about our code. Those warnings are switched off for the text of xsimd's headers
// only, so include this before xsimd or xtensor (which includes xsimd) in any file that uses them:
// a header is read once, at its first include, and only that first reading is covered.
#pragma once
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <xsimd/xsimd.hpp>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
