/*
 * linalg_entry.h: the entry kernels of the identical matrix product on a GPU,
 * written once in the compat vocabulary and compiled by every GPU backend.
 * The arithmetic is kernels/linalg.h's, the same functions the host runs
 * (src/linalg/gemm.c): these kernels only decide which work-item does which
 * line, element or tile, and every sum is an exact integer one.
 *
 * A line is a row of op(A) or a column of op(B); element q of line l of a
 * matrix x is x[off + l*ls + q*qs], so one kernel serves both operands and
 * both transposes. Digit planes: pass c of a line (K columns c*kc.. of
 * length Lc) holds S segments of Lc digits, least significant first for op(A) and
 * most significant first for op(B) (reverse = 1), so that the digit pairs of
 * one weight w = i + j are one contiguous run of both lines (linalg/gemm.c).
 * An operand of S digits holds S*Kp bytes a line, pass c from byte S*c*kc.
 *
 * Separating arms (never in a profile build): SB_ARM_FLOAT_ATOMIC sums the
 * seven weighted parts of each element with float atomics in whatever order
 * the work-items arrive; SB_ARM_GEMM_FMA recombines them in float with fused
 * multiply-adds instead of the exact integer recombination.
 * The kernel list is SB_LINALG_KERNELS (src/device/programs.h).
 */
#include "../linalg.h"

#ifndef SB_WG
#error "SB_WG (the work-group size, a power of two) is set by the host"
#endif

/* Per line l: mb[l] (its largest finite magnitude's bits), flag[l] (it holds
 * a nonfinite element), and the sum and count of its nonzero elements'
 * leading exponents, gathered by integer atomics (order-free) from chunks of
 * KL_STAT_CHUNK elements: work-item (l, chunk) on a 2-D grid whose second
 * dimension strides past its length. kl_stats_zero clears them first and
 * kl_stats_finish turns them into each line's spread, whose largest goes into
 * spread[slot]. For lines far apart in memory (op(B)'s columns) and short
 * lines: neighbouring work-items read neighbouring lines. */
#define KL_STAT_CHUNK 128
SB_KERNEL void kl_stats_zero(sb_i64 nlines, SB_GLOBAL sb_i32 *mbo, SB_GLOBAL sb_i32 *flag, SB_GLOBAL sb_i64 *sum,
                             SB_GLOBAL sb_i64 *cnt) {
    const sb_i64 l = sb_global_id(0);
    if (l >= nlines) return;
    mbo[l] = 0;
    flag[l] = 0;
    sum[l] = 0;
    cnt[l] = 0;
}

SB_KERNEL void kl_line_scale(SB_GLOBAL const float *x, sb_i64 off, sb_i64 ls, sb_i64 qs, sb_i64 nlines, sb_i64 K,
                             SB_GLOBAL sb_i32 *mbo, SB_GLOBAL sb_i32 *flag, SB_GLOBAL sb_i64 *sumo,
                             SB_GLOBAL sb_i64 *cnto) {
    const sb_i64 l = sb_global_id(0), step = sb_global_size(1);
    if (l >= nlines) return;
    for (sb_i64 ch = sb_global_id(1); ch * KL_STAT_CHUNK < K; ch += step) {
        const sb_i64 q1 = (ch + 1) * KL_STAT_CHUNK < K ? (ch + 1) * KL_STAT_CHUNK : K;
        sb_u32 mb = 0u;
        int nf = 0;
        sb_i64 sum = 0, cnt = 0;
        for (sb_i64 q = ch * KL_STAT_CHUNK; q < q1; q++) {
            const sb_u32 u = sb_f2u(x[off + l * ls + q * qs]);
            nf |= sb_oz_nonfinite(u);
            const sb_u32 v = sb_oz_mag(u);
            mb = v > mb ? v : mb;
            if (v != 0u) {
                sum += sb_oz_lead(v);
                cnt++;
            }
        }
        sb_atomic_max32(&mbo[l], (sb_i32)mb);
        if (nf) sb_atomic_max32(&flag[l], 1);
        if (cnt) {
            sb_atom_add64(&sumo[l], sum);
            sb_atom_add64(&cnto[l], cnt);
        }
    }
}

SB_KERNEL void kl_stats_finish(sb_i64 nlines, SB_GLOBAL const sb_i32 *mbo, SB_GLOBAL const sb_i64 *sum,
                               SB_GLOBAL const sb_i64 *cnt, SB_GLOBAL sb_i32 *spread, sb_i32 slot) {
    const sb_i64 l = sb_global_id(0);
    if (l >= nlines) return;
    sb_atomic_max32(spread + slot, sb_oz_spread((sb_u32)mbo[l], sum[l], cnt[l]));
}

