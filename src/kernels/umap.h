/*
 * umap.h: UMAP's batched epoch (optimize="batched", docs/umap.md), written
 * once for the host, CUDA and OpenCL (compat vocabulary). The host's threads
 * (src/models/manifold/umap_batched.c) and the device's entry kernels
 * (entry/umap_entry.h) call these same functions, so every move has one
 * sequence of float32 roundings.
 *
 * The formulation (the "exact fixed-point accumulation" of McInnes,
 * Healy and Melville's stochastic gradient, in parts): an epoch runs as the
 * host's parts (umap_batched.c: 64, edge e in part e mod 64); every sampled
 * edge's attractive move and its negative samples' moves in part p are
 * computed from the embedding as the part before left it (a Jacobi step
 * within a part, Gauss-Seidel across them, where umap-learn takes one edge at
 * a time); each move component is rounded to a signed fixed-point integer of
 * scale 2^SB_UM_FIX_BITS (round half to even, integer code on the float's
 * bits) and clamped to +-qmax; the integers are added per row and component
 * (integer sums are exact and order-free, so threads and work-items add in
 * any order, atomics included); at the part's end each row's sum is rounded
 * once to float32 (again integer code) and added to the position. qmax is
 * chosen by the host so that no row's sum can leave int64: qmax = (2^63 - 1)
 * / M, M the most moves one row can receive in an epoch (umap_batched.c).
 * The schedule is umap-learn's (the sequential path's): edge e sampled in
 * epoch t when next[e] <= t, its negative samples int((t - next_neg[e]) /
 * epsn[e]), here capped at SB_UM_NEG_CAP(rate) (never reached by the schedule
 * itself: a sampled edge's count is at most 2 rate + 1; the cap makes the
 * bound on M a proof), negative sample s drawn from Philox by (seed, epoch,
 * edge, s / 4) word s mod 4. Each edge's schedule state is its own, so every
 * edge is one independent work-item.
 * No contraction anywhere (the profile's flags; FP_CONTRACT OFF on OpenCL).
 */
#ifndef SB_KERNELS_UMAP_H
#define SB_KERNELS_UMAP_H
#include "compat.h"
#include "../math/sb_math.h"
#include "../core/rng.h"

#define SB_UM_FIX_BITS 40               /* a move's unit: 2^-40 */
#define SB_UM_PURPOSE_NEG 0x554d3033u   /* umap.c's Philox purpose of the negative samples */
#define SB_UM_NEG_CAP(rate) (2 * (rate) + 2)

/* The per-row sums: integer adds (exact, any order), atomic on every target.
 * Separating arm SB_SABOTAGE_UMAP_FLOAT_SUM (SAMEBITS_OPENCL_ARM=umap-float-sum,
 * device only): the sums as float32 added by a compare-and-swap loop in
 * arrival order, each move unrounded to fixed point. */
#if defined(SB_COMPAT_DEVICE)
#define SB_UM_ADD(p, v) sb_atom_add64((p), (v))
#else
#define SB_UM_ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#endif

/* v 2^SB_UM_FIX_BITS rounded to the nearest integer (ties to even), clamped
 * to +-qmax (and NaN, never produced, to 0): integer code on v's bits, so no
 * conversion mode of any target can move it. */
SB_FN sb_i64 sb_um_fix(float v, sb_i64 qmax) {
    const sb_u32 u = sb_f2u(v), ex = (u >> 23) & 0xFFu;
    if (ex == 0u) return 0; /* zero or subnormal: below 2^-126 */
    sb_i64 q;
    if (ex == 0xFFu) {
        if (u & 0x7FFFFFu) return 0;
        q = qmax;
    } else {
        const sb_u64 m = (sb_u64)((u & 0x7FFFFFu) | 0x800000u);
        const int sh = (int)ex - 150 + SB_UM_FIX_BITS; /* the value is m 2^sh in units */
        if (sh >= 39) {
            q = qmax; /* at least 2^62 units: past any qmax */
        } else if (sh >= 0) {
            q = (sb_i64)(m << sh);
        } else if (sh < -25) {
            q = 0; /* below half a unit */
        } else {
            const int r = -sh;
            const sb_u64 hlf = (sb_u64)1 << (r - 1), rem = m & (((sb_u64)1 << r) - 1u);
            sb_u64 w = m >> r;
            if (rem > hlf || (rem == hlf && (w & 1u))) w++;
            q = (sb_i64)w;
        }
        if (q > qmax) q = qmax;
    }
    return (u >> 31) ? -q : q;
}

/* s 2^-SB_UM_FIX_BITS rounded to float32 (nearest, ties to even) by integer
 * code; |s| < 2^63. */
SB_FN float sb_um_unfix(sb_i64 s) {
    if (s == 0) return 0.0f;
    const sb_u32 sign = s < 0 ? 0x80000000u : 0u;
    sb_u64 a = s < 0 ? (sb_u64)0 - (sb_u64)s : (sb_u64)s;
    int p = 0; /* the top bit's place */
    for (int step = 32; step > 0; step >>= 1)
        if (a >> (p + step)) p += step;
    sb_u64 m;
    if (p <= 23) {
        m = a << (23 - p);
    } else {
        const int r = p - 23;
        const sb_u64 hlf = (sb_u64)1 << (r - 1), rem = a & (((sb_u64)1 << r) - 1u);
        m = a >> r;
        if (rem > hlf || (rem == hlf && (m & 1u))) m++;
        if (m >> 24) m >>= 1, p++;
    }
    const sb_u32 be = (sb_u32)(p - SB_UM_FIX_BITS + 127); /* >= 87: never subnormal */
    return sb_u2f(sign | (be << 23) | ((sb_u32)m & 0x7FFFFFu));
}

