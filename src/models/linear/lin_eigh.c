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
 * On a GPU (device=cuda|opencl) the Householder reduction, forming Q and
 * applying the QL rotations run as device kernels (kernels/linear.h: each
 * element's own operations in the host's order, so the host's bits;
 * cpu-batched runs those bodies on the host); the serial QL recurrence
 * (O(n^2)) and the ordering stay on the host, which computes the next batch of
 * rotations while the device applies the last.
 * Every loop that is split over threads splits over independent
 * rows or columns (each element is one fixed sequence of operations whatever
 * the chunk), so the thread count reaches no bit. Dot products are sequential
 * float sums in index order (rule 4's fixed shape; no contraction).
 */
#include "linear.h"
#include "../../device/device.h"
#include "../../kernels/linear.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EIG_COL_GRAIN 64
#define EIG_ROT_GRAIN 64
#define EIG_SERIAL_CELLS 65536

/* ---- parallel pieces: each task owns whole rows or columns ---- */

typedef struct matvec_job {
    const float *a; /* n x n, row-major */
    const float *v; /* the reflector, nonzero from index lo */
    float *out;
    int64_t n, lo, ld; /* ld: a's row stride */
} matvec_job;

typedef struct rank2_job {
    float *a;
    const float *v, *w;
    int64_t n, lo, ld;
} rank2_job;

typedef struct qform_job {
    float *q;            /* n x n, row-major: starts as I */
    const float *V;      /* row k: reflector k (nonzero from index k + 1) */
    const float *taus;   /* tau of each reflector (0: none) */
    const uint8_t *fin;  /* reflector k and its tau are finite */
    int64_t n, ld;       /* ld: q's row stride */
} qform_job;

typedef struct rot_job {
    float *zt;            /* n x n, transposed: zt[i][r] is element r of column i */
    const float *cs, *sn; /* the sweep's rotations, in order */
    const int32_t *col;   /* rotation t acts on columns col[t] and col[t] + 1 */
    int64_t n, nrot, ld;  /* ld: zt's row stride */
} rot_job;

#define ROT_W 16

/* The tasks in vectors of the machine's width (lin_eigh_lanes.h: every
 * variant gives the plain loops' bits), chosen at run time. */
#define EG_SUF gen
#define EG_ATTR
#define EG_VL 4
#include "lin_eigh_lanes.h"
#if defined(__x86_64__) && defined(__GNUC__)
#define EG_SUF avx2
#define EG_ATTR __attribute__((target("avx2")))
#define EG_VL 8
#include "lin_eigh_lanes.h"
#define EG_SUF avx512
#define EG_ATTR __attribute__((target("avx512f")))
#define EG_VL 16
#include "lin_eigh_lanes.h"
#endif

typedef struct eig_tasks {
    void (*matvec)(void *, int64_t), (*rank2)(void *, int64_t), (*qform)(void *, int64_t), (*rot)(void *, int64_t);
} eig_tasks;

/* The widest variant this CPU runs, or the one SAMEBITS_EIGH_LANES (gen,
 * avx2, avx512) caps it at, for tests that run every variant. */
static eig_tasks eig_pick(void) {
    eig_tasks t = {matvec_task_gen, rank2_task_gen, qform_task_gen, rot_task_gen};
#if defined(__x86_64__) && defined(__GNUC__)
    const char *cap = getenv("SAMEBITS_EIGH_LANES");
    __builtin_cpu_init();
    if (cap && !strcmp(cap, "gen")) return t;
    if (__builtin_cpu_supports("avx512f") && !(cap && !strcmp(cap, "avx2"))) {
        eig_tasks v = {matvec_task_avx512, rank2_task_avx512, qform_task_avx512, rot_task_avx512};
        return v;
    }
    if (__builtin_cpu_supports("avx2")) {
        eig_tasks v = {matvec_task_avx2, rank2_task_avx2, qform_task_avx2, rot_task_avx2};
        return v;
    }
#endif
    return t;
}

/* sqrt(a^2 + b^2) without overflow or underflow, one fixed sequence. */
static float hypot_f(float a, float b) {
    const float x = fabsf(a), y = fabsf(b);
    const float big = x > y ? x : y, small = x > y ? y : x;
    if (big == 0.0f) return 0.0f;
    const float r = small / big;
    return big * sqrtf(1.0f + r * r);
}

/* ---- the device road: kernels/linear.h's bodies, on a GPU or (cpu-batched) here ---- */

typedef struct eig_dev {
    sb_device_kind kind;
    sb_device *d; /* GPU kinds: the linalg device, its lock held for the whole eigh */
    sb_dbuf q, zt, V, taus, fin, cs, sn, col, go, pv, u, de;
    int timing;   /* SAMEBITS_LINEAR_TIMING=1: Q waited for, so its phase line is its time */
} eig_dev;

typedef struct kbody_job {
    float *m;
    const float *V, *taus, *cs, *sn;
    const uint8_t *fin;
    const int32_t *col;
    int64_t n, ld, nrot;
} kbody_job;

/* cpu-batched: the device's work-items, one column (qform) or one element
 * (rotations) each, chunked over the pool (each a fixed sequence). */
static void kqform_task(void *ctx, int64_t task) {
    const kbody_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n, EIG_COL_GRAIN, task, &b, &e);
    for (int64_t c = b; c < e; c++) sb_k_eigh_qform_col(j->m, j->n, j->ld, j->V, j->taus, j->fin, c);
}

