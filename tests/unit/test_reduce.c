/*
 * test_reduce.c: unit tests of src/math/sb_reduce.h (docs/reductions.md).
 *
 * The exact-sum reference below (ref_sum) is written independently of the
 * header: one counter per bit position (base 2, not base 2^32 limbs), positive
 * and negative parts kept apart, a schoolbook subtraction, and the final
 * float built with ldexpf. Conversions are checked against long double.
 */
#include "sb_test.h"
#include "math/sb_reduce.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------- */

static uint64_t rng_state;
static uint64_t rng_next(void) { /* splitmix64 */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static uint32_t rng_below(uint32_t n) { return (uint32_t)(rng_next() % n); }

static uint32_t bits(float f) { return sb_f2u(f); }
static float fbits(uint32_t u) { return sb_u2f(u); }

/* any finite float, exponent field uniform over 0..254 */
static float rand_finite_any(void) {
    uint32_t u = (uint32_t)rng_next();
    uint32_t e = rng_below(255);
    return fbits((u & 0x807FFFFFu) | (e << 23));
}
/* finite float with exponent field in [lo, hi] */
static float rand_finite_exp(uint32_t lo, uint32_t hi) {
    uint32_t u = (uint32_t)rng_next();
    uint32_t e = lo + rng_below(hi - lo + 1);
    return fbits((u & 0x807FFFFFu) | (e << 23));
}

static void shuffle(float *x, size_t n) {
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(rng_next() % i);
        float t = x[i - 1];
        x[i - 1] = x[j];
        x[j] = t;
    }
}

/* Independent exact reference of the correctly rounded sum (see top). */
#define RB 400
static float ref_sum(const float *x, size_t n) {
    static uint64_t P[RB], N[RB];
    static uint8_t M[RB];
    memset(P, 0, sizeof P);
    memset(N, 0, sizeof N);
    int nan = 0, pinf = 0, ninf = 0, notnegz = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t u = bits(x[i]);
        uint32_t s = u >> 31, e = (u >> 23) & 0xFF, f = u & 0x7FFFFF;
        if (u != 0x80000000u) notnegz = 1;
        if (e == 0xFF) {
            if (f) nan = 1;
            else if (s) ninf = 1;
            else pinf = 1;
            continue;
        }
        uint32_t m = e ? (f | 0x800000u) : f;
        int pos = e ? (int)e - 1 : 0; /* value = m * 2^(pos - 149) */
        for (int k = 0; k < 24; k++)
            if ((m >> k) & 1u) (s ? N : P)[pos + k]++;
    }
    if (nan || (pinf && ninf)) return fbits(0x7FC00000u);
    if (pinf) return INFINITY;
    if (ninf) return -INFINITY;
    for (int b = 0; b < RB - 1; b++) {
        P[b + 1] += P[b] >> 1;
        P[b] &= 1;
        N[b + 1] += N[b] >> 1;
        N[b] &= 1;
    }
    int cmp = 0;
    for (int b = RB - 1; b >= 0 && !cmp; b--)
        if (P[b] != N[b]) cmp = P[b] > N[b] ? 1 : -1;
    if (cmp == 0) return (n > 0 && !notnegz) ? -0.0f : 0.0f;
    const uint64_t *A = cmp > 0 ? P : N, *B = cmp > 0 ? N : P;
    int borrow = 0;
    for (int b = 0; b < RB; b++) {
        int d = (int)A[b] - (int)B[b] - borrow;
        borrow = d < 0;
        M[b] = (uint8_t)(d < 0 ? d + 2 : d);
    }
    int T = RB - 1;
    while (!M[T]) T--;
    int lsb = T - 23 > 0 ? T - 23 : 0;
    uint32_t q = 0;
    for (int b = T; b >= lsb; b--) q = (q << 1) | M[b];
    if (lsb > 0 && M[lsb - 1]) {
        int sticky = 0;
        for (int b = 0; b < lsb - 1; b++) sticky |= M[b];
        if (sticky || (q & 1u)) q++;
    }
    float r = ldexpf((float)q, lsb - 149);
    return cmp > 0 ? r : -r;
}

static float sacc_sum(const float *x, size_t n) {
    sb_sacc a;
    sb_sacc_init(&a);
    for (size_t i = 0; i < n; i++) sb_sacc_add(&a, x[i]);
    return sb_sacc_round_f32(&a);
}

#define CHECK_BITS(a, b) SB_CHECK_EQ_U64(bits(a), bits(b))

/* One float addition, rounded to float. Expected tree shapes are spelled with
 * fa() and not as one C expression: on s390x gcc defines FLT_EVAL_METHOD 1,
 * and with -std=c11 (-fexcess-precision=standard) it evaluates a multi-op
 * float expression in double and rounds once, which is not the tree's bits.
 * A function return (like an assignment or a cast) rounds to float. */
static float fa(float a, float b) { return a + b; }
/* Values the compiler cannot see at compile time (so it cannot fold them). */
static float opaque(float v) {
    volatile float t = v;
    return t;
}

/* ---- 1. integer helpers -------------------------------------------------- */

SB_TEST(test_reduce_i64_checked) {
    sb_i64 r;
    SB_CHECK(sb_i64_add_checked(1, 2, &r) == 0 && r == 3);
    SB_CHECK(sb_i64_add_checked(INT64_MAX, 0, &r) == 0 && r == INT64_MAX);
    SB_CHECK(sb_i64_add_checked(INT64_MAX, 1, &r) == 1 && r == INT64_MAX);
    SB_CHECK(sb_i64_add_checked(INT64_MIN, -1, &r) == 1 && r == INT64_MIN);
    SB_CHECK(sb_i64_add_checked(INT64_MIN, INT64_MAX, &r) == 0 && r == -1);
    SB_CHECK(sb_i64_add_checked(INT64_MAX, INT64_MAX, &r) == 1 && r == INT64_MAX);
    SB_CHECK(sb_i64_add_checked(INT64_MIN, INT64_MIN, &r) == 1 && r == INT64_MIN);
    SB_CHECK(sb_i64_add_checked(-5, INT64_MIN + 5, &r) == 0 && r == INT64_MIN);
    sb_i32 ovf = 0;
    sb_i64 s = 0;
    for (int i = 0; i < 4; i++) s = sb_i64_add_sat(s, INT64_MAX / 3, &ovf);
    SB_CHECK(ovf == 1 && s == INT64_MAX);
    ovf = 0;
    s = sb_i64_add_sat(-7, 3, &ovf);
    SB_CHECK(ovf == 0 && s == -4);
}

