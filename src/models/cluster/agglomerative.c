/*
 * agglomerative.c: hierarchical agglomerative clustering with scikit-learn's
 * names and defaults (docs/cluster.md, "AgglomerativeClustering"): ward,
 * complete, average and single linkage on Euclidean distances, the tree cut
 * at n_clusters or at distance_threshold.
 *
 * The tree is scikit-learn's, node for node, ties included, because every
 * step is the one its engines take, in exact IEEE double arithmetic:
 *  - the distance of two rows: (double)x_f - (double)y_f, squared, summed over
 *    f ascending, sqrt correctly rounded (scipy's pdist and scikit-learn's
 *    DistanceMetric sum in that order);
 *  - ward, complete, average: the nearest-neighbor chain (D. Müllner, "Modern
 *    hierarchical, agglomerative clustering algorithms", arXiv:1109.2378,
 *    2011, its NN-chain algorithm; the procedure scipy.cluster.hierarchy
 *    documents for these methods): the chain starts at the lowest live
 *    cluster slot; a cluster's nearest is the one before it in the chain when
 *    that is at the least distance, otherwise the lowest slot at the least
 *    distance; reciprocal nearest neighbors x < y merge into slot y; the
 *    distances to the merged cluster follow the Lance-Williams formulas (G. N.
 *    Lance and W. T. Williams, Computer Journal 9(4), 1967) spelled as one
 *    fixed sequence of operations each (ag_update);
 *  - single: Prim's minimum spanning tree from row 0 (Müllner's
 *    MST-LINKAGE-CORE, as scikit-learn runs it), the lowest row among rows at
 *    the least distance;
 *  - the merges are then ordered by distance, equal distances in the order
 *    found (a stable sort), and numbered on a union-find (merge s makes node
 *    n + s): children_ is scikit-learn's, the lower node first except for
 *    single linkage, which keeps the pair as found, as scikit-learn does.
 * Labels: the clusters left after n - n_clusters merges (or after every merge
 * below distance_threshold), numbered by their smallest row. The thread count
 * only splits independent distances (and, for single linkage on many rows,
 * the chunks of a scan whose least (distance, row) is compared in chunk
 * order), so the bits are the same at every thread count. On a GPU the
 * matrix is the device's (ag_matrix_dev: the same operations in the integer
 * binary64 of kernels/f64.h), the rest the host's, so the bits are the same on
 * every device.
 */
#include "agglomerative.h"
#include "../neighbors/knn.h"
#include "../../device/device.h"
#include "../../linalg/linalg.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#include <string.h>

enum { AG_WARD = 0, AG_COMPLETE = 1, AG_AVERAGE = 2, AG_SINGLE = 3 };
static const char *const k_linkages[4] = {"ward", "complete", "average", "single"};
#define AG_MAX_ROWS 40000 /* the n x n matrix of doubles: 12.8 GB at this size */
#define AG_MAX_ROWS_SINGLE 1000000 /* single linkage keeps no matrix; its time grows as n^2 */

typedef struct ag_params {
    int32_t k, linkage, numeric_mode, has_threshold;
    float threshold;
    sb_device_kind device;
} ag_params;

static int is(const char *key, const char *a, const char *b) { return !strcmp(key, a) || (b && !strcmp(key, b)); }

static const char *const k_alias_groups[] = {"model|family", "metric|affinity", "device|device_type", NULL};

