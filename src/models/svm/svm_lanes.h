/*
 * svm_lanes.h: the lane kernels of svm.c's solver, included there once per
 * instruction set with SVL_SUF (the name suffix), SVL_ATTR (the target
 * attribute) and SVL_VL (doubles in one register of the target: 4 or 8)
 * defined; not a header of its own (it undefines its parameters at its end).
 *
 * Each kernel is one of svm.c's plain loops with VL consecutive indices side
 * by side, every lane the plain loop's own arithmetic on its own index (the
 * same operations in the same order, two roundings where the loop has two:
 * -ffp-contract=off), so the values are the plain loop's bits:
 *
 * - svl_sums: a kernel row's sums over the features, feature by feature in
 *   index order, from the points kept feature-major (xt[f ld + q]); each lane
 *   is sb_svk_sum's sequence for its point;
 * - svl_grad: the gradient's update g + (K_iu d_i), its sign flipped where
 *   y_u differs from y_i, then the same with j: a flipped sign is the exact
 *   negation and g + (-a) is g - a (IEEE), so this is the plain g +- a; -y G
 *   is G with its sign flipped where y = +1, exactly;
 * - svl_selj: the second-order choice -(b b) / a over I_low.
 *
 * The argmax / argmin passes keep, in each lane, the winner of the lane's
 * indices by the plain pass's comparison (SV_MORE / SV_LESS); svm.c's
 * sv_pick then compares the lanes' winners in index order by the same
 * comparison, which is the choice of one pass over every index in order
 * (the winner of that pass is its lane's winner). Lanes past the segment's
 * end are done by the plain loop.
 */
#define SVL_CAT2(a, b) a##_##b
#define SVL_CAT(a, b) SVL_CAT2(a, b)
#define SVL_FN(name) SVL_CAT(name, SVL_SUF)
#define SVL_VD SVL_FN(svl_vd)
#define SVL_VF SVL_FN(svl_vf)
#define SVL_VI SVL_FN(svl_vi)

typedef double SVL_VD __attribute__((vector_size(8 * SVL_VL)));
typedef float SVL_VF __attribute__((vector_size(4 * SVL_VL)));
typedef int64_t SVL_VI __attribute__((vector_size(8 * SVL_VL)));
typedef uint8_t SVL_FN(svl_vb) __attribute__((vector_size(SVL_VL)));

/* m ? a : b, lane by lane (m: all ones or zero) */
#define SVL_SEL(m, a, b) ((SVL_VD)(((m) & (SVL_VI)(a)) | (~(m) & (SVL_VI)(b))))
#define SVL_SELI(m, a, b) (((m) & (a)) | (~(m) & (b)))
#define SVL_LD(v, p) memcpy(&(v), (p), sizeof(v))
#define SVL_LDF(p) __extension__({ SVL_VF f_; memcpy(&f_, (p), sizeof f_); __builtin_convertvector(f_, SVL_VD); })
#define SVL_SPLAT(x) (((SVL_VD){0}) + (x))
/* the status bytes of SVL_VL variables (sv_pass's st: SV_ST_UP, SV_ST_LOW, SV_ST_POS) as lanes */
#define SVL_ST(p) __extension__({ SVL_FN(svl_vb) b_; memcpy(&b_, (p), sizeof b_); __builtin_convertvector(b_, SVL_VI); })
/* the lanes where the status has bit f: all ones, else zero */
#define SVL_HAS(s, f) ((SVL_VI)(((s) & (f)) != 0))
/* x with its sign flipped where m (all ones) is: -x exactly */
#define SVL_FLIP(x, m) ((SVL_VD)((SVL_VI)(x) ^ ((m) & (((SVL_VI){0}) + INT64_MIN))))
/* the lanes' winners (bi >= 0) into cand[n++], then the plain loop's over the tail [u, e) */
#define SVL_CANDS(best, bi, n, tail) \
    do { \
        for (int l_ = 0; l_ < SVL_VL; l_++) \
            if ((bi)[l_] >= 0) cand[n].v = (best)[l_], cand[n].i = (bi)[l_], n++; \
        const int64_t t_ = (tail); \
        if (t_ >= 0) cand[n].i = t_, n++; \
    } while (0)
/* iteration u's gradient lanes g and status lanes st */
#define SVL_LOAD_GS(g, st) \
    SVL_VD g; \
    SVL_LD(g, G + u); \
    const SVL_VI st = SVL_ST(ps->st + u)
#define SVL_IOTA(u) __extension__({ SVL_VI i_ = {0}; for (int l_ = 0; l_ < SVL_VL; l_++) i_[l_] = (u) + l_; i_; })