/* One work-group's statistics of x[base + q] for q in [qb, qe), its items
 * striding by SB_WG (none when !active), reduced in local memory: then mx[0],
 * nfs[0], sums[0] and cnts[0] hold the largest magnitude, the nonfinite flag,
 * the leading exponents' sum and the nonzero count (max, or and integer sums:
 * order-free). Every work-item of the group calls it (it holds barriers). */
SB_FN void kl_group_stats(SB_GLOBAL const float *x, sb_i64 base, sb_i64 qb, sb_i64 qe, int active, int lid,
                          SB_LOCAL sb_u32 *mx, SB_LOCAL sb_u32 *nfs, SB_LOCAL sb_i64 *sums, SB_LOCAL sb_i64 *cnts) {
    sb_u32 mb = 0u, nf = 0u;
    sb_i64 sum = 0, cnt = 0;
    if (active)
        for (sb_i64 q = qb + lid; q < qe; q += SB_WG) {
            const sb_u32 u = sb_f2u(x[base + q]);
            nf |= (sb_u32)sb_oz_nonfinite(u);
            const sb_u32 v = sb_oz_mag(u);
            mb = v > mb ? v : mb;
            if (v != 0u) {
                sum += sb_oz_lead(v);
                cnt++;
            }
        }
    mx[lid] = mb;
    nfs[lid] = nf;
    sums[lid] = sum;
    cnts[lid] = cnt;
    sb_barrier();
    for (int s = SB_WG / 2; s > 0; s >>= 1) {
        if (lid < s) {
            mx[lid] = mx[lid + s] > mx[lid] ? mx[lid + s] : mx[lid];
            nfs[lid] |= nfs[lid + s];
            sums[lid] += sums[lid + s];
            cnts[lid] += cnts[lid + s];
        }
        sb_barrier();
    }
}

/* The same for lines whose elements are contiguous (qs == 1): a work-group a
 * line, its work-items striding along it. */
SB_KERNEL void kl_line_scale_rows(SB_GLOBAL const float *x, sb_i64 off, sb_i64 ls, sb_i64 nlines, sb_i64 K,
                                  SB_GLOBAL sb_i32 *mbo, SB_GLOBAL sb_i32 *flag, SB_GLOBAL sb_i32 *spread,
                                  sb_i32 slot) {
    SB_SHARED sb_u32 mx[SB_WG];
    SB_SHARED sb_u32 nfs[SB_WG];
    SB_SHARED sb_i64 sums[SB_WG];
    SB_SHARED sb_i64 cnts[SB_WG];
    const sb_i64 l = (sb_i64)sb_group_id(0);
    const int lid = sb_local_id(0);
    kl_group_stats(x, off + l * ls, 0, K, l < nlines, lid, mx, nfs, sums, cnts);
    if (lid == 0 && l < nlines) {
        mbo[l] = (sb_i32)mx[0];
        flag[l] = (sb_i32)nfs[0];
        sb_atomic_max32(spread + slot, sb_oz_spread(mx[0], sums[0], cnts[0]));
    }
}

/* The same for few long contiguous lines (a residual vector of millions of
 * rows), where a work-group a line would leave all but a few multiprocessors
 * idle: work-group (line l, range r of rgrain elements) reduces its range and
 * adds it to the line's values by integer atomics (order-free), which
 * kl_stats_zero cleared and kl_stats_finish turns into the spread. The same
 * statistics as kl_line_scale_rows'. */
SB_KERNEL void kl_line_scale_ranges(SB_GLOBAL const float *x, sb_i64 off, sb_i64 ls, sb_i64 nlines, sb_i64 K,
                                    sb_i64 rgrain, SB_GLOBAL sb_i32 *mbo, SB_GLOBAL sb_i32 *flag,
                                    SB_GLOBAL sb_i64 *sumo, SB_GLOBAL sb_i64 *cnto) {
    SB_SHARED sb_u32 mx[SB_WG];
    SB_SHARED sb_u32 nfs[SB_WG];
    SB_SHARED sb_i64 sums[SB_WG];
    SB_SHARED sb_i64 cnts[SB_WG];
    const sb_i64 l = (sb_i64)sb_group_id(1), r = (sb_i64)sb_group_id(0);
    const int lid = sb_local_id(0);
    const sb_i64 q0 = r * rgrain, q1 = q0 + rgrain < K ? q0 + rgrain : K;
    kl_group_stats(x, off + l * ls, q0, q1, l < nlines, lid, mx, nfs, sums, cnts);
    if (lid == 0 && l < nlines) {
        sb_atomic_max32(&mbo[l], (sb_i32)mx[0]);
        if (nfs[0]) sb_atomic_max32(&flag[l], 1);
        if (cnts[0]) {
            sb_atom_add64(&sumo[l], sums[0]);
            sb_atom_add64(&cnto[l], cnts[0]);
        }
    }
}

