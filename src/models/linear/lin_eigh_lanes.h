/*
 * lin_eigh_lanes.h: the parallel pieces of lin_eigh.c, included there once per
 * instruction set with EG_SUF (the name suffix), EG_ATTR (the function
 * attribute: empty, or a target) and EG_VL (floats in one vector: 4, 8 or
 * 16) defined; not a header of its own. It undefines its parameters at its
 * end, so the includer defines them and nothing else.
 *
 * Each lane is one element's own sequence of IEEE multiplies and adds (no
 * contraction under the profile's flags), the sequence the plain scalar loop
 * gives that element; the tail past the last whole vector runs that scalar
 * loop. So the lane width and the instruction set decide only which
 * elements share an instruction, never a bit (tests/unit/test_lin_eigh.c
 * runs every variant the machine has).
 */
#define EG_CAT2(a, b) a##_##b
#define EG_CAT(a, b) EG_CAT2(a, b)
#define EG_FN(name) EG_CAT(name, EG_SUF)
#define EG_V EG_FN(eg_v)
#define EG_AI EG_ATTR static inline __attribute__((always_inline))

typedef float EG_V __attribute__((vector_size(4 * EG_VL)));

EG_AI EG_V EG_FN(eg_ld)(const float *p) {
    EG_V v;
    memcpy(&v, p, sizeof v);
    return v;
}
EG_AI void EG_FN(eg_st)(float *p, EG_V v) { memcpy(p, &v, sizeof v); }
EG_AI EG_V EG_FN(eg_bc)(float x) {
    EG_V v;
    for (int i = 0; i < EG_VL; i++) v[i] = x;
    return v;
}

/* out[i] = sum_{k >= lo} a[i][k] v[k] for rows i >= lo, k ascending. The
 * trailing matrix is exactly symmetric (built from one triangle; every update
 * adds v_i w_k + w_i v_k, which equals v_k w_i + w_k v_i bit for bit), so
 * a[i][k] is read as a[k][i]: rows k are read across the task's i, EG_VL sums
 * in a vector, each still the sequential sum over k ascending. */
EG_ATTR static void EG_FN(matvec_task)(void *ctx, int64_t task) {
    const matvec_job *j = ctx;
    const int64_t n = j->n, lo = j->lo;
    int64_t b, e;
    sb_chunk_range(n - lo, EIG_COL_GRAIN, task, &b, &e);
    const int64_t ib = lo + b, ie = lo + e, nv = (ie - ib) / EG_VL;
    EG_V acc[EIG_COL_GRAIN / EG_VL];
    float tail[EG_VL];
    for (int64_t q = 0; q < nv; q++) acc[q] = EG_FN(eg_bc)(0.0f);
    for (int64_t q = 0; q < EG_VL; q++) tail[q] = 0.0f;
#ifdef SB_SABOTAGE_LIN_DOT
    /* the lin-dot arm: these sums in the opposite order */
    for (int64_t k = n - 1; k >= lo; k--) {
#else
    for (int64_t k = lo; k < n; k++) {
#endif
        const float *r = j->a + k * j->ld + ib;
        const float vk = j->v[k];
        const EG_V vv = EG_FN(eg_bc)(vk);
        for (int64_t q = 0; q < nv; q++) acc[q] = acc[q] + EG_FN(eg_ld)(r + EG_VL * q) * vv;
        for (int64_t i = ib + EG_VL * nv; i < ie; i++)
            tail[i - ib - EG_VL * nv] = tail[i - ib - EG_VL * nv] + r[i - ib] * vk;
    }
    for (int64_t q = 0; q < nv; q++) EG_FN(eg_st)(j->out + ib + EG_VL * q, acc[q]);
    for (int64_t i = ib + EG_VL * nv; i < ie; i++) j->out[i] = tail[i - ib - EG_VL * nv];
}

/* a[i][j] -= v_i w_j + w_i v_j for i, j >= lo (rows split over tasks). */
EG_ATTR static void EG_FN(rank2_task)(void *ctx, int64_t task) {
    const rank2_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n - j->lo, EIG_COL_GRAIN, task, &b, &e);
    const int64_t lo = j->lo, n = j->n, kv = lo + (n - lo) / EG_VL * EG_VL;
    for (int64_t i = lo + b; i < lo + e; i++) {
        float *r = j->a + i * j->ld;
        const float vi = j->v[i], wi = j->w[i];
        const EG_V bvi = EG_FN(eg_bc)(vi), bwi = EG_FN(eg_bc)(wi);
        for (int64_t k = lo; k < kv; k += EG_VL)
            EG_FN(eg_st)(r + k, EG_FN(eg_ld)(r + k) - (bvi * EG_FN(eg_ld)(j->w + k) + bwi * EG_FN(eg_ld)(j->v + k)));
        for (int64_t k = kv; k < n; k++) r[k] = r[k] - (vi * j->w[k] + wi * j->v[k]);
    }
}

/* Q = H_0 H_1 ... H_{n-3} applied to I from the last reflector back, for the
 * columns of one task: for each column c, each reflector k in turn does
 * q[lo.., c] -= tau v (v . q[lo.., c]) (lo = k + 1, the sum over rows
 * ascending), one fixed sequence per column, so the split over columns
 * decides no bit. A column c < lo is zero (+0) in rows lo.. at that point
 * (rows lo.. of I, touched before only by reflectors acting on rows past lo),
 * and a finite reflector keeps it +0 (a sum of +-0 from +0 is +0, and +0 - +-0
 * is +0): such columns are skipped, exactly what computing them gives. */
