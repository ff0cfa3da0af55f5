/*
 * gemm_direct.c: the host's direct road to the exact totals of the identical
 * product, for operands of four digits (kernels/linalg.h: S = 4 on both sides,
 * the digits every operand gets unless a line's typical element lies far
 * below its largest one).
 *
 * With S = 4 an operand's integers satisfy |x'| <= 2^30 (P = 31 bits), so
 * every product x'y' is exact in int64 (|x'y'| <= 2^60), four of them add in
 * int64 (<= 2^62), and the exact total T = sum_q x'_q y'_q fits a signed
 * 128-bit integer for any K below 2^66. That T is the integer the digit planes
 * add up (sum_w 2^(8w) D_w), here without planes, passes or limbs: the same
 * exact integer, so the same rounded bits, whatever the road (test_gemm_direct
 * in tests/unit compares the two roads bit for bit, and the exact Python
 * reference of tests/python/test_py_linalg.py checks both).
 *
 * The inputs' rounding x' = RNE(x * 2^sigma) is computed in double: x * 2^sigma
 * is exact (a float32 significand under a power of two far inside double's
 * range), and (t + 1.5 * 2^52) - 1.5 * 2^52 rounds |t| <= 2^51 to the nearest
 * integer, ties to even, in IEEE 754's default mode: the value sb_oz_fixed
 * gives, by fewer steps.
 *
 * The one rounding of T * 2^-S to float32 (sb_oz_round's value) goes through
 * double with round-to-odd: T is cut to its 53 leading bits, the lowest set
 * when any dropped bit is nonzero, scaled by a power of two (exact), and
 * converted to float32 (one IEEE rounding, nearest-even, subnormals and
 * overflow included). Rounding to odd at 53 >= 2 * 24 + 2 bits and then to
 * nearest at 24 gives the correctly rounded result (S. Boldo, G. Melquiond,
 * "Emulation of FMA and correctly rounded sums: proved algorithms using
 * rounding to odd", IEEE Trans. Computers 57(4), 2008).
 *
 * Work is cut by the shape only, and the totals are exact integers, so the
 * cut cannot reach a bit either way.
 */
#include "linalg.h"
#include "../kernels/linalg.h"
#include <stdlib.h>
#include <string.h>

#if defined(__SIZEOF_INT128__)

typedef __int128 i128;
typedef unsigned __int128 u128;

#define DIRECT_SUB 1024          /* rows of q converted at once inside a task */
#define DIRECT_KTASKS_MAX 64     /* K ranges of the summed regime */
#define DIRECT_KTASK_MIN 16384   /* ... each at least this long */
#define DIRECT_CELLS_MAX 65536   /* m * n of the summed regime (partials: 16 bytes a cell a range) */
#define DIRECT_B_MAX ((int64_t)1 << 24) /* n * K of the lines regime (B converted whole) */
#define DIRECT_LINE_GRAIN 32

static double pow2d(int32_t e) {
    const uint64_t u = (uint64_t)(e + 1023) << 52;
    double d;
    memcpy(&d, &u, 8);
    return d;
}

/* RNE(x * 2^sigma) of a finite x of a line whose scale is sigma (scale =
 * 2^sigma); 0 for an infinity or a NaN, as sb_oz_fixed. */
static inline int32_t fixed31(float x, double scale) {
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) == 0x7f800000u) return 0;
    const double t = (double)x * scale;
    const double r = (t + 0x1.8p52) - 0x1.8p52;
    return (int32_t)r;
}

/* RNE(x * 2^sigma) for a line of more than four digits (|result| <= 2^62):
 * from 2^23 up, x * 2^sigma is an integer already (24 significant bits). */
static inline int64_t fixed63(float x, double scale) {
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) == 0x7f800000u) return 0;
    const double t = (double)x * scale;
    const double r = t < 0x1p23 && t > -0x1p23 ? (t + 0x1.8p52) - 0x1.8p52 : t;
    return (int64_t)r;
}

/* The float32 bits of T * 2^-S rounded once, nearest-even (sb_oz_round's value). */
static uint32_t round_total(i128 T, int32_t S) {
    if (T == 0) return 0u;
    const int neg = T < 0;
    const u128 u = neg ? -(u128)T : (u128)T;
    const uint64_t hi = (uint64_t)(u >> 64), lo = (uint64_t)u;
    const int len = hi ? 128 - __builtin_clzll(hi) : 64 - __builtin_clzll(lo);
    uint64_t q;
    int32_t e = -S;
    if (len <= 53) {
        q = lo;
    } else {
        const int sh = len - 53;
        q = (uint64_t)(u >> sh);
        if (u & ((((u128)1) << sh) - 1u)) q |= 1u; /* round to odd */
        e += sh;
    }
    const float f = (float)((double)q * pow2d(e));
    uint32_t bits;
    memcpy(&bits, &f, 4);
    return neg ? bits | 0x80000000u : bits;
}

/* sum_q a[q] * b[q] for |a|, |b| <= 2^30, exact. */
static inline i128 dot31(const int32_t *a, const int32_t *b, int64_t n) {
    i128 s = 0;
    int64_t q = 0;
    for (; q + 4 <= n; q += 4)
        s += (int64_t)a[q] * b[q] + (int64_t)a[q + 1] * b[q + 1] + (int64_t)a[q + 2] * b[q + 2] +
             (int64_t)a[q + 3] * b[q + 3];
    for (; q < n; q++) s += (int64_t)a[q] * b[q];
    return s;
}

/* sum_q a[q] * b[q] for |a| <= 2^62, |b| <= 2^30: each product below 2^92,
 * the sum below 2^123 for K < 2^31. */
