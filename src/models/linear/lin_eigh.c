/*
 * lin_eigh.c: the symmetric eigensolver of the linear family's wide problems
 * (PCA's covariance, least squares' eigen path): Householder reduction to
 * tridiagonal form, then the implicit QL method with Wilkinson's shift
 * (the algorithms of Martin, Reinsch and Wilkinson, Numer. Math. 11, 1968, and
 * Bowdler, Martin, Reinsch and Wilkinson, Numer. Math. 11, 1968: EISPACK's
 * tred2 and tql2), in float32 in one fixed order.
 *
 * O(n^3) like the core's Jacobi method, but with a far smaller constant and
 * no sweeps: the core's row-cyclic Jacobi takes 29 s at n = 1024 on two cores.
 * Host code only, for every device: the fit is the same bits wherever its
 * products run. Every loop that is split over threads splits over independent
 * rows or columns (each element is one fixed sequence of operations whatever
 * the chunk), so the thread count reaches no bit. Dot products are sequential
 * float sums in index order (rule 4's fixed shape; no contraction).
 */
#include "linear.h"
#include <math.h>
#include <string.h>

#define EIG_COL_GRAIN 64
#define EIG_ROT_GRAIN 64
#define EIG_SERIAL_CELLS 65536

/* Four floats as one value (GCC and Clang vector extensions): each lane is
 * its own IEEE multiply or add, rounded once (no contraction under the
 * profile's flags), so a loop over lanes computes exactly what the scalar
 * loop over the same elements does; the compiler maps it to the machine's
 * vectors (SSE, AVX, NEON, z/Architecture) or to scalar code. */
