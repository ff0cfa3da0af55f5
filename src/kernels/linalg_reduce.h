/*
 * linalg_reduce.h: the kernel bodies of the linear-algebra core's reductions,
 * squared distances and selection, written once for the host, CUDA and OpenCL
 * (compat vocabulary; integers only, except the separating arms). The host
 * path (src/linalg/reduce.c) and the entry kernels (entry/linalg_reduce_entry.h)
 * call these same functions; docs/linalg.md, "Reductions, distances and
 * selection", states the contracts.
 *
 * 1. Sums are the superaccumulator of src/math/sb_reduce.h (sb_sacc): the exact
 *    sum of the float32 inputs, rounded once (nearest, ties to even).
 *
 * 2. Products: a long accumulator for exact sums of products of two float32
 *    values (Kulisch's long accumulator, with the deferred carries of Neal's
 *    "small superaccumulator", R. M. Neal, arXiv 1505.05571, 2015). A finite
 *    float is x = M * 2^(E - 149) with M a signed integer, |M| < 2^24, and
 *    E in [0, 253] (sb_px_mant, sb_px_expo); a product x*y is the integer
 *    M_x M_y (|.| < 2^48) times 2^(E_x + E_y - 298), exact in int64. The
 *    accumulator is SB_PX_LIMBS signed 64-bit limbs, limb i counting units of
 *    2^(32 i - 298); an add of p * 2^(s - 298) (s in [0, 507]) touches limbs
 *    s/32 and s/32 + 1 by less than 2^32 and 2^47.01, so SB_PX_FLUSH adds fit
 *    between two carry propagations (sb_px_normalize) with no overflow:
 *    2^33 + 2^14 * 2^47.01 < 2^63. After a normalization limbs 0..16 lie in
 *    [0, 2^32) and limb 17 holds the sign; the form is unique for a value, so
 *    any order and grouping of the same products gives the same limbs, and
 *    sb_px_round rounds the value once to float32 (nearest, ties to even,
 *    gradual underflow, overflow to +-inf, an exact zero is +0).
 *    Range: |product| < 2^257 (with the factor 2 of the cross term), and limb
 *    17 carries 63 bits above 2^(544 - 298): more than 2^40 products of the
 *    largest size, far beyond any int32-indexed shape.
 *
 *    Squared norms: sum_k x_k^2 = sum_k M_k^2 2^(2 E_k - 298), each square exact.
 *    Squared distances: ||x - y||^2 = ||x||^2 + ||y||^2 - 2 x.y holds exactly
 *    in real arithmetic, so D = round(N_x + N_y - 2 C) with the three exact
 *    integers N_x, N_y (per row, computed once) and C (per pair) is the
 *    correctly rounded ||x - y||^2: one rounding of the exact value, a pure
 *    function of the inputs' bits, and never negative.
 *
 * 3. Selection: a total order on float32 per direction, by a 32-bit key
 *    (sb_sel_key). Smallest first: the IEEE 754 totalOrder of the bits mapped to
 *    a monotone unsigned key, -inf < ... < -0 < +0 < ... < +inf (so -0 sorts
 *    before +0: they are not a tie); every NaN (any sign, any payload) gets the
 *    key above +inf. Largest first: the reverse order of the non-NaN values,
 *    +inf > ... > +0 > -0 > ... > -inf, and every NaN again last. Ties (equal
 *    keys: equal bits, or any two NaNs) go to the lower index: an element is
 *    packed as key * 2^31 + index (sb_sel_pack, indices < 2^31), and selection
 *    takes the smallest packed values, so any partition of a line and any merge
 *    order selects the same elements.
 */
#ifndef SB_KERNELS_LINALG_REDUCE_H
#define SB_KERNELS_LINALG_REDUCE_H
#include "compat.h"
#include "../math/sb_reduce.h"

#define SB_PX_LIMBS 18
#define SB_PX_FLUSH 16384 /* adds between two normalizations (header: proof) */
#define SB_PX_QNAN 0x7fc00000u
#define SB_PX_PINF 0x7f800000u

/* Flags of a line: which nonfinite values it holds (OR-mergeable). */
#define SB_PX_F_NAN 1u
#define SB_PX_F_PINF 2u
#define SB_PX_F_NINF 4u