/* s[q - b] := the sum of sb_svk_sum for points q in [b, e) against a: rbf
 * the squared differences, else the products, features in index order. The
 * points are feature-major: feature f of point q at xt[f ld + q]. */
SVL_ATTR static void SVL_FN(svl_sums)(int rbf, int32_t d, const float *a, const float *xt, int64_t ld, int64_t b,
                                      int64_t e, double *s) {
    int64_t q = b;
    for (; q + 4 * SVL_VL <= e; q += 4 * SVL_VL) {
        SVL_VD acc0 = {0}, acc1 = {0}, acc2 = {0}, acc3 = {0};
        for (int32_t f = 0; f < d; f++) {
            const float *r = xt + f * ld + q;
            const SVL_VD x = SVL_SPLAT((double)a[f]);
            const SVL_VD v0 = SVL_LDF(r), v1 = SVL_LDF(r + SVL_VL), v2 = SVL_LDF(r + 2 * SVL_VL),
                         v3 = SVL_LDF(r + 3 * SVL_VL);
            if (rbf) {
                const SVL_VD t0 = x - v0, t1 = x - v1, t2 = x - v2, t3 = x - v3;
                acc0 += t0 * t0, acc1 += t1 * t1, acc2 += t2 * t2, acc3 += t3 * t3;
            } else {
                acc0 += x * v0, acc1 += x * v1, acc2 += x * v2, acc3 += x * v3;
            }
        }
        memcpy(s + (q - b), &acc0, sizeof acc0), memcpy(s + (q - b) + SVL_VL, &acc1, sizeof acc1);
        memcpy(s + (q - b) + 2 * SVL_VL, &acc2, sizeof acc2), memcpy(s + (q - b) + 3 * SVL_VL, &acc3, sizeof acc3);
    }
    for (; q + SVL_VL <= e; q += SVL_VL) {
        SVL_VD acc = {0};
        for (int32_t f = 0; f < d; f++) {
            const SVL_VD x = SVL_SPLAT((double)a[f]), v = SVL_LDF(xt + f * ld + q);
            if (rbf) {
                const SVL_VD t = x - v;
                acc += t * t;
            } else {
                acc += x * v;
            }
        }
        memcpy(s + (q - b), &acc, sizeof acc);
    }
    for (; q < e; q++) s[q - b] = sb_svk_sum(rbf ? SB_SVK_RBF : SB_SVK_LINEAR, d, a, 1, xt + q, ld);
}

/* svl_sums where features are often zero (one-hot columns): points q in
 * [b, e) (b a multiple of SV_BLK) in blocks of SV_BLK, each summing only
 * over the features set in its block's mask bm (bit f: some point of the
 * block has a nonzero feature f) or a's mask am, in index order (the set bits
 * from the lowest). A feature left out is zero in a and in every point of the
 * block: its term is +0 (rbf: (0 - 0)^2) or +-0 (a product), and adding a
 * zero to these sums changes no bit (a sum from +0 of such terms is never -0),
 * so each sum is sb_svk_sum's. A block past e's last full block is summed
 * over every feature. */
SVL_ATTR static void SVL_FN(svl_sums_sparse)(int rbf, int32_t d, const float *a, const float *xt, int64_t ld,
                                             int64_t b, int64_t e, double *s, const uint64_t *am, const uint64_t *bm,
                                             int32_t W) {
    int64_t q = b;
    for (; q + SV_BLK <= e; q += SV_BLK) {
        SVL_VD acc[SV_BLK / SVL_VL];
#pragma GCC unroll 4
        for (int h = 0; h < SV_BLK / SVL_VL; h++) acc[h] = (SVL_VD){0};
        const uint64_t *m = bm + (q / SV_BLK) * W;
        for (int32_t w = 0; w < W; w++) {
            uint64_t bits = m[w] | am[w];
            while (bits) {
                const int32_t f = 64 * w + __builtin_ctzll(bits);
                bits &= bits - 1;
                const float *r = xt + f * ld + q;
                const SVL_VD x = SVL_SPLAT((double)a[f]);
#pragma GCC unroll 4
                for (int h = 0; h < SV_BLK / SVL_VL; h++) {
                    const SVL_VD v = SVL_LDF(r + h * SVL_VL);
                    if (rbf) {
                        const SVL_VD t = x - v;
                        acc[h] += t * t;
                    } else {
                        acc[h] += x * v;
                    }
                }
            }
        }
#pragma GCC unroll 4
        for (int h = 0; h < SV_BLK / SVL_VL; h++) memcpy(s + (q - b) + h * SVL_VL, &acc[h], sizeof acc[h]);
    }
    for (; q < e; q++) s[q - b] = sb_svk_sum(rbf ? SB_SVK_RBF : SB_SVK_LINEAR, d, a, 1, xt + q, ld);
}