static sb_status ag_params_parse(const sb_params *params, ag_params *p) {
    memset(p, 0, sizeof *p);
    p->k = 2;
    int k_given = 0;
    sb_status st = sb_params_refuse_aliases(params, k_alias_groups, "agglomerative clustering");
    if (st != SB_OK) return st;
    sb_numeric_mode mode;
    if ((st = sb_params_resolve_mode(params, SB_FAMILY_AGGLOMERATIVE, &mode)) != SB_OK) return st;
    p->numeric_mode = (int32_t)mode;
    const char *key, *v;
    for (int64_t e = 0; params && sb_params_entry(params, e, &key, &v) == SB_OK && st == SB_OK; e++) {
        int64_t i;
        if (is(key, "numeric_mode", NULL)) {
            continue;
        } else if (is(key, "model", "family")) {
            if (strcmp(v, "agglomerative"))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "model='%s' is not agglomerative clustering (model=agglomerative)", v);
        } else if (is(key, "n_clusters", NULL)) {
            if (!strcmp(v, "none") || !strcmp(v, "None")) p->k = 0, k_given = 0;
            else if ((st = sb_param_int(key, v, 1, AG_MAX_ROWS, &i)) == SB_OK) p->k = (int32_t)i, k_given = 1;
        } else if (is(key, "distance_threshold", NULL)) {
            if ((st = sb_param_float(key, v, 0.0f, 3.0e38f, 0, &p->threshold)) == SB_OK) p->has_threshold = 1;
        } else if (is(key, "linkage", NULL)) {
            int32_t l = -1;
            for (int32_t q = 0; q < 4; q++)
                if (!strcmp(v, k_linkages[q])) l = q;
            if (l < 0) st = sb_fail(SB_ERR_INVALID_ARGUMENT, "linkage='%s': ward, complete, average or single", v);
            p->linkage = l;
        } else if (is(key, "metric", "affinity")) {
            if (strcmp(v, "euclidean") && strcmp(v, "l2"))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "metric='%s' is not supported: euclidean only", v);
        } else if (is(key, "compute_full_tree", NULL) || is(key, "compute_distances", NULL)) {
            /* the full tree and its distances are always computed here */
            if (strcmp(v, "auto") && strcmp(v, "true") && strcmp(v, "false") && strcmp(v, "1") && strcmp(v, "0"))
                st = sb_fail(SB_ERR_INVALID_ARGUMENT, "%s='%s': auto, true or false", key, v);
        } else if (is(key, "device", "device_type")) {
            sb_device_kind dk;
            if ((st = sb_device_parse(v, &dk)) == SB_OK) p->device = dk;
        } else {
            st = sb_fail(SB_ERR_INVALID_ARGUMENT, "unknown parameter '%s' for agglomerative clustering (docs/cluster.md)",
                         key);
        }
    }
    if (st == SB_OK && p->has_threshold && k_given)
        st = sb_fail(SB_ERR_INVALID_ARGUMENT, "exactly one of n_clusters and distance_threshold has to be set "
                     "(n_clusters=none with a distance_threshold)");
    if (st == SB_OK && p->has_threshold) p->k = 0;
    if (st == SB_OK && !p->has_threshold && p->k == 0)
        st = sb_fail(SB_ERR_INVALID_ARGUMENT, "n_clusters=none needs a distance_threshold");
    return st;
}

/* ---- distances ----
 * The distance of two rows is scipy's pdist and scikit-learn's DistanceMetric
 * spelled in the same order: t_f = (double)x_f - (double)y_f exactly, D = the
 * sum of t_f * t_f over f ascending in double, sqrt(D) correctly rounded. Each
 * pair's sum is one sequential chain; the matrix computes eight pairs at a
 * time in the lanes of a vector (one chain per lane), so the order per pair is
 * the same as the scalar one, on every machine. */
typedef double ag_v2 __attribute__((vector_size(16)));
enum { AG_LANES = 8, AG_BLOCK = 64, AG_WIDE = 32 };

typedef struct dist_job {
    const double *x;  /* n x d rows, as doubles (exact) */
    const double *xt; /* d x n8: column k at xt[f * n8 + k] */
    int64_t n, n8;
    int32_t d, triangle;
    double *c;
} dist_job;

/* Two rows (i, i + 1) against eight columns from k: sixteen sums, each its
 * own sequential chain over f (the pair distance's order), in sixteen lanes. */
static void dist_2x8(const dist_job *j, int64_t i, int64_t k) {
    ag_v2 a0 = {0, 0}, a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    const double *xa = j->x + i * j->d, *xb = xa + j->d, *col = j->xt + k;
    for (int32_t f = 0; f < j->d; f++) {
        const double *q = col + (int64_t)f * j->n8;
        const ag_v2 y0 = {q[0], q[1]}, y1 = {q[2], q[3]}, y2 = {q[4], q[5]}, y3 = {q[6], q[7]};
        const ag_v2 u = {xa[f], xa[f]}, v = {xb[f], xb[f]};
        ag_v2 t;
        t = u - y0, a0 += t * t;
        t = u - y1, a1 += t * t;
        t = u - y2, a2 += t * t;
        t = u - y3, a3 += t * t;
        t = v - y0, b0 += t * t;
        t = v - y1, b1 += t * t;
        t = v - y2, b2 += t * t;
        t = v - y3, b3 += t * t;
    }
    double *ra = j->c + i * j->n + k, *rb = ra + j->n;
    const ag_v2 acc[8] = {a0, a1, a2, a3, b0, b1, b2, b3};
    for (int32_t l = 0; l < 8; l++) {
        ra[l] = sqrt(acc[l >> 1][l & 1]);
        rb[l] = sqrt(acc[4 + (l >> 1)][l & 1]);
    }
}

/* The scalar form for the rows and columns left over: the same sum. */
static double dist_1(const dist_job *j, int64_t i, int64_t k) {
    double s = 0.0;
    const double *xi = j->x + i * j->d, *xk = j->x + k * j->d;
    for (int32_t f = 0; f < j->d; f++) {
        const double t = xi[f] - xk[f];
        s += t * t;
    }
    return sqrt(s);
}

