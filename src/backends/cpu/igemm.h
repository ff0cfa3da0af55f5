/*
 * igemm.h: the CPU's exact integer matrix product, the inner engine of the
 * identical GEMM (Ozaki scheme, DESIGN.md section 6): float32 matrices are cut
 * into int8 digit planes, and the planes are multiplied here, exactly.
 *
 * Every result is an exact integer (no rounding, no saturation, no wrap), so it
 * is the same whatever the blocking, the vector width, the path or the thread
 * count; the paths differ in speed only.
 */
#ifndef SB_BACKENDS_CPU_IGEMM_H
#define SB_BACKENDS_CPU_IGEMM_H
#include "../../core/internal.h"

/* The largest K accepted: |a*b| <= 2^14, so every sum of K products fits int32
 * exactly (and so does the VNNI path's biased sum, 255 * 128 * K < 2^31). */
#define SB_CPU_IGEMM_MAX_K 32768

/* c[i*ldc + j] = sum_{q<K} a[i*lda + q] * b[j*ldb + q]   (exact, int32)
 * for i < m, j < n. a: m x K int8 row-major; b: n x K int8 row-major (so this is A * B^T,
 * both operands contiguous along K). The caller guarantees K <= 32768 (so every sum fits int32
 * exactly: |a*b| <= 2^14). Results are exact integers, hence identical whatever the
 * blocking, vector width or thread count. Runs on the worker pool (sb_parallel_for) with
 * tasks that are a function of the shape only. Returns SB_OK, or SB_ERR_OUT_OF_MEMORY (named,
 * via sb_fail) if packing scratch cannot be allocated; K > 32768 or negative sizes are
 * SB_ERR_INVALID_ARGUMENT. m, n or K == 0 is fine (K == 0 writes zeros).
 *
 * Also SB_ERR_INVALID_ARGUMENT: lda < K or ldb < K (when K > 0 and the operand has rows),
 * ldc < n (when m > 0 and n > 0), a NULL operand that would be read, or a NULL c that
 * would be written. SAMEBITS_CPU_IGEMM naming a path this CPU lacks is
 * SB_ERR_BACKEND_UNAVAILABLE, naming no path at all SB_ERR_INVALID_ARGUMENT (both say so
 * in sb_last_error, with the variable and its value). c is never read, only written;
 * it must not overlap a or b. */
sb_status sb_cpu_igemm_s8(int64_t m, int64_t n, int64_t K, const int8_t *a, int64_t lda,
                          const int8_t *b, int64_t ldb, int32_t *c, int64_t ldc);

/* sb_cpu_igemm_s8 where only the upper triangle is wanted (a Gram's): every
 * c[i][j] with j >= i is written, the same integer sb_cpu_igemm_s8 writes;
 * elements below the diagonal may be written or left as they were. */
sb_status sb_cpu_igemm_s8_upper(int64_t m, int64_t n, int64_t K, const int8_t *a, int64_t lda,
                                const int8_t *b, int64_t ldb, int32_t *c, int64_t ldc);

/* Each thread that calls sb_cpu_igemm_s8 keeps the packing scratch of its last call (at
 * most 40 MiB) for its next one, freed when the thread exits; this frees the calling
 * thread's now. */
void sb_cpu_igemm_release_scratch(void);

/* Test hook: the packing budget in bytes (per operand; 0: the default, 16 MiB). A small
 * one makes small shapes go through several super-blocks of A and of B. */
void sb_cpu_igemm_pack_budget_for_tests(int64_t bytes);

/* Which path sb_cpu_igemm_s8 takes on this machine: "amx", "avx512vnni", "avx2", or
 * "scalar". SAMEBITS_CPU_IGEMM=scalar|avx2|avx512vnni|amx forces one (refused by name if the
 * CPU lacks it: then the function returns SB_ERR_BACKEND_UNAVAILABLE). While the variable
 * names a path that this CPU lacks, or no path, this returns "refused". Unset or empty: the
 * fastest path present, in the order amx, avx512vnni, avx2, scalar (on other than x86-64,
 * always "scalar"). amx is present where the CPU has AMX-TILE, AMX-INT8 and AVX-512 VNNI and
 * Linux grants the process the AMX tile state: the first call that looks for it asks for
 * that grant (arch_prctl ARCH_REQ_XCOMP_PERM, once, for the whole process). */
const char *sb_cpu_igemm_path(void);

#endif
