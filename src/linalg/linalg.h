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
/* G := Xc^T Xc, Xc = X - 1 mean^T (each element fl(x - mean_l)), X n x p
 * row-major with row stride ldx, G p x p with row stride ldg: the bits of
 * sb_gemm_host on a centered copy, without writing one where the host's AMX
 * Gram takes the product (gemm.c). */
sb_status sb_gemm_host_gram_centered(int64_t n, int64_t p, const float *x, int64_t ldx, const float *mean, float *g,
                                     int64_t ldg);
/* Tests only: the digit road's band of rows held at once, in bytes of parts
 * (0: the default, 256 MiB); a smaller one reaches a Gram's later bands with
 * small shapes. A schedule: no bit depends on it. */
void sb_gemm_band_bytes_for_tests(int64_t bytes);

/* The host's direct road to the same exact totals for operands of four
 * digits (gemm_direct.c): whether it takes the shape, and the product given
 * the line scales (sb_oz_sigma with S = 4) and nonfinite flags. */
int sb_gemm_direct_fits(const sb_gemm_shape *s);
/* pv_a, pv_b: a prepared operand's integers (sb_gemm_prep.v), or NULL to
 * convert the lines from a and b as the product goes; wide_a, wide_b: that
 * operand has more than four digits (at most one of them; its scales are
 * sb_oz_sigma's for its own digits, and a prepared one is ignored). */
sb_status sb_gemm_direct_host(const sb_gemm_shape *s, const float *a, const float *b, float *c, int64_t ldc,
                              const int32_t *sig_a, const int32_t *sig_b, const uint8_t *flag_a,
                              const uint8_t *flag_b, const int32_t *pv_a, const int32_t *pv_b, int wide_a,
                              int wide_b);
/* v[l*k + q] := RNE(x_lq * 2^sigma[l]) for four-digit lines (sb_oz_fixed's value). */
/* The direct road's inner kernel on this machine: "avx2" (x86-64 with AVX2)
 * or "scalar" ("none" without 128-bit integers); SAMEBITS_DIRECT_KERNEL=scalar
 * asks for the portable one. The choice is made once; _reset makes the next
 * product choose again (tests). Both give the same exact integers. */
const char *sb_gemm_direct_kernel(void);
void sb_gemm_direct_kernel_reset(void);
/* Test: the vector kernels against the portable sums at the lanes' extremes;
 * the number of sums that differ (gemm_direct.c). */
int sb_gemm_direct_kernel_check(void);
sb_status sb_gemm_direct_values(const float *x, int64_t ls, int64_t qs, int64_t nlines, int64_t k,
                                const int32_t *sigma, int32_t *v);

/* A host operand prepared once for many products that read the same lines
 * (the element q of line l at x[l*ls + q*qs]): its statistics, and where it
 * has four digits its integers, so a fit's every iteration skips them. The
 * prepared operand owns its arrays, not x; the products give the bits of the
 * unprepared ones (the same statistics and integers, computed once). */
typedef struct sb_gemm_prep {
    const float *x;
    int64_t ls, qs, nlines, k;
    uint32_t *mb;
    int32_t *spread, *sigma; /* sigma: the four-digit scales */
    uint8_t *flag;
    int S;      /* the operand's digits */
    int32_t *v; /* S == 4: the integers, nlines x k, line-major; else NULL */
} sb_gemm_prep;
sb_status sb_gemm_prep_make(const float *x, int64_t ls, int64_t qs, int64_t nlines, int64_t k, sb_gemm_prep *p);
void sb_gemm_prep_free(sb_gemm_prep *p); /* NULL or a zeroed one: no-op */
/* sb_gemm_host with op(A)'s rows and op(B)'s columns taken from pa and pb
 * where those hold exactly them (either may be NULL, or another operand's:
 * then it is ignored). */
sb_status sb_gemm_host_prep(const sb_gemm_shape *s, const float *a, const float *b, float *c, int64_t ldc,
                            const sb_gemm_prep *pa, const sb_gemm_prep *pb);

/* Device scratch of the product, kept between calls of one shape or smaller
 * (zero it before the first call; sb_gemm_ws_release frees it). */