/* Rows [b * AG_BLOCK, ...) of the matrix, in blocks of AG_BLOCK columns (the
 * block of xt stays in cache). d(i, k) and d(k, i) are the same bits: with
 * many features (triangle) only the blocks on and right of the diagonal are
 * computed and the rest mirrored; with few, each half is computed where it is
 * written, contiguously. */
static void dist_task(void *ctx, int64_t b) {
    const dist_job *j = ctx;
    const int64_t i0 = b * AG_BLOCK, i1 = i0 + AG_BLOCK < j->n ? i0 + AG_BLOCK : j->n;
    for (int64_t k0 = j->triangle ? i0 : 0; k0 < j->n; k0 += AG_BLOCK) {
        const int64_t k1 = k0 + AG_BLOCK < j->n ? k0 + AG_BLOCK : j->n;
        int64_t i = i0;
        for (; i + 2 <= i1; i += 2) {
            int64_t k = k0;
            for (; k + AG_LANES <= k1; k += AG_LANES) dist_2x8(j, i, k);
            for (; k < k1; k++) j->c[i * j->n + k] = dist_1(j, i, k), j->c[(i + 1) * j->n + k] = dist_1(j, i + 1, k);
        }
        for (; i < i1; i++)
            for (int64_t k = k0; k < k1; k++) j->c[i * j->n + k] = dist_1(j, i, k);
    }
}

/* Row i left of its diagonal block, from the rows above (triangle only). */
static void mirror_task(void *ctx, int64_t i) {
    const dist_job *j = ctx;
    const int64_t end = i / AG_BLOCK * AG_BLOCK;
    for (int64_t k = 0; k < end; k++) j->c[i * j->n + k] = j->c[k * j->n + i];
}

typedef struct tr_job {
    const float *x;
    double *xd, *xt;
    int64_t n, n8;
    int32_t d;
} tr_job;

static void tr_task(void *ctx, int64_t f) {
    const tr_job *j = ctx;
    for (int64_t k = 0; k < j->n; k++) j->xt[f * j->n8 + k] = (double)j->x[k * j->d + f];
    for (int64_t k = j->n; k < j->n8; k++) j->xt[f * j->n8 + k] = 0.0;
}

static void xd_task(void *ctx, int64_t i) {
    const tr_job *j = ctx;
    for (int32_t f = 0; f < j->d; f++) j->xd[i * j->d + f] = (double)j->x[i * j->d + f];
}

/* The n x n matrix's memory: *raw is what sb_free takes. On Linux the block
 * is aligned to 2 MB and advised for huge pages (a 10,000-row matrix is 800 MB:
 * with 4 KB pages its first touch and the chain's column writes are mostly
 * page faults and TLB misses). Memory advice changes no value. */
static double *ag_matrix_alloc(int64_t n, void **raw) {
    const size_t bytes = sizeof(double) * (size_t)n * (size_t)n, align = (size_t)2 << 20;
    *raw = sb_malloc(bytes + align);
    if (!*raw) return NULL;
    char *p = (char *)(((uintptr_t)*raw + align - 1) & ~(uintptr_t)(align - 1));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    (void)madvise(p, bytes & ~(align - 1), MADV_HUGEPAGE);
#endif
    return (double *)p;
}

/* The whole symmetric matrix of the pair distances (dist_2x8, dist_1). */
static sb_status ag_matrix(const float *x, int64_t n, int32_t d, double *c) {
    const int64_t n8 = (n + AG_LANES - 1) / AG_LANES * AG_LANES;
    double *xt = sb_malloc(sizeof(double) * (size_t)n8 * (size_t)d), *xd = sb_malloc(sizeof(double) * (size_t)n * d);
    if (!xt || !xd) {
        sb_free(xt), sb_free(xd);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "agglomerative clustering: out of memory for %lld rows", (long long)n);
    }
    tr_job tj = {x, xd, xt, n, n8, d};
    sb_parallel_for(d, tr_task, &tj);
    sb_parallel_for(n, xd_task, &tj);
    dist_job dj = {xd, xt, n, n8, d, d >= AG_WIDE, c};
    sb_parallel_for((n + AG_BLOCK - 1) / AG_BLOCK, dist_task, &dj);
    if (dj.triangle) sb_parallel_for(n, mirror_task, &dj);
    sb_free(xt), sb_free(xd);
    return SB_OK;
}

/* The same matrix on kind's device (a GPU): ka_dist (kernels/entry/
 * cluster_entry.h) repeats each pair's operations in the integer binary64 of
 * kernels/f64.h, so every distance is the host's bits. The rows go up once,
 * transposed; the matrix comes back in blocks of rows of at most
 * AG_DEV_CELLS distances (a rule of the shape; blocks only split independent
 * pairs). The chain and the tree stay on the host: they are sequential. */
enum { AG_DEV_CELLS = 1 << 24 };