/* The gradient's update over u in [b, e) (K rows read at u - off) and the
 * lanes' winners of the argmax of -y G over I_up: cand gets up to SVL_VL + 1
 * (value, index) pairs (the lanes', then the plain loop's of the tail); the
 * count is returned. */
SVL_ATTR static int SVL_FN(svl_grad)(const sv_pass *ps, int64_t off, int64_t b, int64_t e, sv_cand *cand) {
    double *G = ps->G;
    const SVL_VD di = SVL_SPLAT(ps->di), dj = SVL_SPLAT(ps->dj);
    /* a variable's term is negated where its sign differs from i's (j's) */
    const SVL_VI pi = ((SVL_VI){0}) - (ps->yi > 0), pj = ((SVL_VI){0}) - (ps->yj > 0);
    SVL_VD best = SVL_SPLAT(-INFINITY);
    SVL_VI bi = ((SVL_VI){0}) - 1;
    int64_t u = b;
    for (; u + SVL_VL <= e; u += SVL_VL) {
        SVL_LOAD_GS(g, st);
        const SVL_VI pos = SVL_HAS(st, SV_ST_POS);
        const SVL_VD ka = SVL_LDF(ps->Ki + (u - off)) * di, kw = SVL_LDF(ps->Kj + (u - off)) * dj;
        g = g + SVL_FLIP(ka, pos ^ pi);
        g = g + SVL_FLIP(kw, pos ^ pj);
        memcpy(G + u, &g, sizeof g);
        const SVL_VD v = SVL_FLIP(g, pos); /* -y g */
        const SVL_VI m = SVL_HAS(st, SV_ST_UP) & (SVL_VI)SV_MORE(v, best);
        best = SVL_SEL(m, v, best), bi = SVL_SELI(m, SVL_IOTA(u), bi);
    }
    int n = 0;
    SVL_CANDS(best, bi, n, sv_grad_plain(ps, off, u, e, &cand[n].v));
    return n;
}

/* Pass j over u in [b, e): the lanes' smallest -y G over I_low (into *gmin)
 * and the lanes' winners of the argmin of -(b b) / a (cand, as svl_grad). */
SVL_ATTR static int SVL_FN(svl_selj)(const sv_pass *ps, int64_t off, int64_t b, int64_t e, double *gmin,
                                     sv_cand *cand) {
    const double *G = ps->G;
    const SVL_VD zero = {0}, gmax = SVL_SPLAT(ps->gmax), kii = SVL_SPLAT(ps->Kii), two = SVL_SPLAT(2.0),
                 tau = SVL_SPLAT(SV_TAU);
    SVL_VD best = SVL_SPLAT(INFINITY), gm = SVL_SPLAT(INFINITY);
    SVL_VI bi = ((SVL_VI){0}) - 1;
    int64_t u = b;
    for (; u + SVL_VL <= e; u += SVL_VL) {
        SVL_LOAD_GS(g, st);
        const SVL_VI low = SVL_HAS(st, SV_ST_LOW);
        const SVL_VD v = SVL_FLIP(g, SVL_HAS(st, SV_ST_POS)); /* -y g */
        gm = SVL_SEL(low & (SVL_VI)(v < gm), v, gm);
        const SVL_VD bb = gmax - v;
        SVL_VD q = (kii + SVL_LDF(ps->diag + (u - off))) - two * SVL_LDF(ps->Ki + (u - off));
        q = SVL_SEL((SVL_VI)(q > zero), q, tau);
        const SVL_VD o = -(bb * bb) / q;
        const SVL_VI m = low & (SVL_VI)(bb > zero) & (SVL_VI)SV_LESS(o, best);
        best = SVL_SEL(m, o, best), bi = SVL_SELI(m, SVL_IOTA(u), bi);
    }
    double g0 = *gmin;
    for (int l = 0; l < SVL_VL; l++)
        if (gm[l] < g0) g0 = gm[l];
    int n = 0;
    SVL_CANDS(best, bi, n, sv_selj_plain(ps, off, u, e, &g0, &cand[n].v));
    *gmin = g0;
    return n;
}

#undef SVL_CAT2
#undef SVL_CAT
#undef SVL_FN
#undef SVL_VD
#undef SVL_VF
#undef SVL_VI
#undef SVL_SEL
#undef SVL_SELI
#undef SVL_LD
#undef SVL_LDF
#undef SVL_SPLAT
#undef SVL_IOTA
#undef SVL_CANDS
#undef SVL_LOAD_GS
#undef SVL_ST
#undef SVL_HAS
#undef SVL_FLIP
#undef SVL_SUF
#undef SVL_ATTR
#undef SVL_VL