/* The S digit planes of every line, one element's digits a work-item (zeros
 * for the padding q >= K). The grid is 2-D and strides over what its second
 * dimension cannot hold (a GPU's grid is short there): q along dimension 0
 * and lines along 1, or, when lfast (lines one element apart, so that
 * neighbouring lines are neighbours in memory), lines along 0 and q along 1,
 * which keeps the reads coalesced. kshift = log2 of the pass length (a power
 * of two). The line's scale goes to sigma[l] from its q = 0 work-item. */
SB_FN void kl_split_one(SB_GLOBAL const float *x, sb_i64 off, sb_i64 ls, sb_i64 qs, sb_i64 K, sb_i64 Kp, sb_i32 S,
                        sb_i32 kshift, SB_GLOBAL const sb_i32 *mb, SB_GLOBAL sb_i32 *sigma, SB_GLOBAL sb_u8 *planes,
                        sb_i32 reverse, sb_i64 l, sb_i64 q) {
    const sb_i32 sg = sb_oz_sigma((sb_u32)mb[l], S);
    if (q == 0) sigma[l] = sg;
    const sb_i64 v = q < K ? sb_oz_fixed(sb_f2u(x[off + l * ls + q * qs]), sg, S) : 0;
    const sb_i64 kc = ((sb_i64)1) << kshift, c = q >> kshift, r = q - (c << kshift);
    const sb_i64 lc = Kp - c * kc < kc ? Kp - c * kc : kc;
    SB_GLOBAL sb_u8 *line = planes + l * S * Kp + S * c * kc + r;
    sb_i64 t = v;
    for (int dq = 0; dq < S; dq++) {
        const sb_i32 d = (sb_i32)((t + 128) & 255) - 128;
        t = (t - d) / 256;
        const int seg = reverse ? S - 1 - dq : dq;
        line[seg * lc] = sb_oz_byte(d);
    }
}

SB_KERNEL void kl_split(SB_GLOBAL const float *x, sb_i64 off, sb_i64 ls, sb_i64 qs, sb_i64 nlines, sb_i64 K,
                        sb_i64 Kp, sb_i32 S, sb_i32 kshift, SB_GLOBAL const sb_i32 *mb, SB_GLOBAL sb_i32 *sigma,
                        SB_GLOBAL sb_u8 *planes, sb_i32 reverse) {
    const sb_i64 q = sb_global_id(0), step = sb_global_size(1);
    if (q >= Kp) return;
    for (sb_i64 l = sb_global_id(1); l < nlines; l += step)
        kl_split_one(x, off, ls, qs, K, Kp, S, kshift, mb, sigma, planes, reverse, l, q);
}

/* The same for lines far apart in memory (op(B)'s columns): a 32 x 32 tile
 * of (line, q) a work-group, read with neighbouring lines on neighbouring
 * work-items and written with neighbouring q on them, through local memory.
 * Tile (lines l0.., q q0..) is work-group (q0/32, l0/32), striding along the
 * second dimension. */
#define KL_TILE 32
SB_KERNEL void kl_split_tiled(SB_GLOBAL const float *x, sb_i64 off, sb_i64 ls, sb_i64 qs, sb_i64 nlines, sb_i64 K,
                              sb_i64 Kp, sb_i32 S, sb_i32 kshift, SB_GLOBAL const sb_i32 *mb, SB_GLOBAL sb_i32 *sigma,
                              SB_GLOBAL sb_u8 *planes, sb_i32 reverse) {
    SB_SHARED sb_u32 tile[KL_TILE][KL_TILE + 1];
    const int lid = sb_local_id(0);
    const sb_i64 q0 = (sb_i64)sb_group_id(0) * KL_TILE, step = sb_global_size(1) * KL_TILE;
    for (sb_i64 l0 = (sb_i64)sb_global_id(1) * KL_TILE; l0 < nlines; l0 += step) {
        for (int e = lid; e < KL_TILE * KL_TILE; e += SB_WG) {
            const int dl = e % KL_TILE, dq = e / KL_TILE;
            const sb_i64 l = l0 + dl, q = q0 + dq;
            tile[dq][dl] = l < nlines && q < K ? sb_f2u(x[off + l * ls + q * qs]) : 0u;
        }
        sb_barrier();
        for (int e = lid; e < KL_TILE * KL_TILE; e += SB_WG) {
            const int dq = e % KL_TILE, dl = e / KL_TILE;
            const sb_i64 l = l0 + dl, q = q0 + dq;
            if (l < nlines && q < Kp) {
                const sb_i32 sg = sb_oz_sigma((sb_u32)mb[l], S);
                if (q == 0) sigma[l] = sg;
                const sb_i64 v = q < K ? sb_oz_fixed(tile[dq][dl], sg, S) : 0;
                const sb_i64 kc = ((sb_i64)1) << kshift, c = q >> kshift, r = q - (c << kshift);
                const sb_i64 lc = Kp - c * kc < kc ? Kp - c * kc : kc;
                SB_GLOBAL sb_u8 *line = planes + l * S * Kp + S * c * kc + r;
                sb_i64 t = v;
                for (int d = 0; d < S; d++) {
                    const sb_i32 g = (sb_i32)((t + 128) & 255) - 128;
                    t = (t - g) / 256;
                    line[(reverse ? S - 1 - d : d) * lc] = sb_oz_byte(g);
                }
            }
        }
        sb_barrier();
    }
}