static inline i128 dotw(const int64_t *a, const int32_t *b, int64_t n) {
    i128 s = 0;
    for (int64_t q = 0; q < n; q++) s += (i128)a[q] * b[q];
    return s;
}

/* Two lines of A against two of B at once (half the loads of four dot31). */
static inline void dot31_2x2(const int32_t *a0, const int32_t *a1, const int32_t *b0, const int32_t *b1, int64_t n,
                             i128 *s00, i128 *s01, i128 *s10, i128 *s11) {
    i128 t00 = 0, t01 = 0, t10 = 0, t11 = 0;
    int64_t q = 0;
    for (; q + 4 <= n; q += 4) {
        int64_t u00 = 0, u01 = 0, u10 = 0, u11 = 0;
        for (int r = 0; r < 4; r++) {
            const int64_t x0 = a0[q + r], x1 = a1[q + r], y0 = b0[q + r], y1 = b1[q + r];
            u00 += x0 * y0;
            u01 += x0 * y1;
            u10 += x1 * y0;
            u11 += x1 * y1;
        }
        t00 += u00, t01 += u01, t10 += u10, t11 += u11;
    }
    for (; q < n; q++) {
        const int64_t x0 = a0[q], x1 = a1[q], y0 = b0[q], y1 = b1[q];
        t00 += x0 * y0, t01 += x0 * y1, t10 += x1 * y0, t11 += x1 * y1;
    }
    *s00 += t00, *s01 += t01, *s10 += t10, *s11 += t11;
}

#if defined(__x86_64__)
#include <immintrin.h>
/* dot31_2x2 with AVX2 (compiled for that target, chosen at run time): the
 * same four exact sums. VPMULDQ multiplies the even int32 elements of two
 * vectors to exact int64 products (|x'y'| <= 2^60), the odd ones after a
 * 32-bit shift; each int64 lane takes at most DOT_AVX2_STEPS products (7 *
 * 2^60 < 2^63) before its four values go into the 128-bit totals. The sums
 * are exact integers, so lane order, blocking and vector width reach no bit. */
#define DOT_AVX2_STEPS 7
__attribute__((target("avx2"))) static void dot_2x2_avx2_steps(const int32_t *a0, const int32_t *a1,
                                                               const int32_t *b0, const int32_t *b1, int64_t n,
                                                               i128 *s00, i128 *s01, i128 *s10, i128 *s11,
                                                               int steps) {
    i128 t[4] = {0, 0, 0, 0};
    int64_t q = 0;
    while (q + 8 <= n) {
        __m256i e00 = _mm256_setzero_si256(), e01 = e00, e10 = e00, e11 = e00;
        __m256i o00 = e00, o01 = e00, o10 = e00, o11 = e00;
        for (int step = 0; step < steps && q + 8 <= n; step++, q += 8) {
            const __m256i x0 = _mm256_loadu_si256((const __m256i *)(const void *)(a0 + q));
            const __m256i x1 = _mm256_loadu_si256((const __m256i *)(const void *)(a1 + q));
            const __m256i y0 = _mm256_loadu_si256((const __m256i *)(const void *)(b0 + q));
            const __m256i y1 = _mm256_loadu_si256((const __m256i *)(const void *)(b1 + q));
            const __m256i x0o = _mm256_srli_epi64(x0, 32), x1o = _mm256_srli_epi64(x1, 32);
            const __m256i y0o = _mm256_srli_epi64(y0, 32), y1o = _mm256_srli_epi64(y1, 32);
            e00 = _mm256_add_epi64(e00, _mm256_mul_epi32(x0, y0));
            e01 = _mm256_add_epi64(e01, _mm256_mul_epi32(x0, y1));
            e10 = _mm256_add_epi64(e10, _mm256_mul_epi32(x1, y0));
            e11 = _mm256_add_epi64(e11, _mm256_mul_epi32(x1, y1));
            o00 = _mm256_add_epi64(o00, _mm256_mul_epi32(x0o, y0o));
            o01 = _mm256_add_epi64(o01, _mm256_mul_epi32(x0o, y1o));
            o10 = _mm256_add_epi64(o10, _mm256_mul_epi32(x1o, y0o));
            o11 = _mm256_add_epi64(o11, _mm256_mul_epi32(x1o, y1o));
        }
        const __m256i acc[8] = {e00, o00, e01, o01, e10, o10, e11, o11};
        for (int v = 0; v < 8; v++) {
            int64_t lane[4];
            _mm256_storeu_si256((__m256i *)(void *)lane, acc[v]);
            t[v / 2] += (i128)lane[0] + lane[1] + (i128)lane[2] + lane[3];
        }
    }
    for (; q < n; q++) {
        const int64_t x0 = a0[q], x1 = a1[q], y0 = b0[q], y1 = b1[q];
        t[0] += x0 * y0, t[1] += x0 * y1, t[2] += x1 * y0, t[3] += x1 * y1;
    }
    *s00 += t[0], *s01 += t[1], *s10 += t[2], *s11 += t[3];
}

/* The same with AVX-512F: sixteen int32 a load, eight products a VPMULDQ; the
 * last elements (fewer than sixteen) by masked loads, whose zeros add
 * nothing. A flush splits each lane exactly into its high and low 32 bits
 * (v = h 2^32 + l, l in [0, 2^32)), added into per-lane totals that stay in
 * registers: a flush adds two of each to a lane (|h| <= 2^31, l < 2^32), and
 * K < 2^31 makes at most 2^27 flushes, so a lane's l total stays below 2^60
 * and the eight lanes' sum below 2^63 (h's far below). The lanes are added
 * once, at the end, so a short line pays no more than its own steps. */