SB_TEST(test_reduce_wide) {
    /* mixed signs whose int64 partial sums overflow in one order, not the other */
    sb_i64 v[4] = {INT64_MAX, INT64_MAX, INT64_MIN, INT64_MIN + 3};
    sb_wide a, b, c;
    sb_wide_init(&a);
    sb_wide_init(&b);
    for (int i = 0; i < 4; i++) sb_wide_add_i64(&a, v[i]);
    for (int i = 3; i >= 0; i--) sb_wide_add_i64(&b, v[i]);
    sb_i64 r;
    SB_CHECK(sb_wide_to_i64(&a, &r) == 0 && r == 1); /* 2*(2^63-1) - 2^64 + 3 = 1 */
    SB_CHECK(sb_wide_to_i64(&b, &r) == 0 && r == 1);
    SB_CHECK(a.lo == b.lo && a.hi == b.hi);
    /* beyond int64: refused, in either direction */
    sb_wide_init(&c);
    sb_wide_add_i64(&c, INT64_MAX);
    sb_wide_add_i64(&c, 1);
    SB_CHECK(sb_wide_to_i64(&c, &r) == 1 && r == INT64_MAX);
    SB_CHECK_EQ_U64(bits(sb_wide_to_f32(&c, 0)), bits(0x1p63f));
    sb_wide_init(&c);
    sb_wide_add_i64(&c, INT64_MIN);
    SB_CHECK(sb_wide_to_i64(&c, &r) == 0 && r == INT64_MIN);
    sb_wide_add_i64(&c, -1);
    SB_CHECK(sb_wide_to_i64(&c, &r) == 1 && r == INT64_MIN);
    /* random merges against long double-free reference: 2^20 adds of int64 */
    rng_state = 11;
    sb_wide w1, w2, w3, w4;
    sb_wide_init(&w1);
    sb_wide_init(&w2);
    sb_wide_init(&w3);
    sb_wide_init(&w4);
    __int128 ref = 0;
    for (int i = 0; i < (1 << 16); i++) {
        sb_i64 x = (sb_i64)rng_next();
        ref += x;
        sb_wide_add_i64(&w1, x);
        sb_wide_add_i64((i & 1) ? &w2 : &w3, x);
    }
    sb_wide_merge(&w4, &w3);
    sb_wide_merge(&w4, &w2);
    SB_CHECK(w1.lo == (uint64_t)ref && w1.hi == (int64_t)(ref >> 64));
    SB_CHECK(w4.lo == w1.lo && w4.hi == w1.hi);
    /* wide -> float vs long double */
    for (int i = 0; i < 20000; i++) {
        sb_wide w;
        w.lo = rng_next();
        w.hi = (sb_i64)rng_next() >> rng_below(64);
        int sc = (int)rng_below(400) - 300;
        __int128 v = (__int128)(((unsigned __int128)(uint64_t)w.hi << 64) | w.lo);
        int neg = v < 0;
        unsigned __int128 mag = neg ? -(unsigned __int128)v : (unsigned __int128)v;
        /* exact value as hi64 * 2^64 + lo64 in long double is not exact; round
         * through two exact halves: top 64 significant bits + sticky suffices
         * for float, whose rounding needs 25 bits; build it with ldexpl. */
        int l = 0;
        while (l < 128 && (mag >> l) > 0) l++;
        long double t;
        if (l <= 64) {
            t = ldexpl((long double)(uint64_t)mag, sc);
        } else {
            uint64_t top = (uint64_t)(mag >> (l - 64));
            int sticky = (mag & (((unsigned __int128)1 << (l - 64)) - 1)) != 0;
            /* top has 64 bits; fold sticky into bit 0 (below float's round bit) */
            t = ldexpl((long double)(top | (uint64_t)sticky), sc + l - 64);
        }
        float want = (float)(neg ? -t : t);
        CHECK_BITS(sb_wide_to_f32(&w, sc), want);
    }
}

