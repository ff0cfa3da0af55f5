/*
 * krylov_lanes.h: the lane kernels of krylov.c, included there once per
 * instruction set with KR_SUF (the name suffix), KR_ATTR (the function
 * attribute: empty, or a target), KR_VL (doubles in one register of the
 * target: 2, 4 or 8), KR_TNW (columns of b a pass of kr_tn keeps in
 * registers), KR_NNR and KR_NNV (rows, and groups of 8 columns, a pass of the
 * row products keeps) defined; not a header of its own. It undefines its
 * parameters at its end, so the includer defines them and nothing else.
 *
 * Every lane is one sum in its stated order (a dot product over rows
 * ascending, a row of a product over its terms ascending), a multiply then an
 * add, two roundings (-ffp-contract=off): the lane width, the register blocks
 * and the instruction set decide only which sums share an instruction, so
 * every variant gives the bits of the plain loops. Lanes past the valid
 * columns read finite slack (the callers' buffers carry it) and are never
 * stored. A group of 8 lanes (a 64-byte line of doubles) is KR_NH registers
 * of the target's own width (vectors wider than the target's registers
 * compile badly).
 */
#define KR_CAT2(a, b) a##_##b
#define KR_CAT(a, b) KR_CAT2(a, b)
#define KR_FN(name) KR_CAT(name, KR_SUF)
#define KR_VN KR_FN(kr_vn)
#define KR_NH (8 / KR_VL)
#define KR_AI KR_ATTR static inline __attribute__((always_inline))

typedef double KR_VN __attribute__((vector_size(8 * KR_VL)));

/* part[t] += a[i][0..7] b[i][t] for the rows i0..i1-1 ascending, t < W (W a
 * constant where inlined): 8 lanes of a's columns (KR_NH registers each), each
 * its own sum. */
KR_AI void KR_FN(kr_tn_acc)(const int W, int64_t i0, int64_t i1, const double *a, int64_t lda, const double *b,
                            int64_t ldb, KR_VN *part) {
    KR_VN acc[16 * KR_NH];
#pragma GCC unroll 16
    for (int t = 0; t < W * KR_NH; t++) acc[t] = part[t];
    for (int64_t i = i0; i < i1; i++) {
        KR_VN av[KR_NH];
#pragma GCC unroll 4
        for (int h = 0; h < KR_NH; h++) KR_LOAD(av[h], a + i * lda + h * KR_VL);
        const double *bi = b + i * ldb;
#pragma GCC unroll 16
        for (int t = 0; t < W; t++) {
            const double x = bi[t];
#pragma GCC unroll 4
            for (int h = 0; h < KR_NH; h++) acc[t * KR_NH + h] += av[h] * x;
        }
    }
#pragma GCC unroll 16
    for (int t = 0; t < W * KR_NH; t++) part[t] = acc[t];
}

/* c[l][t] := sum over i ascending of a[i][l] b[i][t] for the G tiles of 8
 * columns at a (lanes; the first nk columns stored) and the W columns of b.
 * The rows run in blocks of KR_TNIB, every tile of the group within a block
 * (the group's lines of those rows stay in cache between tiles); a partial
 * sum kept in memory between blocks is the same double. */