#define FLUSH512(e, o, h, l)                                                                                            \
    do {                                                                                                               \
        h = _mm512_add_epi64(h, _mm512_add_epi64(_mm512_srai_epi64(e, 32), _mm512_srai_epi64(o, 32)));                  \
        l = _mm512_add_epi64(l, _mm512_add_epi64(_mm512_and_si512(e, low32), _mm512_and_si512(o, low32)));              \
    } while (0)
__attribute__((target("avx512f"))) static inline i128 lanes512(__m512i h, __m512i l) {
    return (i128)_mm512_reduce_add_epi64(h) * ((i128)1 << 32) + (i128)_mm512_reduce_add_epi64(l);
}
__attribute__((target("avx512f"))) static void dot_2x2_avx512_steps(const int32_t *a0, const int32_t *a1,
                                                                    const int32_t *b0, const int32_t *b1, int64_t n,
                                                                    i128 *s00, i128 *s01, i128 *s10, i128 *s11,
                                                                    int steps) {
    const __m512i low32 = _mm512_set1_epi64(0xffffffffLL);
    __m512i h00 = _mm512_setzero_si512(), h01 = h00, h10 = h00, h11 = h00;
    __m512i l00 = h00, l01 = h00, l10 = h00, l11 = h00;
    int64_t q = 0;
    while (q < n) {
        __m512i e00 = _mm512_setzero_si512(), e01 = e00, e10 = e00, e11 = e00;
        __m512i o00 = e00, o01 = e00, o10 = e00, o11 = e00;
        for (int step = 0; step < steps && q < n; step++, q += 16) {
            __m512i x0, x1, y0, y1;
            if (q + 16 <= n) {
                x0 = _mm512_loadu_si512((const void *)(a0 + q)), x1 = _mm512_loadu_si512((const void *)(a1 + q));
                y0 = _mm512_loadu_si512((const void *)(b0 + q)), y1 = _mm512_loadu_si512((const void *)(b1 + q));
            } else {
                const __mmask16 k = (__mmask16)((1u << (n - q)) - 1u);
                x0 = _mm512_maskz_loadu_epi32(k, a0 + q), x1 = _mm512_maskz_loadu_epi32(k, a1 + q);
                y0 = _mm512_maskz_loadu_epi32(k, b0 + q), y1 = _mm512_maskz_loadu_epi32(k, b1 + q);
            }
            const __m512i x0o = _mm512_srli_epi64(x0, 32), x1o = _mm512_srli_epi64(x1, 32);
            const __m512i y0o = _mm512_srli_epi64(y0, 32), y1o = _mm512_srli_epi64(y1, 32);
            e00 = _mm512_add_epi64(e00, _mm512_mul_epi32(x0, y0));
            e01 = _mm512_add_epi64(e01, _mm512_mul_epi32(x0, y1));
            e10 = _mm512_add_epi64(e10, _mm512_mul_epi32(x1, y0));
            e11 = _mm512_add_epi64(e11, _mm512_mul_epi32(x1, y1));
            o00 = _mm512_add_epi64(o00, _mm512_mul_epi32(x0o, y0o));
            o01 = _mm512_add_epi64(o01, _mm512_mul_epi32(x0o, y1o));
            o10 = _mm512_add_epi64(o10, _mm512_mul_epi32(x1o, y0o));
            o11 = _mm512_add_epi64(o11, _mm512_mul_epi32(x1o, y1o));
        }
        FLUSH512(e00, o00, h00, l00);
        FLUSH512(e01, o01, h01, l01);
        FLUSH512(e10, o10, h10, l10);
        FLUSH512(e11, o11, h11, l11);
    }
    *s00 += lanes512(h00, l00), *s01 += lanes512(h01, l01), *s10 += lanes512(h10, l10), *s11 += lanes512(h11, l11);
}
#undef FLUSH512

__attribute__((target("avx512f"))) static void dot31_2x2_avx512(const int32_t *a0, const int32_t *a1,
                                                                const int32_t *b0, const int32_t *b1, int64_t n,
                                                                i128 *s00, i128 *s01, i128 *s10, i128 *s11) {
    dot_2x2_avx512_steps(a0, a1, b0, b1, n, s00, s01, s10, s11, DOT_AVX2_STEPS);
}

__attribute__((target("avx2"))) static void dot31_2x2_avx2(const int32_t *a0, const int32_t *a1, const int32_t *b0,
                                                           const int32_t *b1, int64_t n, i128 *s00, i128 *s01,
                                                           i128 *s10, i128 *s11) {
    dot_2x2_avx2_steps(a0, a1, b0, b1, n, s00, s01, s10, s11, DOT_AVX2_STEPS);
}
#endif

typedef void (*dot2x2_fn)(const int32_t *, const int32_t *, const int32_t *, const int32_t *, int64_t, i128 *, i128 *,
                          i128 *, i128 *);
/* The 2 x 2 kernel of this machine: AVX2 where the CPU has it (x86-64), else
 * the portable one; SAMEBITS_DIRECT_KERNEL=scalar keeps the portable one
 * (the unit test runs both; they give the same integers). Read once. */