SB_TEST(test_reduce_fixed_from_f32) {
    sb_i64 k;
    SB_CHECK(sb_fixed_from_f32(1.5f, -1, &k) == SB_FIXED_EXACT && k == 3);
    SB_CHECK(sb_fixed_from_f32(-1.5f, -1, &k) == SB_FIXED_EXACT && k == -3);
    SB_CHECK(sb_fixed_from_f32(1.5f, 0, &k) == SB_FIXED_INEXACT && k == 2);  /* tie -> even */
    SB_CHECK(sb_fixed_from_f32(2.5f, 0, &k) == SB_FIXED_INEXACT && k == 2);  /* tie -> even */
    SB_CHECK(sb_fixed_from_f32(-2.5f, 0, &k) == SB_FIXED_INEXACT && k == -2);
    SB_CHECK(sb_fixed_from_f32(2.75f, 0, &k) == SB_FIXED_INEXACT && k == 3);
    SB_CHECK(sb_fixed_from_f32(0.25f, 0, &k) == SB_FIXED_INEXACT && k == 0);
    SB_CHECK(sb_fixed_from_f32(0.5f, 0, &k) == SB_FIXED_INEXACT && k == 0); /* tie -> even 0 */
    SB_CHECK(sb_fixed_from_f32(0x1.000002p-1f, 0, &k) == SB_FIXED_INEXACT && k == 1);
    SB_CHECK(sb_fixed_from_f32(-0.0f, 0, &k) == SB_FIXED_EXACT && k == 0);
    SB_CHECK(sb_fixed_from_f32(0x1p-149f, -149, &k) == SB_FIXED_EXACT && k == 1);
    SB_CHECK(sb_fixed_from_f32(0x1p-149f, -148, &k) == SB_FIXED_INEXACT && k == 0);
    SB_CHECK(sb_fixed_from_f32(0x3p-149f, -148, &k) == SB_FIXED_INEXACT && k == 2);
    SB_CHECK(sb_fixed_from_f32(FLT_MAX, -1000, &k) == SB_FIXED_OVERFLOW && k == 0);
    SB_CHECK(sb_fixed_from_f32(0x1p62f, 0, &k) == SB_FIXED_EXACT && k == (sb_i64)1 << 62);
    SB_CHECK(sb_fixed_from_f32(0x1p63f, 0, &k) == SB_FIXED_OVERFLOW);
    SB_CHECK(sb_fixed_from_f32(-0x1p63f, 0, &k) == SB_FIXED_EXACT && k == INT64_MIN);
    SB_CHECK(sb_fixed_from_f32(-0x1p64f, 0, &k) == SB_FIXED_OVERFLOW);
    SB_CHECK(sb_fixed_from_f32(0x1.fffffep62f, 0, &k) == SB_FIXED_EXACT &&
             k == (sb_i64)0xFFFFFF << 39);
    SB_CHECK(sb_fixed_from_f32(1.0f, 2000000, &k) == SB_FIXED_INEXACT && k == 0);
    SB_CHECK(sb_fixed_from_f32(1.0f, -2000000, &k) == SB_FIXED_OVERFLOW);
    SB_CHECK(sb_fixed_from_f32(NAN, 0, &k) == SB_FIXED_NONFINITE && k == 0);
    SB_CHECK(sb_fixed_from_f32(-INFINITY, 0, &k) == SB_FIXED_NONFINITE && k == 0);
    /* random: agrees with long double rint and exactness */
    rng_state = 5;
    for (int i = 0; i < 100000; i++) {
        float x = rand_finite_any();
        int sc = (int)rng_below(330) - 200;
        long double q = ldexpl((long double)x, -sc); /* exact */
        long double r = rintl(q);                    /* ties to even (default mode) */
        sb_i32 st = sb_fixed_from_f32(x, sc, &k);
        if (r >= 0x1p63L || r < -0x1p63L) {
            SB_CHECK(st == SB_FIXED_OVERFLOW);
        } else {
            SB_CHECK(st == (r == q ? SB_FIXED_EXACT : SB_FIXED_INEXACT));
            SB_CHECK(k == (sb_i64)r);
        }
    }
}

SB_TEST(test_reduce_fixed_to_f32) {
    CHECK_BITS(sb_fixed_to_f32(0, 0), 0.0f);
    CHECK_BITS(sb_fixed_to_f32(3, -1), 1.5f);
    CHECK_BITS(sb_fixed_to_f32(INT64_MIN, 0), -0x1p63f);
    CHECK_BITS(sb_fixed_to_f32(INT64_MAX, 0), 0x1p63f);
    CHECK_BITS(sb_fixed_to_f32(1, -149), 0x1p-149f);
    CHECK_BITS(sb_fixed_to_f32(1, -150), 0.0f);  /* tie -> even (0) */
    CHECK_BITS(sb_fixed_to_f32(3, -151), 0x1p-149f);
    CHECK_BITS(sb_fixed_to_f32(-1, -150), -0.0f);
    CHECK_BITS(sb_fixed_to_f32(1, 128), INFINITY);
    CHECK_BITS(sb_fixed_to_f32(-1, 5000), -INFINITY);
    CHECK_BITS(sb_fixed_to_f32((sb_i64)0x7FFFFFC000000000LL, 65), INFINITY); /* 2^128-2^103: tie, even is 2^128 */
    CHECK_BITS(sb_fixed_to_f32((sb_i64)0x7FFFFFC000000001LL, 65), INFINITY);
    CHECK_BITS(sb_fixed_to_f32((sb_i64)0x7FFFFFBFFFFFFFFFLL, 65), FLT_MAX);
    CHECK_BITS(sb_fixed_to_f32((sb_i64)0xFFFFFF, 104), FLT_MAX);
    rng_state = 6;
    for (int i = 0; i < 100000; i++) {
        sb_i64 v = (sb_i64)rng_next() >> rng_below(64);
        int sc = (int)rng_below(400) - 250;
        float want = (float)ldexpl((long double)v, sc); /* one rounding from exact */
        CHECK_BITS(sb_fixed_to_f32(v, sc), want);
    }
}

/* ---- 2. superaccumulator ------------------------------------------------- */

SB_TEST(test_reduce_sacc_layout) {
    SB_CHECK(sizeof(sb_sacc) == 96);
    sb_sacc a;
    sb_sacc_init(&a);
    CHECK_BITS(sb_sacc_round_f32(&a), 0.0f); /* empty sum is +0 */
    sb_sacc_add(&a, 0x1p-149f);
    SB_CHECK(a.limb[0] == 1 && a.pending == 1);
    sb_sacc_add(&a, -0x1p-149f);
    SB_CHECK(a.limb[0] == 0);
    sb_sacc_add(&a, FLT_MAX); /* (2^24-1) * 2^104: p = 253, limbs 7 and 8 */
    SB_CHECK(a.limb[7] == (sb_i64)(((uint64_t)0xFFFFFF << 29) & 0xFFFFFFFFu));
    SB_CHECK(a.limb[8] == (sb_i64)((uint64_t)0xFFFFFF << 29 >> 32));
}

