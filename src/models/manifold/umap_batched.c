/*
 * umap_batched.c: UMAP's epochs with optimize="batched" (docs/umap.md): an
 * epoch in UB_PARTS parts, every move of a part computed from the positions
 * the part before left, rounded to fixed point, summed per row as exact
 * integers and applied once at the part's end (the arithmetic is
 * src/kernels/umap.h's, one text for the host and the GPUs). A part's edges
 * are independent work: the host's threads take blocks of them and add into
 * the row sums with integer atomics; on a GPU (device="cuda"|"opencl") one
 * work-item takes an edge (kum_edges) and one a value of the embedding at the
 * part's end (kum_apply). Integer sums are exact and order-free, so neither
 * the thread count nor the device reaches a bit: the embedding is the same
 * everywhere by construction
 * (tests/python/test_py_umap_batched.py checks 1, 2 and 3 threads and PoCL;
 * the separating arm SAMEBITS_OPENCL_ARM=umap-float-sum sums float32 moves in
 * arrival order instead, and parts from the host).
 */
#include "umap.h"
#include "../../kernels/umap.h"
#include "../../device/device.h"
#include "../../linalg/linalg.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#define UB_EDGE_BLOCK 2048  /* edges a host task takes */
#define UB_VALUE_BLOCK 8192 /* embedding values a host task applies */
/* The batched rule's parts: epoch t runs as UB_PARTS steps, part p taking
 * the edges e with e mod UB_PARTS == p (edges are in CSR order, so a row's
 * edges spread over the parts), each step's moves computed from the
 * positions the previous step left and applied at the step's end; the step
 * size is umap-learn's learning_rate (1 - t / n_epochs). With one part (every
 * move from the epoch's start) a row's ~20 sampled moves add up where the
 * sequential rule lets each correct the one before: on all 70,000
 * Fashion-MNIST rows (seed 42) 15-NN accuracy 0.757 at an eighth of the
 * step, against umap-learn's 0.787; 8 parts at half the step 0.784, 16 parts
 * at the full step 0.778, 64 parts 0.788 (bench/results/umap-batched-parts-*,
 * docs/umap.md). 64: a row then takes about one of its edges per part. */
#define UB_PARTS 64

/* Epoch t's step (the host computes it for every device). */
static float ub_alpha(const sb_umap_epochs *a, int32_t t) {
    return a->lr * (1.0f - (float)t / (float)a->n_epochs);
}

sb_status sb_umap_record_epoch(sb_card *card, int32_t t, int32_t n_epochs, const float *emb, uint64_t count) {
    if (!card || !sb_umap_epoch_kept(t, n_epochs)) return SB_OK;
    char tag[48];
    snprintf(tag, sizeof tag, "umap.epoch.%d", (int)(t + 1));
    return sb_card_record(card, tag, SB_DTYPE_F32, emb, count);
}

/* The bound that keeps every row's sum inside int64: M is the most moves one
 * row can receive in an epoch (each edge it heads: one attractive move and at
 * most SB_UM_NEG_CAP negative samples; each edge it tails: one), and each
 * move is clamped to qmax = (2^63 - 1) / M (at most 2^62). */
static int64_t ub_qmax(const sb_umap_epochs *a, int64_t *deg) {
    const int64_t per_head = 1 + SB_UM_NEG_CAP((int64_t)a->neg_rate);
    memset(deg, 0, sizeof(int64_t) * (size_t)a->n);
    for (int64_t e = 0; e < a->ne; e++) deg[a->head[e]] += per_head, deg[a->tail[e]] += 1;
    int64_t m = 1;
    for (int64_t i = 0; i < a->n; i++)
        if (deg[i] > m) m = deg[i];
    const int64_t q = INT64_MAX / m;
    return q < ((int64_t)1 << 62) ? q : ((int64_t)1 << 62);
}

typedef struct ub_job {
    sb_um_consts k;
    float alpha;
    int32_t t, part, parts;
    int64_t ne, nv, off, np; /* the part's edges: np of them, stored from off */
    const int32_t *head, *tail; /* the edge arrays in part-major order (ub_layout) */
    const float *eps, *epsn;
    float *next, *next_neg, *emb;
    int64_t *acc;
} ub_job;

/* Where part p's edges start in the part-major layout: the parts before it
 * hold ceil((ne - q) / parts) edges each (q < p). */
static int64_t ub_part_off(int64_t ne, int32_t parts, int32_t p) {
    int64_t off = 0;
    for (int32_t q = 0; q < p; q++) off += ne > q ? (ne - q + parts - 1) / parts : 0;
    return off;
}

/* The edge arrays in part-major order (part 0's edges 0, parts, 2 parts, ...,
 * then part 1's ...), so that a part's edges are contiguous for the host's
 * caches and the GPU's coalescing; each keeps its number for the Philox key.
 * The schedule's start (umap.c's) is laid out the same way. */