KR_ATTR static void KR_FN(kr_tn_pass)(int W, int G, int64_t n, const double *a, int64_t lda, const double *b,
                                      int64_t ldb, int64_t nk, double *c, int64_t ldc) {
    KR_VN part[KR_TNG][16 * KR_NH];
    for (int g = 0; g < G; g++)
        for (int t = 0; t < W * KR_NH; t++) part[g][t] = (KR_VN){0.0};
    for (int64_t i0 = 0; i0 < n; i0 += KR_TNIB) {
        const int64_t i1 = i0 + KR_TNIB < n ? i0 + KR_TNIB : n;
        for (int g = 0; g < G; g++) {
            const double *ag = a + 8 * g;
            switch (W) {
#define KR_TN_CASE(WW)                                                                                                \
    case WW:                                                                                                          \
        KR_FN(kr_tn_acc)(WW, i0, i1, ag, lda, b, ldb, part[g]);                                                       \
        break;
                KR_TN_CASE(1)
                KR_TN_CASE(2)
                KR_TN_CASE(3)
#if KR_TNW >= 4
                KR_TN_CASE(4)
#endif
#if KR_TNW >= 5
                KR_TN_CASE(5)
                KR_TN_CASE(6)
#endif
#if KR_TNW >= 7
                KR_TN_CASE(7)
                KR_TN_CASE(8)
                KR_TN_CASE(9)
                KR_TN_CASE(10)
                KR_TN_CASE(11)
                KR_TN_CASE(12)
                KR_TN_CASE(13)
                KR_TN_CASE(14)
                KR_TN_CASE(15)
                KR_TN_CASE(16)
#endif
#undef KR_TN_CASE
            default:
                break;
            }
        }
    }
    for (int g = 0; g < G; g++) {
        const int64_t ng = nk - 8 * g < 8 ? nk - 8 * g : 8;
        for (int t = 0; t < W; t++) {
            double o[8];
            memcpy(o, &part[g][t * KR_NH], sizeof o);
            for (int64_t l = 0; l < ng; l++) c[(8 * g + l) * ldc + t] = o[l];
        }
    }
}

/* The rows k0..k0+8 KR_TNG-1 (those below ka) of c := a^T b, every column of
 * b, in passes of at most KR_TNW columns of near-equal width. */
KR_ATTR static void KR_FN(kr_tn_tile)(const kr_prod *p, int64_t k0) {
    const int64_t nk = p->ka - k0 < 8 * KR_TNG ? p->ka - k0 : 8 * KR_TNG;
    const int G = (int)((nk + 7) / 8);
    const int64_t passes = (p->kb + KR_TNW - 1) / KR_TNW;
    for (int64_t q0 = 0, r = 0; r < passes; r++) {
        const int64_t w = (p->kb - q0 + (passes - r) - 1) / (passes - r);
        KR_FN(kr_tn_pass)((int)w, G, p->n, p->a + k0, p->lda, p->b + q0, p->ldb, nk, p->c + k0 * p->ldc + q0, p->ldc);
        q0 += w;
    }
}

/* Rows i of t = a b for R rows from row 0 of a (its element k of row r:
 * AIK), the V groups of 8 columns at b (lanes; the first nq stored): t[q] =
 * sum over k ascending of a[i][k] b[k][q]; then c := t (mode 1) or c := c - t
 * (mode 2). */
#define KR_NN_BODY(R, V, AIK)                                                                                         \
    do {                                                                                                              \
        KR_VN acc[R][V * KR_NH];                                                                                      \
        _Pragma("GCC unroll 8") for (int r = 0; r < R; r++) _Pragma("GCC unroll 8") for (int u = 0; u < V * KR_NH;    \
                                                                                        u++) acc[r][u] = (KR_VN){0.0}; \
        for (int64_t k = 0; k < ka; k++) {                                                                            \
            KR_VN bv[V * KR_NH];                                                                                      \
            _Pragma("GCC unroll 8") for (int u = 0; u < V * KR_NH; u++) KR_LOAD(bv[u], b + k * ldb + u * KR_VL);      \
            _Pragma("GCC unroll 8") for (int r = 0; r < R; r++) {                                                     \
                const double x = (AIK);                                                                               \
                _Pragma("GCC unroll 8") for (int u = 0; u < V * KR_NH; u++) acc[r][u] += x * bv[u];                   \
            }                                                                                                         \
        }                                                                                                             \
        for (int r = 0; r < R; r++) {                                                                                 \
            double o[8 * V];                                                                                          \
            memcpy(o, acc[r], sizeof o);                                                                              \
            double *cr = c + r * ldc;                                                                                 \
            if (mode == 1)                                                                                            \
                for (int64_t l = 0; l < nq; l++) cr[l] = o[l];                                                        \
            else                                                                                                      \
                for (int64_t l = 0; l < nq; l++) cr[l] -= o[l];                                                       \
        }                                                                                                             \
    } while (0)