SB_TEST(test_reduce_sacc_hostile) {
    {
        float x[] = {1e30f, 1.0f, -1e30f};
        CHECK_BITS(sacc_sum(x, 3), 1.0f);
    }
    {
        float x[] = {FLT_MAX, FLT_MAX, FLT_MAX, -FLT_MAX, -FLT_MAX};
        CHECK_BITS(sacc_sum(x, 5), FLT_MAX); /* intermediate 3*FLT_MAX is exact */
    }
    {
        float x[] = {FLT_MAX, FLT_MAX};
        CHECK_BITS(sacc_sum(x, 2), INFINITY);
        float y[] = {-FLT_MAX, -FLT_MAX};
        CHECK_BITS(sacc_sum(y, 2), -INFINITY);
    }
    {
        float x[] = {0x1p-149f, 0x1p-149f, 0x1p-149f, -0x1p-126f, 0x1p-126f};
        CHECK_BITS(sacc_sum(x, 5), 0x3p-149f);
    }
    {
        float x[] = {FLT_MAX, 0x1p-149f, -FLT_MAX};
        CHECK_BITS(sacc_sum(x, 3), 0x1p-149f);
    }
    {
        float x[] = {0x1p-149f, -FLT_MAX, 0x1p100f, FLT_MAX, -0x1p100f};
        CHECK_BITS(sacc_sum(x, 5), 0x1p-149f);
    }
    {   /* negative result with a carry across every limb */
        float x[] = {0x1p-149f, -0x1p127f};
        CHECK_BITS(sacc_sum(x, 2), -0x1p127f);
        float y[] = {-0x1p-149f, 0x1p-100f, 0x1p-60f, -0x1p10f};
        float want = ref_sum(y, 4);
        CHECK_BITS(sacc_sum(y, 4), want);
        CHECK_BITS(want, -0x1p10f);
    }
    {   /* 2^24 + 1 + 1: float adds lose both ones, the exact sum keeps them */
        float x[] = {0x1p24f, 1.0f, 1.0f};
        CHECK_BITS(sacc_sum(x, 3), 0x1p24f + 2.0f);
    }
    {   /* all subnormals: exact */
        float x[64];
        for (int i = 0; i < 64; i++) x[i] = fbits(0x007FFFFFu);
        CHECK_BITS(sacc_sum(x, 64), ldexpf((float)0x7FFFFF, -149 + 6));
    }
}

SB_TEST(test_reduce_sacc_specials) {
    float qn = fbits(0x7FC00000u), pay = fbits(0x7F800123u), npay = fbits(0xFFC00001u);
    {
        float x[] = {1.0f, pay, 2.0f};
        SB_CHECK_EQ_U64(bits(sacc_sum(x, 3)), 0x7FC00000u);
        float y[] = {npay};
        SB_CHECK_EQ_U64(bits(sacc_sum(y, 1)), 0x7FC00000u);
        float z[] = {INFINITY, qn};
        SB_CHECK_EQ_U64(bits(sacc_sum(z, 2)), 0x7FC00000u);
    }
    {
        float x[] = {INFINITY, -INFINITY};
        SB_CHECK_EQ_U64(bits(sacc_sum(x, 2)), 0x7FC00000u);
        float y[] = {INFINITY, -FLT_MAX, INFINITY};
        CHECK_BITS(sacc_sum(y, 3), INFINITY);
        float z[] = {-INFINITY, FLT_MAX, FLT_MAX, FLT_MAX};
        CHECK_BITS(sacc_sum(z, 4), -INFINITY);
    }
    {
        float x[] = {-0.0f, -0.0f};
        CHECK_BITS(sacc_sum(x, 2), -0.0f);
        float y[] = {-0.0f, 0.0f};
        CHECK_BITS(sacc_sum(y, 2), 0.0f);
        float z[] = {-1.0f, 1.0f, -0.0f};
        CHECK_BITS(sacc_sum(z, 3), 0.0f); /* IEEE: x + (-x) = +0 */
        CHECK_BITS(sacc_sum(z, 0), 0.0f);
        /* agree with IEEE float additions for every zero-sum order of these */
        CHECK_BITS(sacc_sum(x, 2), -0.0f + -0.0f);
        CHECK_BITS(sacc_sum(y, 2), -0.0f + 0.0f);
    }
    {   /* merge of flags */
        sb_sacc a, b;
        sb_sacc_init(&a);
        sb_sacc_init(&b);
        sb_sacc_add(&a, -0.0f);
        sb_sacc_merge(&a, &b); /* empty partial keeps -0 */
        CHECK_BITS(sb_sacc_round_f32(&a), -0.0f);
        sb_sacc_add(&b, INFINITY);
        sb_sacc_merge(&a, &b);
        CHECK_BITS(sb_sacc_round_f32(&a), INFINITY);
        sb_sacc_init(&b);
        sb_sacc_add(&b, -INFINITY);
        sb_sacc_merge(&a, &b);
        SB_CHECK_EQ_U64(bits(sb_sacc_round_f32(&a)), 0x7FC00000u);
    }
}