static void ub_layout(const sb_umap_epochs *a, int32_t parts, int32_t *head, int32_t *tail, float *eps, float *epsn,
                      float *next, float *next_neg) {
    int64_t z = 0;
    for (int32_t p = 0; p < parts; p++)
        for (int64_t e = p; e < a->ne; e += parts, z++) {
            head[z] = a->head[e], tail[z] = a->tail[e], eps[z] = a->eps[e];
            next[z] = a->eps[e];
            epsn[z] = a->neg_rate > 0 ? a->eps[e] / (float)a->neg_rate : INFINITY;
            next_neg[z] = epsn[z];
        }
}

static void ub_edges_task(void *ctx, int64_t blk) {
    const ub_job *j = ctx;
    const int64_t m1 = (blk + 1) * UB_EDGE_BLOCK < j->np ? (blk + 1) * UB_EDGE_BLOCK : j->np;
    for (int64_t m = blk * UB_EDGE_BLOCK; m < m1; m++)
        sb_um_edge(j->off + m, m * j->parts + j->part, j->t, j->alpha, j->k, j->head, j->tail, j->eps, j->epsn,
                   j->next, j->next_neg, j->emb, j->acc);
}

static void ub_apply_task(void *ctx, int64_t blk) {
    const ub_job *j = ctx;
    const int64_t i1 = (blk + 1) * UB_VALUE_BLOCK < j->nv ? (blk + 1) * UB_VALUE_BLOCK : j->nv;
    for (int64_t i = blk * UB_VALUE_BLOCK; i < i1; i++) sb_um_apply(i, j->emb, j->acc);
}

/* The epochs on kind's GPU: the schedule, the embedding and the sums live on
 * the device from the first epoch to the last; the kept epochs' embeddings
 * are read back for the card. */
static sb_status ub_device(const sb_umap_epochs *a, ub_job *j, float *emb, sb_card *card) {
    sb_device *dv = NULL;
    sb_status st = sb_linalg_device_lock((sb_device_kind)a->device, &dv);
    if (st != SB_OK) return st;
    const int64_t ne = a->ne, nv = j->nv, ne1 = ne ? ne : 1;
    sb_dbuf hd = {0}, tl = {0}, ep = {0}, en = {0}, nx = {0}, nn = {0}, em = {0}, ac = {0};
    if (st == SB_OK) st = sb_device_alloc(dv, &hd, 4 * (size_t)ne1, "UMAP edge heads");
    if (st == SB_OK) st = sb_device_alloc(dv, &tl, 4 * (size_t)ne1, "UMAP edge tails");
    if (st == SB_OK) st = sb_device_alloc(dv, &ep, 4 * (size_t)ne1, "UMAP sampling periods");
    if (st == SB_OK) st = sb_device_alloc(dv, &en, 4 * (size_t)ne1, "UMAP negative periods");
    if (st == SB_OK) st = sb_device_alloc(dv, &nx, 4 * (size_t)ne1, "UMAP next samples");
    if (st == SB_OK) st = sb_device_alloc(dv, &nn, 4 * (size_t)ne1, "UMAP next negatives");
    if (st == SB_OK) st = sb_device_alloc(dv, &em, 4 * (size_t)nv, "UMAP embedding");
    if (st == SB_OK) st = sb_device_alloc(dv, &ac, 8 * (size_t)nv, "UMAP row sums");
    if (ne > 0) {
        if (st == SB_OK) st = sb_device_write(dv, &hd, 0, j->head, 4 * (size_t)ne, "UMAP edge heads");
        if (st == SB_OK) st = sb_device_write(dv, &tl, 0, j->tail, 4 * (size_t)ne, "UMAP edge tails");
        if (st == SB_OK) st = sb_device_write(dv, &ep, 0, j->eps, 4 * (size_t)ne, "UMAP sampling periods");
        if (st == SB_OK) st = sb_device_write(dv, &en, 0, j->epsn, 4 * (size_t)ne, "UMAP negative periods");
        if (st == SB_OK) st = sb_device_write(dv, &nx, 0, j->next, 4 * (size_t)ne, "UMAP next samples");
        if (st == SB_OK) st = sb_device_write(dv, &nn, 0, j->next_neg, 4 * (size_t)ne, "UMAP next negatives");
    }
    if (st == SB_OK) st = sb_device_write(dv, &em, 0, emb, 4 * (size_t)nv, "UMAP embedding");
    if (st == SB_OK) st = sb_device_write(dv, &ac, 0, j->acc, 8 * (size_t)nv, "UMAP row sums"); /* zeros */
    const sb_um_consts k = j->k;
    const int32_t nc = k.nc, rate = k.rate;
    const int32_t parts = j->parts;
    const int64_t gv = (nv + dv->wg - 1) / dv->wg;
    for (int32_t t = 0; st == SB_OK && t < a->n_epochs; t++) {
        const float alpha = ub_alpha(a, t);
        for (int32_t part = 0; st == SB_OK && part < parts; part++) {
            const int64_t off = ub_part_off(ne, parts, part), np = ub_part_off(ne, parts, part + 1) - off;
            const int64_t ge = (np + dv->wg - 1) / dv->wg;
            if (np > 0)
                st = SB_LAUNCH(dv, SB_KL_kum_edges, ge, 1, 0, SB_ARG(off), SB_ARG(np), SB_ARG(t), SB_ARG(part), SB_ARG(parts),
                               SB_ARG(alpha), SB_ARG(k.a), SB_ARG(k.b), SB_ARG(k.two_ab), SB_ARG(k.two_gb), SB_ARG(k.n),
                               SB_ARG(k.qmax), SB_ARG(nc), SB_ARG(rate), SB_ARG(k.seed), SB_ARG(hd.h), SB_ARG(tl.h),
                               SB_ARG(ep.h), SB_ARG(en.h), SB_ARG(nx.h), SB_ARG(nn.h), SB_ARG(em.h), SB_ARG(ac.h));
            if (st == SB_OK) st = SB_LAUNCH(dv, SB_KL_kum_apply, gv, 1, 0, SB_ARG(nv), SB_ARG(em.h), SB_ARG(ac.h));
        }
        if (st == SB_OK && card && sb_umap_epoch_kept(t, a->n_epochs)) {
            st = sb_device_read(dv, &em, 0, emb, 4 * (size_t)nv, "UMAP embedding");
            if (st == SB_OK) st = sb_umap_record_epoch(card, t, a->n_epochs, emb, (uint64_t)nv);
        }
    }
    if (st == SB_OK) st = sb_device_read(dv, &em, 0, emb, 4 * (size_t)nv, "UMAP embedding");
    sb_dbuf *bufs[8] = {&hd, &tl, &ep, &en, &nx, &nn, &em, &ac};
    for (int i = 0; i < 8; i++) sb_device_release(dv, bufs[i]);
    sb_linalg_device_unlock();
    return st;
}