static void krot_task(void *ctx, int64_t task) {
    const kbody_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n, EIG_ROT_GRAIN, task, &b, &e);
    for (int64_t r = b; r < e; r++) sb_k_eigh_rot(j->m, j->ld, r, j->cs, j->sn, j->col, j->nrot);
}

static int64_t eig_groups(const sb_device *d, int64_t n) { return (n + d->wg - 1) / d->wg; }

typedef struct khh_job {
    float *a;
    const float *v, *u;
    float *p;
    int64_t n, ld, lo;
} khh_job;

static void khh_matvec_task(void *ctx, int64_t task) {
    const khh_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n - j->lo, EIG_COL_GRAIN, task, &b, &e);
    for (int64_t i = j->lo + b; i < j->lo + e; i++) j->p[i] = sb_k_eigh_hh_matvec(j->a, j->n, j->ld, j->lo, j->v, i);
}

static void khh_rank2_task(void *ctx, int64_t task) {
    const khh_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n - j->lo, EIG_COL_GRAIN, task, &b, &e);
    for (int64_t i = j->lo + b; i < j->lo + e; i++)
        for (int64_t c = j->lo; c < j->n; c++) sb_k_eigh_hh_rank2(j->a, j->ld, i, c, j->v, j->u);
}

/* The Householder reduction of a (the full symmetric matrix, row stride ld)
 * by kernels/linear.h's steps: on a GPU, a goes up once and V, taus and fin
 * stay there for eig_dev_qform; d and e come back. On cpu-batched the same
 * bodies run here on a, V, taus, p and u. */