static dot2x2_fn g_dot2x2;
static dot2x2_fn dot2x2_kernel(void) {
    dot2x2_fn f = __atomic_load_n(&g_dot2x2, __ATOMIC_ACQUIRE);
    if (f) return f;
    f = dot31_2x2;
#if defined(__x86_64__)
    const char *v = getenv("SAMEBITS_DIRECT_KERNEL");
    __builtin_cpu_init();
    if (!(v && !strcmp(v, "scalar")) && __builtin_cpu_supports("avx2")) f = dot31_2x2_avx2;
    if (!(v && (!strcmp(v, "scalar") || !strcmp(v, "avx2"))) && __builtin_cpu_supports("avx2") &&
        __builtin_cpu_supports("avx512f"))
        f = dot31_2x2_avx512;
#endif
    __atomic_store_n(&g_dot2x2, f, __ATOMIC_RELEASE);
    return f;
}

const char *sb_gemm_direct_kernel(void) {
#if defined(__x86_64__)
    const dot2x2_fn f = dot2x2_kernel();
    return f == dot31_2x2_avx512 ? "avx512" : f == dot31_2x2_avx2 ? "avx2" : "scalar";
#else
    (void)dot2x2_kernel();
    return "scalar";
#endif
}

void sb_gemm_direct_kernel_reset(void) { __atomic_store_n(&g_dot2x2, (dot2x2_fn)0, __ATOMIC_RELEASE); }

/* out[l * len + (q - q0)] := x' of element q of line l, lines [0, L), q in [q0, q1). */
static void convert_block(const float *x, int64_t ls, int64_t qs, int64_t L, int64_t q0, int64_t q1,
                          const double *scale, int32_t *out) {
    const int64_t len = q1 - q0;
    if (qs == 1) {
        for (int64_t l = 0; l < L; l++) {
            const float *line = x + l * ls;
            const double sc = scale[l];
            int32_t *o = out + l * len;
            for (int64_t q = q0; q < q1; q++) o[q - q0] = fixed31(line[q], sc);
        }
    } else {
        for (int64_t q = q0; q < q1; q++) {
            const float *row = x + q * qs;
            for (int64_t l = 0; l < L; l++) out[l * len + (q - q0)] = fixed31(row[l * ls], scale[l]);
        }
    }
}

/* out64[l * len + (q - q0)] := x' of a line of more than four digits. */
static void convert_block64(const float *x, int64_t ls, int64_t qs, int64_t L, int64_t q0, int64_t q1,
                            const double *scale, int64_t *out) {
    const int64_t len = q1 - q0;
    for (int64_t l = 0; l < L; l++)
        for (int64_t q = q0; q < q1; q++) out[l * len + (q - q0)] = fixed63(x[l * ls + q * qs], scale[l]);
}

/* A block of lines: int32 integers (four digits) or int64 ones (more). */
typedef struct lines_ref {
    const void *v;
    int64_t stride; /* elements from one line to the next */
    int wide;
} lines_ref;

#if defined(__x86_64__)
/* tile_sums_wide through the AVX2 kernel: each wide integer (|v| <= 2^62) is
 * split exactly as v = h 2^32 + l with l = v's low 32 bits read as signed
 * (|l| <= 2^31) and |h| <= 2^30, so that v y = (h y) 2^32 + l y, two int32
 * products per element (|l y| <= 2^61: three a lane before the totals take
 * them, 3 * 2^61 < 2^63). The same exact sums as dotw. 0: no memory for the
 * split lines (the caller then takes the portable loop). Four a lane would
 * still fit (four products of -2^31 and 2^30 sum to -2^63, the least int64);
 * five do not, and sb_gemm_direct_kernel_check shows them failing. */
#define WIDE_AVX2_STEPS 3
static int tile_sums_wide_avx2(lines_ref A, lines_ref B, int64_t m, int64_t n, int64_t len, i128 *T, int64_t ldt) {
    const lines_ref W = A.wide ? A : B, N = A.wide ? B : A;
    const int64_t nw = A.wide ? m : n, nn = A.wide ? n : m;
    int32_t *hl = malloc(sizeof(int32_t) * (size_t)(2 * nw * len + 1));
    if (!hl) return 0;
    for (int64_t l = 0; l < nw; l++) {
        const int64_t *v = (const int64_t *)W.v + l * W.stride;
        int32_t *h = hl + 2 * l * len, *lo = h + len;
        for (int64_t q = 0; q < len; q++) {
            const int32_t low = (int32_t)(uint32_t)(uint64_t)v[q];
            lo[q] = low;
            h[q] = (int32_t)((v[q] - low) / ((int64_t)1 << 32));
        }
    }
    const int32_t *nv = (const int32_t *)N.v;
    for (int64_t l = 0; l < nw; l++) {
        const int32_t *h = hl + 2 * l * len, *lo = h + len;
        int64_t k = 0;
        for (; k + 2 <= nn; k += 2) {
            const int32_t *y0 = nv + k * N.stride, *y1 = y0 + N.stride;
            i128 h0 = 0, h1 = 0, l0 = 0, l1 = 0;
            if (dot2x2_kernel() == dot31_2x2_avx512)
                dot_2x2_avx512_steps(h, lo, y0, y1, len, &h0, &h1, &l0, &l1, WIDE_AVX2_STEPS);
            else
                dot_2x2_avx2_steps(h, lo, y0, y1, len, &h0, &h1, &l0, &l1, WIDE_AVX2_STEPS);
            const i128 v0 = h0 * ((i128)1 << 32) + l0, v1 = h1 * ((i128)1 << 32) + l1;
            if (A.wide) T[l * ldt + k] += v0, T[l * ldt + k + 1] += v1;
            else T[k * ldt + l] += v0, T[(k + 1) * ldt + l] += v1;
        }
        for (; k < nn; k++) {
            const int64_t *v = (const int64_t *)W.v + l * W.stride;
            const i128 d = dotw(v, nv + k * N.stride, len);
            if (A.wide) T[l * ldt + k] += d;
            else T[k * ldt + l] += d;
        }
    }
    free(hl);
    return 1;
}
#endif