/* Elements of one line a work-item takes on a device (the host's chunks are
 * larger; any partition gives the same bits). */
#define SB_LR_CHUNK 256
/* Per line on a device: the sum's 10 limbs and 5 flag counts; the square
 * norm's 18 limbs and 2 flag counts (NaN, infinity). */
#define SB_LR_SUM_WORDS 15
#define SB_LR_SQ_WORDS 20

/* ======================================================================== */
/* The exact product accumulator                                            */
/* ======================================================================== */

/* The signed integer M of a finite float (bits u) = M * 2^(E - 149); 0 for a
 * zero, an infinity or a NaN (their flags carry them). */
SB_FN sb_i32 sb_px_mant(sb_u32 u) {
    const sb_u32 e = (u >> 23) & 0xffu;
    if (e == 0xffu) return 0;
    const sb_i32 m = (sb_i32)((u & 0x7fffffu) | (e != 0u ? 0x800000u : 0u));
    return (u >> 31) ? -m : m;
}

/* The exponent E in [0, 253] of sb_px_mant's form (0 for zeros and nonfinite values). */
SB_FN sb_u8 sb_px_expo(sb_u32 u) {
    const sb_u32 e = (u >> 23) & 0xffu;
    return (sb_u8)(e == 0xffu || e == 0u ? 0u : e - 1u);
}

/* The flag of one value: SB_PX_F_NAN, _PINF, _NINF, or 0 when finite. */
SB_FN sb_u32 sb_px_flag(sb_u32 u) {
    if ((u & 0x7f800000u) != 0x7f800000u) return 0u;
    if ((u & 0x7fffffu) != 0u) return SB_PX_F_NAN;
    return (u >> 31) ? SB_PX_F_NINF : SB_PX_F_PINF;
}

SB_FN void sb_px_init(sb_i64 *a) {
    for (int i = 0; i < SB_PX_LIMBS; i++) a[i] = 0;
}

/* a += p * 2^(s - 298) exactly, for |p| < 2^48 and 0 <= s <= 507: the low 32
 * bits of p shifted into limbs i and i + 1, the high part (floor(p / 2^32),
 * |.| <= 2^16) into limb i + 1 (header: bounds). */
SB_FN void sb_px_add(sb_i64 *a, sb_i64 p, sb_i32 s) {
    const sb_i32 i = s >> 5;
    const sb_u32 sh = (sb_u32)(s & 31);
    const sb_u64 pl = (sb_u64)p & 0xffffffffu;
    const sb_i64 ph = (p - (sb_i64)pl) / 4294967296; /* exact */
    const sb_u64 t = pl << sh;                        /* < 2^63 */
    a[i] += (sb_i64)(t & 0xffffffffu);
    a[i + 1] += (sb_i64)(t >> 32) + ph * (sb_i64)((sb_u64)1 << sh);
}

/* The square of one value added: a += x^2 (nothing for zeros and nonfinite x). */
SB_FN void sb_px_add_sq(sb_i64 *a, sb_u32 u) {
    const sb_i64 m = sb_px_mant(u);
    if (m != 0) sb_px_add(a, m * m, 2 * (sb_i32)sb_px_expo(u));
}

/* Carries propagated through limbs [lo, hi): each into [0, 2^32), the carry
 * out of limb hi - 1 added to limb hi, which keeps the sign. The value is
 * unchanged. Limbs below lo must already lie in [0, 2^32) (zeros do). */
SB_FN void sb_px_normalize_range(sb_i64 *a, int lo, int hi) {
    sb_i64 carry = 0; /* kept in a register: the chain does not go through memory */
    for (int i = lo; i < hi; i++) {
        const sb_u64 u = (sb_u64)(a[i] + carry);
        a[i] = (sb_i64)(u & 0xffffffffu);
        carry = sb__sext32(u >> 32); /* floor((a[i] + carry) / 2^32) */
    }
    a[hi] += carry;
}

/* All carries propagated: limbs 0..16 into [0, 2^32), limb 17 signed. The
 * normalized form is unique for each value. */
SB_FN void sb_px_normalize(sb_i64 *a) { sb_px_normalize_range(a, 0, SB_PX_LIMBS - 1); }