static sb_status eig_dev_householder(eig_dev *ed, int64_t n, int64_t ld, float *a, float *V, float *taus, float *p,
                                     float *u, float *dg, float *e, uint8_t *fin) {
    if (!ed->d) {
        for (int64_t k = 0; k + 2 < n; k++) {
            int32_t go = 0;
            const float v0 = sb_k_eigh_hh_head(a, n, ld, k, taus, &go);
            for (int64_t i = 0; i < n; i++) V[k * n + i] = sb_k_eigh_hh_velem(a, ld, k, i, v0, go);
            if (!go) continue;
            const int64_t lo = k + 1;
            khh_job j = {a, V + k * n, u, p, n, ld, lo};
            sb_parallel_for(sb_chunk_count(n - lo, EIG_COL_GRAIN), khh_matvec_task, &j);
            const float h = sb_k_eigh_hh_pdv(n, lo, taus[k], V + k * n, p);
            for (int64_t i = lo; i < n; i++) u[i] = sb_k_eigh_hh_uelem(p, V + k * n, h, i);
            sb_parallel_for(sb_chunk_count(n - lo, EIG_COL_GRAIN), khh_rank2_task, &j);
        }
        for (int64_t i = 0; i < n; i++) {
            dg[i] = a[i * ld + i];
            e[i] = i + 1 < n ? a[(i + 1) * ld + i] : 0.0f;
            fin[i] = i + 2 < n ? sb_k_eigh_finite(n, i, V, taus) : 0;
        }
        return SB_OK;
    }
    sb_device *d = ed->d;
    const size_t mat = 4 * (size_t)(n * ld);
    sb_status st;
    /* ed->q holds a while it is reduced; kn_eigh_qform then overwrites it with Q */
    if ((st = sb_device_alloc(d, &ed->q, mat, "eigh matrix")) != SB_OK ||
        (st = sb_device_alloc(d, &ed->V, 4 * (size_t)(n * n), "eigh reflectors")) != SB_OK ||
        (st = sb_device_alloc(d, &ed->taus, 4 * (size_t)n, "eigh taus")) != SB_OK ||
        (st = sb_device_alloc(d, &ed->fin, (size_t)n, "eigh finite flags")) != SB_OK ||
        (st = sb_device_alloc(d, &ed->go, 4, "eigh step flag")) != SB_OK ||
        (st = sb_device_alloc(d, &ed->pv, 4 * (size_t)n, "eigh product")) != SB_OK ||
        (st = sb_device_alloc(d, &ed->u, 4 * (size_t)n, "eigh update")) != SB_OK ||
        (st = sb_device_alloc(d, &ed->de, 8 * (size_t)n, "eigh tridiagonal")) != SB_OK ||
        (st = sb_device_write(d, &ed->q, 0, a, mat, "eigh matrix")) != SB_OK)
        return st;
    for (int64_t k = 0; k + 2 < n; k++) {
        const int64_t lo = k + 1, m = n - lo, g1 = m < 65535 ? m : 65535;
        if ((st = SB_LAUNCH(d, SB_KL_kn_eigh_hh_reflect, 1, 1, 0, SB_ARG(ed->q.h), SB_ARG(n), SB_ARG(ld), SB_ARG(k),
                            SB_ARG(ed->V.h), SB_ARG(ed->taus.h), SB_ARG(ed->go.h))) != SB_OK ||
            (st = SB_LAUNCH(d, SB_KL_kn_eigh_hh_matvec, eig_groups(d, m), 1, 0, SB_ARG(ed->q.h), SB_ARG(n), SB_ARG(ld),
                            SB_ARG(k), SB_ARG(ed->V.h), SB_ARG(ed->go.h), SB_ARG(ed->pv.h))) != SB_OK ||
            (st = SB_LAUNCH(d, SB_KL_kn_eigh_hh_pdv, 1, 1, 0, SB_ARG(n), SB_ARG(k), SB_ARG(ed->V.h), SB_ARG(ed->taus.h),
                            SB_ARG(ed->go.h), SB_ARG(ed->pv.h), SB_ARG(ed->u.h))) != SB_OK ||
            (st = SB_LAUNCH(d, SB_KL_kn_eigh_hh_rank2, eig_groups(d, m), g1, 0, SB_ARG(ed->q.h), SB_ARG(n), SB_ARG(ld),
                            SB_ARG(k), SB_ARG(ed->V.h), SB_ARG(ed->go.h), SB_ARG(ed->u.h))) != SB_OK)
            return st;
    }
    if ((st = SB_LAUNCH(d, SB_KL_kn_eigh_tridiag, eig_groups(d, n), 1, 0, SB_ARG(ed->q.h), SB_ARG(n), SB_ARG(ld),
                        SB_ARG(ed->V.h), SB_ARG(ed->taus.h), SB_ARG(ed->de.h), SB_ARG(ed->fin.h))) != SB_OK ||
        (st = sb_device_read(d, &ed->de, 0, dg, 4 * (size_t)n, "eigh tridiagonal")) != SB_OK ||
        (st = sb_device_read(d, &ed->de, 4 * (size_t)n, e, 4 * (size_t)n, "eigh tridiagonal")) != SB_OK)
        return st;
    return SB_OK;
}