/* d[doff + i*ldd + j] = sum_{q < len} a[aoff + i*lda + q] * b[boff + j*ldb + q]
 * over int8 digits, exact in int32 (len * 2^14 < 2^31): a 64 x 64 tile a
 * work-group, each work-item 4 columns of KL_TR rows, 16 digits of K a step
 * through local memory. The portable integer product; a backend's vendor
 * library may stand in for it (the sums are exact, so the bits are the same). */
#define KL_TM 64
#define KL_TK 16
#define KL_TR (KL_TM * KL_TM / (4 * SB_WG))
SB_KERNEL void kl_igemm(SB_GLOBAL const sb_u8 *a, sb_i64 aoff, sb_i64 lda, SB_GLOBAL const sb_u8 *b, sb_i64 boff,
                        sb_i64 ldb, sb_i64 len, sb_i64 m, sb_i64 n, SB_GLOBAL sb_i32 *d, sb_i64 doff, sb_i64 ldd) {
    SB_SHARED sb_i32 as[KL_TK][KL_TM + 1];
    SB_SHARED sb_i32 bs[KL_TK][KL_TM + 1];
    const int lid = sb_local_id(0);
    const sb_i64 i0 = (sb_i64)sb_group_id(1) * KL_TM, j0 = (sb_i64)sb_group_id(0) * KL_TM;
    const int cg = lid % 16, rg = lid / 16;
    sb_i32 acc[KL_TR][4];
    for (int r = 0; r < KL_TR; r++)
        for (int s = 0; s < 4; s++) acc[r][s] = 0;
    for (sb_i64 k0 = 0; k0 < len; k0 += KL_TK) {
        for (int e = lid; e < KL_TM * KL_TK; e += SB_WG) {
            const int row = e / KL_TK, kk = e % KL_TK;
            const sb_i64 ia = i0 + row, jb = j0 + row, q = k0 + kk;
            as[kk][row] = ia < m && q < len ? sb_oz_unbyte(a[aoff + ia * lda + q]) : 0;
            bs[kk][row] = jb < n && q < len ? sb_oz_unbyte(b[boff + jb * ldb + q]) : 0;
        }
        sb_barrier();
        for (int kk = 0; kk < KL_TK; kk++) {
            sb_i32 bv[4];
            for (int s = 0; s < 4; s++) bv[s] = bs[kk][cg * 4 + s];
            for (int r = 0; r < KL_TR; r++) {
                const sb_i32 av = as[kk][rg * KL_TR + r];
                for (int s = 0; s < 4; s++) acc[r][s] += av * bv[s];
            }
        }
        sb_barrier();
    }
    for (int r = 0; r < KL_TR; r++) {
        const sb_i64 i = i0 + rg * KL_TR + r;
        if (i >= m) continue;
        for (int s = 0; s < 4; s++) {
            const sb_i64 j = j0 + cg * 4 + s;
            if (j < n) d[doff + i * ldd + j] = acc[r][s];
        }
    }
}

/* One pass's nw weighted sums (d[w*plane + i*n + j]) into element (i, j):
 * mode 0: the only pass, rounded into c; 1: the first of several, into the
 * exact total (accb: 4 limbs an element, acct: its top); 2: a middle one,
 * added to it; 3: the last, added and rounded into c. */