EG_ATTR static void EG_FN(qform_task)(void *ctx, int64_t task) {
    const qform_job *j = ctx;
    const int64_t n = j->n;
    int64_t b, e;
    /* the last columns meet the most reflectors: handed out first */
    sb_chunk_range(n, EIG_COL_GRAIN, sb_chunk_count(n, EIG_COL_GRAIN) - 1 - task, &b, &e);
    float s[EIG_COL_GRAIN];
    for (int64_t k = n - 3; k >= 0; k--) {
        const float tau = j->taus[k];
        if (tau == 0.0f) continue;
        const int64_t lo = k + 1, cb = j->fin[k] && b < lo ? lo : b;
        if (cb >= e) continue;
        const float *v = j->V + k * n;
        /* columns [cb, cv) EG_VL at a time (vectors), the rest one by one */
        const int64_t nv = (e - cb) / EG_VL, cv = cb + EG_VL * nv;
        EG_V sv[EIG_COL_GRAIN / EG_VL];
        for (int64_t q = 0; q < nv; q++) sv[q] = EG_FN(eg_bc)(0.0f);
        for (int64_t c = cv; c < e; c++) s[c - b] = 0.0f;
        for (int64_t i = lo; i < n; i++) {
            const float vi = v[i];
            const EG_V bv = EG_FN(eg_bc)(vi);
            const float *r = j->q + i * j->ld;
            for (int64_t q = 0; q < nv; q++) sv[q] = sv[q] + bv * EG_FN(eg_ld)(r + cb + EG_VL * q);
            for (int64_t c = cv; c < e; c++) s[c - b] = s[c - b] + vi * r[c];
        }
        const EG_V bt = EG_FN(eg_bc)(tau);
        for (int64_t q = 0; q < nv; q++) sv[q] = bt * sv[q];
        for (int64_t c = cv; c < e; c++) s[c - b] = tau * s[c - b];
        for (int64_t i = lo; i < n; i++) {
            const float vi = v[i];
            const EG_V bv = EG_FN(eg_bc)(vi);
            float *r = j->q + i * j->ld;
            for (int64_t q = 0; q < nv; q++)
                EG_FN(eg_st)(r + cb + EG_VL * q, EG_FN(eg_ld)(r + cb + EG_VL * q) - sv[q] * bv);
            for (int64_t c = cv; c < e; c++) r[c] = r[c] - s[c - b] * vi;
        }
    }
}

/* Each element r of the columns gets the kept rotations in their order (the
 * sequential order of tql2 for that row of z: rows never interact, so the
 * split over r decides nothing); the columns are stored as rows, so the
 * inner loops run over contiguous r, ROT_W of them at a time. A sweep's
 * rotations act on columns (i, i + 1) with i descending by one, so column
 * i's new values are the next rotation's second operand: they stay in
 * registers (carry) and each rotation loads one column and stores one. The
 * arithmetic of every element is tql2's, unchanged. */
EG_ATTR static void EG_FN(rot_task)(void *ctx, int64_t task) {
    const rot_job *j = ctx;
    const int64_t n = j->n;
    int64_t b, e;
    sb_chunk_range(n, EIG_ROT_GRAIN, task, &b, &e);
    for (int64_t r0 = b; r0 < e; r0 += ROT_W) {
        const int64_t w = e - r0 < ROT_W ? e - r0 : ROT_W;
        float carry[ROT_W];
        int64_t cur = -1; /* the column whose values carry holds */
        for (int64_t t = 0; t < j->nrot; t++) {
            const int64_t i = j->col[t];
            float *zi = j->zt + i * j->ld + r0, *zk = zi + j->ld;
            if (cur != i + 1) {
                if (cur >= 0) memcpy(j->zt + cur * j->ld + r0, carry, sizeof(float) * (size_t)w);
                memcpy(carry, zk, sizeof(float) * (size_t)w);
            }
            const float c = j->cs[t], s = j->sn[t];
            if (w == ROT_W) {
                const EG_V bc = EG_FN(eg_bc)(c), bs = EG_FN(eg_bc)(s);
                for (int64_t q = 0; q < ROT_W; q += EG_VL) {
                    const EG_V f = EG_FN(eg_ld)(carry + q), x = EG_FN(eg_ld)(zi + q);
                    EG_FN(eg_st)(zk + q, bs * x + bc * f);
                    EG_FN(eg_st)(carry + q, bc * x - bs * f);
                }
            } else {
                for (int64_t q = 0; q < w; q++) {
                    const float f = carry[q], x = zi[q];
                    zk[q] = s * x + c * f;
                    carry[q] = c * x - s * f;
                }
            }
            cur = i;
        }
        if (cur >= 0) memcpy(j->zt + cur * j->ld + r0, carry, sizeof(float) * (size_t)w);
    }
}

#undef EG_CAT2
#undef EG_CAT
#undef EG_FN
#undef EG_V
#undef EG_AI
#undef EG_SUF
#undef EG_ATTR
#undef EG_VL