/* Q from the reflectors (on a GPU: those eig_dev_householder left there), left
 * transposed (zt) on the device; on cpu-batched into qz and then transposed
 * into zt by the caller. */
static sb_status eig_dev_qform(eig_dev *ed, int64_t n, int64_t ld, const float *V, const float *taus,
                               const uint8_t *fin, float *qz) {
    if (!ed->d) {
        kbody_job j = {qz, V, taus, NULL, NULL, fin, NULL, n, ld, 0};
        sb_parallel_for(sb_chunk_count(n, EIG_COL_GRAIN), kqform_task, &j);
        return SB_OK;
    }
    sb_device *d = ed->d;
    const size_t mat = 4 * (size_t)(n * ld);
    sb_status st;
    (void)V, (void)taus, (void)fin; /* the reduction left them on the device */
    if ((st = sb_device_alloc(d, &ed->zt, mat, "eigh vectors")) != SB_OK) return st;
    const int64_t g1 = n < 65535 ? n : 65535;
    if ((st = SB_LAUNCH(d, SB_KL_kn_eigh_qform, eig_groups(d, n), 1, 0, SB_ARG(ed->q.h), SB_ARG(n), SB_ARG(ld),
                        SB_ARG(ed->V.h), SB_ARG(ed->taus.h), SB_ARG(ed->fin.h))) != SB_OK ||
        (st = SB_LAUNCH(d, SB_KL_kn_eigh_transpose, eig_groups(d, n), g1, 0, SB_ARG(ed->q.h), SB_ARG(ed->zt.h),
                        SB_ARG(n), SB_ARG(ld))) != SB_OK)
        return st;
    return ed->timing ? sb_device_finish(d) : SB_OK;
}

/* The rotations cs/sn/col[0..nrot) applied to zt (the host's a on cpu-batched,
 * the device's copy on a GPU: queued, the host goes on with the recurrence). */
static sb_status eig_dev_rot(eig_dev *ed, float *a, int64_t n, int64_t ld, const float *cs, const float *sn,
                             const int32_t *col, int64_t nrot) {
    if (nrot == 0) return SB_OK;
    if (!ed->d) {
        kbody_job j = {a, NULL, NULL, cs, sn, NULL, col, n, ld, nrot};
        sb_parallel_for(sb_chunk_count(n, EIG_ROT_GRAIN), krot_task, &j);
        return SB_OK;
    }
    sb_device *d = ed->d;
    sb_status st;
    /* the writes block, and run after the launch before them: the device is
     * done with the last batch before this one lands */
    if ((st = sb_device_write(d, &ed->cs, 0, cs, 4 * (size_t)nrot, "eigh rotations")) != SB_OK ||
        (st = sb_device_write(d, &ed->sn, 0, sn, 4 * (size_t)nrot, "eigh rotations")) != SB_OK ||
        (st = sb_device_write(d, &ed->col, 0, col, 4 * (size_t)nrot, "eigh rotations")) != SB_OK)
        return st;
    /* not waited for, even when timed: the host's next batch overlaps it */
    return SB_LAUNCH(d, SB_KL_kn_eigh_rot, eig_groups(d, n), 1, 0, SB_ARG(ed->zt.h), SB_ARG(n), SB_ARG(ld),
                     SB_ARG(ed->cs.h), SB_ARG(ed->sn.h), SB_ARG(ed->col.h), SB_ARG(nrot));
}