SB_TEST(test_reduce_sacc_ties) {
    const float u = 0x1p-23f; /* ulp of 1 */
    {
        float x[] = {1.0f, 0x1p-24f}; /* exactly halfway 1 .. 1+u: even is 1 */
        CHECK_BITS(sacc_sum(x, 2), 1.0f);
        float y[] = {1.0f + u, 0x1p-24f}; /* halfway 1+u .. 1+2u: even is 1+2u */
        CHECK_BITS(sacc_sum(y, 2), 1.0f + 2 * u);
        float z[] = {1.0f, 0x1p-24f, 0x1p-149f}; /* above half */
        CHECK_BITS(sacc_sum(z, 3), 1.0f + u);
        float w[] = {1.0f, 0x1p-24f, -0x1p-149f}; /* below half */
        CHECK_BITS(sacc_sum(w, 3), 1.0f);
        float v[] = {-1.0f, -0x1p-24f}; /* negative tie */
        CHECK_BITS(sacc_sum(v, 2), -1.0f);
        float t[] = {0x1p-25f, 0x1p-25f, 1.0f}; /* tie built from two halves */
        CHECK_BITS(sacc_sum(t, 3), 1.0f);
        float s[] = {0x1p-25f, 0x1p-25f, 1.0f + u, 0x1p-140f, -0x1p-140f};
        CHECK_BITS(sacc_sum(s, 5), 1.0f + 2 * u);
    }
    {   /* near overflow: FLT_MAX + half an ulp (2^103) ties to even = 2^128 = inf */
        float x[] = {FLT_MAX, 0x1p103f};
        CHECK_BITS(sacc_sum(x, 2), INFINITY);
        float y[] = {FLT_MAX, 0x1p103f, -0x1p-149f};
        CHECK_BITS(sacc_sum(y, 3), FLT_MAX);
        float z[] = {-FLT_MAX, -0x1p102f, -0x1p102f};
        CHECK_BITS(sacc_sum(z, 3), -INFINITY);
        float w[] = {FLT_MAX, 0x1p102f};
        CHECK_BITS(sacc_sum(w, 2), FLT_MAX);
    }
    {   /* ties across the normal/subnormal boundary are impossible (sums are
         * multiples of 2^-149), but carry into the next binade is not */
        float x[] = {fbits(0x00FFFFFFu), 0x1p-149f}; /* (2^24-1+1) * 2^-149 exact */
        CHECK_BITS(sacc_sum(x, 2), 0x1p-125f);
        float y[] = {0x1.fffffep0f, 0x1p-24f}; /* 2 - 2^-23 + 2^-24: tie, even is 2 */
        CHECK_BITS(sacc_sum(y, 2), 2.0f);
    }
    /* random ties: a + half ulp(a) [+/- tiny] against the reference */
    rng_state = 77;
    for (int i = 0; i < 2000; i++) {
        float a = rand_finite_exp(1, 200);
        int ea = (int)((bits(a) >> 23) & 0xFF);
        float h = ldexpf(1.0f, ea - 151); /* half an ulp of |a| */
        float h1 = ldexpf(1.0f, ea - 152), tiny = (i & 1) ? 0x1p-149f : -0x1p-149f;
        float x[] = {a, a < 0 ? -h : h};
        CHECK_BITS(sacc_sum(x, 2), ref_sum(x, 2));
        float y[] = {h1, a, a < 0 ? -h1 : h1, tiny};
        CHECK_BITS(sacc_sum(y, 4), ref_sum(y, 4));
    }
}

static void fill_mixed(float *x, size_t n, int kind) {
    for (size_t i = 0; i < n; i++) {
        switch (kind) {
        case 0: x[i] = rand_finite_any(); break;
        case 1: x[i] = rand_finite_exp(100, 140); break;        /* clustered, mixed signs */
        case 2: x[i] = rand_finite_exp(0, 10); break;           /* subnormal + tiny normals */
        case 3: x[i] = (i & 1) ? -x[i - 1] : rand_finite_any(); /* cancelling pairs... */
            if ((i & 1) && rng_below(50) == 0) x[i] = rand_finite_exp(0, 60);
            break;
        default: x[i] = rand_finite_exp(230, 254); break;        /* huge, overflow region */
        }
    }
}

SB_TEST(test_reduce_sacc_vs_reference) {
    static float x[4096];
    rng_state = 1234;
    for (int kind = 0; kind < 5; kind++) {
        for (int rep = 0; rep < 40; rep++) {
            size_t n = 1 + rng_below(4096);
            fill_mixed(x, n, kind);
            CHECK_BITS(sacc_sum(x, n), ref_sum(x, n));
        }
    }
    /* small cases where double addition is exact (exponents within 2^25 of
     * each other, few terms): (float)(double sum) is correctly rounded */
    for (int rep = 0; rep < 20000; rep++) {
        float y[4];
        uint32_t base = 1 + rng_below(220);
        double d = 0;
        for (int i = 0; i < 4; i++) {
            y[i] = rand_finite_exp(base, base + 4);
            d += (double)y[i];
        }
        CHECK_BITS(sacc_sum(y, 4), (float)d);
    }
}