/* T += the exact sums of lines A_i and B_j over len where one side is wide. */
static void tile_sums_wide(lines_ref A, lines_ref B, int64_t m, int64_t n, int64_t len, i128 *T, int64_t ldt) {
#if defined(__x86_64__)
    if (dot2x2_kernel() != dot31_2x2 && tile_sums_wide_avx2(A, B, m, n, len, T, ldt)) return;
#endif
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            T[i * ldt + j] += A.wide ? dotw((const int64_t *)A.v + i * A.stride, (const int32_t *)B.v + j * B.stride, len)
                                     : dotw((const int64_t *)B.v + j * B.stride, (const int32_t *)A.v + i * A.stride, len);
}

/* The vector kernels against the portable sums on lines at the extremes the
 * lane bounds are set for (tests/unit/test_gemm_roads.c): int32 lines of
 * +-2^30 of one sign (every lane at its largest sum: one product more per
 * lane would overflow), and wide lines whose low halves are +-(2^31 - 1)
 * against +-2^30 (the split's largest products), both long enough for many
 * flushes, plus mixed values. Returns the number of sums that differ (0 where
 * this machine has no vector kernel). */
int sb_gemm_direct_kernel_check(void) {
    enum { LEN = 1000 };
    static int32_t a[2][LEN], b[2][LEN];
    static int64_t w[2][LEN];
    int bad = 0;
    uint64_t r = 12345;
    for (int pass = 0; pass < 3; pass++) {
        for (int l = 0; l < 2; l++)
            for (int q = 0; q < LEN; q++) {
                r = r * 6364136223846793005ull + 1442695040888963407ull;
                const int32_t sg = pass == 1 ? -1 : 1;
                const int32_t big = (int32_t)1 << 30;
                a[l][q] = pass < 2 ? sg * big : (int32_t)((int64_t)(r >> 33) % (2 * (int64_t)big + 1) - big);
                b[l][q] = pass < 2 ? sg * big : (int32_t)((int64_t)(r >> 31) % (2 * (int64_t)big + 1) - big);
                const int64_t lowmax = pass < 2 ? (int64_t)sg * 2147483647 : (int64_t)(int32_t)(uint32_t)r;
                const int64_t hi = pass < 2 ? (int64_t)sg * (((int64_t)1 << 30) - 1) : (int64_t)(r >> 34) - ((int64_t)1 << 29);
                w[l][q] = hi * ((int64_t)1 << 32) + lowmax;
            }
        i128 ref[4] = {0, 0, 0, 0}, refw[4] = {0, 0, 0, 0}; /* one 128-bit product at a time */
        for (int c = 0; c < 4; c++)
            for (int q = 0; q < LEN; q++) {
                ref[c] += (i128)a[c >> 1][q] * b[c & 1][q];
                refw[c] += (i128)w[c >> 1][q] * b[c & 1][q];
            }
        dot2x2_fn kernels[3] = {dot31_2x2, NULL, NULL};
#if defined(__x86_64__)
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2")) kernels[1] = dot31_2x2_avx2;
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("avx512f")) kernels[2] = dot31_2x2_avx512;
#endif
        for (int k = 0; k < 3; k++) {
            if (!kernels[k]) continue;
            i128 t[4] = {0, 0, 0, 0};
            kernels[k](a[0], a[1], b[0], b[1], LEN, &t[0], &t[1], &t[2], &t[3]);
            for (int c = 0; c < 4; c++) bad += t[c] != ref[c];
#if defined(__x86_64__)
            if (k == 0) continue;
            /* the wide split, as tile_sums_wide_avx2 takes it: lines of w against those of b */
            const dot2x2_fn saved = __atomic_load_n(&g_dot2x2, __ATOMIC_ACQUIRE);
            __atomic_store_n(&g_dot2x2, kernels[k], __ATOMIC_RELEASE);
            i128 tw[4] = {0, 0, 0, 0};
            const lines_ref A = {w[0], LEN, 1}, B = {b[0], LEN, 0};
            bad += !tile_sums_wide_avx2(A, B, 2, 2, LEN, tw, 2);
            __atomic_store_n(&g_dot2x2, saved, __ATOMIC_RELEASE);
            for (int c = 0; c < 4; c++) bad += tw[c] != refw[c];
#endif
        }
    }
    return bad;
}

/* T[i*ldt + j] += the exact sums over len of lines A_i (i < m, at A + i*sa)
 * and B_j (j < n, at B + j*sb); sym: B is A, only j >= i is wanted. */
static void tile_sums(const int32_t *A, int64_t sa, const int32_t *B, int64_t sb, int64_t m, int64_t n, int64_t len,
                      int sym, int64_t i0, i128 *T, int64_t ldt) {
    /* sym: A's row i is B's line i0 + i, and only j >= i0 + i is wanted */
    const dot2x2_fn dot2x2 = dot2x2_kernel();
    int64_t i = 0;
    for (; i + 2 <= m; i += 2) {
        const int32_t *a0 = A + i * sa, *a1 = a0 + sa;
        int64_t j = sym ? i0 + i : 0;
        for (; j + 2 <= n; j += 2) {
            const int32_t *b0 = B + j * sb, *b1 = b0 + sb;
            dot2x2(a0, a1, b0, b1, len, &T[i * ldt + j], &T[i * ldt + j + 1], &T[(i + 1) * ldt + j],
                   &T[(i + 1) * ldt + j + 1]);
        }
        for (; j < n; j++) {
            T[i * ldt + j] += dot31(a0, B + j * sb, len);
            T[(i + 1) * ldt + j] += dot31(a1, B + j * sb, len);
        }
    }
    for (; i < m; i++)
        for (int64_t j = sym ? i0 + i : 0; j < n; j++) T[i * ldt + j] += dot31(A + i * sa, B + j * sb, len);
}