static void eig_dev_release(eig_dev *ed) {
    if (!ed->d) return;
    sb_dbuf *bufs[] = {&ed->q, &ed->zt, &ed->V, &ed->taus, &ed->fin, &ed->cs, &ed->sn, &ed->col, &ed->go, &ed->pv,
                       &ed->u, &ed->de};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) sb_device_release(ed->d, bufs[i]);
    sb_linalg_device_unlock();
    ed->d = NULL;
}

sb_status sb_lin_eigh(int64_t n, const float *a_in, float *w, float *v) { return sb_lin_eigh_on(NULL, n, a_in, w, v); }

sb_status sb_lin_eigh_on(const char *device, int64_t n, const float *a_in, float *w, float *v) {
    eig_dev ed;
    memset(&ed, 0, sizeof ed);
    {
        sb_status pst = sb_device_parse(device, &ed.kind);
        if (pst != SB_OK) return pst;
        if (ed.kind == SB_DEVICE_CUDA || ed.kind == SB_DEVICE_OPENCL) {
            if ((pst = sb_linalg_device_lock(ed.kind, &ed.d)) != SB_OK) return pst;
        }
        const char *te = getenv("SAMEBITS_LINEAR_TIMING");
        ed.timing = te && !strcmp(te, "1");
    }
    const int on_dev = ed.kind != SB_DEVICE_CPU;
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
    memset(fin, 0, (size_t)n);
    /* the device's rotation batches: smaller than the host's, so the device
     * starts sooner (the batch bounds reach no bit: every element takes the
     * rotations in one order) */
    const int64_t bcap = on_dev ? (n > 16384 ? n : 16384) : rcap;
    if (ed.d &&
        ((st = sb_device_alloc(ed.d, &ed.cs, 4 * (size_t)bcap, "eigh rotations")) != SB_OK ||
         (st = sb_device_alloc(ed.d, &ed.sn, 4 * (size_t)bcap, "eigh rotations")) != SB_OK ||
         (st = sb_device_alloc(ed.d, &ed.col, 4 * (size_t)bcap, "eigh rotations")) != SB_OK))
        goto done;
    double t0 = 0.0;
    sb_lin_phase(NULL, &t0);
    const eig_tasks tk = eig_pick();
    /* the full symmetric matrix from its lower triangle */
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j <= i; j++) a[i * ld + j] = a[j * ld + i] = a_in[i * n + j];
    memset(V, 0, sizeof(float) * (size_t)(n * n));
    /* 1. Householder: step k zeroes a[k+2.., k] with H = I - tau v v^T, v[k+1] = 1 */
    if (on_dev) {
        if ((st = eig_dev_householder(&ed, n, ld, a, V, taus, pv, u, d, e, fin)) != SB_OK) goto done;
    }
    for (int64_t k = 0; k + 2 < n && !on_dev; k++) {
        const int64_t lo = k + 1;
        /* column k read as row k: the trailing matrix is exactly symmetric (see
         * matvec_task), and a row is one contiguous run where a column is a
         * cache line per element, each last written by another thread's rank-2
         * task: on the lent GPU machine's 16 host cores the strided reads and
         * writes of this serial part cost more than the step's parallel work */
        const float *ak = a + k * ld;
        float alpha = ak[lo], ss = 0.0f;
        for (int64_t i = lo + 1; i < n; i++) ss = ss + ak[i] * ak[i];
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
        for (int64_t i = lo + 1; i < n; i++) vk[i] = ak[i] / v0;
        /* p = tau A v (rows >= lo), w = p - (tau/2)(p . v) v, A -= v w^T + w v^T */
        /* a trailing matrix of fewer than EIG_SERIAL_CELLS cells is a step
         * shorter than the pool's hand-off: one thread (no bit depends on it) */
        const int32_t width = (n - lo) * (n - lo) < EIG_SERIAL_CELLS ? 1 : SB_MAX_THREADS;
        matvec_job mj = {a, vk, pv, n, lo, ld};
        sb_parallel_for_width(sb_chunk_count(n - lo, EIG_COL_GRAIN), width, tk.matvec, &mj);
        float pdv = 0.0f;
        for (int64_t i = lo; i < n; i++) {
            pv[i] = taus[k] * pv[i];
            pdv = pdv + pv[i] * vk[i];
        }
        const float h = 0.5f * taus[k] * pdv;
        for (int64_t i = lo; i < n; i++) u[i] = pv[i] - h * vk[i];
        rank2_job rj = {a, vk, u, n, lo, ld};
        sb_parallel_for_width(sb_chunk_count(n - lo, EIG_COL_GRAIN), width, tk.rank2, &rj);
        /* the column and row k are now (.., beta, 0, ..): only beta is read
         * again (e[k] below); no later step reads row or column k */
        a[lo * ld + k] = a[k * ld + lo] = beta;
    }
    sb_lin_phase(ed.d ? "eigh: Householder reduction (device)" : "eigh: Householder reduction", &t0);
    for (int64_t i = 0; i < n && !on_dev; i++) {
        d[i] = a[i * ld + i];
        e[i] = i + 1 < n ? a[(i + 1) * ld + i] : 0.0f;
    }
    /* Q = H_0 H_1 ... H_{n-3}: applied to I from the last reflector back */
    for (int64_t k = 0; k + 2 < n && !on_dev; k++) { /* which reflectors keep a zero column zero */
        int ok = isfinite(taus[k]) != 0;
        for (int64_t i = k + 1; i < n && ok; i++) ok = isfinite(V[k * n + i]) != 0;
        fin[k] = (uint8_t)ok;
    }
    if (on_dev) {
        if ((st = eig_dev_qform(&ed, n, ld, V, taus, fin, qz)) != SB_OK) goto done;
    } else {
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++) qz[i * ld + j] = i == j ? 1.0f : 0.0f;
        qform_job fj = {qz, V, taus, fin, n, ld};
        sb_parallel_for(sb_chunk_count(n, EIG_COL_GRAIN), tk.qform, &fj);
    }
    sb_lin_phase(ed.d ? "eigh: Q (device)" : "eigh: Q", &t0);
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
    double t_rot = 0.0;
    int64_t n_rot = 0;
    if (!ed.d) /* a GPU's zt is already there, transposed by kn_eigh_transpose */
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
            if (nrot + (m - l) > bcap) { /* room for this sweep's rotations */
                rot_job oj = {a, cs, sn, col, n, nrot, ld};
                double t1 = 0.0, t2 = 0.0;
                sb_lin_phase(NULL, &t1);
                if (!on_dev) sb_parallel_for(sb_chunk_count(n, EIG_ROT_GRAIN), tk.rot, &oj);
                else if ((st = eig_dev_rot(&ed, a, n, ld, cs, sn, col, nrot)) != SB_OK) goto done;
                sb_lin_phase(NULL, &t2);
                t_rot += t2 - t1;
                n_rot += nrot;
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
        double t1 = 0.0, t2 = 0.0;
        sb_lin_phase(NULL, &t1);
        if (!on_dev) sb_parallel_for(sb_chunk_count(n, EIG_ROT_GRAIN), tk.rot, &oj);
        else if ((st = eig_dev_rot(&ed, a, n, ld, cs, sn, col, nrot)) != SB_OK) goto done;
        /* a GPU's vectors come back (the read waits for the last batch) */
        if (ed.d && (st = sb_device_read(ed.d, &ed.zt, 0, a, 4 * (size_t)(n * ld), "eigh vectors")) != SB_OK)
            goto done;
        sb_lin_phase(NULL, &t2);
        t_rot += t2 - t1;
        n_rot += nrot;
    }
    /* SAMEBITS_LINEAR_TIMING=1: the rotations' share of the QL phase (t_rot stays 0 otherwise) */
    if (t_rot > 0.0)
        fprintf(stderr, "linear: eigh: QL rotations (%lld) applied in %.6f s%s\n", (long long)n_rot, t_rot,
                ed.d ? " (device: waits for its batches and the vectors' read-back)" : "");
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
    eig_dev_release(&ed);
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
