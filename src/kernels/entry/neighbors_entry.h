/*
 * neighbors_entry.h: entry kernels of the nearest-neighbors screen on a GPU
 * (src/models/neighbors/knn.c, "the screen on a GPU"), part of the linalg
 * program (included by linalg_entry.h; their names go in
 * SB_LINALG_NEIGHBORS_KERNELS, src/device/programs.h).
 *
 * Nothing here reaches a result's bits. The screen only picks candidates: a
 * float32 value s with a proven error bound eps against the exact distance
 * D (docs/neighbors.md), in any order of its sums, fused or not; the host
 * then computes D exactly for every candidate and orders them by (D, index).
 * So these kernels may use sb_fmaf and integer atomics in any order: two
 * devices (or two runs) may send different candidate sets, and both sets
 * hold every row of the answer.
 *
 * kn_dots:   p[i * ldp + j] = q_i . x_{r0 + j}, the screen's products for a
 *            block of queries against a chunk of training rows (both the
 *            centered or normalized screening rows, row-major).
 * kn_select: one work-group a query of the block: the chunk's kq least keys
 *            s + eps (k nearest), or none (radius); every row whose lower
 *            bound s - eps is within the chunk's cut is appended to the
 *            query's candidates (an integer atomic counter, cap entries; a
 *            count above cap tells the host to screen that query itself).
 */

#ifndef SB_WG
#error "SB_WG (the work-group size, a power of two) is set by the host"
#endif

#define SB_KN_KS 16                 /* features a slab */
#define SB_KN_TX 16                 /* work-items along the rows of a tile */
#define SB_KN_TY (SB_WG / SB_KN_TX) /* work-items along the queries */
#define SB_KN_RQ 8                  /* queries a work-item */
#define SB_KN_RC 8                  /* rows a work-item */
#define SB_KN_TQ (SB_KN_TY * SB_KN_RQ) /* queries a tile */
#define SB_KN_TR (SB_KN_TX * SB_KN_RC) /* rows a tile: 128 */
#define SB_KN_KMAX 32               /* the most keys a work-item keeps (kq <= it on a GPU) */

/* Tile (group 1: queries q0.., group 0: rows c0..) of the products; the
 * queries are rows qoff.. of q. */
SB_KERNEL void kn_dots(SB_GLOBAL const float *q, sb_i64 qoff, sb_i64 nq, SB_GLOBAL const float *x, sb_i64 r0, sb_i64 nr,
                       sb_i32 d, SB_GLOBAL float *p, sb_i64 ldp) {
    SB_SHARED float qa[SB_KN_KS][SB_KN_TQ + 1];
    SB_SHARED float xa[SB_KN_KS][SB_KN_TR + 1];
    const int lid = sb_local_id(0), ty = lid / SB_KN_TX, tx = lid - ty * SB_KN_TX;
    const sb_i64 c0 = (sb_i64)sb_group_id(0) * SB_KN_TR, q0 = (sb_i64)sb_group_id(1) * SB_KN_TQ;
    float acc[SB_KN_RQ][SB_KN_RC];
    for (int i = 0; i < SB_KN_RQ; i++)
        for (int c = 0; c < SB_KN_RC; c++) acc[i][c] = 0.0f;
    for (sb_i32 f0 = 0; f0 < d; f0 += SB_KN_KS) {
        sb_barrier();
        for (int e = lid; e < SB_KN_TQ * SB_KN_KS; e += SB_WG) {
            const int r = e / SB_KN_KS, f = e - r * SB_KN_KS;
            qa[f][r] = q0 + r < nq && f0 + f < d ? q[(qoff + q0 + r) * d + f0 + f] : 0.0f;
        }
        for (int e = lid; e < SB_KN_TR * SB_KN_KS; e += SB_WG) {
            const int r = e / SB_KN_KS, f = e - r * SB_KN_KS;
            xa[f][r] = c0 + r < nr && f0 + f < d ? x[(r0 + c0 + r) * d + f0 + f] : 0.0f;
        }
        sb_barrier();
        for (int f = 0; f < SB_KN_KS; f++) {
            float a[SB_KN_RQ], b[SB_KN_RC];
            for (int i = 0; i < SB_KN_RQ; i++) a[i] = qa[f][ty * SB_KN_RQ + i];
            for (int c = 0; c < SB_KN_RC; c++) b[c] = xa[f][tx + c * SB_KN_TX];
            for (int i = 0; i < SB_KN_RQ; i++)
                for (int c = 0; c < SB_KN_RC; c++) acc[i][c] = sb_fmaf(a[i], b[c], acc[i][c]);
        }
    }
    for (int i = 0; i < SB_KN_RQ; i++) {
        const sb_i64 qi = q0 + ty * SB_KN_RQ + i;
        if (qi >= nq) break;
        for (int c = 0; c < SB_KN_RC; c++) {
            const sb_i64 rj = c0 + tx + c * SB_KN_TX;
            if (rj < nr) p[qi * ldp + rj] = acc[i][c];
        }
    }
}

/* The screen of one pair, as knn.c's host screen writes it: the key s + eps
 * (k nearest) and the lower bound s - eps. */
SB_FN float kn_screen(float xq, float xr, float dot, float C, float A, float *lo) {
    float s = (xq + xr) - 2.0f * dot;
    s = s > 0.0f ? s : 0.0f;
#ifdef SB_SABOTAGE_KNN_BOUND
    /* Separating arm (CUDA_VARIANT=knn-bound, SAMEBITS_OPENCL_ARM=knn-bound): the
     * device's screen trusted as exact, as make SABOTAGE=knn-bound trusts the host's */
    const float eps = A + 0.0f * C;
#else
    const float eps = C * (xq + xr) + A;
#endif
    *lo = s - eps;
    return s + eps;
}