typedef float v4f __attribute__((vector_size(16)));
static inline v4f ld4(const float *p) {
    v4f v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline void st4(float *p, v4f v) { memcpy(p, &v, sizeof v); }
static inline v4f bc4(float x) { return (v4f){x, x, x, x}; }

/* ---- parallel pieces: each task owns whole rows or columns ---- */

typedef struct matvec_job {
    const float *a; /* n x n, row-major */
    const float *v; /* the reflector, nonzero from index lo */
    float *out;
    int64_t n, lo, ld; /* ld: a's row stride */
} matvec_job;

/* out[i] = sum_{k >= lo} a[i][k] v[k] for rows i >= lo, k ascending. The
 * trailing matrix is exactly symmetric (built from one triangle; every update
 * adds v_i w_k + w_i v_k, which equals v_k w_i + w_k v_i bit for bit), so
 * a[i][k] is read as a[k][i]: rows k are read across the task's i, eight
 * sums in a vector, each still the sequential sum over k ascending. */
static void matvec_task(void *ctx, int64_t task) {
    const matvec_job *j = ctx;
    const int64_t n = j->n, lo = j->lo;
    int64_t b, e;
    sb_chunk_range(n - lo, EIG_COL_GRAIN, task, &b, &e);
    const int64_t ib = lo + b, ie = lo + e, nv = (ie - ib) / 4;
    v4f acc[EIG_COL_GRAIN / 4];
    float tail[4];
    for (int64_t q = 0; q < nv; q++) acc[q] = bc4(0.0f);
    for (int64_t q = 0; q < 4; q++) tail[q] = 0.0f;
#ifdef SB_SABOTAGE_LIN_DOT
    /* the lin-dot arm: these sums in the opposite order */
    for (int64_t k = n - 1; k >= lo; k--) {
#else
    for (int64_t k = lo; k < n; k++) {
#endif
        const float *r = j->a + k * j->ld + ib;
        const float vk = j->v[k];
        const v4f vv = bc4(vk);
        for (int64_t q = 0; q < nv; q++) acc[q] = acc[q] + ld4(r + 4 * q) * vv;
        for (int64_t i = ib + 4 * nv; i < ie; i++) tail[i - ib - 4 * nv] = tail[i - ib - 4 * nv] + r[i - ib] * vk;
    }
    for (int64_t q = 0; q < nv; q++) st4(j->out + ib + 4 * q, acc[q]);
    for (int64_t i = ib + 4 * nv; i < ie; i++) j->out[i] = tail[i - ib - 4 * nv];
}

typedef struct rank2_job {
    float *a;
    const float *v, *w;
    int64_t n, lo, ld;
} rank2_job;

/* a[i][j] -= v_i w_j + w_i v_j for i, j >= lo (rows split over tasks). */
static void rank2_task(void *ctx, int64_t task) {
    const rank2_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n - j->lo, EIG_COL_GRAIN, task, &b, &e);
    const int64_t lo = j->lo, n = j->n, kv = lo + (n - lo) / 4 * 4;
    for (int64_t i = lo + b; i < lo + e; i++) {
        float *r = j->a + i * j->ld;
        const float vi = j->v[i], wi = j->w[i];
        const v4f bvi = bc4(vi), bwi = bc4(wi);
        for (int64_t k = lo; k < kv; k += 4) st4(r + k, ld4(r + k) - (bvi * ld4(j->w + k) + bwi * ld4(j->v + k)));
        for (int64_t k = kv; k < n; k++) r[k] = r[k] - (vi * j->w[k] + wi * j->v[k]);
    }
}

typedef struct qform_job {
    float *q;            /* n x n, row-major: starts as I */
    const float *V;      /* row k: reflector k (nonzero from index k + 1) */
    const float *taus;   /* tau of each reflector (0: none) */
    const uint8_t *fin;  /* reflector k and its tau are finite */
    int64_t n, ld;       /* ld: q's row stride */
} qform_job;

/* Q = H_0 H_1 ... H_{n-3} applied to I from the last reflector back, for the
 * columns of one task: for each column c, each reflector k in turn does
 * q[lo.., c] -= tau v (v . q[lo.., c]) (lo = k + 1, the sum over rows
 * ascending), one fixed sequence per column, so the split over columns
 * decides no bit. A column c < lo is zero (+0) in rows lo.. at that point
 * (rows lo.. of I, touched before only by reflectors acting on rows past lo),
 * and a finite reflector keeps it +0 (a sum of +-0 from +0 is +0, and +0 - +-0
 * is +0): such columns are skipped, exactly what computing them gives. */
static void qform_task(void *ctx, int64_t task) {
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
        /* columns [cb, cv) four at a time (vectors), the rest one by one */
        const int64_t nv = (e - cb) / 4, cv = cb + 4 * nv;
        v4f sv[EIG_COL_GRAIN / 4];
        for (int64_t q = 0; q < nv; q++) sv[q] = bc4(0.0f);
        for (int64_t c = cv; c < e; c++) s[c - b] = 0.0f;
        for (int64_t i = lo; i < n; i++) {
            const float vi = v[i];
            const v4f bv = bc4(vi);
            const float *r = j->q + i * j->ld;
            for (int64_t q = 0; q < nv; q++) sv[q] = sv[q] + bv * ld4(r + cb + 4 * q);
            for (int64_t c = cv; c < e; c++) s[c - b] = s[c - b] + vi * r[c];
        }
        const v4f bt = bc4(tau);
        for (int64_t q = 0; q < nv; q++) sv[q] = bt * sv[q];
        for (int64_t c = cv; c < e; c++) s[c - b] = tau * s[c - b];
        for (int64_t i = lo; i < n; i++) {
            const float vi = v[i];
            const v4f bv = bc4(vi);
            float *r = j->q + i * j->ld;
            for (int64_t q = 0; q < nv; q++) st4(r + cb + 4 * q, ld4(r + cb + 4 * q) - sv[q] * bv);
            for (int64_t c = cv; c < e; c++) r[c] = r[c] - s[c - b] * vi;
        }
    }
}