/* The rows transposed for the device (feature f of row i at xt[f n + i]), in
 * chunks of rows on the pool: a copy, so no bit depends on the split. */
#define AG_TR_GRAIN 4096
typedef struct ag_tr_job {
    const float *x;
    float *xt;
    int64_t n;
    int32_t d;
} ag_tr_job;

static void ag_tr_task(void *ctx, int64_t task) {
    const ag_tr_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n, AG_TR_GRAIN, task, &b, &e);
    for (int32_t f = 0; f < j->d; f++)
        for (int64_t i = b; i < e; i++) j->xt[(int64_t)f * j->n + i] = j->x[i * j->d + f];
}

static sb_status ag_matrix_dev(sb_device_kind kind, const float *x, int64_t n, int32_t d, double *c) {
    sb_device *dev = NULL;
    sb_status st = sb_linalg_device_lock(kind, &dev);
    if (st != SB_OK) return st;
    sb_dbuf bx = {0}, bo = {0};
    float *xt = sb_malloc(sizeof(float) * (size_t)n * (size_t)d);
    int64_t rows = AG_DEV_CELLS / n > 1 ? AG_DEV_CELLS / n : 1;
    if (rows > n) rows = n;
    if (!xt) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "agglomerative clustering: out of memory for %lld rows", (long long)n);
        goto done;
    }
    {
        ag_tr_job tj = {x, xt, n, d};
        sb_parallel_for(sb_chunk_count(n, AG_TR_GRAIN), ag_tr_task, &tj);
    }
    if ((st = sb_device_alloc(dev, &bx, sizeof(float) * (size_t)n * (size_t)d, "agglomerative rows")) != SB_OK ||
        (st = sb_device_alloc(dev, &bo, sizeof(double) * (size_t)rows * (size_t)n, "agglomerative distances")) != SB_OK ||
        (st = sb_device_write(dev, &bx, 0, xt, sizeof(float) * (size_t)n * (size_t)d, "agglomerative rows")) != SB_OK)
        goto done;
    for (int64_t r0 = 0; r0 < n && st == SB_OK; r0 += rows) {
        const int64_t nr = r0 + rows < n ? rows : n - r0, cells = nr * n;
        st = SB_LAUNCH(dev, SB_KL_ka_dist, (cells + dev->wg - 1) / dev->wg, 1, 0, SB_ARG(bx.h), SB_ARG(n), SB_ARG(d),
                       SB_ARG(r0), SB_ARG(nr), SB_ARG(bo.h));
        if (st == SB_OK)
            st = sb_device_read(dev, &bo, 0, c + r0 * n, sizeof(double) * (size_t)cells, "agglomerative distances");
    }
done:
    sb_device_release(dev, &bx), sb_device_release(dev, &bo);
    sb_linalg_device_unlock();
    sb_free(xt);
    return st;
}

/* ---- the merges ----
 * The Lance-Williams distance of cluster i to the merge of x and y, scipy's
 * spelling operation for operation (sizes nx, ny, ni; dxi, dyi, dxy). */
static inline double ag_update(int32_t linkage, double dxi, double dyi, double dxy, double nx, double ny, double ni) {
    switch (linkage) {
    case AG_COMPLETE: return dxi > dyi ? dxi : dyi;
    case AG_AVERAGE: return (nx * dxi + ny * dyi) / (nx + ny);
    default: {
        const double t = 1.0 / (nx + ny + ni);
        return sqrt((ni + nx) * t * dxi * dxi + (ni + ny) * t * dyi * dyi - ni * t * dxy * dxy);
    }
    }
}

typedef struct ag_merge {
    int64_t a, b; /* the rows (slots) merged, as found */
    double dist;
    int64_t order; /* when it was found */
} ag_merge;

/* The merges' order: less distance first, equal distances in the order found
 * (a stable sort). SB_SABOTAGE_AGGLO_TIES (make SABOTAGE=agglo-ties): equal
 * distances in the reverse order, a changed tie rule, the separating arm. */
static int ag_merge_cmp(const void *pa, const void *pb) {
    const ag_merge *a = pa, *b = pb;
    if (a->dist != b->dist) return a->dist < b->dist ? -1 : 1;
#ifdef SB_SABOTAGE_AGGLO_TIES
    return a->order > b->order ? -1 : a->order < b->order;
#else
    return a->order < b->order ? -1 : a->order > b->order;
#endif
}

/* Ward, complete and average: the nearest-neighbor chain (Müllner 2011's
 * NN-chain algorithm, in scipy's form): the chain starts at the lowest live slot;
 * a cluster's nearest is the one before it in the chain when that is at the
 * least distance, else the lowest slot at the least distance; reciprocal
 * nearest neighbors x < y merge into slot y. c is the full matrix (used up). */
