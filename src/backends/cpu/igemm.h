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

/* ---- A Gram's digit pairs on AMX, from operands packed once ----------------
 * A Gram (C = L L^T over the same four-digit lines L) multiplies every digit
 * pair of the same lines. Packing both sides for each of its seven weighted
 * products (sb_cpu_igemm_s8_upper's way) reads and rewrites the digits eight
 * times, and the products are short; so on the AMX path the caller writes
 * each pass's digits once, straight into the two layouts the tiles read
 * (sb_cpu_amxg_pack4), as one matrix of 4 x lines rows (row 4l + d: digit d
 * of line l), and sb_cpu_igemm_gram_amx multiplies that matrix by itself
 * (every digit pair at once, the upper triangle of the lines), handing each
 * block of digit products to the caller, who folds them into the seven
 * weights. The layout of one pass
 * of ng groups of 64 k values:
 *   panel P (lines [8P, 8P + 8), rows 4 x 8P .. 4 x 8P + 31; zero rows past
 *   the last line) at P * ng * 2048, its group G (k in [64G, 64G + 64) of the
 *   pass) at P * ng * 2048 + G * 2048;
 *   A layout: byte r*64 + u of a group is row r's digit at k = 64G + u;
 *   B layout: byte h*1024 + t4*64 + c*4 + s is row 16h + c's digit at
 *   k = 64G + 4 t4 + s (AMX's VNNI layout). */
/* 1 when the integer product's path is amx (SAMEBITS_CPU_IGEMM honoured), 0 otherwise. */
int sb_cpu_igemm_gram_amx_on(void);
/* Bytes of one packed operand of one pass (either layout). */
int64_t sb_cpu_amxg_bytes(int64_t lines, int64_t ng);
/* Packs one pass of a four-digit operand into both layouts: line l's element q
 * is x[l + q * qs] (a row-major matrix whose columns are the lines), less
 * shift[l] (one float32 subtraction; shift NULL: none), the pass
 * holds q in [q0, q0 + len), elements at q >= k are 0, and line l's integers
 * are RNE(x * scale[l]) (scale[l] = 2^sigma_l: kernels/linalg.h's
 * sb_oz_fixed for S = 4; nonfinite elements 0). ng = ceil(len / 64). Runs on
 * the worker pool. */
void sb_cpu_amxg_pack4(const float *x, int64_t qs, const float *shift, int64_t lines, int64_t k, int64_t q0,
                       int64_t len, const double *scale, uint8_t *pa, uint8_t *pb);
/* What sb_cpu_igemm_gram_amx hands over for each panel pair (pi, pj), pj >= pi,
 * of the pass: c, 32 x 32 int32 in rows of 32, row 4a + d1 the digit-d1 row of
 * line 8pi + a and column 4b + d2 the digit-d2 row of line 8pj + b, each the
 * exact sum of that digit pair's products over the pass (|c| <= 64 ng 2^14).
 * Called on the worker pool, each pair once, pairs at once on several
 * threads; c is the calling thread's and valid for the call only. */
typedef void (*sb_amxg_fold_fn)(void *ctx, int64_t pi, int64_t pj, const int32_t *c);
/* Multiplies the pass's matrix of 4 x lines digit rows (pa, pb: one pass
 * packed as above) by itself, every panel pair of the upper triangle, and
 * gives each pair's block to fold. Only on the amx path
 * (sb_cpu_igemm_gram_amx_on): SB_ERR_BACKEND_UNAVAILABLE otherwise. */
sb_status sb_cpu_igemm_gram_amx(int64_t lines, int64_t ng, const uint8_t *pa, const uint8_t *pb, sb_amxg_fold_fn fold,
                                void *ctx);
#endif
