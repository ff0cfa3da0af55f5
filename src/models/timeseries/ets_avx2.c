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
/* every function of kernels/ets.h takes an _avx2 name in this instance: the
 * compiler emits some of them out of line (ets_pass, ets_inner, ets_nm_take,
 * ets_fit_series today), and under the kernel's own names they would be
 * indistinguishable, in a binary's symbols, from ets.c's generic instance,
 * which must hold no instruction above the baseline; tools/isa-dispatch.txt
 * allows the _avx2 names only (tools/isa_gate.py). The profile's
 * elementary functions the kernel calls (f64_log.h's, f64_exp.h's) take
 * ets_..._avx2 names here too: the compiler emits them out of line when the
 * kernel grows (sb__hx_exp did, once ets_pass was specialised per model),
 * and under their shared names they would fail that gate. */
#define sb__hx_bits ets_hx_bits_avx2
#define sb__hx_dbl ets_hx_dbl_avx2
#define sb__hx_log1p_small ets_hx_log1p_small_avx2
#define sb__hx_log ets_hx_log_avx2
#define sb__hx_log_v4 ets_hx_log_v4_avx2
#define sb__hx_exp ets_hx_exp_avx2
#define ets_nstates ets_nstates_avx2
#define ets_scratch_doubles ets_scratch_doubles_avx2
#define ets_inf ets_inf_avx2
#define ets_nan ets_nan_avx2
#define ets_finite ets_finite_avx2
#define ets_log ets_log_avx2
#define ets_log_add ets_log_add_avx2
#define ets_spread ets_spread_avx2
#define ets_normal_flush ets_normal_flush_avx2
#define ets_pass ets_pass_avx2
#define ets_solve ets_solve_avx2
#define ets_inner ets_inner_avx2
#define ets_lo ets_lo_avx2
#define ets_hi ets_hi_avx2
#define ets_fold ets_fold_avx2
#define ets_grid_value ets_grid_value_avx2
#define ets_grid_count ets_grid_count_avx2
#define ets_grid_index ets_grid_index_avx2
#define ets_objective ets_objective_avx2
#define ets_clamp ets_clamp_avx2
#define ets_nm_vertex ets_nm_vertex_avx2
#define ets_nm_begin ets_nm_begin_avx2
#define ets_nm_end ets_nm_end_avx2
#define ets_nm_top ets_nm_top_avx2
#define ets_nm_shrink_next ets_nm_shrink_next_avx2
#define ets_nm_take ets_nm_take_avx2
#define ets_grid_point ets_grid_point_avx2
#define ets_search_begin ets_search_begin_avx2
#define ets_search_take ets_search_take_avx2
#define ets_start ets_start_avx2
#define ets_fit_series ets_fit_series_avx2
#include "ets.h"

void sb_ets_fit_series_avx2(const ets_spec *sp, const double *y, int64_t n, double *scr, int32_t *iscr, ets_out o) {
    ets_fit_series(sp, y, n, scr, iscr, 1, o);
}
#else
typedef int sb_ets_avx2_none; /* ISO C: a translation unit declares something */
#endif