typedef struct direct_job {
    const sb_gemm_shape *s;
    const float *a, *b;
    float *c;
    int64_t ldc;
    int64_t als, aqs, bls, bqs;
    const int32_t *sig_a, *sig_b;
    const uint8_t *flag_a, *flag_b;
    double *sc_a, *sc_b;
    const int32_t *pv_a, *pv_b; /* prepared operands' integers (line-major, K a line), or NULL */
    int wa, wb;                 /* a side of more than four digits (at most one): int64 integers */
    int sym;
    /* summed regime: K ranges, partial totals per range */
    int64_t ktasks, kgrain;
    i128 *parts;
    int32_t **scratch; /* per worker */
    /* lines regime: B converted whole */
    int32_t *bconv;
    int64_t lgrain; /* lines of A a task takes (by the shape: more when K is short) */
    int64_t awords; /* int32 words of a worker's converted lines of A: none when A is prepared */
} direct_job;

/* The final element (i, j) from its exact total: rounded once, then special values. */
static void finish(const direct_job *j, int64_t i, int64_t q, i128 T) {
    const sb_gemm_shape *s = j->s;
    uint32_t bits = s->k ? round_total(T, j->sig_a[i] + j->sig_b[q]) : 0u;
    if (j->flag_a[i] || j->flag_b[q]) {
        const uint32_t sp = sb_oz_special(j->a, i * j->als, j->aqs, j->b, q * j->bls, j->bqs, s->k);
        if (sp) bits = sp;
    }
    float f;
    memcpy(&f, &bits, 4);
    j->c[i * j->ldc + q] = f;
}

/* Summed regime, task = (K range t, block ib of A's lines): the partial
 * totals of range t for rows [i0, i1) and every j (j >= i for a Gram). */
#define DIRECT_IBLOCK 64
static void ktask(void *ctx, int64_t task) {
    direct_job *j = ctx;
    const int64_t m = j->s->m, n = j->s->n, K = j->s->k, nib = sb_chunk_count(m, DIRECT_IBLOCK);
    const int64_t t = task / nib, ib = task % nib;
    int64_t q0, q1, i0, i1;
    sb_chunk_range(K, j->kgrain, t, &q0, &q1);
    sb_chunk_range(m, DIRECT_IBLOCK, ib, &i0, &i1);
    const int64_t mb = i1 - i0;
    i128 *T = j->parts + t * m * n + i0 * n;
    memset(T, 0, sizeof(i128) * (size_t)(mb * n));
    int32_t *buf = j->scratch[sb_worker_index()];
    /* a Gram converts every line (B's lines are A's); otherwise A's block only */
    int32_t *cA = buf, *cB = j->sym ? buf : buf + (j->wa ? 2 : 1) * mb * DIRECT_SUB;
    for (int64_t p0 = q0; p0 < q1; p0 += DIRECT_SUB) {
        const int64_t p1 = p0 + DIRECT_SUB < q1 ? p0 + DIRECT_SUB : q1, len = p1 - p0;
        const int32_t *A = cA, *B = cB;
        int64_t sa = len, sb = len;
        if (j->sym) {
            if (j->pv_a) B = j->pv_a + p0, sb = K;
            else convert_block(j->a, j->als, j->aqs, m, p0, p1, j->sc_a, cB);
            A = B + i0 * sb, sa = sb;
        } else {
            if (j->pv_a) A = j->pv_a + i0 * K + p0, sa = K;
            else if (j->wa)
                convert_block64(j->a + i0 * j->als, j->als, j->aqs, mb, p0, p1, j->sc_a + i0, (int64_t *)(void *)cA);
            else convert_block(j->a + i0 * j->als, j->als, j->aqs, mb, p0, p1, j->sc_a + i0, cA);
            if (j->pv_b) B = j->pv_b + p0, sb = K;
            else if (j->bconv) B = j->bconv + p0, sb = K;
            else if (j->wb) convert_block64(j->b, j->bls, j->bqs, n, p0, p1, j->sc_b, (int64_t *)(void *)cB);
            else convert_block(j->b, j->bls, j->bqs, n, p0, p1, j->sc_b, cB);
        }
        if (j->wa || j->wb) {
            const lines_ref ra = {A, sa, j->wa}, rb = {B, sb, j->wb};
            tile_sums_wide(ra, rb, mb, n, len, T, n);
        } else {
            tile_sums(A, sa, B, sb, mb, n, len, j->sym, i0, T, n);
        }
    }
}

/* Summed regime, the rows [b, e) of C: partial totals added in range order (exact). */
static void kfinish_task(void *ctx, int64_t task) {
    const direct_job *j = ctx;
    const int64_t m = j->s->m, n = j->s->n;
    int64_t b, e;
    sb_chunk_range(m, 16, task, &b, &e);
    for (int64_t i = b; i < e; i++)
        for (int64_t q = 0; q < n; q++) {
            const int64_t cell = j->sym && q < i ? q * n + i : i * n + q; /* T is symmetric */
            i128 T = 0;
            for (int64_t t = 0; t < j->ktasks; t++) T += j->parts[t * m * n + cell];
            finish(j, i, q, T);
        }
}