SB_FN void kl_combine_one(SB_GLOBAL const sb_i32 *d, sb_i64 n, sb_i64 plane, sb_i32 nw, sb_i32 mode,
                           SB_GLOBAL sb_u32 *accb, SB_GLOBAL sb_i64 *acct, SB_GLOBAL const sb_i32 *sa,
                           SB_GLOBAL const sb_i32 *sb, SB_GLOBAL float *c, sb_i64 i, sb_i64 j) {
    const sb_i64 e = i * n + j;
    const sb_i32 S = sa[i] + sb[j];
#if defined(SB_ARM_GEMM_FMA) || defined(SB_ARM_FLOAT_ATOMIC)
    /* arms (mode 0 only): the parts as floats, summed in float */
    (void)accb;
    (void)acct;
    (void)mode;
#if defined(SB_ARM_GEMM_FMA)
    float acc = 0.0f;
#else
    c[e] = 0.0f;
#endif
    for (int w = 0; w < nw; w++) {
        const sb_i32 ex = 8 * w - S; /* 2^ex as a float when normal, else 0 */
        const float sc = ex > -127 && ex < 128 ? sb_u2f((sb_u32)(ex + 127) << 23) : 0.0f;
#if defined(SB_ARM_GEMM_FMA)
        acc = fma((float)d[w * plane + e], sc, acc);
#else
        /* a float atomic: a compare-and-swap loop, rounded in arrival order */
        SB_GLOBAL sb_u32 *p = (SB_GLOBAL sb_u32 *)&c[e];
        sb_u32 seen, old = *p;
        do {
            seen = old;
            old = sb_atomic_cas32(p, seen, sb_f2u(sb_u2f(seen) + (float)d[w * plane + e] * sc));
        } while (old != seen);
#endif
    }
#if defined(SB_ARM_GEMM_FMA)
    c[e] = acc;
#endif
#else
    sb_i64 dv[SB_OZ_WMAX];
    for (int w = 0; w < SB_OZ_WMAX; w++) dv[w] = w < nw ? d[w * plane + e] : 0;
    sb_oz_acc t;
    sb_oz_acc_from(dv, nw, &t);
    if (mode >= 2) {
        sb_oz_acc prev;
        for (int L = 0; L < SB_OZ_ACC_LIMBS; L++) prev.l[L] = accb[e * SB_OZ_ACC_LIMBS + L];
        prev.top = acct[e];
        sb_oz_acc_add(&t, &prev);
    }
    if (mode == 1 || mode == 2) {
        for (int L = 0; L < SB_OZ_ACC_LIMBS; L++) accb[e * SB_OZ_ACC_LIMBS + L] = t.l[L];
        acct[e] = t.top;
        return;
    }
    c[e] = sb_u2f(sb_oz_round(&t, S));
#endif
}

/* Columns along the grid's dimension 0, rows along 1 (striding past its length). */
SB_KERNEL void kl_combine(SB_GLOBAL const sb_i32 *d, sb_i64 m, sb_i64 n, sb_i64 plane, sb_i32 nw, sb_i32 mode,
                          SB_GLOBAL sb_u32 *accb, SB_GLOBAL sb_i64 *acct, SB_GLOBAL const sb_i32 *sa,
                          SB_GLOBAL const sb_i32 *sb, SB_GLOBAL float *c) {
    const sb_i64 j = sb_global_id(0), step = sb_global_size(1);
    if (j >= n) return;
    for (sb_i64 i = sb_global_id(1); i < m; i += step) kl_combine_one(d, n, plane, nw, mode, accb, acct, sa, sb, c, i, j);
}

/* Elements whose row of op(A) or column of op(B) holds a NaN or an infinity
 * get the special result (kernels/linalg.h) in place of the integer one. */
SB_KERNEL void kl_special(SB_GLOBAL const float *a, sb_i64 aoff, sb_i64 als, sb_i64 aqs, SB_GLOBAL const float *b,
                          sb_i64 boff, sb_i64 bls, sb_i64 bqs, sb_i64 K, sb_i64 m, sb_i64 n,
                          SB_GLOBAL const sb_i32 *fa, SB_GLOBAL const sb_i32 *fb, SB_GLOBAL float *c) {
    const sb_i64 j = sb_global_id(0), step = sb_global_size(1);
    if (j >= n) return;
    for (sb_i64 i = sb_global_id(1); i < m; i += step) {
        if (!fa[i] && !fb[j]) continue;
        const sb_u32 s = sb_oz_special(a, aoff + i * als, aqs, b, boff + j * bls, bqs, K);
        if (s != 0u) c[i * n + j] = sb_u2f(s);
    }
}