KR_ATTR static void KR_FN(kr_nn_d)(int mode, const double *a, int64_t lda, int64_t ka, const double *b, int64_t ldb,
                                   int64_t nq, double *c, int64_t ldc) {
    KR_NN_BODY(KR_NNR, KR_NNV, a[r * lda + k]);
}

KR_ATTR static void KR_FN(kr_nn_d1)(int mode, const double *a, int64_t lda, int64_t ka, const double *b, int64_t ldb,
                                    int64_t nq, double *c, int64_t ldc) {
    KR_NN_BODY(1, KR_NNV, a[r * lda + k]);
}

KR_ATTR static void KR_FN(kr_nn_f)(int mode, const float *a, int64_t lda, int64_t ka, const double *b, int64_t ldb,
                                   int64_t nq, double *c, int64_t ldc) {
    KR_NN_BODY(KR_NNR, KR_NNV, (double)a[r * lda + k]);
}

KR_ATTR static void KR_FN(kr_nn_f1)(int mode, const float *a, int64_t lda, int64_t ka, const double *b, int64_t ldb,
                                    int64_t nq, double *c, int64_t ldc) {
    KR_NN_BODY(1, KR_NNV, (double)a[r * lda + k]);
}

/* Rows i0..i1-1 of c := a b or c -= a b (kr_prod; a float where af). */
KR_ATTR static void KR_FN(kr_nn_rows)(const kr_prod *p, const float *af, int64_t i0, int64_t i1) {
    for (int64_t q0 = 0; q0 < p->kb; q0 += 8 * KR_NNV) {
        const int64_t nq = p->kb - q0 < 8 * KR_NNV ? p->kb - q0 : 8 * KR_NNV;
        const double *b = p->b + q0;
        int64_t i = i0;
        if (af) {
            for (; i + KR_NNR <= i1; i += KR_NNR)
                KR_FN(kr_nn_f)(p->mode, af + i * p->lda, p->lda, p->ka, b, p->ldb, nq, p->c + i * p->ldc + q0, p->ldc);
            for (; i < i1; i++)
                KR_FN(kr_nn_f1)(p->mode, af + i * p->lda, p->lda, p->ka, b, p->ldb, nq, p->c + i * p->ldc + q0, p->ldc);
        } else {
            for (; i + KR_NNR <= i1; i += KR_NNR)
                KR_FN(kr_nn_d)(p->mode, p->a + i * p->lda, p->lda, p->ka, b, p->ldb, nq, p->c + i * p->ldc + q0,
                               p->ldc);
            for (; i < i1; i++)
                KR_FN(kr_nn_d1)(p->mode, p->a + i * p->lda, p->lda, p->ka, b, p->ldb, nq, p->c + i * p->ldc + q0,
                                p->ldc);
        }
    }
}

/* Rows i0..i1-1 of y = M x for a sparse M: y[i][q] = sum over its nonzeros
 * (column ascending) of m_ij x[j][q]. */
KR_ATTR static void KR_FN(kr_mv_sparse)(const kr_mv *p, int64_t i0, int64_t i1) {
    for (int64_t q0 = 0; q0 < p->b; q0 += 8 * KR_NNV) {
        const int64_t nq = p->b - q0 < 8 * KR_NNV ? p->b - q0 : 8 * KR_NNV;
        for (int64_t i = i0; i < i1; i++) {
            KR_VN acc[KR_NNV * KR_NH];
#pragma GCC unroll 8
            for (int u = 0; u < KR_NNV * KR_NH; u++) acc[u] = (KR_VN){0.0};
            for (int64_t e = p->m->rp[i]; e < p->m->rp[i + 1]; e++) {
                const double mij = (double)p->m->cv[e];
                const double *xj = p->x + (int64_t)p->m->ci[e] * p->ldx + q0;
#pragma GCC unroll 8
                for (int u = 0; u < KR_NNV * KR_NH; u++) {
                    KR_VN xv;
                    KR_LOAD(xv, xj + u * KR_VL);
                    acc[u] += mij * xv;
                }
            }
            double o[8 * KR_NNV];
            memcpy(o, acc, sizeof o);
            for (int64_t l = 0; l < nq; l++) p->y[i * p->ldy + q0 + l] = o[l];
        }
    }
}

