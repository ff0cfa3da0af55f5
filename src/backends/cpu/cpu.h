/*
 * cpu.h: the CPU backend's schedules over the device-neutral bodies. Every
 * function here splits work by the data shape alone (fixed grains, fixed
 * reduction trees), so its results do not depend on the thread count.
 */
#ifndef SB_BACKENDS_CPU_H
#define SB_BACKENDS_CPU_H
#include "../../core/internal.h"

/* Rows per task for elementwise work; a constant, never derived from threads. */
#define SB_CPU_ROW_GRAIN 4096

/* Sum of x[0..n) with the profile's fixed tree (src/math/sb_reduce.h): leaves of
 * SB_REDUCE_BLOCK elements computed in parallel, then combined pairwise. The
 * result equals sb_tree_sum_f32 on one thread, bit for bit. */
sb_status sb_cpu_sum_f32(const float *x, int64_t n, float *out);

/* The exact sum of x[0..n), correctly rounded once to float (the profile's
 * superaccumulator, src/math/sb_reduce.h): partial accumulators over fixed
 * chunks merged exactly, so any schedule gives the same bits. */
sb_status sb_cpu_exact_sum_f32(const float *x, int64_t n, float *out);

/* out[f] = sum over rows r of x[r*nf + f] * g[r], each sum with the fixed tree
 * over rows and every product rounded before it is added. */
sb_status sb_cpu_weighted_colsum_f32(const float *x, int64_t nrows, int32_t nf, const float *g,
                                     float *out);

#endif
