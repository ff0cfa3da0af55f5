/*
 * igemm.h: the CPU's exact integer matrix product of int8 digit planes, the
 * inner step of the identical GEMM (src/linalg/gemm.c).
 */
#ifndef SB_BACKENDS_CPU_IGEMM_H
#define SB_BACKENDS_CPU_IGEMM_H
#include "../../core/internal.h"

/* c[i*ldc + j] = sum_{q<K} a[i*lda + q] * b[j*ldb + q] (exact, int32) for
 * i < m, j < n: A * B^T with both operands contiguous along K. K <= 32768,
 * so every sum fits int32 exactly (|a*b| <= 2^14); results are exact
 * integers, identical whatever the blocking, vector width or thread count.
 * K > 32768 or a negative size is SB_ERR_INVALID_ARGUMENT. */
sb_status sb_cpu_igemm_s8(int64_t m, int64_t n, int64_t K, const int8_t *a, int64_t lda, const int8_t *b,
                          int64_t ldb, int32_t *c, int64_t ldc);
/* The path sb_cpu_igemm_s8 takes on this machine. */
const char *sb_cpu_igemm_path(void);

#endif
