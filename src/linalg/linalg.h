/*
 * linalg.h: the linear-algebra core's internal interface (src/linalg/), the
 * layer the classical families stand on. The public entry points are in
 * include/samebits.h (sb_gemm); these are what families, fixtures and the
 * benchmarks call with data already on a device.
 */
#ifndef SB_LINALG_LINALG_H
#define SB_LINALG_LINALG_H
#include "../core/internal.h"
#include "../device/device.h"

/* The shape of C := op(A) * op(B) (include/samebits.h's sb_gemm). */
typedef struct sb_gemm_shape {
    int32_t ta, tb;
    int64_t m, n, k, lda, ldb;
} sb_gemm_shape;

/* Checks a shape against sb_gemm's contract; names the first violation. */
sb_status sb_gemm_check(const sb_gemm_shape *s, int64_t ldc);

/* The host path: C (ldc) from host arrays, on the worker pool. */
sb_status sb_gemm_host(const sb_gemm_shape *s, const float *a, const float *b, float *c, int64_t ldc);

/* Device scratch of the product, kept between calls of one shape or smaller
 * (zero it before the first call; sb_gemm_ws_release frees it). */
typedef struct sb_gemm_ws {
    sb_dbuf sig_a, flag_a, sig_b, flag_b, planes_a, planes_b, parts, thi, tlo;
} sb_gemm_ws;
void sb_gemm_ws_release(sb_device *d, sb_gemm_ws *ws);

/* The device path with everything on d (a device of SB_PROG_LINALG): a and
 * b hold A and B as the host lays them out (their first element at byte 0),
 * c gets C dense (ldc = n). Runs in call order; returns when queued. */
sb_status sb_gemm_on(sb_device *d, sb_gemm_ws *ws, const sb_gemm_shape *s, const sb_dbuf *a, const sb_dbuf *b,
                     sb_dbuf *c);

/* The elements a matrix of r rows with leading dimension ld and c columns
 * spans, as its first-to-last offset plus one (0 when empty). */
static inline int64_t sb_gemm_span(int64_t rows, int64_t cols, int64_t ld) {
    return rows <= 0 || cols <= 0 ? 0 : (rows - 1) * ld + cols;
}

/* ---- factorizations, solves, eigenvalues, projections (solve.c) ------------
 * The public entries are include/samebits.h's sb_linalg_cholesky,
 * sb_linalg_solve_triangular, sb_linalg_eigh, sb_linalg_random_matrix and
 * sb_linalg_projection; the arithmetic is kernels/linalg_solve.h's. */

/* sb_linalg_cholesky, and *bad_column (may be NULL) := the refused column, or
 * -1 when none was (also when another check failed first). */
sb_status sb_linalg_cholesky_ex(const char *device, int64_t n, const float *a, int64_t lda, float *l, int64_t ldl,
                                int64_t *bad_column);

#endif