static void ag_chain(int32_t linkage, int64_t n, double *c, int64_t *size, int64_t *chain, ag_merge *mg) {
    int64_t len = 0;
    for (int64_t i = 0; i < n; i++) size[i] = 1;
    for (int64_t s = 0; s < n - 1; s++) {
        if (len == 0) {
            for (int64_t i = 0; i < n; i++)
                if (size[i] > 0) {
                    chain[len++] = i;
                    break;
                }
        }
        int64_t x, y = -1;
        double cur;
        for (;;) {
            x = chain[len - 1];
            const double *row = c + x * n;
            if (len > 1) y = chain[len - 2], cur = row[y];
            else cur = INFINITY;
            for (int64_t i = 0; i < n; i++)
                if (size[i] > 0 && i != x && row[i] < cur) cur = row[i], y = i;
            if (len > 1 && y == chain[len - 2]) break;
            chain[len++] = y;
        }
        len -= 2;
        if (x > y) {
            const int64_t t = x;
            x = y, y = t;
        }
        const int64_t nx = size[x], ny = size[y];
        mg[s].a = x, mg[s].b = y, mg[s].dist = cur, mg[s].order = s;
        size[x] = 0;
        size[y] = nx + ny;
        double *ry = c + y * n;
        const double *rx = c + x * n;
        for (int64_t i = 0; i < n; i++) {
            if (size[i] == 0 || i == y) continue;
            const double v = ag_update(linkage, rx[i], ry[i], cur, (double)nx, (double)ny, (double)size[i]);
            ry[i] = v;
            c[i * n + y] = v;
        }
    }
}

/* Single linkage: the minimum spanning tree by Prim's algorithm from row 0
 * (Müllner 2011, MST-LINKAGE-CORE, as scikit-learn's mst_linkage_core runs
 * it): each step adds the row outside the tree of least distance to it, the
 * lowest row among equals; distances from the rows, no matrix. The rows
 * outside the tree are kept packed (coordinates transposed in xr, d x cap, as
 * doubles; their row numbers in rem), sixteen distances a step in vector
 * lanes, each lane the pair distance's sequential sum; a row leaving swaps the last one
 * into its place, which is why ties compare row numbers, not positions. A
 * step's scan is cut into chunks of AG_PRIM_CHUNK packed rows when the rows
 * are many (a rule of the shape), each chunk's least (distance, row) found on
 * its own and the chunks' compared in chunk order: the same least pair as one
 * scan, whatever runs the chunks. */
enum { AG_PRIM_CHUNK = 4096 };

/* (v, row) before (best, best_row) in Prim's scans: less distance, then the
 * lower row; best_row < 0 holds nothing yet (best is then DBL_MAX, which no
 * distance equal to it replaces, as scikit-learn's strict comparison). */
static inline int prim_before(double v, int64_t row, double best, int64_t best_row) {
    return v < best || (v == best && best_row >= 0 && row < best_row);
}

typedef struct prim_job {
    const double *xc; /* the row just added */
    const double *xr;
    const int64_t *rem;
    double *cd;
    int64_t cap, nrem;
    int32_t d;
    double *best; /* per chunk */
    int64_t *at;  /* per chunk: the packed position, -1 if none */
} prim_job;

static void prim_task(void *ctx, int64_t ch) {
    const prim_job *j = ctx;
    const int64_t q0 = ch * AG_PRIM_CHUNK, q1 = q0 + AG_PRIM_CHUNK < j->nrem ? q0 + AG_PRIM_CHUNK : j->nrem;
    const int32_t d = j->d;
    double best = 1.7976931348623157e308; /* DBL_MAX, as scikit-learn starts */
    int64_t at = -1;
    int64_t q = q0;
    for (; q + 8 <= q1; q += 8) {
        ag_v2 a0 = {0, 0}, a1 = a0, a2 = a0, a3 = a0;
        const double *r = j->xr + q;
        for (int32_t f = 0; f < d; f++, r += j->cap) {
            const ag_v2 u = {j->xc[f], j->xc[f]};
            const ag_v2 y0 = {r[0], r[1]}, y1 = {r[2], r[3]}, y2 = {r[4], r[5]}, y3 = {r[6], r[7]};
            ag_v2 t;
            t = u - y0, a0 += t * t;
            t = u - y1, a1 += t * t;
            t = u - y2, a2 += t * t;
            t = u - y3, a3 += t * t;
        }
        const double v[8] = {sqrt(a0[0]), sqrt(a0[1]), sqrt(a1[0]), sqrt(a1[1]),
                             sqrt(a2[0]), sqrt(a2[1]), sqrt(a3[0]), sqrt(a3[1])};
        double *c = j->cd + q;
        for (int32_t l = 0; l < 8; l++) {
            if (v[l] < c[l]) c[l] = v[l];
            if (prim_before(c[l], j->rem[q + l], best, at >= 0 ? j->rem[at] : -1)) best = c[l], at = q + l;
        }
    }
    for (; q < q1; q++) {
        double s = 0.0;
        for (int32_t f = 0; f < d; f++) {
            const double t = j->xc[f] - j->xr[(int64_t)f * j->cap + q];
            s += t * t;
        }
        const double v = sqrt(s);
        if (v < j->cd[q]) j->cd[q] = v;
        if (prim_before(j->cd[q], j->rem[q], best, at >= 0 ? j->rem[at] : -1)) best = j->cd[q], at = q;
    }
    j->best[ch] = best, j->at[ch] = at;
}

