/* nn_linear.c: a linear layer's forward and backward products through the
 * identical GEMM (src/linalg/gemm.c: each element of a product is its exact
 * dot product rounded once, whatever the tiling and thread count), and the
 * bias gradient's column sums as exact sums rounded once. */
#include "nn.h"
#include "../../linalg/linalg.h"
#include "../../math/sb_math.h"

sb_status nn_linear_forward(int64_t m, int64_t k, int64_t n, const float *A, const float *W, const float *b, float *Z) {
    const sb_gemm_shape s = {0, 0, m, n, k, k, n};
    sb_status st = sb_gemm_host(&s, A, W, Z, n);
    if (st != SB_OK || !b) return st;
    for (int64_t i = 0; i < m; i++) {
        float *z = Z + i * n;
        for (int64_t j = 0; j < n; j++) z[j] = z[j] + b[j];
    }
    return SB_OK;
}

sb_status nn_linear_backward(int64_t m, int64_t k, int64_t n, const float *A, const float *W, const float *D,
                             float *dW, float *dA) {
    const sb_gemm_shape sw = {1, 0, k, n, m, k, n}; /* A^T D: A is m x k */
    sb_status st = sb_gemm_host(&sw, A, D, dW, n);
    if (st != SB_OK || !dA) return st;
    const sb_gemm_shape sa = {0, 1, m, k, n, n, n}; /* D W^T: W is k x n */
    return sb_gemm_host(&sa, D, W, dA, k);
}

/* Column sums of an m x n matrix: per column one superaccumulator, so the
 * value is the exact sum rounded once (rows in any order give it). The
 * separating arm mlp-grad-order adds the rows in float32 from the last up,
 * a sum of another shape: the fixture's gradient stages part. */
void nn_col_sums(int64_t m, int64_t n, const float *D, float *out) {
#ifdef SB_SABOTAGE_MLP_GRAD_ORDER
    for (int64_t j = 0; j < n; j++) {
        float s = 0.0f;
        for (int64_t i = m - 1; i >= 0; i--) s = s + D[i * n + j];
        out[j] = s;
    }
    return;
#endif
    enum { COLS = 64 };
    sb_sacc acc[COLS];
    for (int64_t j0 = 0; j0 < n; j0 += COLS) {
        const int64_t w = n - j0 < COLS ? n - j0 : COLS;
        for (int64_t j = 0; j < w; j++) sb_sacc_init(&acc[j]);
        for (int64_t i = 0; i < m; i++) {
            const float *d = D + i * n + j0;
            for (int64_t j = 0; j < w; j++) sb_sacc_add(&acc[j], d[j]);
        }
        for (int64_t j = 0; j < w; j++) out[j0 + j] = sb_sacc_round_f32(&acc[j]);
    }
}
