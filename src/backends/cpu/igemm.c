/*
 * igemm.c: the CPU's exact int8 matrix product (igemm.h), portable loops.
 */
#include "igemm.h"

sb_status sb_cpu_igemm_s8(int64_t m, int64_t n, int64_t K, const int8_t *a, int64_t lda, const int8_t *b,
                          int64_t ldb, int32_t *c, int64_t ldc) {
    if (m < 0 || n < 0 || K < 0 || K > 32768)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_cpu_igemm_s8: sizes m=%lld n=%lld K=%lld (K <= 32768)",
                       (long long)m, (long long)n, (long long)K);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            const int8_t *x = a + i * lda, *y = b + j * ldb;
            int32_t s = 0;
            for (int64_t q = 0; q < K; q++) s += (int32_t)x[q] * (int32_t)y[q];
            c[i * ldc + j] = s;
        }
    return SB_OK;
}

const char *sb_cpu_igemm_path(void) { return "scalar"; }