/* Lines regime, B converted whole: the columns [b, e) of B's K-blocks. */
static void bconv_task(void *ctx, int64_t task) {
    direct_job *j = ctx;
    const int64_t n = j->s->n, K = j->s->k;
    int64_t b, e;
    sb_chunk_range(n, DIRECT_LINE_GRAIN, task, &b, &e);
    if (j->wb) convert_block64(j->b + b * j->bls, j->bls, j->bqs, e - b, 0, K, j->sc_b + b, (int64_t *)(void *)j->bconv + b * K);
    else convert_block(j->b + b * j->bls, j->bls, j->bqs, e - b, 0, K, j->sc_b + b, j->bconv + b * K);
}

/* Lines regime, lines [b, e) of A: converted, then every element of their rows. */
static void ltask(void *ctx, int64_t task) {
    direct_job *j = ctx;
    const int64_t m = j->s->m, n = j->s->n, K = j->s->k;
    int64_t b, e;
    sb_chunk_range(m, j->lgrain, task, &b, &e);
    int32_t *cA = j->scratch[sb_worker_index()];
    i128 *T = (i128 *)(void *)(cA + j->awords + 4); /* 16-byte aligned: 4 ints pad */
    T = (i128 *)(void *)(((uintptr_t)T + 15u) & ~(uintptr_t)15u);
    const int32_t *A = cA;
    if (j->pv_a) A = j->pv_a + b * K;
    else if (j->wa) convert_block64(j->a + b * j->als, j->als, j->aqs, e - b, 0, K, j->sc_a + b, (int64_t *)(void *)cA);
    else convert_block(j->a + b * j->als, j->als, j->aqs, e - b, 0, K, j->sc_a + b, cA);
    memset(T, 0, sizeof(i128) * (size_t)((e - b) * n));
    const int32_t *B = j->pv_b ? j->pv_b : j->bconv;
    if (j->wa || j->wb) {
        const lines_ref ra = {A, K, j->wa}, rb = {B, K, j->wb};
        tile_sums_wide(ra, rb, e - b, n, K, T, n);
    } else {
        tile_sums(A, K, B, K, e - b, n, K, 0, 0, T, n);
    }
    for (int64_t i = b; i < e; i++)
        for (int64_t q = 0; q < n; q++) finish(j, i, q, T[(i - b) * n + q]);
}

typedef struct prep_job {
    const float *x;
    int64_t ls, qs, nlines, k;
    const double *scale;
    int32_t *v;
} prep_job;

static void prep_lines_task(void *ctx, int64_t task) {
    const prep_job *p = ctx;
    int64_t b, e;
    sb_chunk_range(p->nlines, 256, task, &b, &e);
    convert_block(p->x + b * p->ls, p->ls, p->qs, e - b, 0, p->k, p->scale + b, p->v + b * p->k);
}

/* Strided lines, q outer: each task the rows [q0, q1) of every line (written
 * at v + l*k + q, so the blocks go straight to their places). */
static void prep_rows_task(void *ctx, int64_t task) {
    const prep_job *p = ctx;
    int64_t q0, q1;
    sb_chunk_range(p->k, DIRECT_SUB, task, &q0, &q1);
    for (int64_t q = q0; q < q1; q++) {
        const float *row = p->x + q * p->qs;
        for (int64_t l = 0; l < p->nlines; l++) p->v[l * p->k + q] = fixed31(row[l * p->ls], p->scale[l]);
    }
}

sb_status sb_gemm_direct_values(const float *x, int64_t ls, int64_t qs, int64_t nlines, int64_t k,
                                const int32_t *sigma, int32_t *v) {
    double *scale = sb_malloc(sizeof(double) * (size_t)(nlines > 0 ? nlines : 1));
    if (!scale) return sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_gemm: out of memory for the line scales");
    for (int64_t l = 0; l < nlines; l++) scale[l] = pow2d(sigma[l]);
    prep_job p = {x, ls, qs, nlines, k, scale, v};
    if (qs != 1 && ls == 1) sb_parallel_for(sb_chunk_count(k, DIRECT_SUB), prep_rows_task, &p);
    else sb_parallel_for(sb_chunk_count(nlines, 256), prep_lines_task, &p);
    sb_free(scale);
    return SB_OK;
}

int sb_gemm_direct_fits(const sb_gemm_shape *s) {
    if (s->k == 0) return 0;
    if (s->m * s->n <= DIRECT_CELLS_MAX) return 1;
    return s->n * s->k <= DIRECT_B_MAX;
}