/* ---- the direct road on a GPU (src/linalg/gemm_direct.c has the host's) ----
 * For operands of four digits, |x'| <= 2^30: each product is exact in int64,
 * four of them add in int64 (<= 2^62), and a 128-bit total per element holds
 * any K. Work-group (tile ti of 64 rows of op(A), tile tj of 64 columns of
 * op(B), K range r of kgrain) is group (tj, ti + nti * r); it converts 16 q of
 * its 64 + 64 lines at a time into local memory (sb_oz_fixed with S = 4) and
 * each work-item sums 4 x 4 elements. The range's exact totals go to parts
 * (two 64-bit words an element, range-major); kl_direct_finish adds the ranges
 * (exact, so in any grouping) and rounds each element once (sb_oz_round): the
 * digit planes' result, bit for bit, without planes or passes. */
SB_FN void kl_add128(sb_u64 *lo, sb_i64 *hi, sb_i64 v) {
    const sb_u64 t = *lo + (sb_u64)v;
    *hi += (v < 0 ? -1 : 0) + (t < *lo ? 1 : 0);
    *lo = t;
}
/* lo, hi += sum of x'_q y'_q over q = q0, q0 + qstep, .. below q1 (x at
 * a[q * aqs], y at b[q * bqs], S = 4 scales sa, sb): four products in an int64
 * (|x'y'| <= 2^60), then into the 128-bit total. */
SB_FN void kl_exact_dot(SB_GLOBAL const float *a, sb_i64 aqs, sb_i32 sa, SB_GLOBAL const float *b, sb_i64 bqs,
                        sb_i32 sb, sb_i64 q0, sb_i64 q1, sb_i64 qstep, sb_u64 *lo, sb_i64 *hi) {
    sb_i64 u = 0;
    int cnt = 0;
    for (sb_i64 q = q0; q < q1; q += qstep) {
        const sb_i64 av = (sb_i32)sb_oz_fixed(sb_f2u(a[q * aqs]), sa, 4);
        const sb_i64 bv = (sb_i32)sb_oz_fixed(sb_f2u(b[q * bqs]), sb, 4);
        u += av * bv;
        if (++cnt == 4) { /* four products at most in each int64 */
            kl_add128(lo, hi, u);
            u = 0;
            cnt = 0;
        }
    }
    kl_add128(lo, hi, u);
}
/* The float32 bits of the 128-bit total (lo, hi) scaled by 2^-S, rounded once
 * (sb_oz_round); +0 for K == 0. */
SB_FN sb_u32 kl_round128(sb_u64 lo, sb_i64 hi, sb_i32 S, sb_i64 K) {
    sb_oz_acc acc;
    acc.l[0] = (sb_u32)(lo & 0xffffffffu);
    acc.l[1] = (sb_u32)(lo >> 32);
    acc.l[2] = (sb_u32)((sb_u64)hi & 0xffffffffu);
    acc.l[3] = (sb_u32)((sb_u64)hi >> 32);
    acc.top = hi < 0 ? -1 : 0;
    return K > 0 ? sb_oz_round(&acc, S) : 0u;
}
#define KL_DK 16
/* The kernel for a tile of TA rows of op(A) and TB columns of op(B): each
 * work-item sums DR = TA * TB / (4 * SB_WG) rows of 4 elements. Two shapes:
 * 64 x 64, and 8 x 128 for a product of few rows (a gradient row) where the
 * square tile would leave most of its work-items idle. */