sb_status sb_umap_optimize_batched(const sb_umap_epochs *a, float *emb, sb_card *card) {
    const int64_t ne = a->ne, ne1 = ne ? ne : 1, nv = a->n * a->nc;
    ub_job j;
    memset(&j, 0, sizeof j);
    float *next = sb_malloc(sizeof(float) * (size_t)ne1), *next_neg = sb_malloc(sizeof(float) * (size_t)ne1);
    float *epsn = sb_malloc(sizeof(float) * (size_t)ne1), *eps = sb_malloc(sizeof(float) * (size_t)ne1);
    int32_t *head = sb_malloc(sizeof(int32_t) * (size_t)ne1), *tail = sb_malloc(sizeof(int32_t) * (size_t)ne1);
    int64_t *acc = sb_calloc((size_t)(nv > (int64_t)a->n ? nv : a->n), sizeof(int64_t));
    sb_status st = SB_OK;
    if (!next || !next_neg || !epsn || !eps || !head || !tail || !acc) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "UMAP: out of memory for %lld edges", (long long)ne);
        goto done;
    }
    ub_layout(a, UB_PARTS, head, tail, eps, epsn, next, next_neg);
    j.k.a = a->a, j.k.b = a->b, j.k.two_ab = 2.0f * a->a * a->b, j.k.two_gb = 2.0f * a->gamma * a->b;
    j.k.n = a->n, j.k.nc = a->nc, j.k.rate = a->neg_rate, j.k.seed = a->seed;
    j.k.qmax = ub_qmax(a, acc); /* acc (at least n values) as the degree scratch */
    memset(acc, 0, sizeof(int64_t) * (size_t)nv);
    j.ne = ne, j.nv = nv, j.head = head, j.tail = tail, j.eps = eps, j.epsn = epsn;
    j.next = next, j.next_neg = next_neg, j.emb = emb, j.acc = acc;
    j.parts = UB_PARTS;
    if (a->device == SB_DEVICE_CUDA || a->device == SB_DEVICE_OPENCL) {
        st = ub_device(a, &j, emb, card);
        goto done;
    }
    for (int32_t t = 0; t < a->n_epochs && st == SB_OK; t++) {
        j.t = t, j.alpha = ub_alpha(a, t);
        for (int32_t part = 0; part < j.parts; part++) {
            j.part = part, j.off = ub_part_off(ne, j.parts, part), j.np = ub_part_off(ne, j.parts, part + 1) - j.off;
            sb_parallel_for(sb_chunk_count(j.np, UB_EDGE_BLOCK), ub_edges_task, &j);
            sb_parallel_for(sb_chunk_count(nv, UB_VALUE_BLOCK), ub_apply_task, &j);
        }
        st = sb_umap_record_epoch(card, t, a->n_epochs, emb, (uint64_t)nv);
    }
done:
    sb_free(next), sb_free(next_neg), sb_free(epsn), sb_free(eps), sb_free(head), sb_free(tail), sb_free(acc);
    return st;
}