static void ag_prim(const float *x, int64_t n, int32_t d, double *xr, double *xc, int64_t *rem, double *cd,
                    double *cbest, int64_t *cat, ag_merge *mg) {
    const int64_t cap = n;
    int64_t nrem = n - 1;
    for (int64_t q = 0; q < nrem; q++) {
        rem[q] = q + 1, cd[q] = INFINITY;
        for (int32_t f = 0; f < d; f++) xr[(int64_t)f * cap + q] = (double)x[(q + 1) * d + f];
    }
    int64_t cur = 0;
    for (int64_t s = 0; s < n - 1; s++) {
        for (int32_t f = 0; f < d; f++) xc[f] = (double)x[cur * d + f];
        prim_job pj = {xc, xr, rem, cd, cap, nrem, d, cbest, cat};
        const int64_t nch = (nrem + AG_PRIM_CHUNK - 1) / AG_PRIM_CHUNK;
        if (nch > 1 && nrem * d >= 64 * AG_PRIM_CHUNK) sb_parallel_for(nch, prim_task, &pj);
        else
            for (int64_t ch = 0; ch < nch; ch++) prim_task(&pj, ch);
        double best = 1.7976931348623157e308;
        int64_t at = -1;
        for (int64_t ch = 0; ch < nch; ch++)
            if (cat[ch] >= 0 && prim_before(cbest[ch], rem[cat[ch]], best, at >= 0 ? rem[at] : -1))
                best = cbest[ch], at = cat[ch];
        const int64_t nxt = at >= 0 ? rem[at] : 0; /* at < 0: every distance infinite, impossible with finite rows */
        mg[s].a = cur, mg[s].b = nxt, mg[s].dist = best, mg[s].order = s;
        if (at >= 0) { /* nxt leaves the packed rows: the last takes its place */
            const int64_t last = --nrem;
            rem[at] = rem[last], cd[at] = cd[last];
            for (int32_t f = 0; f < d; f++) xr[(int64_t)f * cap + at] = xr[(int64_t)f * cap + last];
        }
        cur = nxt;
    }
}

/* Single linkage from the matrix (rows of many features, where reading the
 * rows again at every step would cost more than the matrix): the same tree as
 * ag_prim, since every distance is the same bits; in[] marks the tree. */
static void ag_prim_matrix(const double *c, int64_t n, double *cd, unsigned char *in, ag_merge *mg) {
    for (int64_t i = 0; i < n; i++) cd[i] = INFINITY, in[i] = 0;
    int64_t cur = 0;
    for (int64_t s = 0; s < n - 1; s++) {
        in[cur] = 1;
        double best = 1.7976931348623157e308;
        int64_t nxt = 0;
        const double *row = c + cur * n;
        for (int64_t j = 0; j < n; j++) {
            if (in[j]) continue;
            if (row[j] < cd[j]) cd[j] = row[j];
            if (cd[j] < best) best = cd[j], nxt = j;
        }
        mg[s].a = cur, mg[s].b = nxt, mg[s].dist = best, mg[s].order = s;
        cur = nxt;
    }
}

static int64_t ag_find(int64_t *parent, int64_t v) {
    int64_t r = v;
    while (parent[r] >= 0) r = parent[r];
    while (parent[v] >= 0 && parent[v] != r) {
        const int64_t p = parent[v];
        parent[v] = r;
        v = p;
    }
    return r;
}