#define KL_DIRECT_SUM(NAME, TA, TB)                                                                           \
    SB_KERNEL void NAME(SB_GLOBAL const float *a, sb_i64 als, sb_i64 aqs, SB_GLOBAL const float *b, sb_i64 bls, \
                        sb_i64 bqs, sb_i64 m, sb_i64 n, sb_i64 K, sb_i64 kgrain, sb_i64 nti, sb_i32 sym,        \
                        SB_GLOBAL const sb_i32 *mba, SB_GLOBAL const sb_i32 *mbb, SB_GLOBAL sb_u64 *parts) {     \
        SB_SHARED sb_i32 as[KL_DK][TA + 1];                                                                   \
        SB_SHARED sb_i32 bs[KL_DK][TB + 1];                                                                   \
        const int lid = sb_local_id(0);                                                                       \
        const sb_i64 g1 = (sb_i64)sb_group_id(1), r = g1 / nti;                                               \
        const sb_i64 i0 = (g1 - r * nti) * TA, j0 = (sb_i64)sb_group_id(0) * TB;                              \
        if (sym && j0 + TB <= i0) return; /* a Gram matrix: the tile mirrors one above the diagonal */       \
        const sb_i64 q0 = r * kgrain, q1 = q0 + kgrain < K ? q0 + kgrain : K;                                 \
        const int cg = lid % (TB / 4), rg = lid / (TB / 4);                                                   \
        sb_u64 lo[TA * TB / (4 * SB_WG)][4];                                                                  \
        sb_i64 hi[TA * TB / (4 * SB_WG)][4], u[TA * TB / (4 * SB_WG)][4];                                     \
        for (int x = 0; x < TA * TB / (4 * SB_WG); x++)                                                       \
            for (int y = 0; y < 4; y++) lo[x][y] = 0u, hi[x][y] = 0, u[x][y] = 0;                             \
        for (sb_i64 k0 = q0; k0 < q1; k0 += KL_DK) {                                                          \
            for (int e = lid; e < (TA + TB) * KL_DK; e += SB_WG) {                                            \
                const int kk = e / (TA + TB), row = e % (TA + TB);                                            \
                const sb_i64 q = k0 + kk;                                                                     \
                if (row < TA) {                                                                               \
                    const sb_i64 ia = i0 + row;                                                               \
                    as[kk][row] = ia < m && q < q1 ? (sb_i32)sb_oz_fixed(sb_f2u(a[ia * als + q * aqs]),       \
                                                                         sb_oz_sigma((sb_u32)mba[ia], 4), 4)  \
                                                   : 0;                                                       \
                } else {                                                                                      \
                    const sb_i64 jb = j0 + row - TA;                                                          \
                    bs[kk][row - TA] = jb < n && q < q1 ? (sb_i32)sb_oz_fixed(sb_f2u(b[jb * bls + q * bqs]),  \
                                                                              sb_oz_sigma((sb_u32)mbb[jb], 4), 4) \
                                                        : 0;                                                  \
                }                                                                                             \
            }                                                                                                 \
            sb_barrier();                                                                                     \
            for (int kk = 0; kk < KL_DK; kk++) {                                                              \
                sb_i64 bv[4];                                                                                 \
                for (int y = 0; y < 4; y++) bv[y] = bs[kk][cg * 4 + y];                                       \
                for (int x = 0; x < TA * TB / (4 * SB_WG); x++) {                                             \
                    const sb_i64 av = as[kk][rg * (TA * TB / (4 * SB_WG)) + x];                               \
                    for (int y = 0; y < 4; y++) u[x][y] += av * bv[y];                                        \
                }                                                                                             \
                if ((kk & 3) == 3) /* four products at most in each int64 */                                  \
                    for (int x = 0; x < TA * TB / (4 * SB_WG); x++)                                           \
                        for (int y = 0; y < 4; y++) {                                                         \
                            kl_add128(&lo[x][y], &hi[x][y], u[x][y]);                                         \
                            u[x][y] = 0;                                                                      \
                        }                                                                                     \
            }                                                                                                 \
            sb_barrier();                                                                                     \
        }                                                                                                     \
        for (int x = 0; x < TA * TB / (4 * SB_WG); x++) {                                                     \
            const sb_i64 i = i0 + rg * (TA * TB / (4 * SB_WG)) + x;                                           \
            if (i >= m) continue;                                                                             \
            for (int y = 0; y < 4; y++) {                                                                     \
                const sb_i64 j = j0 + cg * 4 + y;                                                             \
                if (j >= n) continue;                                                                         \
                const sb_i64 at = 2 * ((r * m + i) * n + j);                                                  \
                parts[at] = lo[x][y];                                                                         \
                parts[at + 1] = (sb_u64)hi[x][y];                                                             \
            }                                                                                                 \
        }                                                                                                     \
    }
KL_DIRECT_SUM(kl_direct_sum, 64, 64)
KL_DIRECT_SUM(kl_direct_sum_rows8, 8, 128)

/* Element (i, j) of C: the nr ranges' totals added, rounded once. */
/* The direct road for a product of one row of op(A) (m == 1: a gradient row
 * r^T X), where a tile of rows would leave all but one idle: work-group
 * (column tile of KL_ROW_CW columns of op(B), K range r of kgrain); work-item
 * (column c, lane t) sums the products of q = q0 + t, q0 + t + lanes, ... (the
 * columns of one q adjacent in memory for a row-major X), four in an int64,
 * then 128-bit; the lanes' totals are added in local memory. The same exact
 * totals as kl_direct_sum's, in parts (r * n + j), for kl_direct_finish. */