/* The value of c rounded once to float32 (nearest, ties to even, gradual
 * underflow, +-inf beyond FLT_MAX; zero is +0), where limbs below top lie in
 * [0, 2^32), c[top] is signed and limbs above top are zero. */
SB_FN float sb_px_round_top(const sb_i64 *c, int top) {
    sb_u32 d[SB_PX_LIMBS + 1]; /* two's complement digits, least significant first */
    for (int i = 0; i < top; i++) d[i] = (sb_u32)c[i];
    const sb_u64 t = (sb_u64)c[top];
    d[top] = (sb_u32)(t & 0xffffffffu);
    d[top + 1] = (sb_u32)(t >> 32);
    const sb_u32 neg = c[top] < 0 ? 1u : 0u;
    if (neg) {
        sb_u32 carry = 1u;
        for (int i = 0; i <= top + 1; i++) {
            d[i] = ~d[i] + carry;
            carry = (carry != 0u && d[i] == 0u) ? 1u : 0u;
        }
    }
    int j = top + 1;
    while (j >= 0 && d[j] == 0u) j--;
    if (j < 0) return sb_u2f(0u);
    if (j == 0) return sb__round_f32(neg, (sb_u64)d[0], -298, 0u);
    const sb_u64 mag = ((sb_u64)d[j] << 32) | (sb_u64)d[j - 1];
    sb_u32 sticky = 0u;
    for (int i = 0; i < j - 1; i++) sticky |= d[i];
    return sb__round_f32(neg, mag, 32 * (j - 1) - 298, sticky != 0u ? 1u : 0u);
}

/* The value of any accumulator whose limbs fit int64, rounded once. */
SB_FN float sb_px_round(const sb_i64 *a) {
    sb_i64 c[SB_PX_LIMBS];
    for (int i = 0; i < SB_PX_LIMBS; i++) c[i] = a[i];
    sb_px_normalize(c);
    return sb_px_round_top(c, SB_PX_LIMBS - 1);
}

/* A squared norm from its exact limbs and its line's flags: NaN when the line
 * holds a NaN, +inf when it holds an infinity, else the rounded sum. */
SB_FN float sb_px_sq_result(const sb_i64 *a, sb_u32 flags) {
    if (flags & SB_PX_F_NAN) return sb_u2f(SB_PX_QNAN);
    if (flags & (SB_PX_F_PINF | SB_PX_F_NINF)) return sb_u2f(SB_PX_PINF);
    return sb_px_round(a);
}

/* A row's information word for the distances: its flags (bits 0..2), the
 * lowest limb its squares reach (bits 8..12; 31 for a row without a nonzero
 * finite element) and one plus the highest nonzero limb of its exact norm
 * (bits 16..20; 0 for a zero norm). */
#define SB_PX_INFO_FLAGS(w) ((w) & 7u)
#define SB_PX_INFO_LO(w) ((sb_i32)(((w) >> 8) & 31u))
#define SB_PX_INFO_HI1(w) ((sb_i32)(((w) >> 16) & 31u))

/* One row decoded for the distances: mo[k], eo[k] of x[k] for k < d; nrm gets
 * sum_k x_k^2 exactly, normalized; returns the row's information word. */
SB_FN sb_u32 sb_px_decode_row(SB_GLOBAL const float *x, sb_i64 d, SB_GLOBAL sb_i32 *mo, SB_GLOBAL sb_u8 *eo,
                              sb_i64 *nrm) {
    sb_u32 fl = 0u, elo = 255u;
    sb_px_init(nrm);
    sb_i64 pending = 0;
    for (sb_i64 k = 0; k < d; k++) {
        const sb_u32 u = sb_f2u(x[k]);
        fl |= sb_px_flag(u);
        const sb_i32 m = sb_px_mant(u);
        const sb_u8 e = sb_px_expo(u);
        mo[k] = m;
        eo[k] = e;
        if (m != 0) {
            elo = (sb_u32)e < elo ? (sb_u32)e : elo;
            sb_px_add(nrm, (sb_i64)m * (sb_i64)m, 2 * (sb_i32)e);
            if (++pending == SB_PX_FLUSH) {
                sb_px_normalize(nrm);
                pending = 0;
            }
        }
    }
    sb_px_normalize(nrm);
    sb_u32 hi1 = 0u;
    for (int l = SB_PX_LIMBS - 1; l >= 0 && hi1 == 0u; l--)
        if (nrm[l] != 0) hi1 = (sb_u32)l + 1u;
    const sb_u32 lo = elo == 255u ? 31u : (2u * elo) >> 5;
    return fl | (lo << 8) | (hi1 << 16);
}

