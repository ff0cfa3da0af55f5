/*
 * ets_avx2.c: kernels/ets.h's fit, the same source as ets.c's, compiled a
 * second time for x86-64 hosts that have AVX2 (ets.c chooses at run time;
 * the Makefile builds this file at -O3, so that the vectorizer takes the
 * loops over the states, and ets.h's block sums and f64_log.h's logarithm
 * take GCC's four-wide vectors). Only the instructions differ: every element is the same IEEE
 * double operation in the same order (no contraction: the profile's
 * -ffp-contract=off, and the AVX2 target has no FMA), so both instances give
 * the same bits, as a device does (docs/timeseries.md). Elsewhere (another
 * architecture or compiler) the file defines nothing.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
/* the target first, so that every function of this file, the kernel's
 * included, is compiled for it; SB_HOST_V4 asks kernels/ets.h and
 * f64_log.h for their four-wide forms (a macro of this file, not the
 * target's __AVX2__: `gcc -E`, and ccache's preprocessor mode with it, does
 * not apply a target pragma to the macros, so a test on __AVX2__ here would
 * preprocess one text and compile another) */
#define SB_HOST_V4 1
#pragma GCC target("avx2")
#include "ets.h"

void sb_ets_fit_series_avx2(const ets_spec *sp, const double *y, int64_t n, double *scr, int32_t *iscr, ets_out o) {
    ets_fit_series(sp, y, n, scr, iscr, 1, o);
}
#else
typedef int sb_ets_avx2_none; /* ISO C: a translation unit declares something */
#endif
