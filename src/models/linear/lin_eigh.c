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
#define EIG_ROT_GRAIN 256

/* ---- parallel pieces: each task owns whole rows or columns ---- */

typedef struct matvec_job {
    const float *a; /* n x n, row-major */
    const float *v; /* the reflector, nonzero from index lo */
    float *out;
    int64_t n, lo;
} matvec_job;

/* out[i] = sum_{j >= lo} a[i][j] v[j] for rows i >= lo, j ascending. */
static void matvec_task(void *ctx, int64_t task) {
    const matvec_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n - j->lo, EIG_COL_GRAIN, task, &b, &e);
    for (int64_t i = j->lo + b; i < j->lo + e; i++) {
        const float *r = j->a + i * j->n;
        float s = 0.0f;
#ifdef SB_SABOTAGE_LIN_DOT
        /* the lin-dot arm: this sum in the opposite order */
        for (int64_t k = j->n - 1; k >= j->lo; k--) s = s + r[k] * j->v[k];
#else
        for (int64_t k = j->lo; k < j->n; k++) s = s + r[k] * j->v[k];
#endif
        j->out[i] = s;
    }
}

typedef struct rank2_job {
    float *a;
    const float *v, *w;
    int64_t n, lo;
} rank2_job;

/* a[i][j] -= v_i w_j + w_i v_j for i, j >= lo (rows split over tasks). */
static void rank2_task(void *ctx, int64_t task) {
    const rank2_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n - j->lo, EIG_COL_GRAIN, task, &b, &e);
    for (int64_t i = j->lo + b; i < j->lo + e; i++) {
        float *r = j->a + i * j->n;
        const float vi = j->v[i], wi = j->w[i];
        for (int64_t k = j->lo; k < j->n; k++) r[k] = r[k] - (vi * j->w[k] + wi * j->v[k]);
    }
}

typedef struct reflect_job {
    float *q;        /* n x n: columns are updated, rows lo.. are touched */
    const float *v;
    float tau;
    int64_t n, lo;
} reflect_job;

/* For each column c of the task: q[lo.., c] -= tau v (v . q[lo.., c]), the sum
 * over rows ascending (rows outer, so the columns of a row are read together). */
static void reflect_task(void *ctx, int64_t task) {
    const reflect_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n, EIG_COL_GRAIN, task, &b, &e);
    float s[EIG_COL_GRAIN];
    for (int64_t c = b; c < e; c++) s[c - b] = 0.0f;
    for (int64_t i = j->lo; i < j->n; i++) {
        const float vi = j->v[i];
        const float *r = j->q + i * j->n;
        for (int64_t c = b; c < e; c++) s[c - b] = s[c - b] + vi * r[c];
    }
    for (int64_t c = b; c < e; c++) s[c - b] = j->tau * s[c - b];
    for (int64_t i = j->lo; i < j->n; i++) {
        const float vi = j->v[i];
        float *r = j->q + i * j->n;
        for (int64_t c = b; c < e; c++) r[c] = r[c] - s[c - b] * vi;
    }
}

typedef struct rot_job {
    float *zt;            /* n x n, transposed: zt[i][r] is element r of column i */
    const float *cs, *sn; /* the sweep's rotations, in order */
    const int32_t *col;   /* rotation t acts on columns col[t] and col[t] + 1 */
    int64_t n, nrot;
} rot_job;

/* Each element r of the columns gets the sweep's rotations in their order (the
 * sequential order of tql2 for that row of z: rows never interact, so the
 * split over r decides nothing); the columns are stored as rows, so the
 * inner loop runs over contiguous r. */