/* a += -2 x.y exactly over d decoded elements, with carries propagated
 * through the limb window [lo, hi] every SB_PX_FLUSH products and at the end
 * (a holds N_x + N_y in that window, limbs below 2^33; sb_px_sqdist: why the
 * window holds every nonzero limb). */
SB_FN void sb_px_cross(sb_i64 *a, SB_GLOBAL const sb_i32 *mx, SB_GLOBAL const sb_u8 *ex, SB_GLOBAL const sb_i32 *my,
                       SB_GLOBAL const sb_u8 *ey, sb_i64 d, int lo, int hi) {
    sb_i64 k0 = 0;
    while (k0 < d) {
        const sb_i64 k1 = d - k0 > SB_PX_FLUSH ? k0 + SB_PX_FLUSH : d;
        for (sb_i64 k = k0; k < k1; k++) {
            /* -2 x_k y_k (a zero product adds nothing, wherever it lands) */
            sb_px_add(a, -((sb_i64)mx[k] * (sb_i64)my[k]), (sb_i32)ex[k] + (sb_i32)ey[k] + 1);
        }
        sb_px_normalize_range(a, lo, hi);
        k0 = k1;
    }
}

/* The distance of a pair where x or y holds a nonfinite value (fx | fy != 0),
 * defined by sum_k (x_k - y_k)^2 in IEEE arithmetic: NaN when either row
 * holds a NaN or some k has infinities of the same sign in both (inf - inf),
 * else +inf. */
SB_FN sb_u32 sb_px_pair_special(SB_GLOBAL const float *x, SB_GLOBAL const float *y, sb_i64 d, sb_u32 fx, sb_u32 fy) {
    if ((fx | fy) & SB_PX_F_NAN) return SB_PX_QNAN;
    if ((fx & fy) != 0u) /* infinities of a same sign in both rows */
        for (sb_i64 k = 0; k < d; k++) {
            const sb_u32 u = sb_f2u(x[k]);
            if ((u & 0x7fffffffu) == 0x7f800000u && u == sb_f2u(y[k])) return SB_PX_QNAN;
        }
    return SB_PX_PINF;
}

/* The squared distance of rows x and y from their decoded forms: nx, ny the
 * exact norms (SB_PX_LIMBS limbs each, normalized), wx, wy the information
 * words, x, y the rows themselves (for the special values). Float bits.
 *
 * Only the limb window [lo, hi] is carried: lo is the lowest limb any square
 * or product reaches (a product x_k y_k reaches limb (E_x + E_y + 1)/32 >=
 * min(2 E_x, 2 E_y)/32); hi is two above the highest nonzero limb h of either
 * norm (or 17). Every partial sum is bounded by N_x + N_y + 2 sum|x_k y_k| <=
 * 2 (N_x + N_y) < 2^(32 (h + 1) + 2), so limb h + 2 holds the sign of every
 * intermediate value and the limbs above it stay zero; the rounding then sees
 * the same normalized limbs as a full carry would give. */
SB_FN sb_u32 sb_px_sqdist(SB_GLOBAL const float *x, SB_GLOBAL const float *y, SB_GLOBAL const sb_i32 *mx,
                          SB_GLOBAL const sb_u8 *ex, SB_GLOBAL const sb_i32 *my, SB_GLOBAL const sb_u8 *ey,
                          SB_GLOBAL const sb_i64 *nx, SB_GLOBAL const sb_i64 *ny, sb_u32 wx, sb_u32 wy, sb_i64 d) {
    const sb_u32 fx = SB_PX_INFO_FLAGS(wx), fy = SB_PX_INFO_FLAGS(wy);
    if ((fx | fy) != 0u) return sb_px_pair_special(x, y, d, fx, fy);
    const sb_i32 lx = SB_PX_INFO_LO(wx), ly = SB_PX_INFO_LO(wy);
    const sb_i32 lo = lx < ly ? lx : ly;
    if (lo == 31) return 0u; /* both rows zero */
    const sb_i32 hx = SB_PX_INFO_HI1(wx), hy = SB_PX_INFO_HI1(wy);
    const sb_i32 h1 = (hx > hy ? hx : hy) + 1;
    const sb_i32 hi = h1 < SB_PX_LIMBS - 1 ? h1 : SB_PX_LIMBS - 1;
    sb_i64 a[SB_PX_LIMBS];
    for (int l = 0; l < SB_PX_LIMBS; l++) a[l] = nx[l] + ny[l]; /* zero outside the window */
    sb_px_cross(a, mx, ex, my, ey, d, lo, hi);
    return sb_f2u(sb_px_round_top(a, hi));
}