/* One move component into a row's sum. */
SB_FN void sb_um_put(SB_GLOBAL sb_i64 *acc, float v, sb_i64 qmax) {
#if defined(SB_SABOTAGE_UMAP_FLOAT_SUM) && defined(SB_COMPAT_DEVICE)
    sb_i64 seen, old = *acc;
    (void)qmax;
    do {
        seen = old;
        old = sb_atom_cas64(acc, seen, (sb_i64)sb_f2u(sb_u2f((sb_u32)seen) + v));
    } while (old != seen);
#else
    const sb_i64 q = sb_um_fix(v, qmax);
    if (q) SB_UM_ADD(acc, q);
#endif
}

/* The scalars of one fit's epochs (the same on every target). */
typedef struct sb_um_consts {
    float a, b, two_ab, two_gb;
    sb_i64 n, qmax;
    sb_i32 nc, rate;
    sb_u64 seed;
} sb_um_consts;

/* A gradient component clipped at +-4 (umap-learn's clip; umap.c's sequential epochs use it too). */
SB_FN float sb_um_clip(float g) { return g > 4.0f ? 4.0f : g < -4.0f ? -4.0f : g; }

/* The squared distance of two rows, components in order. */
SB_FN float sb_um_d2(SB_GLOBAL const float *x, SB_GLOBAL const float *y, sb_i32 nc) {
    float d2 = 0.0f;
    for (sb_i32 c = 0; c < nc; c++) {
        const float df = x[c] - y[c];
        d2 += df * df;
    }
    return d2;
}

/* Edge number id of the graph, stored at e of the edge arrays (the host
 * lays them out part by part), of epoch t with step alpha: its schedule
 * advanced (next, next_neg), and when sampled, its attractive move (both
 * ends) and its negative samples' moves (the head only; Philox keyed by id),
 * each from emb as the step found it, added into acc (n x nc sums). umap.c's
 * sequential step arithmetic. */
SB_FN void sb_um_edge(sb_i64 e, sb_i64 id, sb_i32 t, float alpha, const sb_um_consts k, SB_GLOBAL const sb_i32 *head,
                      SB_GLOBAL const sb_i32 *tail, SB_GLOBAL const float *eps, SB_GLOBAL const float *epsn,
                      SB_GLOBAL float *next, SB_GLOBAL float *next_neg, SB_GLOBAL const float *emb,
                      SB_GLOBAL sb_i64 *acc) {
    const float ft = (float)t;
    if (!(next[e] <= ft)) return;
    next[e] += eps[e];
    sb_i32 nneg = 0;
    if (k.rate > 0) {
        const float r = (ft - next_neg[e]) / epsn[e];
        nneg = r > -1.0e9f && r < 1.0e9f ? (sb_i32)r : 0;
        if (nneg > SB_UM_NEG_CAP(k.rate)) nneg = SB_UM_NEG_CAP(k.rate);
        next_neg[e] += (float)nneg * epsn[e];
    }
    const sb_i32 nc = k.nc, j = head[e], o = tail[e];
    SB_GLOBAL const float *cu = emb + (sb_i64)j * nc;
    SB_GLOBAL const float *ot = emb + (sb_i64)o * nc;
    SB_GLOBAL sb_i64 *aj = acc + (sb_i64)j * nc;
    SB_GLOBAL sb_i64 *ao = acc + (sb_i64)o * nc;
    const float x = sb_um_d2(cu, ot, nc);
    float gc = 0.0f;
    if (x > 0.0f) {
        const float pb = sb_expf(k.b * sb_logf(x));
        gc = -k.two_ab * (pb / x) / (k.a * pb + 1.0f);
    }
    for (sb_i32 c = 0; c < nc; c++) {
        const float mv = sb_um_clip(gc * (cu[c] - ot[c])) * alpha;
        sb_um_put(aj + c, mv, k.qmax);
        sb_um_put(ao + c, -mv, k.qmax);
    }
    sb_u32 w[4];
    for (sb_i32 s = 0; s < nneg; s++) {
        if ((s & 3) == 0) /* one Philox block serves four samples */
            sb_rng_words(k.seed, SB_UM_PURPOSE_NEG, ((sb_u64)t << 40) | (sb_u64)id, (sb_u32)(s >> 2), w);
        const sb_i32 q = (sb_i32)(((sb_u64)w[s & 3] * (sb_u64)k.n) >> 32);
        SB_GLOBAL const float *nq = emb + (sb_i64)q * nc;
        const float dn = sb_um_d2(cu, nq, nc);
        float gr = 0.0f;
        if (dn > 0.0f) {
            const float pb = sb_expf(k.b * sb_logf(dn));
            gr = k.two_gb / ((0.001f + dn) * (k.a * pb + 1.0f));
        } else if (q == j) {
            continue; /* the row itself */
        }
        for (sb_i32 c = 0; c < nc; c++) {
            const float g = gr > 0.0f ? sb_um_clip(gr * (cu[c] - nq[c])) : 4.0f;
            sb_um_put(aj + c, g * alpha, k.qmax);
        }
    }
}

/* A part's end for value i of the embedding: its row sum rounded to
 * float32 and added (one rounding), the sum cleared for the next part. */
SB_FN void sb_um_apply(sb_i64 i, SB_GLOBAL float *emb, SB_GLOBAL sb_i64 *acc) {
#if defined(SB_SABOTAGE_UMAP_FLOAT_SUM) && defined(SB_COMPAT_DEVICE)
    emb[i] += sb_u2f((sb_u32)acc[i]);
#else
    emb[i] += sb_um_unfix(acc[i]);
#endif
    acc[i] = 0;
}

#endif