/* The update of a Householder step on one row (kr_tri): a_ij := a_ij -
 * (v_i w_j + w_i v_j) on columns lo... */
KR_AI void KR_FN(kr_hh_update)(const kr_tri *s, int64_t row) {
    const int64_t m = s->k - s->lo, r = row - s->lo;
    double *restrict ai = s->a + row * s->k + s->lo;
    const double *restrict w = s->w, *restrict v = s->v;
    const double vi = v[r], wi = w[r];
    int64_t j = 0;
    for (; j + KR_VL <= m; j += KR_VL) {
        KR_VN aa, ww, vv;
        KR_LOAD(aa, ai + j);
        KR_LOAD(ww, w + j);
        KR_LOAD(vv, v + j);
        aa = aa - (vi * ww + wi * vv);
        KR_STORE(ai + j, aa);
    }
    for (; j < m; j++) ai[j] = ai[j] - (vi * w[j] + wi * v[j]);
}

/* The next step's p_i = taun * sum of a_ij vn_j on columns dlo.. for the R
 * rows from row: four lanes j mod 4 over the full groups of four (the rest
 * into lane 0), j ascending in each, then (l0 + l1) + (l2 + l3); the rows'
 * sums side by side. */
KR_AI void KR_FN(kr_hh_dot)(const int R, const kr_tri *s, int64_t row) {
    const int64_t m = s->k - s->dlo;
    const double *restrict vn = s->vn;
    const double *ar[4];
    kr_v4 l[4];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) ar[r] = s->a + (row + r) * s->k + s->dlo, l[r] = (kr_v4){0.0, 0.0, 0.0, 0.0};
    int64_t j = 0;
    for (; j + 4 <= m; j += 4) {
        kr_v4 vv;
        KR_LOAD(vv, vn + j);
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            kr_v4 aa;
            KR_LOAD(aa, ar[r] + j);
            l[r] += aa * vv;
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
        double o[4];
        KR_STORE(o, l[r]);
        for (int64_t jj = j; jj < m; jj++) o[0] += ar[r][jj] * vn[jj];
        s->p[row + r - s->dlo] = s->taun * ((o[0] + o[1]) + (o[2] + o[3]));
    }
}

/* Rows r0..r1-1 of a Householder step (kr_tri): this step's update (where
 * s->w), then the next step's p (where s->vn, rows from dlo), four rows at a
 * time while they are in cache. */
KR_ATTR static void KR_FN(kr_hh_rows)(const kr_tri *s, int64_t r0, int64_t r1) {
    for (int64_t g = r0; g < r1; g += 4) {
        const int64_t ge = g + 4 < r1 ? g + 4 : r1;
        if (s->w)
            for (int64_t r = g; r < ge; r++) KR_FN(kr_hh_update)(s, r);
        if (!s->vn) continue;
        int64_t r = g > s->dlo ? g : s->dlo;
        if (ge - r == 4) KR_FN(kr_hh_dot)(4, s, r);
        else
            for (; r < ge; r++) KR_FN(kr_hh_dot)(1, s, r);
    }
}

/* x[i] := x[i] - sum over k ascending of qt[k][i] c[k] (qt: kq rows of n),
 * rows i in the lanes, 16 at a time. */
KR_ATTR static void KR_FN(kr_colsub)(int64_t n, const double *qt, int64_t kq, const double *c, double *x) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        KR_VN s[2 * KR_NH], a;
#pragma GCC unroll 8
        for (int u = 0; u < 2 * KR_NH; u++) s[u] = (KR_VN){0.0};
        for (int64_t k = 0; k < kq; k++) {
            const double ck = c[k];
#pragma GCC unroll 8
            for (int u = 0; u < 2 * KR_NH; u++) {
                KR_LOAD(a, qt + k * n + i + u * KR_VL);
                s[u] += a * ck;
            }
        }