SB_TEST(test_reduce_sacc_order_free) {
    enum { N = 100000 };
    static float x[N], y[N];
    rng_state = 99;
    for (int kind = 0; kind < 5; kind += 1) {
        fill_mixed(x, N, kind);
        sb_sacc fwd, rev, shf;
        sb_sacc_init(&fwd);
        sb_sacc_init(&rev);
        sb_sacc_init(&shf);
        for (int i = 0; i < N; i++) sb_sacc_add(&fwd, x[i]);
        for (int i = N - 1; i >= 0; i--) sb_sacc_add(&rev, x[i]);
        memcpy(y, x, sizeof x);
        shuffle(y, N);
        for (int i = 0; i < N; i++) sb_sacc_add(&shf, y[i]);
        float r = sb_sacc_round_f32(&fwd);
        CHECK_BITS(r, ref_sum(x, N));
        CHECK_BITS(sb_sacc_round_f32(&rev), r);
        CHECK_BITS(sb_sacc_round_f32(&shf), r);
        SB_CHECK(sb_sacc_same(&fwd, &rev) && sb_sacc_same(&fwd, &shf));
        /* partials over random splits, merged linearly forward, backward, and
         * pairwise; plus the GPU protocol: normalised partials added limb-wise
         * with wrapping 64-bit adds (what atomicAdd does), then normalised */
        for (int split = 0; split < 3; split++) {
            enum { K = 37 };
            sb_sacc part[K];
            size_t cut[K + 1];
            cut[0] = 0;
            cut[K] = N;
            for (int k = 1; k < K; k++) cut[k] = rng_below(N + 1);
            for (int k = 1; k < K; k++) /* insertion sort of the cuts */
                for (int j = k; j > 1 && cut[j] < cut[j - 1]; j--) {
                    size_t t = cut[j]; cut[j] = cut[j - 1]; cut[j - 1] = t;
                }
            for (int k = 0; k < K; k++) {
                sb_sacc_init(&part[k]);
                sb_sacc_add_range(&part[k], y, (sb_i64)cut[k], (sb_i64)cut[k + 1]);
            }
            sb_sacc m1, m2, g;
            sb_sacc_init(&m1);
            sb_sacc_init(&m2);
            sb_sacc_init(&g);
            for (int k = 0; k < K; k++) sb_sacc_merge(&m1, &part[k]);
            for (int k = K - 1; k >= 0; k--) sb_sacc_merge(&m2, &part[k]);
            for (int k = 0; k < K; k++) {
                sb_sacc p = part[k];
                sb_sacc_normalize(&p);
                for (int l = 0; l < SB_SACC_LIMBS; l++)
                    g.limb[l] = (sb_i64)((uint64_t)g.limb[l] + (uint64_t)p.limb[l]);
                g.flags |= p.flags;
            }
            for (int step = 1; step < K; step *= 2) /* pairwise tree of merges */
                for (int k = 0; k + step < K; k += 2 * step) sb_sacc_merge(&part[k], &part[k + step]);
            SB_CHECK(sb_sacc_same(&m1, &fwd) && sb_sacc_same(&m2, &fwd) && sb_sacc_same(&part[0], &fwd));
            SB_CHECK(sb_sacc_same(&g, &fwd));
            CHECK_BITS(sb_sacc_round_f32(&m1), r);
            CHECK_BITS(sb_sacc_round_f32(&part[0]), r);
            CHECK_BITS(sb_sacc_round_f32(&g), r);
        }
    }
}

SB_TEST(test_reduce_sacc_headroom) {
    /* worst-case positive state at the headroom limit: every limb at
     * (k+1)(2^32-1) with k = 2^31-1 adds, i.e. 2^31 (2^32-1) = 2^63 - 2^31 */
    sb_sacc a;
    sb_sacc_init(&a);
    for (int i = 0; i < SB_SACC_LIMBS - 1; i++) a.limb[i] = INT64_MAX - 0x7FFFFFFF;
    a.pending = SB_SACC_MAX_PENDING;
    SB_CHECK(a.limb[0] == (sb_i64)0x7FFFFFFF * 0xFFFFFFFFLL + 0xFFFFFFFFLL);
    sb_sacc b = a;
    sb_sacc_add(&a, FLT_MAX); /* must normalise first, then add */
    SB_CHECK(a.pending == 1);
    sb_sacc_normalize(&b);
    /* sum_{i<9} (2^63-2^31) 2^(32i) = 2^31 (2^288 - 1) */
    SB_CHECK(b.limb[0] == 0x80000000LL);
    for (int i = 1; i < 9; i++) SB_CHECK(b.limb[i] == 0xFFFFFFFFLL);
    SB_CHECK(b.limb[9] == 0x7FFFFFFFLL);
    /* worst-case negative state: every limb at -k(2^32-1) */
    sb_sacc c;
    sb_sacc_init(&c);
    for (int i = 0; i < SB_SACC_LIMBS - 1; i++) c.limb[i] = -(sb_i64)0x7FFFFFFF * 0xFFFFFFFFLL;
    c.pending = SB_SACC_MAX_PENDING;
    sb_sacc d = c;
    sb_sacc_add(&c, -FLT_MAX);
    SB_CHECK(c.pending == 1);
    sb_sacc_normalize(&d); /* -(2^31-1)(2^288-1) */
    SB_CHECK(d.limb[0] == 0x7FFFFFFFLL);
    for (int i = 1; i < 9; i++) SB_CHECK(d.limb[i] == 0);
    SB_CHECK(d.limb[9] == -0x7FFFFFFFLL);
    /* auto-normalisation keeps the value: many adds with a tiny limit are
     * simulated by forcing pending to the limit before every add */
    rng_state = 3;
    static float x[5000];
    fill_mixed(x, 5000, 0);
    sb_sacc e;
    sb_sacc_init(&e);
    for (int i = 0; i < 5000; i++) {
        if (i % 7 == 0) e.pending = SB_SACC_MAX_PENDING;
        sb_sacc_add(&e, x[i]);
    }
    CHECK_BITS(sb_sacc_round_f32(&e), ref_sum(x, 5000));
    CHECK_BITS(sb_sacc_round_f32(&e), sacc_sum(x, 5000));
}

/* ---- 3. fixed-shape tree ------------------------------------------------- */