/* ======================================================================== */
/* Selection: total orders and packed keys                                   */
/* ======================================================================== */

/* The 32-bit key of float bits u in the order of direction largest (0:
 * smallest first, 1: largest first); smaller keys come first (header). */
SB_FN sb_u32 sb_sel_key(sb_u32 u, sb_i32 largest) {
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0xffffffffu; /* every NaN: last */
    const sb_u32 k = (u >> 31) ? ~u : (u | 0x80000000u);   /* IEEE totalOrder, monotone */
    return largest ? ~k : k;                                /* never 0xffffffff: that is ~0 of a NaN */
}

/* key * 2^31 + index: smaller is selected first; ties go to the lower index.
 * Non-negative and below 2^63 for index < 2^31. The separating arm
 * SB_SABOTAGE_TOPK_TIES (make SABOTAGE=topk-ties, CUDA_VARIANT=topk-ties,
 * SAMEBITS_OPENCL_ARM=topk-ties) breaks ties to the higher index. */
SB_FN sb_i64 sb_sel_pack(sb_u32 key, sb_i64 index) {
#if defined(SB_SABOTAGE_TOPK_TIES)
    index = 0x7fffffff - index;
#endif
    return (sb_i64)((((sb_u64)key) << 31) | (sb_u64)index);
}

/* The index of a packed key. */
SB_FN sb_i32 sb_sel_index(sb_i64 p) {
    const sb_i64 i = p & 0x7fffffff;
#if defined(SB_SABOTAGE_TOPK_TIES)
    return (sb_i32)(0x7fffffff - i);
#else
    return (sb_i32)i;
#endif
}

/* The packed key of element q of a line (value bits u). */
SB_FN sb_i64 sb_sel_of(sb_u32 u, sb_i32 largest, sb_i64 q) { return sb_sel_pack(sb_sel_key(u, largest), q); }

/* Max-heap on h[0..n): restores the heap below position i. */
SB_FN void sb_sel_sift(SB_GLOBAL sb_i64 *h, sb_i64 n, sb_i64 i) {
    const sb_i64 v = h[i];
    for (;;) {
        sb_i64 c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && h[c + 1] > h[c]) c++;
        if (h[c] <= v) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = v;
}

/* The k first elements (1 <= k <= n) of the line x[0], x[qs], ..., x[(n-1) qs]
 * in the order of direction largest: h[0..k) gets their packed keys in
 * ascending order (a bounded max-heap over the line, then heapsort; O(n log k)).
 * The packed keys are distinct, so the result is the one set and order any
 * selection algorithm gives. */
SB_FN void sb_sel_topk(SB_GLOBAL const float *x, sb_i64 qs, sb_i64 n, sb_i64 k, sb_i32 largest,
                       SB_GLOBAL sb_i64 *h) {
    for (sb_i64 q = 0; q < k; q++) h[q] = sb_sel_of(sb_f2u(x[q * qs]), largest, q);
    for (sb_i64 i = k / 2; i > 0; i--) sb_sel_sift(h, k, i - 1);
    for (sb_i64 q = k; q < n; q++) {
        const sb_i64 p = sb_sel_of(sb_f2u(x[q * qs]), largest, q);
        if (p < h[0]) {
            h[0] = p;
            sb_sel_sift(h, k, 0);
        }
    }
    for (sb_i64 e = k - 1; e > 0; e--) {
        const sb_i64 t = h[0];
        h[0] = h[e];
        h[e] = t;
        sb_sel_sift(h, e, 0);
    }
}

#endif