static void rot_task(void *ctx, int64_t task) {
    const rot_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n, EIG_ROT_GRAIN, task, &b, &e);
    for (int64_t t = 0; t < j->nrot; t++) {
        float *zi = j->zt + (int64_t)j->col[t] * j->n, *zk = zi + j->n;
        const float c = j->cs[t], s = j->sn[t];
        for (int64_t r = b; r < e; r++) {
            const float f = zk[r];
            zk[r] = s * zi[r] + c * f;
            zi[r] = c * zi[r] - s * f;
        }
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
    float *a = sb_malloc(sizeof(float) * (size_t)(n * n)), *u = sb_malloc(sizeof(float) * (size_t)n);
    float *pv = sb_malloc(sizeof(float) * (size_t)n), *d = sb_malloc(sizeof(float) * (size_t)n);
    float *e = sb_malloc(sizeof(float) * (size_t)n), *taus = sb_malloc(sizeof(float) * (size_t)n);
    float *V = sb_malloc(sizeof(float) * (size_t)(n * n)); /* the reflectors, row k = v of step k */
    float *cs = sb_malloc(sizeof(float) * (size_t)n), *sn = sb_malloc(sizeof(float) * (size_t)n);
    int32_t *col = sb_malloc(sizeof(int32_t) * (size_t)n), *ord = sb_malloc(sizeof(int32_t) * (size_t)n);
    float *z = v;
    sb_status st = SB_OK;
    if (!a || !u || !pv || !d || !e || !taus || !V || !cs || !sn || !col || !ord) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "eigh: out of memory for %lld x %lld", (long long)n, (long long)n);
        goto done;
    }
    /* the full symmetric matrix from its lower triangle */
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j <= i; j++) a[i * n + j] = a[j * n + i] = a_in[i * n + j];
    memset(V, 0, sizeof(float) * (size_t)(n * n));
    /* 1. Householder: step k zeroes a[k+2.., k] with H = I - tau v v^T, v[k+1] = 1 */
    for (int64_t k = 0; k + 2 < n; k++) {
        const int64_t lo = k + 1;
        float alpha = a[lo * n + k], ss = 0.0f;
        for (int64_t i = lo + 1; i < n; i++) ss = ss + a[i * n + k] * a[i * n + k];
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
        for (int64_t i = lo + 1; i < n; i++) vk[i] = a[i * n + k] / v0;
        /* p = tau A v (rows >= lo), w = p - (tau/2)(p . v) v, A -= v w^T + w v^T */
        matvec_job mj = {a, vk, pv, n, lo};
        sb_parallel_for(sb_chunk_count(n - lo, EIG_COL_GRAIN), matvec_task, &mj);
        float pdv = 0.0f;
        for (int64_t i = lo; i < n; i++) {
            pv[i] = taus[k] * pv[i];
            pdv = pdv + pv[i] * vk[i];
        }
        const float h = 0.5f * taus[k] * pdv;
        for (int64_t i = lo; i < n; i++) u[i] = pv[i] - h * vk[i];
        rank2_job rj = {a, vk, u, n, lo};
        sb_parallel_for(sb_chunk_count(n - lo, EIG_COL_GRAIN), rank2_task, &rj);
        /* the column and row k are now (.., beta, 0, ..) */
        a[lo * n + k] = a[k * n + lo] = beta;
        for (int64_t i = lo + 1; i < n; i++) a[i * n + k] = a[k * n + i] = 0.0f;
    }
    for (int64_t i = 0; i < n; i++) {
        d[i] = a[i * n + i];
        e[i] = i + 1 < n ? a[(i + 1) * n + i] : 0.0f;
    }
    /* Q = H_0 H_1 ... H_{n-3}: applied to I from the last reflector back */
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) z[i * n + j] = i == j ? 1.0f : 0.0f;
    for (int64_t k = n - 3; k >= 0; k--) {
        if (taus[k] == 0.0f) continue;
        reflect_job fj = {z, V + k * n, taus[k], n, k + 1};
        sb_parallel_for(sb_chunk_count(n, EIG_COL_GRAIN), reflect_task, &fj);
    }
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
        for (int64_t j = 0; j < n; j++) a[j * n + i] = z[i * n + j];
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
            int64_t nrot = 0, i;
            int underflow = 0;
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
            rot_job oj = {a, cs, sn, col, n, nrot};
            sb_parallel_for(sb_chunk_count(n, EIG_ROT_GRAIN), rot_task, &oj);
            if (underflow) continue;
            d[l] = d[l] - p;
            e[l] = g;
            e[m] = 0.0f;
        }
    }
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
        const float *vec = a + (int64_t)src * n;
        w[k] = d[src];
        float best = 0.0f;
        int64_t at = 0;
        for (int64_t i = 0; i < n; i++)
            if (fabsf(vec[i]) > best) best = fabsf(vec[i]), at = i;
        const float sg = vec[at] < 0.0f ? -1.0f : 1.0f;
        for (int64_t i = 0; i < n; i++) z[i * n + k] = sg * vec[i];
    }
done:
    sb_free(a);
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
    return st;
}