sb_status sb_gemm_direct_host(const sb_gemm_shape *s, const float *a, const float *b, float *c, int64_t ldc,
                              const int32_t *sig_a, const int32_t *sig_b, const uint8_t *flag_a,
                              const uint8_t *flag_b, const int32_t *pv_a, const int32_t *pv_b, int wide_a,
                              int wide_b) {
    const int64_t m = s->m, n = s->n, K = s->k;
    direct_job j = {0};
    j.s = s, j.a = a, j.b = b, j.c = c, j.ldc = ldc;
    j.als = s->ta ? 1 : s->lda, j.aqs = s->ta ? s->lda : 1;
    j.bls = s->tb ? s->ldb : 1, j.bqs = s->tb ? 1 : s->ldb;
    j.sig_a = sig_a, j.sig_b = sig_b, j.flag_a = flag_a, j.flag_b = flag_b;
    j.sym = a == b && m == n && j.als == j.bls && j.aqs == j.bqs;
    j.pv_a = wide_a ? NULL : pv_a, j.pv_b = wide_b ? NULL : pv_b;
    j.wa = wide_a, j.wb = wide_b;
    if (wide_a && wide_b) return sb_fail(SB_ERR_INTERNAL, "sb_gemm: the direct road takes one wide operand at most");
    if (j.wa || j.wb) j.sym = 0;
    sb_status st = SB_OK;
    const int32_t width = sb_parallel_width();
    /* the scales as doubles, only for a side converted here (a prepared side holds its integers) */
    j.scratch = sb_calloc((size_t)width, sizeof(int32_t *));
    if (!j.scratch || (!j.pv_a && !(j.sc_a = sb_malloc(sizeof(double) * (size_t)m))) ||
        (!j.pv_b && !(j.sc_b = sb_malloc(sizeof(double) * (size_t)n))))
        goto oom;
    if (j.sc_a)
        for (int64_t i = 0; i < m; i++) j.sc_a[i] = pow2d(sig_a[i]);
    if (j.sc_b)
        for (int64_t q = 0; q < n; q++) j.sc_b[q] = pow2d(sig_b[q]);
    if (m * n <= DIRECT_CELLS_MAX) {
        /* the summed regime: K in ranges (by the shape), totals per range, added */
        int64_t kt = K / DIRECT_KTASK_MIN;
        kt = kt < 1 ? 1 : kt > DIRECT_KTASKS_MAX ? DIRECT_KTASKS_MAX : kt;
        j.kgrain = (K + kt - 1) / kt;
        j.ktasks = sb_chunk_count(K, j.kgrain);
        if (!(j.parts = sb_malloc(sizeof(i128) * (size_t)(j.ktasks * m * n)))) goto oom;
        const int64_t mb = m < DIRECT_IBLOCK ? m : DIRECT_IBLOCK;
        const size_t per = sizeof(int32_t) * (size_t)((j.sym ? m : (j.wa ? 2 : 1) * mb + (j.wb ? 2 : 1) * n) * DIRECT_SUB);
        for (int32_t w = 0; w < width; w++)
            if (!(j.scratch[w] = sb_malloc(per))) goto oom;
        /* B's lines converted once, not once a block of A's lines, where they fit */
        if (!j.pv_b && !j.sym && !j.wb && n * K <= DIRECT_B_MAX && sb_chunk_count(m, DIRECT_IBLOCK) > 1) {
            if (!(j.bconv = sb_malloc(sizeof(int32_t) * (size_t)(n * K)))) goto oom;
            sb_parallel_for_width(sb_chunk_count(n, DIRECT_LINE_GRAIN), width, bconv_task, &j);
        }
        sb_parallel_for_width(j.ktasks * sb_chunk_count(m, DIRECT_IBLOCK), width, ktask, &j);
        sb_parallel_for_width(sb_chunk_count(m, 16), width, kfinish_task, &j);
    } else {
        /* the lines regime: B converted whole, A line block by line block */
        if (!j.pv_b && !(j.bconv = sb_malloc(sizeof(int32_t) * (size_t)((j.wb ? 2 : 1) * n * K)))) goto oom;
        j.lgrain = (int64_t)65536 / (K * n > 0 ? K * n : 1);
        j.lgrain = j.lgrain < DIRECT_LINE_GRAIN ? DIRECT_LINE_GRAIN : j.lgrain > 8192 ? 8192 : j.lgrain;
        j.awords = j.pv_a ? 0 : (j.wa ? 2 : 1) * j.lgrain * K;
        const size_t per = sizeof(int32_t) * (size_t)(j.awords + 8) + sizeof(i128) * (size_t)(j.lgrain * n) + 16;
        for (int32_t w = 0; w < width; w++)
            if (!(j.scratch[w] = sb_malloc(per))) goto oom;
        if (!j.pv_b) sb_parallel_for_width(sb_chunk_count(n, DIRECT_LINE_GRAIN), width, bconv_task, &j);
        sb_parallel_for_width(sb_chunk_count(m, j.lgrain), width, ltask, &j);
    }
    goto done;
oom:
    st = sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_gemm: out of memory for %lld x %lld x %lld", (long long)m, (long long)n,
                 (long long)K);
done:
    if (j.scratch)
        for (int32_t w = 0; w < width; w++) sb_free(j.scratch[w]);
    sb_free(j.scratch);
    sb_free(j.sc_a);
    sb_free(j.sc_b);
    sb_free(j.parts);
    sb_free(j.bconv);
    return st;
}

#else /* no 128-bit integers: the digit planes take every product */

sb_status sb_gemm_direct_values(const float *x, int64_t ls, int64_t qs, int64_t nlines, int64_t k,
                                const int32_t *sigma, int32_t *v) {
    (void)x, (void)ls, (void)qs, (void)nlines, (void)k, (void)sigma, (void)v;
    return sb_fail(SB_ERR_INTERNAL, "sb_gemm: the direct road needs 128-bit integers");
}

int sb_gemm_direct_fits(const sb_gemm_shape *s) {
    (void)s;
    return 0;
}

sb_status sb_gemm_direct_host(const sb_gemm_shape *s, const float *a, const float *b, float *c, int64_t ldc,
                              const int32_t *sig_a, const int32_t *sig_b, const uint8_t *flag_a,
                              const uint8_t *flag_b, const int32_t *pv_a, const int32_t *pv_b, int wide_a,
                              int wide_b) {
    (void)wide_a, (void)wide_b;
    (void)s, (void)a, (void)b, (void)c, (void)ldc, (void)sig_a, (void)sig_b, (void)flag_a, (void)flag_b;
    (void)pv_a, (void)pv_b;
    return sb_fail(SB_ERR_INTERNAL, "sb_gemm: the direct road needs 128-bit integers");
}

const char *sb_gemm_direct_kernel(void) { return "none"; }
int sb_gemm_direct_kernel_check(void) { return 0; }
void sb_gemm_direct_kernel_reset(void) {}

#endif