SB_TEST(test_reduce_tree_shape) {
    float s[64];
    rng_state = 8;
    float x[16];
    for (int i = 0; i < 16; i++) x[i] = rand_finite_exp(120, 130);
    /* n = 5, block 256: one leaf, left to right */
    CHECK_BITS(sb_tree_sum_f32(x, 5, s), fa(fa(fa(fa(x[0], x[1]), x[2]), x[3]), x[4]));
    SB_CHECK(sb_tree_nblocks(5) == 1 && sb_tree_nblocks(256) == 1 && sb_tree_nblocks(257) == 2);
    SB_CHECK(sb_tree_nblocks(0) == 0);
    /* block 2, n = 5: leaves (x0+x1) (x2+x3) (x4); tree ((b0+b1)+b2) */
    CHECK_BITS(sb_tree_sum_f32_bs(x, 5, 2, s), fa(fa(fa(x[0], x[1]), fa(x[2], x[3])), x[4]));
    /* block 1, n = 7: ((x0+x1)+(x2+x3)) + ((x4+x5)+x6) */
    CHECK_BITS(sb_tree_sum_f32_bs(x, 7, 1, s),
               fa(fa(fa(x[0], x[1]), fa(x[2], x[3])), fa(fa(x[4], x[5]), x[6])));
    /* block 3, n = 16: leaves L0..L5 (last has one element); 6 -> 3 -> (2, carry) -> 1 */
    float L[6];
    for (int b = 0; b < 6; b++) {
        L[b] = x[3 * b];
        for (int i = 3 * b + 1; i < 3 * b + 3 && i < 16; i++) L[b] = L[b] + x[i];
    }
    CHECK_BITS(sb_tree_sum_f32_bs(x, 16, 3, s), fa(fa(fa(L[0], L[1]), fa(L[2], L[3])), fa(L[4], L[5])));
    /* block 1, n = 6: 6 -> 3 -> 2 (carry) -> 1 */
    CHECK_BITS(sb_tree_sum_f32_bs(x, 6, 1, s), fa(fa(fa(x[0], x[1]), fa(x[2], x[3])), fa(x[4], x[5])));
    /* block 1, n = 5: 5 -> 3 (x4 carried) -> 2 (x4 carried) -> 1 */
    CHECK_BITS(sb_tree_sum_f32_bs(x, 5, 1, s), fa(fa(fa(x[0], x[1]), fa(x[2], x[3])), x[4]));
    /* full leaves are left to right: n = 300 is fa(L0, L1), L0 = x0..x255 */
    {
        static float big[300];
        fill_mixed(big, 300, 1);
        float L0 = big[0], L1 = big[256];
        for (int i = 1; i < 256; i++) L0 = fa(L0, big[i]);
        for (int i = 257; i < 300; i++) L1 = fa(L1, big[i]);
        CHECK_BITS(sb_block_sum_f32(big, 0, 256), L0);
        CHECK_BITS(sb_tree_sum_f32(big, 300, s), fa(L0, L1));
        float r2l = big[255];
        for (int i = 254; i >= 0; i--) r2l = fa(r2l, big[i]);
        SB_CHECK(bits(r2l) != bits(L0)); /* the data can tell the direction apart */
    }
    /* separating data: the shape is visible in the bits. 1 + 2^-24 + 2^-24
     * left to right is 1 (two ties to even); pairing the halves first is 1+2^-23 */
    float y[3] = {1.0f, 0x1p-24f, 0x1p-24f};
    CHECK_BITS(sb_tree_sum_f32(y, 3, s), 1.0f);
    float z[4] = {1.0f, 0x1p-24f, 0x1p-24f, 0x1p-24f};
    CHECK_BITS(sb_tree_sum_f32(z, 4, s), 1.0f);                   /* ((1+h)+h)+h = 1 */
    CHECK_BITS(sb_tree_sum_f32_bs(z, 4, 1, s), 1.0f + 0x1p-23f);  /* (1+h)+(h+h) = 1+2h */
    CHECK_BITS(sb_tree_sum_f32_bs(z, 4, 2, s), 1.0f + 0x1p-23f);  /* leaves 1, 2h */
    CHECK_BITS(sb_tree_sum_f32_bs(z, 4, 3, s), 1.0f);             /* leaves 1, h: tie to 1 */
    /* empty sums */
    CHECK_BITS(sb_tree_sum_f32(x, 0, s), 0.0f);
    CHECK_BITS(sb_block_sum_f32(x, 3, 3), 0.0f);
    CHECK_BITS(sb_tree_combine_f32(s, 0), 0.0f);
}

SB_TEST(test_reduce_tree_shape_discriminates) {
    /* For random data, the fixed shape differs from plain left-to-right and
     * from pairwise-from-the-leaves sums, so a changed shape fails the
     * equality tests above and below. */
    enum { N = 3000 };
    static float x[N], s[N];
    rng_state = 9;
    fill_mixed(x, N, 1);
    float tree = sb_tree_sum_f32(x, N, s);
    float l2r = x[0];
    for (int i = 1; i < N; i++) l2r = l2r + x[i];
    float pw = sb_tree_sum_f32_bs(x, N, 1, s);
    float b128 = sb_tree_sum_f32_bs(x, N, 128, s);
    SB_CHECK(bits(tree) != bits(l2r));
    SB_CHECK(bits(tree) != bits(pw));
    SB_CHECK(bits(tree) != bits(b128));
}

/* A simulated parallel schedule: nworkers workers take blocks by a given
 * assignment (strided or chunked), each computes its leaves in its own order
 * into partials[b]; workers run in a shuffled order; then one combine. A
 * second variant combines level by level into fresh buffers, like a GPU. */
static float parallel_sum(const float *x, sb_i64 n, sb_i64 bs, int nworkers, int chunked,
                          float *partials, float *tmp) {
    sb_i64 nb = sb_tree_nblocks_bs(n, bs);
    int order[64];
    for (int w = 0; w < nworkers; w++) order[w] = w;
    for (int w = nworkers; w > 1; w--) {
        int j = (int)rng_below((uint32_t)w), t = order[w - 1];
        order[w - 1] = order[j];
        order[j] = t;
    }
    for (int oi = 0; oi < nworkers; oi++) {
        int w = order[oi];
        sb_i64 per = (nb + nworkers - 1) / nworkers;
        if (chunked) {
            for (sb_i64 b = (sb_i64)w * per + per - 1; b >= (sb_i64)w * per; b--) /* backwards */
                if (b < nb) {
                    sb_i64 hi = (b + 1) * bs < n ? (b + 1) * bs : n;
                    partials[b] = sb_block_sum_f32(x, b * bs, hi);
                }
        } else {
            for (sb_i64 b = w; b < nb; b += nworkers) {
                sb_i64 hi = (b + 1) * bs < n ? (b + 1) * bs : n;
                partials[b] = sb_block_sum_f32(x, b * bs, hi);
            }
        }
    }
    /* level-by-level out of place: what a GPU with one thread per pair does */
    sb_i64 count = nb;
    float *src = partials, *dst = tmp;
    if (count == 0) return 0.0f;
    while (count > 1) {
        sb_i64 half = count / 2;
        for (sb_i64 i = half - 1; i >= 0; i--) dst[i] = src[2 * i] + src[2 * i + 1];
        if (count & 1) dst[half] = src[count - 1];
        count -= half;
        float *t = src;
        src = dst;
        dst = t;
    }
    return sb_reduce_canon_nan(src[0]);
}