typedef struct rot_job {
    float *zt;            /* n x n, transposed: zt[i][r] is element r of column i */
    const float *cs, *sn; /* the sweep's rotations, in order */
    const int32_t *col;   /* rotation t acts on columns col[t] and col[t] + 1 */
    int64_t n, nrot, ld;  /* ld: zt's row stride */
} rot_job;

/* Each element r of the columns gets the kept rotations in their order (the
 * sequential order of tql2 for that row of z: rows never interact, so the
 * split over r decides nothing); the columns are stored as rows, so the
 * inner loops run over contiguous r, ROT_W of them at a time. A sweep's
 * rotations act on columns (i, i + 1) with i descending by one, so column
 * i's new values are the next rotation's second operand: they stay in
 * registers (carry) and each rotation loads one column and stores one. The
 * arithmetic of every element is tql2's, unchanged. */
#define ROT_W 16
static void rot_task(void *ctx, int64_t task) {
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
                const v4f bc = bc4(c), bs = bc4(s);
                for (int64_t q = 0; q < ROT_W; q += 4) {
                    const v4f f = ld4(carry + q), x = ld4(zi + q);
                    st4(zk + q, bs * x + bc * f);
                    st4(carry + q, bc * x - bs * f);
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

/* sqrt(a^2 + b^2) without overflow or underflow, one fixed sequence. */
static float hypot_f(float a, float b) {
    const float x = fabsf(a), y = fabsf(b);
    const float big = x > y ? x : y, small = x > y ? y : x;
    if (big == 0.0f) return 0.0f;
    const float r = small / big;
    return big * sqrtf(1.0f + r * r);
}

sb_status sb_lin_eigh(int64_t n, const float *a_in, float *w, float *v) {
    /* the working matrices with rows padded to 64 bytes and 64-byte aligned,
     * so tasks that own neighbouring columns never share a cache line */
    const int64_t ld = (n + 15) / 16 * 16;
    void *a_raw = sb_malloc(sizeof(float) * (size_t)(n * ld) + 64), *q_raw = sb_malloc(sizeof(float) * (size_t)(n * ld) + 64);
    float *a = a_raw ? (float *)(((uintptr_t)a_raw + 63u) & ~(uintptr_t)63u) : NULL;
    float *qz = q_raw ? (float *)(((uintptr_t)q_raw + 63u) & ~(uintptr_t)63u) : NULL;
    float *u = sb_malloc(sizeof(float) * (size_t)n);
    float *pv = sb_malloc(sizeof(float) * (size_t)n), *d = sb_malloc(sizeof(float) * (size_t)n);
    float *e = sb_malloc(sizeof(float) * (size_t)n), *taus = sb_malloc(sizeof(float) * (size_t)n);
    float *V = sb_malloc(sizeof(float) * (size_t)(n * n)); /* the reflectors, row k = v of step k */
    int32_t *col = NULL, *ord = sb_malloc(sizeof(int32_t) * (size_t)n);
    uint8_t *fin = sb_malloc((size_t)n);
    /* the QL sweeps' rotations, kept and applied together (flushed when full) */
    const int64_t rcap = n * 8 > 65536 ? n * 8 : 65536;
    float *cs = sb_malloc(sizeof(float) * (size_t)rcap), *sn = sb_malloc(sizeof(float) * (size_t)rcap);
    col = sb_malloc(sizeof(int32_t) * (size_t)rcap);
    int64_t nrot = 0;
    float *z = v;
    sb_status st = SB_OK;
    if (!a || !qz || !u || !pv || !d || !e || !taus || !V || !cs || !sn || !col || !ord || !fin) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "eigh: out of memory for %lld x %lld", (long long)n, (long long)n);
        goto done;
    }
    double t0 = 0.0;
    sb_lin_phase(NULL, &t0);
    /* the full symmetric matrix from its lower triangle */
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j <= i; j++) a[i * ld + j] = a[j * ld + i] = a_in[i * n + j];
    memset(V, 0, sizeof(float) * (size_t)(n * n));
    /* 1. Householder: step k zeroes a[k+2.., k] with H = I - tau v v^T, v[k+1] = 1 */
    for (int64_t k = 0; k + 2 < n; k++) {
        const int64_t lo = k + 1;
        float alpha = a[lo * ld + k], ss = 0.0f;
        for (int64_t i = lo + 1; i < n; i++) ss = ss + a[i * ld + k] * a[i * ld + k];
        float *vk = V + k * n;
        if (ss == 0.0f) {
            taus[k] = 0.0f;
            continue;
        }
        const float norm = sqrtf(alpha * alpha + ss);
        const float beta = alpha > 0.0f ? -norm : norm;
        const float v0 = alpha - beta;
        taus[k] = (beta - alpha) / beta;
        vk[lo] = 1.0f;
        for (int64_t i = lo + 1; i < n; i++) vk[i] = a[i * ld + k] / v0;
        /* p = tau A v (rows >= lo), w = p - (tau/2)(p . v) v, A -= v w^T + w v^T */
        /* a trailing matrix of fewer than EIG_SERIAL_CELLS cells is a step
         * shorter than the pool's hand-off: one thread (no bit depends on it) */
        const int32_t width = (n - lo) * (n - lo) < EIG_SERIAL_CELLS ? 1 : SB_MAX_THREADS;
        matvec_job mj = {a, vk, pv, n, lo, ld};
        sb_parallel_for_width(sb_chunk_count(n - lo, EIG_COL_GRAIN), width, matvec_task, &mj);
        float pdv = 0.0f;
        for (int64_t i = lo; i < n; i++) {
            pv[i] = taus[k] * pv[i];
            pdv = pdv + pv[i] * vk[i];
        }
        const float h = 0.5f * taus[k] * pdv;
        for (int64_t i = lo; i < n; i++) u[i] = pv[i] - h * vk[i];
        rank2_job rj = {a, vk, u, n, lo, ld};
        sb_parallel_for_width(sb_chunk_count(n - lo, EIG_COL_GRAIN), width, rank2_task, &rj);
        /* the column and row k are now (.., beta, 0, ..) */
        a[lo * ld + k] = a[k * ld + lo] = beta;
        for (int64_t i = lo + 1; i < n; i++) a[i * ld + k] = a[k * ld + i] = 0.0f;
    }
    sb_lin_phase("eigh: Householder reduction", &t0);
    for (int64_t i = 0; i < n; i++) {
        d[i] = a[i * ld + i];
        e[i] = i + 1 < n ? a[(i + 1) * ld + i] : 0.0f;
    }
    /* Q = H_0 H_1 ... H_{n-3}: applied to I from the last reflector back */
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) qz[i * ld + j] = i == j ? 1.0f : 0.0f;
    for (int64_t k = 0; k + 2 < n; k++) { /* which reflectors keep a zero column zero */
        int ok = isfinite(taus[k]) != 0;
        for (int64_t i = k + 1; i < n && ok; i++) ok = isfinite(V[k * n + i]) != 0;
        fin[k] = (uint8_t)ok;
    }
    qform_job fj = {qz, V, taus, fin, n, ld};
    sb_parallel_for(sb_chunk_count(n, EIG_COL_GRAIN), qform_task, &fj);
    sb_lin_phase("eigh: Q", &t0);
    /* 2. implicit QL with Wilkinson's shift on (d, e), the rotations into z's columns
     * (tql2: e[i] couples d[i] and d[i + 1]), z held transposed in a. An e[m] is
     * negligible below 2^-24 of its two diagonal neighbours or of the matrix's norm
     * (the absolute test: eigenvalues far below the largest, down to subnormals,
     * would otherwise never deflate in float32) */
    float tnorm = 0.0f;
    for (int64_t i = 0; i < n; i++) {
        const float r = fabsf(d[i]) + fabsf(e[i]);
        if (r > tnorm) tnorm = r;
    }
    const float small_abs = 0x1p-24f * tnorm;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) a[j * ld + i] = qz[i * ld + j];
    for (int64_t l = 0; l < n; l++) {
        int32_t iter = 0;
        for (;;) {
            int64_t m = l;
            for (; m + 1 < n; m++) {
                const float dd = fabsf(d[m]) + fabsf(d[m + 1]);
                if (fabsf(e[m]) <= 0x1p-24f * dd || fabsf(e[m]) <= small_abs) break;
            }
            if (m == l) break;
            if (++iter > 60) {
                st = sb_fail(SB_ERR_LIMIT, "eigh: the QL iteration did not converge for eigenvalue %lld in 60 steps",
                             (long long)l);
                goto done;
            }
            float g = (d[l + 1] - d[l]) / (2.0f * e[l]);
            float r = hypot_f(g, 1.0f);
            g = d[m] - d[l] + e[l] / (g + (g >= 0.0f ? r : -r));
            float s = 1.0f, c = 1.0f, p = 0.0f;
            int64_t i;
            int underflow = 0;
            if (nrot + (m - l) > rcap) { /* room for this sweep's rotations */
                rot_job oj = {a, cs, sn, col, n, nrot, ld};
                sb_parallel_for(sb_chunk_count(n, EIG_ROT_GRAIN), rot_task, &oj);
                nrot = 0;
            }
            for (i = m - 1; i >= l; i--) {
                float f = s * e[i];
                const float b = c * e[i];
                r = hypot_f(f, g);
                e[i + 1] = r;
                if (r == 0.0f) {
                    d[i + 1] = d[i + 1] - p;
                    e[m] = 0.0f;
                    underflow = 1;
                    break;
                }
                s = f / r;
                c = g / r;
                g = d[i + 1] - p;
                r = (d[i] - g) * s + 2.0f * c * b;
                p = s * r;
                d[i + 1] = g + p;
                g = c * r - b;
                cs[nrot] = c;
                sn[nrot] = s;
                col[nrot] = (int32_t)i;
                nrot++;
            }
            if (underflow) continue;
            d[l] = d[l] - p;
            e[l] = g;
            e[m] = 0.0f;
        }
    }
    {
        rot_job oj = {a, cs, sn, col, n, nrot, ld};
        sb_parallel_for(sb_chunk_count(n, EIG_ROT_GRAIN), rot_task, &oj);
    }
    sb_lin_phase("eigh: QL", &t0);
    /* 3. descending order (ties: the lower index first), each vector's largest-magnitude
     * component positive (ties: the lowest index) */
    for (int64_t i = 0; i < n; i++) ord[i] = (int32_t)i;
    for (int64_t i = 1; i < n; i++) { /* insertion sort: stable, one order */
        const int32_t t = ord[i];
        int64_t j = i;
        while (j > 0 && d[ord[j - 1]] < d[t]) {
            ord[j] = ord[j - 1];
            j--;
        }
        ord[j] = t;
    }
    for (int64_t k = 0; k < n; k++) { /* a's row src is the vector of d[src] */
        const int32_t src = ord[k];
        const float *vec = a + (int64_t)src * ld;
        w[k] = d[src];
        float best = 0.0f;
        int64_t at = 0;
        for (int64_t i = 0; i < n; i++)
            if (fabsf(vec[i]) > best) best = fabsf(vec[i]), at = i;
        const float sg = vec[at] < 0.0f ? -1.0f : 1.0f;
        for (int64_t i = 0; i < n; i++) z[i * n + k] = sg * vec[i];
    }
done:
    sb_free(a_raw);
    sb_free(q_raw);
    sb_free(u);
    sb_free(pv);
    sb_free(d);
    sb_free(e);
    sb_free(taus);
    sb_free(V);
    sb_free(cs);
    sb_free(sn);
    sb_free(col);
    sb_free(ord);
    sb_free(fin);
    return st;
}