#pragma GCC unroll 8
        for (int u = 0; u < 2 * KR_NH; u++) {
            KR_LOAD(a, x + i + u * KR_VL);
            a -= s[u];
            KR_STORE(x + i + u * KR_VL, a);
        }
    }
    for (; i < n; i++) {
        double s = 0.0;
        for (int64_t k = 0; k < kq; k++) s += qt[k * n + i] * c[k];
        x[i] -= s;
    }
}

/* The rotations in reverse, then the reflectors, on NC groups of 8 lanes at
 * z (rows of ld lanes), lane by lane the operations of sb_eigh_top_f64 on
 * one vector. A rotation's row i is carried in registers to the next one
 * (whose row i+1 it is within a sweep), the same values as the stored ones. */
KR_AI void KR_FN(kr_vecs_run)(const int NC, int64_t k, int64_t ld, const kr_rot *rot, int64_t nrot, const double *vs,
                              const double *tau, double *z) {
    KR_VN car[2 * KR_NH];
#pragma GCC unroll 8
    for (int u = 0; u < NC * KR_NH; u++) car[u] = (KR_VN){0.0};
    int64_t crow = -1;
    for (int64_t r = nrot - 1; r >= 0; r--) {
        const int64_t i = rot[r].k;
        double *zi = z + i * ld, *zj = zi + ld;
        const double rc = rot[r].c, rs = rot[r].s;
#pragma GCC unroll 8
        for (int u = 0; u < NC * KR_NH; u++) {
            KR_VN a0, b0;
            if (crow == i) a0 = car[u];
            else KR_LOAD(a0, zi + u * KR_VL);
            if (crow == i + 1) b0 = car[u];
            else KR_LOAD(b0, zj + u * KR_VL);
            const KR_VN ni = rc * a0 + rs * b0, nj = rc * b0 - rs * a0;
            KR_STORE(zi + u * KR_VL, ni);
            KR_STORE(zj + u * KR_VL, nj);
            car[u] = ni;
        }
        crow = i;
    }
    for (int64_t j = k - 3; j >= 0; j--) {
        if (tau[j] == 0.0) continue;
        const double *v = vs + j * k, tj = tau[j];
        double *zr = z + (j + 1) * ld;
        const int64_t m = k - j - 1;
        KR_VN s[2 * KR_NH], zv;
#pragma GCC unroll 8
        for (int u = 0; u < NC * KR_NH; u++) s[u] = (KR_VN){0.0};
        for (int64_t r = 0; r < m; r++) {
            const double vr = v[r];
#pragma GCC unroll 8
            for (int u = 0; u < NC * KR_NH; u++) {
                KR_LOAD(zv, zr + r * ld + u * KR_VL);
                s[u] += vr * zv;
            }
        }
#pragma GCC unroll 8
        for (int u = 0; u < NC * KR_NH; u++) s[u] *= tj;
        for (int64_t r = 0; r < m; r++) {
            const double vr = v[r];
#pragma GCC unroll 8
            for (int u = 0; u < NC * KR_NH; u++) {
                KR_LOAD(zv, zr + r * ld + u * KR_VL);
                zv -= s[u] * vr;
                KR_STORE(zr + r * ld + u * KR_VL, zv);
            }
        }
    }
}

/* kr_vecs_run over the lanes of z (ld, a multiple of 8), 16 at a time. */
KR_ATTR static void KR_FN(kr_vecs)(int64_t k, int64_t ld, const kr_rot *rot, int64_t nrot, const double *vs,
                                   const double *tau, double *z) {
    for (int64_t l = 0; l < ld; l += 16) {
        if (l + 8 < ld) KR_FN(kr_vecs_run)(2, k, ld, rot, nrot, vs, tau, z + l);
        else KR_FN(kr_vecs_run)(1, k, ld, rot, nrot, vs, tau, z + l);
    }
}

#undef KR_NN_BODY
#undef KR_AI
#undef KR_NH
#undef KR_VN
#undef KR_FN
#undef KR_CAT
#undef KR_CAT2
#undef KR_SUF
#undef KR_ATTR
#undef KR_VL
#undef KR_TNW
#undef KR_NNR
#undef KR_NNV