SB_TEST(test_reduce_tree_parallel) {
    static float x[100003], s[100003], p[100003], t[100003];
    rng_state = 10;
    sb_i64 sizes[] = {0, 1, 2, 255, 256, 257, 511, 513, 1000, 4097, 65536, 100003};
    for (int kind = 0; kind < 5; kind++) {
        fill_mixed(x, 100003, kind);
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            sb_i64 n = sizes[si];
            float serial = sb_tree_sum_f32(x, n, s);
            int workers[] = {1, 2, 3, 7, 64};
            for (int wi = 0; wi < 5; wi++) {
                float par = parallel_sum(x, n, SB_REDUCE_BLOCK, workers[wi], wi & 1, p, t);
                CHECK_BITS(par, serial);
                /* partials filled in parallel, then the library combine */
                sb_i64 nb = sb_tree_nblocks(n);
                for (sb_i64 b = nb - 1; b >= 0; b--) {
                    sb_i64 hi = (b + 1) * SB_REDUCE_BLOCK < n ? (b + 1) * SB_REDUCE_BLOCK : n;
                    p[b] = sb_block_sum_f32(x, b * SB_REDUCE_BLOCK, hi);
                }
                CHECK_BITS(sb_tree_combine_f32(p, nb), serial);
            }
            /* small test-only block sizes exercise deep trees */
            float ser7 = sb_tree_sum_f32_bs(x, n, 7, s);
            CHECK_BITS(parallel_sum(x, n, 7, 5, 1, p, t), ser7);
        }
    }
}

SB_TEST(test_reduce_tree_specials) {
    float s[8];
    float a[] = {1.0f, fbits(0x7F800001u), 2.0f};
    SB_CHECK_EQ_U64(bits(sb_tree_sum_f32(a, 3, s)), 0x7FC00000u);
    SB_CHECK_EQ_U64(bits(sb_block_sum_f32(a, 0, 3)), 0x7FC00000u);
    float b[] = {INFINITY, -INFINITY};
    SB_CHECK_EQ_U64(bits(sb_tree_sum_f32(b, 2, s)), 0x7FC00000u);
    SB_CHECK_EQ_U64(bits(sb_tree_sum_f32_bs(b, 2, 1, s)), 0x7FC00000u);
    float c[] = {-0.0f, -0.0f, -0.0f};
    CHECK_BITS(sb_tree_sum_f32_bs(c, 3, 2, s), -0.0f);
    float d[] = {FLT_MAX, FLT_MAX, -FLT_MAX};
    CHECK_BITS(sb_tree_sum_f32(d, 3, s), INFINITY); /* float adds overflow; only sb_sacc is exact */
    float e[] = {fbits(0x00000001u), fbits(0x00000003u)};
    CHECK_BITS(sb_tree_sum_f32(e, 2, s), fbits(0x00000004u)); /* denormals kept */
}

/* Out-of-line calls, so the compiler sees the library's loop and not the
 * test's constants (it would fold or CSE the products away). */
__attribute__((noinline)) static float dot_leaf(const float *x, const float *w, sb_i64 n) {
    return sb_block_dot_f32(x, w, 0, n);
}
__attribute__((noinline)) static float dot_tree(const float *x, const float *w, sb_i64 n, float *s) {
    return sb_tree_dot_f32(x, w, n, s);
}

SB_TEST(test_reduce_dot) {
    float s[600];
    /* each product is rounded before the add: RN(a*a) + RN(a*(-a)) = 0, while
     * fusing either product into the add leaves +-(a*a - RN(a*a)) != 0 */
    float a = opaque(1.0f + 0x1p-12f + 0x1p-23f);
    float p = a * a;
    float x[] = {a, opaque(a)}, w[] = {opaque(a), opaque(-a)};
    CHECK_BITS(dot_leaf(x, w, 2), 0.0f);
    CHECK_BITS(dot_tree(x, w, 2, s), 0.0f);
    SB_CHECK(bits(fmaf(a, a, -p)) != bits(0.0f)); /* the arm a contracting build would take */
    /* shape and parallel schedule as for the sum */
    static float X[100000], W[100000], P[400];
    rng_state = 12;
    for (int i = 0; i < 100000; i++) {
        X[i] = rand_finite_exp(110, 140);
        W[i] = rand_finite_exp(110, 140);
    }
    sb_i64 n = 100000;
    float serial = sb_tree_dot_f32(X, W, n, s);
    sb_i64 nb = sb_tree_nblocks(n);
    for (int rep = 0; rep < 3; rep++) {
        for (sb_i64 k = 0; k < nb; k++) { /* leaves in a random order */
            sb_i64 b = (k * 97 + rep * 13) % nb; /* 97 is prime to nb = 391 */
            sb_i64 hi = (b + 1) * SB_REDUCE_BLOCK < n ? (b + 1) * SB_REDUCE_BLOCK : n;
            P[b] = sb_block_dot_f32(X, W, b * SB_REDUCE_BLOCK, hi);
        }
        CHECK_BITS(sb_tree_combine_f32(P, nb), serial);
    }
    /* explicit small shape: n = 5, block 2 */
    float q[5];
    for (int i = 0; i < 5; i++) q[i] = X[i] * W[i];
    CHECK_BITS(sb_tree_dot_f32_bs(X, W, 5, 2, s), fa(fa(fa(q[0], q[1]), fa(q[2], q[3])), q[4]));
    CHECK_BITS(sb_block_dot_f32(X, W, 0, 5), fa(fa(fa(fa(q[0], q[1]), q[2]), q[3]), q[4]));
}