/* knn.c's kn_cut: U widened for D's own rounding (2^-20 of it) and slack. */
SB_FN float kn_cut_dev(float U, float slack) { return U + U * 9.5367431640625e-07f + slack; }

/* Query qi of the block (group 0) against the chunk's nr rows from r0 (its
 * products at p + qi * ldp; its screening norm qn[qoff + qi]): radius_mode 0 keeps the chunk's kq least keys
 * in keys[(qi * nch + ch) * kq ..] (ascending) and cuts at them; 1 cuts at
 * r_screen. The local memory holds sl, the work-items' kept keys (m >= SB_WG
 * * kq floats, m a power of two), sorted by a bitonic network. */
SB_KERNEL void kn_select(SB_GLOBAL const float *p, sb_i64 ldp, sb_i64 nr, sb_i64 r0, SB_GLOBAL const float *qn, sb_i64 qoff,
                         SB_GLOBAL const float *xn, float C, float A, float slack, sb_i32 kq, sb_i32 radius_mode,
                         float r_screen, SB_GLOBAL float *keys, sb_i32 nch, sb_i32 ch, sb_i32 m,
                         SB_GLOBAL sb_i32 *cnt, SB_GLOBAL sb_i64 *cj, SB_GLOBAL float *clo,
                         sb_i32 cap SB_DYN_LOCAL_PARAM(float, sl)) {
    SB_DYN_LOCAL(float, sl);
    const sb_i64 qi = sb_group_id(0);
    const int lid = sb_local_id(0);
    SB_GLOBAL const float *row = p + qi * ldp;
    SB_GLOBAL const float *xr = xn + r0;
    const float xq = qn[qoff + qi], inf = sb_u2f(0x7f800000u);
    float cut = kn_cut_dev(r_screen, slack);
    if (!radius_mode) {
        float mine[SB_KN_KMAX];
        float worst = inf; /* mine[kq - 1] once kq are held: a register, so most keys cost one compare */
        int held = 0;
        for (sb_i64 j = lid; j < nr; j += SB_WG) {
            float lo;
            const float key = kn_screen(xq, xr[j], row[j], C, A, &lo);
            if (!(key < worst) && held == kq) continue;
            int t = held < kq ? held++ : kq - 1;
            while (t > 0 && mine[t - 1] > key) mine[t] = mine[t - 1], t--;
            mine[t] = key;
            if (held == kq) worst = mine[kq - 1];
        }
        for (int t = 0; t < kq; t++) sl[lid * kq + t] = t < held ? mine[t] : inf;
        for (int e = SB_WG * kq + lid; e < m; e += SB_WG) sl[e] = inf;
        for (int k2 = 2; k2 <= m; k2 <<= 1)
            for (int j2 = k2 >> 1; j2 > 0; j2 >>= 1) {
                sb_barrier();
                for (int e = lid; e < m; e += SB_WG) {
                    const int o = e ^ j2;
                    if (o <= e) continue;
                    const float a = sl[e], b = sl[o];
                    if ((e & k2) == 0 ? a > b : a < b) sl[e] = b, sl[o] = a;
                }
            }
        sb_barrier();
        for (int t = lid; t < kq; t += SB_WG) keys[(qi * nch + ch) * kq + t] = sl[t];
        cut = kn_cut_dev(sl[kq - 1], slack);
    }
    for (sb_i64 j = lid; j < nr; j += SB_WG) {
        float lo;
        (void)kn_screen(xq, xr[j], row[j], C, A, &lo);
        if (!(lo <= cut)) continue;
        const sb_i32 slot = sb_atomic_inc32(cnt + qi);
        if (slot < cap) cj[qi * cap + slot] = r0 + j, clo[qi * cap + slot] = lo;
    }
}

/* Query qi's kept candidates (min(cnt, cap) of them) to the dense arrays at
 * off[qi] (the host's running sum of the kept counts). */
SB_KERNEL void kn_compact(SB_GLOBAL const sb_i32 *cnt, SB_GLOBAL const sb_i64 *off, sb_i32 cap,
                          SB_GLOBAL const sb_i64 *cj, SB_GLOBAL const float *clo, SB_GLOBAL sb_i64 *dj,
                          SB_GLOBAL float *dlo) {
    const sb_i64 qi = sb_group_id(0);
    const sb_i32 c = cnt[qi] < cap ? cnt[qi] : cap;
    for (sb_i32 t = sb_local_id(0); t < c; t += SB_WG) {
        dj[off[qi] + t] = cj[qi * cap + t];
        dlo[off[qi] + t] = clo[qi * cap + t];
    }
}

/* The screening rows from the host's panels (knn.c: panel p holds rows p*w ..
 * p*w + w - 1, feature f of row r at xp[(p * d + f) * w + r]) into row-major
 * x (n x d): a copy, no arithmetic. */
SB_KERNEL void kn_unpanel(SB_GLOBAL const float *xp, sb_i64 n, sb_i32 d, sb_i32 w, SB_GLOBAL float *x) {
    const sb_i64 e = sb_global_id(0);
    if (e >= n * d) return;
    const sb_i64 j = e / d, f = e - j * d;
    x[e] = xp[((j / w) * d + f) * w + (j - (j / w) * w)];
}