sb_status sb_agglomerative_fit(const sb_params *params, const sb_dataset *train, sb_card *card, sb_model **out) {
    sb_clear_error();
    if (out) *out = NULL;
    if (!train || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_agglomerative_fit: NULL argument");
    if (sb_threads_ready() != SB_OK) return SB_ERR_INVALID_ARGUMENT;
    ag_params p;
    sb_status st = ag_params_parse(params, &p);
    if (st != SB_OK) return st;
    const sb_table *t = &train->t;
    const int64_t n = t->nrows, d = t->ncols;
    /* single linkage keeps no matrix when the rows are narrow (a rule of the shape; the same tree either way);
     * a GPU computes the matrix, so it keeps one always */
    const int gpu = p.device == SB_DEVICE_CUDA || p.device == SB_DEVICE_OPENCL;
    const int rows_only = !gpu && p.linkage == AG_SINGLE && (d < AG_WIDE || n > AG_MAX_ROWS);
    const int64_t max_rows = p.linkage == AG_SINGLE && !gpu ? AG_MAX_ROWS_SINGLE : AG_MAX_ROWS;
    if (n < 2 || d < 1)
        return sb_fail(SB_ERR_INVALID_INPUT, "agglomerative clustering needs at least two rows and one feature "
                       "(given n_samples=%lld)", (long long)n);
    if (n > max_rows)
        return sb_fail(SB_ERR_LIMIT, p.linkage == AG_SINGLE && !gpu ? "agglomerative clustering with single linkage takes at "
                       "most %lld rows (its time grows as n^2); %lld given" : gpu && p.linkage == AG_SINGLE ?
                       "agglomerative clustering on a GPU takes at most %lld rows (the device computes the n^2 distance "
                       "matrix; device=cpu runs single linkage from the rows, up to 1000000 of them); %lld given" :
                       "agglomerative clustering takes at most %lld rows (its distance matrix is n^2 doubles); %lld given",
                       (long long)max_rows, (long long)n);
    if (t->weight) return sb_fail(SB_ERR_INVALID_ARGUMENT, "agglomerative clustering takes no sample weights");
    if (p.k > n)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "n_clusters=%d exceeds the %lld rows", (int)p.k, (long long)n);
    const int64_t bad = sb_first_nonfinite(t->x, n * d);
    if (bad >= 0)
        return sb_fail(SB_ERR_INVALID_INPUT, "row %lld, feature %lld: %s; agglomerative clustering takes finite values "
                       "only", (long long)(bad / d), (long long)(bad % d), isnan(t->x[bad]) ? "missing (NaN)" : "infinite");
    void *craw = NULL;
    double *c = rows_only ? NULL : ag_matrix_alloc(n, &craw);
    double *cd = sb_malloc(sizeof(double) * (size_t)n);
    int64_t *size = sb_malloc(sizeof(int64_t) * (size_t)n), *chain = sb_malloc(sizeof(int64_t) * (size_t)(n + 1));
    double *xr = rows_only ? sb_malloc(sizeof(double) * (size_t)n * (size_t)d) : NULL;
    double *xc = sb_malloc(sizeof(double) * (size_t)d), *cbest = sb_malloc(sizeof(double) * (size_t)(n / AG_PRIM_CHUNK + 1));
    int64_t *cat = sb_malloc(sizeof(int64_t) * (size_t)(n / AG_PRIM_CHUNK + 1));
    ag_merge *mg = sb_malloc(sizeof(ag_merge) * (size_t)(n - 1));
    int64_t *child = sb_malloc(sizeof(int64_t) * (size_t)(2 * (n - 1)));
    int64_t *uf = sb_malloc(sizeof(int64_t) * (size_t)(2 * n - 1));
    double *mdist = sb_malloc(sizeof(double) * (size_t)(n - 1));
    int32_t *labels = sb_malloc(sizeof(int32_t) * (size_t)n);
    int64_t *par = sb_malloc(sizeof(int64_t) * (size_t)n);
    sb_model *m = NULL;
    if ((!rows_only && !c) || (rows_only && !xr) || !xc || !cbest || !cat || !cd || !size || !chain || !mg || !child || !uf || !mdist || !labels || !par) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "agglomerative clustering: out of memory for %lld rows (%lld x %lld distances)",
                     (long long)n, (long long)n, (long long)n);
        goto done;
    }
    if (rows_only) {
        ag_prim(t->x, n, (int32_t)d, xr, xc, size, cd, cbest, cat, mg);
    } else {
        if ((st = gpu ? ag_matrix_dev(p.device, t->x, n, (int32_t)d, c) : ag_matrix(t->x, n, (int32_t)d, c)) != SB_OK)
            goto done;
        if (p.linkage == AG_SINGLE) ag_prim_matrix(c, n, cd, (unsigned char *)chain, mg);
        else ag_chain(p.linkage, n, c, size, chain, mg);
    }
    qsort(mg, (size_t)(n - 1), sizeof *mg, ag_merge_cmp);
    /* the tree's nodes (scikit-learn's children_): the merges in their order on a union-find of nodes, merge s
     * making node n + s; single linkage keeps the pair as found (scikit-learn's single_linkage_label), the
     * others the lower node first (scipy's) */
    for (int64_t i = 0; i < 2 * n - 1; i++) uf[i] = -1;
    for (int64_t s = 0; s < n - 1; s++) {
        const int64_t a = ag_find(uf, mg[s].a), b = ag_find(uf, mg[s].b);
        child[2 * s] = p.linkage == AG_SINGLE || a < b ? a : b;
        child[2 * s + 1] = p.linkage == AG_SINGLE || a < b ? b : a;
        mdist[s] = mg[s].dist;
        uf[a] = uf[b] = n + s;
    }
    /* the cut: the first merges (all of them below the threshold), then labels by smallest row */
    {
        int64_t nmerge = p.has_threshold ? 0 : n - p.k;
        if (p.has_threshold)
            while (nmerge < n - 1 && mdist[nmerge] < (double)p.threshold) nmerge++;
        /* replay the merges on a union-find of tree nodes' smallest rows */
        int64_t *rep = uf; /* reused: a node's smallest row */
        for (int64_t i = 0; i < n; i++) rep[i] = i, par[i] = i;
        for (int64_t s = 0; s < nmerge; s++) {
            const int64_t ra = rep[child[2 * s]], rb = rep[child[2 * s + 1]];
            const int64_t lo = ra < rb ? ra : rb, hi = ra < rb ? rb : ra;
            par[hi] = lo;
            rep[n + s] = lo;
        }
        int32_t next = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t r = i;
            while (par[r] != r) r = par[r];
            labels[i] = r == i ? next++ : labels[r];
        }
        if (card) {
            char dims[96];
            snprintf(dims, sizeof dims, "%lld x %lld, %s", (long long)n, (long long)d, k_linkages[p.linkage]);
            st = sb_card_set_meta(card, "agglomerative.data", dims);
            if (st == SB_OK) st = sb_card_record(card, "agglomerative.children", SB_DTYPE_I64, child, (uint64_t)(2 * (n - 1)));
            if (st == SB_OK) st = sb_card_record(card, "agglomerative.distances", SB_DTYPE_U64, mdist, (uint64_t)(n - 1));
            if (st == SB_OK) st = sb_card_record(card, "agglomerative.labels", SB_DTYPE_I32, labels, (uint64_t)n);
            if (st != SB_OK) goto done;
        }
        char text[160];
        if (p.has_threshold)
            snprintf(text, sizeof text, "distance_threshold=%.9g\nlinkage=%s\nmodel=agglomerative\n", (double)p.threshold,
                     k_linkages[p.linkage]);
        else snprintf(text, sizeof text, "linkage=%s\nmodel=agglomerative\nn_clusters=%d\n", k_linkages[p.linkage], (int)p.k);
        if ((st = sb_model_alloc(&m)) != SB_OK) goto done;
        m->family = SB_FAMILY_AGGLOMERATIVE;
        m->objective = SB_OBJ_REGRESSION;
        m->num_features = (int32_t)d;
        m->num_class = 1;
        m->numeric_mode = p.numeric_mode;
        if (!(m->params = sb_strdup(text)) || !(m->agglo = sb_agglo_alloc(n))) {
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "agglomerative clustering: out of memory");
            goto done;
        }
        sb_agglo *g = m->agglo;
        g->linkage = p.linkage, g->n_clusters = next;
        memcpy(g->labels, labels, sizeof(int32_t) * (size_t)n);
        memcpy(g->children, child, sizeof(int64_t) * (size_t)(2 * (n - 1)));
        memcpy(g->distances, mdist, sizeof(double) * (size_t)(n - 1));
    }
    if (st == SB_OK) st = sb_model_copy_names(m, t->names, d, "agglomerative clustering");
    if (st == SB_OK && card) st = sb_model_record_bytes(card, m, "agglomerative.model_bytes");