typedef struct sb_gemm_ws {
    sb_dbuf mb_a, sig_a, flag_a, mb_b, sig_b, flag_b, spread, sum_a, cnt_a, sum_b, cnt_b, planes_a, planes_b, parts,
        accb, acct, dparts;
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

/* ---- reductions, distances and selection (reduce.c; docs/linalg.md) ------ */

/* The process's device of a GPU kind with the linalg program, opened at its
 * first use and shared by every linalg operation (one program build); on
 * SB_OK the caller holds the linalg devices' lock until sb_linalg_device_unlock. */
sb_status sb_linalg_device_lock(sb_device_kind kind, sb_device **out);
void sb_linalg_device_unlock(void);

/* A reduction along the lines of a row-major m x n matrix x (leading
 * dimension ld >= n): axis 1 reduces each row (m results), axis 0 each column
 * (n results). Sums and squared norms give float32 (the exact value rounded
 * once), argmin and argmax int32 indices (kernels/linalg_reduce.h: the order
 * and tie rule). Callers check the arguments (reduce.c's public entries);
 * argmin/argmax need lines of at least one element. */
typedef enum sb_lr_op { SB_LR_SUM = 0, SB_LR_SQNORM = 1, SB_LR_ARGMIN = 2, SB_LR_ARGMAX = 3 } sb_lr_op;

/* The host paths, on the worker pool (tasks are a function of the shape). */
sb_status sb_lr_lines_host(sb_lr_op op, int32_t axis, int64_t m, int64_t n, const float *x, int64_t ld, void *out);
/* out[i*ldo + j] = ||x_i - y_j||^2 for the m rows of x (ldx) and n rows of y
 * (ldy), d columns each: the exact value rounded once. */
sb_status sb_lr_sqdist_host(int64_t m, int64_t n, int64_t d, const float *x, int64_t ldx, const float *y, int64_t ldy,
                            float *out, int64_t ldo);
/* The k (1 <= k <= n) first elements of each row in the order of direction
 * largest: vals and idx are m x k, dense. */
sb_status sb_lr_topk_host(int32_t largest, int64_t m, int64_t n, const float *x, int64_t ld, int64_t k, float *vals,
                          int32_t *idx);

/* Device scratch of these operations, kept between calls (zero it before the
 * first call; sb_lr_ws_release frees it). */
typedef struct sb_lr_ws {
    sb_dbuf acc, mx, ex, my, ey, nx, ny, fx, fy, heap;
} sb_lr_ws;
void sb_lr_ws_release(sb_device *d, sb_lr_ws *ws);

/* The device paths with everything on d (a device of SB_PROG_LINALG): x (and
 * y) as the host lays them out, first element at byte 0; results dense (out:
 * the m or n results; sqdist: m x n; topk: m x k). Run in call order. */
sb_status sb_lr_lines_on(sb_device *d, sb_lr_ws *ws, sb_lr_op op, int32_t axis, int64_t m, int64_t n,
                         const sb_dbuf *x, int64_t ld, sb_dbuf *out);
sb_status sb_lr_sqdist_on(sb_device *d, sb_lr_ws *ws, int64_t m, int64_t n, int64_t dd, const sb_dbuf *x, int64_t ldx,
                          const sb_dbuf *y, int64_t ldy, sb_dbuf *out);
sb_status sb_lr_topk_on(sb_device *d, sb_lr_ws *ws, int32_t largest, int64_t m, int64_t n, const sb_dbuf *x,
                        int64_t ld, int64_t k, sb_dbuf *vals, sb_dbuf *idx);
/* ---- factorizations, solves, eigenvalues, projections (solve.c) ------------
 * The public entries are include/samebits.h's sb_linalg_cholesky,
 * sb_linalg_solve_triangular, sb_linalg_eigh, sb_linalg_random_matrix and
 * sb_linalg_projection; the arithmetic is kernels/linalg_solve.h's. */

/* sb_linalg_cholesky, and *bad_column (may be NULL) := the refused column, or
 * -1 when none was (also when another check failed first). */
sb_status sb_linalg_cholesky_ex(const char *device, int64_t n, const float *a, int64_t lda, float *l, int64_t ldl,
                                int64_t *bad_column);

/* ---- the largest eigenpairs of a symmetric matrix in double (krylov.c) -----
 * Every bit a function of the inputs alone (fixed sums, fixed chunks). */

/* The `want` largest eigenpairs of the symmetric k x k matrix h (ldh):
 * w[c] in descending order (equal values: the lower position in the
 * tridiagonal QR's result first), y (k x want, row-major) their unit vectors. */
sb_status sb_eigh_top_f64(int64_t k, const double *h, int64_t ldh, int64_t want, double *w, double *y);

typedef struct sb_krylov_info {
    int32_t blocks, basis, checks; /* block products, final basis size, Rayleigh-Ritz checks */
    double residual;               /* the largest ||M u - theta u|| at the end */
} sb_krylov_info;

/* The `want` largest eigenpairs of the symmetric n x n float matrix m
 * (row-major) by block Lanczos with blocks of `block` (>= want) columns,
 * stopping when every residual ||M u - theta u|| <= tol or the basis spans all
 * n dimensions; a basis of kcap columns without convergence is SB_ERR_LIMIT.
 * w: want values, descending; u: n x want (row-major) unit vectors. The start
 * block and any replacement column come from Philox keyed by seed. */
sb_status sb_krylov_top(int64_t n, const float *m, int64_t want, int64_t block, double tol, int64_t kcap,
                        uint64_t seed, double *w, double *u, sb_krylov_info *info);

/* sb_krylov_top on the sparse form of M (rows ascending, each row's columns
 * ascending, no zero stored), at most n^2 / 8 nonzeros: the same bits as
 * sb_krylov_top on the dense matrix whose nonzeros these are (the dense
 * path builds exactly this form when M is that sparse), without the n x n
 * matrix. */
sb_status sb_krylov_top_csr(int64_t n, const int64_t *rp, const int32_t *ci, const float *cv, int64_t want,
                            int64_t block, double tol, int64_t kcap, uint64_t seed, double *w, double *u,
                            sb_krylov_info *info);

/* The lane kernels krylov.c runs here: "avx512", "avx2" or "generic" (every
 * one gives the same bits); SAMEBITS_KRYLOV_KERNEL=generic or avx2 caps the
 * choice, read once until sb_krylov_kernel_reset. */
const char *sb_krylov_kernel(void);
void sb_krylov_kernel_reset(void);

#endif