#define KL_ROW_CW (SB_WG < 32 ? SB_WG : 32)
SB_KERNEL void kl_direct_row(SB_GLOBAL const float *a, sb_i64 aqs, SB_GLOBAL const float *b, sb_i64 bls, sb_i64 bqs,
                             sb_i64 n, sb_i64 K, sb_i64 kgrain, SB_GLOBAL const sb_i32 *mba,
                             SB_GLOBAL const sb_i32 *mbb, SB_GLOBAL sb_u64 *parts) {
    SB_SHARED sb_u64 rlo[SB_WG];
    SB_SHARED sb_i64 rhi[SB_WG];
    const int lid = sb_local_id(0), c = lid % KL_ROW_CW, t = lid / KL_ROW_CW, lanes = SB_WG / KL_ROW_CW;
    const sb_i64 j = (sb_i64)sb_group_id(0) * KL_ROW_CW + c, r = (sb_i64)sb_group_id(1);
    const sb_i64 q0 = r * kgrain, q1 = q0 + kgrain < K ? q0 + kgrain : K;
    sb_u64 lo = 0u;
    sb_i64 hi = 0;
    if (j < n)
        kl_exact_dot(a, aqs, sb_oz_sigma((sb_u32)mba[0], 4), b + j * bls, bqs, sb_oz_sigma((sb_u32)mbb[j], 4), q0 + t,
                     q1, lanes, &lo, &hi);
    rlo[lid] = lo;
    rhi[lid] = hi;
    sb_barrier();
    if (t == 0 && j < n) {
        for (int s = 1; s < lanes; s++) {
            const sb_u64 l = rlo[lid + s * KL_ROW_CW], x = lo + l;
            hi += rhi[lid + s * KL_ROW_CW] + (x < lo ? 1 : 0);
            lo = x;
        }
        parts[2 * (r * n + j)] = lo;
        parts[2 * (r * n + j) + 1] = (sb_u64)hi;
    }
}

/* The direct road for a tall product of few columns (margins X W^T of
 * millions of rows, K short): work-item (row i, column j) sums its K products
 * itself, four in an int64, then 128-bit, and rounds its element once
 * (sb_oz_round): kl_direct_finish's value with one range, without parts. */
SB_KERNEL void kl_direct_tall(SB_GLOBAL const float *a, sb_i64 als, sb_i64 aqs, SB_GLOBAL const float *b, sb_i64 bls,
                              sb_i64 bqs, sb_i64 m, sb_i64 n, sb_i64 K, SB_GLOBAL const sb_i32 *mba,
                              SB_GLOBAL const sb_i32 *mbb, SB_GLOBAL float *c) {
    const sb_i64 i = sb_global_id(0), step = sb_global_size(1);
    if (i >= m) return;
    const sb_i32 sa = sb_oz_sigma((sb_u32)mba[i], 4);
    for (sb_i64 j = sb_global_id(1); j < n; j += step) {
        const sb_i32 sj = sb_oz_sigma((sb_u32)mbb[j], 4);
        sb_u64 lo = 0u;
        sb_i64 hi = 0;
        kl_exact_dot(a + i * als, aqs, sa, b + j * bls, bqs, sj, 0, K, 1, &lo, &hi);
        c[i * n + j] = sb_u2f(kl_round128(lo, hi, sa + sj, K));
    }
}

SB_KERNEL void kl_direct_finish(SB_GLOBAL const sb_u64 *parts, sb_i64 m, sb_i64 n, sb_i64 nr,
                                SB_GLOBAL const sb_i32 *mba, SB_GLOBAL const sb_i32 *mbb, sb_i64 K, sb_i64 tile,
                                SB_GLOBAL float *c) {
    const sb_i64 j = sb_global_id(0), step = sb_global_size(1);
    if (j >= n) return;
    for (sb_i64 i = sb_global_id(1); i < m; i += step) {
        sb_u64 lo = 0u;
        sb_i64 hi = 0;
        /* tile > 0: a Gram matrix whose tiles below the diagonal were skipped */
        const int mirror = tile > 0 && (j / tile + 1) * tile <= i;
        const sb_i64 ci = mirror ? j : i, cj = mirror ? i : j;
        for (sb_i64 r = 0; r < nr; r++) {
            const sb_i64 at = 2 * ((r * m + ci) * n + cj);
            const sb_u64 l = parts[at], t = lo + l;
            hi += (sb_i64)parts[at + 1] + (t < lo ? 1 : 0);
            lo = t;
        }
        const sb_i32 S = sb_oz_sigma((sb_u32)mba[i], 4) + sb_oz_sigma((sb_u32)mbb[j], 4);
        c[i * n + j] = sb_u2f(kl_round128(lo, hi, S, K));
    }
}

/* the other operations of the program, each in its own source */
#include "linalg_reduce_entry.h"
#include "linalg_solve_entry.h"
#include "linear_entry.h"
#include "cluster_entry.h"
#include "neighbors_entry.h"
#include "density_entry.h"
#include "nn_entry.h"
#include "lm_entry.h"
#include "umap_entry.h"