done:
    sb_free(craw), sb_free(cd), sb_free(size), sb_free(chain), sb_free(xr), sb_free(xc), sb_free(cbest), sb_free(cat), sb_free(mg), sb_free(child), sb_free(uf);
    sb_free(mdist), sb_free(labels), sb_free(par);
    if (st != SB_OK) {
        sb_model_free(m);
        return st;
    }
    *out = m;
    return SB_OK;
}

sb_status sb_agglo_int(const sb_model *m, const char *name, int64_t *out) {
    const sb_agglo *g = m->agglo;
    if (!strcmp(name, "n_clusters")) *out = g->n_clusters;
    else if (!strcmp(name, "n_leaves")) *out = g->n;
    else if (!strcmp(name, "linkage")) *out = g->linkage;
    else return sb_fail(SB_ERR_NOT_FOUND, "an agglomerative model has no integer '%s'", name);
    return SB_OK;
}

sb_status sb_agglo_indices(const sb_model *m, const char *name, int64_t *out, size_t cap, size_t *needed) {
    const sb_agglo *g = m->agglo;
    if (!strcmp(name, "labels")) return sb_model_indices_out(g->labels, NULL, (size_t)g->n, name, out, cap, needed);
    if (!strcmp(name, "children"))
        return sb_model_indices_out(NULL, g->children, 2 * (size_t)(g->n - 1), name, out, cap, needed);
    return sb_fail(SB_ERR_NOT_FOUND, "an agglomerative model has no index array '%s' (labels, children)", name);
}
