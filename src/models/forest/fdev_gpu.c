/*
 * fdev_gpu.c: the forest device (fdev.h) on a GPU of the device layer
 * (src/device/device.h): one host schedule for every backend, CUDA and
 * OpenCL, launching the entry kernels of src/kernels/entry/forest_entry.h,
 * whose arithmetic is the kernel bodies of src/kernels/forest.h (the same the
 * CPU runs). What this file adds is integer data movement:
 * - bootstrap counts by 32-bit atomics; node sums and histograms by 64-bit
 *   integer atomics, in local memory per work-group when a node's histograms
 *   fit it, then into global memory; small nodes searched on their rows, one
 *   work-item a node; the others from histograms, one work-group a node,
 *   under the total order;
 * - row lists (a tree's in-bag rows, a node's partition) by a stable
 *   count / scan / scatter over tiles: the host adds the tiles' counts, so
 *   every run places every row at the same position;
 * - weighted forests: each position's fixed-point weight moves with its
 *   count; balanced_subsample's tree weights in five steps (integer atomics
 *   for the draws per class, the largest weight and the first bad row); the
 *   isolation forest's subsample a work-item a tree and a node's bin ranges
 *   by integer atomic min and max.
 * Knobs, read for the backend in use (SAMEBITS_CUDA_* or SAMEBITS_OPENCL_*):
 * _TIMING=1, _HIST=global, _FOREST_CHUNK=N (at most N nodes a launch). None
 * changes a bit.
 */
#include "fdev.h"
#include "../../device/device.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FOCL_PER 8                 /* forest_entry.h: positions a work-item of a compaction or partition tile */
#define FOCL_HTILE 8192            /* rows a histogram work-group at most */
#define FOCL_SMALL_CHUNK 65536     /* small nodes a launch (their scratch: about 1 KiB and nf words each) */
#define FOCL_LOCAL_CAP (160 << 10) /* local bytes a histogram work-group may use */
#define FOCL_PART_SERIAL 1024      /* nodes of at most this many rows are partitioned by one work-item */

/* The kernels (src/device/programs.h), by this file's short names. */
enum {
    KF_FILL = SB_KF_kf_fill, KF_BOOT = SB_KF_kf_boot, KF_COMPACT = SB_KF_kf_compact, KF_SUMS = SB_KF_kf_sums,
    KF_SMALL = SB_KF_kf_small, KF_SELECT = SB_KF_kf_select, KF_HIST = SB_KF_kf_hist, KF_BEST = SB_KF_kf_best,
    KF_PART = SB_KF_kf_part, KF_PSERIAL = SB_KF_kf_part_serial, KF_PCOPY = SB_KF_kf_part_copy,
    KF_SUB_COUNTS = SB_KF_kf_sub_counts, KF_SUB_CLASSES = SB_KF_kf_sub_classes, KF_SUB_MAX = SB_KF_kf_sub_max,
    KF_SUB_SCALE = SB_KF_kf_sub_scale, KF_SUB_FIX = SB_KF_kf_sub_fix, KF_ISO_SAMPLE = SB_KF_kf_iso_sample,
    KF_ISO_RANGE = SB_KF_kf_iso_range, KF_ISO_PICK = SB_KF_kf_iso_pick
};

SB_STATIC_ASSERT(sizeof(sb_fdev_node) == 40, "sb_fdev_node is forest_entry.h's ocl_fnode");
SB_STATIC_ASSERT(offsetof(sb_fdev_node, min_w) == 36, "sb_fdev_node is forest_entry.h's ocl_fnode");

/* The operations, as _TIMING reports them. */
enum { FO_BEGIN, FO_SUMS, FO_SMALL, FO_LARGE, FO_PART, FO_ISO, FO_N };
static const char *const fo_names[FO_N] = {"bootstrap", "root sums", "small nodes", "large nodes", "partition",
                                           "isolation"};

/* A device buffer and its size in bytes (grown, contents not kept). */
typedef sb_dbuf fbuf;

/* Buffers. Weighted forests add B_WQ, B_TWQ (the positions' fixed-point
 * weights and their partition copy), B_RWQ (every row's weight) or, for
 * balanced_subsample, B_SW (sample weights) and B_SUBWQ (each tree's
 * weights, batch x n) with its scratch (B_NK .. B_BAD); the isolation forest
 * B_TAKEN (a bitmap a tree) and B_ILO, B_IHI (a chunk's bin ranges). */
enum {
    B_BINS, B_VALUE, B_NBINS, B_RULES, B_ROWS, B_MULT, B_TROWS, B_TMULT, B_CNT, B_NODES, B_TILES, B_TOT, B_TCOUNT,
    B_TBASE, B_HIST, B_SPLIT, B_LSUM, B_DRAWS, B_FEAT, B_SBIN, B_SVAL, B_SMUL, B_SLM, B_WQ, B_TWQ, B_RWQ, B_SW,
    B_SUBWQ, B_NK, B_CW, B_WMAX, B_WEXP, B_BAD, B_SWQ, B_TAKEN, B_ILO, B_IHI, B_N
};

struct sb_fdev {
    sb_device *dv;
    size_t wg;
    /* the next launch's arguments (args): pairs that point at the caller's
     * variables, alive until its launch in the same function */
    sb_darg arg[32];
    int32_t nargs;
    size_t dyn;          /* the next launch's dynamic local bytes */
    size_t local_cap;    /* local bytes kf_hist may take */
    size_t hist_budget;  /* histogram bytes a chunk of large nodes may take */
    int64_t chunk_cap;   /* _FOREST_CHUNK: at most this many nodes a launch (0: no cap) */
    sb_fdev_setup s;     /* the host's copy (array pointers cleared) */
    int32_t stride, maxnb;
    int32_t hassw;       /* balanced_subsample with sample weights (B_SW) */
    fbuf b[B_N];
    double tms[FO_N];
    long tcalls[FO_N];
};

#define A(v) sizeof(v), (const void *)&(v)

static sb_status oom(void) { return sb_fail(SB_ERR_OUT_OF_MEMORY, "forest device: out of memory"); }

/* Kernel k's next launch takes these n (size, pointer) pairs (name: for the
 * messages; the launch names the kernel itself). */
static sb_status args(sb_fdev *d, int k, const char *name, int n, ...) {
    (void)k, (void)name;
    if (n > 32) return sb_fail(SB_ERR_INTERNAL, "forest device: %d arguments for %s", n, name);
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        d->arg[i].size = va_arg(ap, size_t);
        d->arg[i].p = va_arg(ap, const void *);
    }
    va_end(ap);
    d->nargs = n;
    d->dyn = 0;
    return SB_OK;
}

/* Buffer i of at least bytes (contents not kept when it grows). */
static sb_status ensure(sb_fdev *d, int i, size_t bytes, const char *what) {
    fbuf *f = &d->b[i];
    if (f->h && bytes <= f->bytes) return SB_OK;
    sb_device_release(d->dv, f);
    return sb_device_alloc(d->dv, f, bytes < 64 ? 64 : bytes + bytes / 2, what);
}

/* bytes from src into buffer i (grown to hold them); blocking, so the
 * host's array may change at once and, the queue being in order, a pending
 * kernel never sees a later upload. */
static sb_status put(sb_fdev *d, int i, const void *src, size_t bytes, const char *what) {
    sb_status st = ensure(d, i, bytes, what);
    return st == SB_OK ? sb_device_write(d->dv, &d->b[i], 0, src, bytes, what) : st;
}

/* bytes of buffer i into dst (blocking: every kernel before it has run). */
static sb_status get(sb_fdev *d, int i, void *dst, size_t bytes, const char *what) {
    return sb_device_read(d->dv, &d->b[i], 0, dst, bytes, what);
}

/* Kernel k over groups work-groups of d->wg, with the arguments args set. */
static sb_status launch_groups(sb_fdev *d, int k, int64_t groups) {
    return sb_device_launch(d->dv, k, groups, 1, d->dyn, d->arg, d->nargs);
}

/* Kernel k over items work-items (padded to whole work-groups; kernels whose
 * loops stride by the global size take at most 4096 groups). */
static sb_status launch_items(sb_fdev *d, int k, int64_t items, int strided) {
    int64_t groups = (items + (int64_t)d->wg - 1) / (int64_t)d->wg;
    if (strided && groups > 4096) groups = 4096;
    return launch_groups(d, k, groups);
}

/* The int32 words [0, words) of buffer i set to v. */
static sb_status fill(sb_fdev *d, int i, int64_t words, int32_t v) {
    sb_status st = args(d, KF_FILL, "kf_fill", 3, A(d->b[i].h), A(words), A(v));
    return st == SB_OK ? launch_items(d, KF_FILL, words, 1) : st;
}

/* The tile table of nodes cut into tiles of tile positions, uploaded:
 * ts[i] the tiles before node i, ts[nnodes] all (*ntiles); nodes of at most
 * skip rows have none. */
static sb_status tiles(sb_fdev *d, const sb_fdev_node *nodes, int32_t nnodes, int64_t tile, int64_t skip,
                       int32_t *ntiles) {
    int32_t *ts = sb_malloc(sizeof(int32_t) * ((size_t)nnodes + 1));
    if (!ts) return oom();
    int64_t acc = 0;
    for (int32_t i = 0; i < nnodes; i++) {
        ts[i] = (int32_t)acc;
        if (nodes[i].end - nodes[i].begin > skip) acc += (nodes[i].end - nodes[i].begin + tile - 1) / tile;
        if (acc > INT32_MAX) {
            sb_free(ts);
            return sb_fail(SB_ERR_INVALID_INPUT, "forest device: more than 2^31 tiles in one call");
        }
    }
    ts[nnodes] = (int32_t)acc;
    *ntiles = (int32_t)acc;
    sb_status st = put(d, B_TILES, ts, sizeof(int32_t) * ((size_t)nnodes + 1), "tiles");
    sb_free(ts);
    return st;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* With timing: the queue drained, then the time since t0 added to operation k. */
static void t_end(sb_fdev *d, int k, double t0) {
    if (!d->dv->timing) return;
    sb_device_finish(d->dv);
    d->tms[k] += now_ms() - t0;
    d->tcalls[k]++;
}

static void focl_close(sb_fdev *d) {
    if (!d) return;
    if (d->dv) {
        sb_device_finish(d->dv);
        if (d->dv->timing) {
            double total = 0.0;
            const char *bn = sb_device_kind_name(d->dv->kind);
            for (int k = 0; k < FO_N; k++) total += d->tms[k];
            for (int k = 0; k < FO_N; k++)
                fprintf(stderr, "%s forest timing: %-12s %9.1f ms in %7ld calls (%4.1f%%)\n", bn, fo_names[k],
                        d->tms[k], d->tcalls[k], total > 0 ? 100.0 * d->tms[k] / total : 0.0);
            fprintf(stderr, "%s forest timing: %-12s %9.1f ms (work-groups of %zu, local histograms up to %zu bytes)\n",
                    bn, "all", total, d->wg, d->local_cap);
        }
        for (int i = 0; i < B_N; i++) sb_device_release(d->dv, &d->b[i]);
        sb_device_close(d->dv);
    }
    sb_free(d);
}

/* The device chosen and checked, its kernels built (work-groups of 256, or
 * the largest power of two every kernel allows: sizes change no bit), the
 * setup's data uploaded (bins row-major, a row's features contiguous).
 * Histograms go to local memory where a node's fit (at most 160 KiB beside
 * the kernel's own), else by global atomics; SAMEBITS_OPENCL_HIST=global asks
 * for global atomics always, as for the tree device. */
static sb_status open_inner(sb_fdev *d, const sb_fdev_setup *s) {
    sb_status st = sb_device_open(s->device, SB_PROG_FOREST, &d->dv);
    if (st != SB_OK) return st;
    d->wg = (size_t)d->dv->wg;
    const char *hv = sb_device_env(d->dv, "HIST");
    if (hv && *hv && strcmp(hv, "global") != 0 && strncmp(hv, "local", 5) != 0) /* local32, local64: the tree device's */
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "SAMEBITS_%s_HIST='%s': expected local, local32, local64 or global",
                       d->dv->kind == SB_DEVICE_CUDA ? "CUDA" : "OPENCL", hv);
    st = sb_device_env_count(d->dv, "FOREST_CHUNK", "nodes a launch", &d->chunk_cap);
    if (st != SB_OK) return st;
    const int64_t lm = d->dv->local_mem, kl = (int64_t)sb_device_kernel_local(d->dv, KF_HIST);
    d->local_cap = lm > kl + 1024 ? (size_t)(lm - kl - 1024) : 0;
    if (d->local_cap > FOCL_LOCAL_CAP) d->local_cap = FOCL_LOCAL_CAP;
    if (hv && !strcmp(hv, "global")) d->local_cap = 0; /* every histogram by global atomics (tests) */
    const int64_t maxalloc = d->dv->max_alloc;
    d->hist_budget = maxalloc / 2 > ((int64_t)1 << 30) ? (size_t)1 << 30 : (size_t)(maxalloc / 2);
    if (d->hist_budget < ((size_t)1 << 24)) d->hist_budget = (size_t)1 << 24;

    d->hassw = s->rules.weighted && s->subsample && s->sw;
    sb_fdev_setup_keep(s, &d->s, &d->stride, &d->maxnb);
    const size_t n = (size_t)s->n, nf = (size_t)s->nf;
    uint8_t *rb = sb_calloc(n ? n : 1, (size_t)d->stride);
    if (!rb) return oom();
    for (size_t r = 0; r < n; r++)
        for (size_t f = 0; f < nf; f++) rb[r * (size_t)d->stride + f] = s->binned[f * n + r];
    st = put(d, B_BINS, rb, n * (size_t)d->stride, "bins");
    sb_free(rb);
    if (st == SB_OK && s->value) st = put(d, B_VALUE, s->value, sizeof(int32_t) * n, "values");
    if (st == SB_OK && !s->value) { /* the isolation forest has none */
        st = ensure(d, B_VALUE, sizeof(int32_t) * (n ? n : 1), "values");
        if (st == SB_OK) st = fill(d, B_VALUE, (int64_t)n, 0);
    }
    if (st == SB_OK) st = put(d, B_NBINS, s->nbins, sizeof(int32_t) * nf, "nbins");
    if (st == SB_OK) st = put(d, B_RULES, &s->rules, sizeof s->rules, "rules");
    if (st == SB_OK && s->rules.weighted && s->wq) st = put(d, B_RWQ, s->wq, sizeof(int32_t) * n, "weights");
    if (st == SB_OK && d->hassw) st = put(d, B_SW, s->sw, sizeof(float) * n, "sample weights");
    return st;
}

static sb_status focl_open(const sb_fdev_setup *s, sb_fdev **out) {
    *out = NULL;
    if (s->nf < 1) return sb_fail(SB_ERR_INVALID_INPUT, "forest device: no features");
    sb_fdev *d = sb_calloc(1, sizeof *d);
    if (!d) return oom();
    sb_status st = open_inner(d, s);
    if (st != SB_OK) {
        focl_close(d);
        return st;
    }
    *out = d;
    return SB_OK;
}

/* The buffer the kernels read positions' fixed-point weights from: B_WQ when
 * weighted; else the counts, bound only so that every argument is a buffer
 * (unweighted kernels never read it). */
static void *wq_buf(sb_fdev *d) { return d->b[d->s.rules.weighted ? B_WQ : B_MULT].h; }
static void *twq_buf(sb_fdev *d) { return d->b[d->s.rules.weighted ? B_TWQ : B_TMULT].h; }

/* balanced_subsample: each tree's fixed-point weights (B_SUBWQ, nb x n) and
 * scales (wexp, out) from its draw counts (B_CNT), by five steps (forest.c's rule, the kernel bodies of src/kernels/forest.h). A
 * weight not finite or vanishing at its tree's scale: SB_ERR_LIMIT naming
 * the first such tree and its first row, not finite before vanishing, in the
 * words of the other devices. */
static sb_status subsample_weights(sb_fdev *d, int32_t t0, int32_t nb, int32_t *wexp) {
    const int64_t n = d->s.n, pos = n * nb;
    const int32_t K = d->s.rules.nv - 1, hassw = d->hassw;
    void *const sw = d->b[hassw ? B_SW : B_VALUE].h; /* not read without sample weights */
    sb_status st = ensure(d, B_SUBWQ, sizeof(int32_t) * (size_t)pos, "tree weights");
    if (st == SB_OK) st = ensure(d, B_NK, sizeof(int64_t) * (size_t)K * (size_t)nb, "tree weights");
    if (st == SB_OK) st = ensure(d, B_CW, sizeof(float) * (size_t)K * (size_t)nb, "tree weights");
    if (st == SB_OK) st = ensure(d, B_WMAX, sizeof(uint32_t) * (size_t)nb, "tree weights");
    if (st == SB_OK) st = ensure(d, B_WEXP, sizeof(int32_t) * (size_t)nb, "tree weights");
    if (st == SB_OK) st = ensure(d, B_BAD, sizeof(uint32_t) * 2 * (size_t)nb, "tree weights");
    if (st == SB_OK) st = fill(d, B_NK, 2 * (int64_t)K * nb, 0);
    if (st == SB_OK) st = fill(d, B_WMAX, nb, 0);
    if (st == SB_OK) st = fill(d, B_BAD, 2 * (int64_t)nb, -1); /* no row */
    if (st == SB_OK)
        st = args(d, KF_SUB_COUNTS, "kf_sub_counts", 6, A(d->b[B_CNT].h), A(n), A(nb), A(K),
                         A(d->b[B_VALUE].h), A(d->b[B_NK].h));
    if (st == SB_OK) st = launch_items(d, KF_SUB_COUNTS, pos, 1);
    if (st == SB_OK)
        st = args(d, KF_SUB_CLASSES, "kf_sub_classes", 4, A(d->b[B_NK].h), A(nb), A(K), A(d->b[B_CW].h));
    if (st == SB_OK) st = launch_items(d, KF_SUB_CLASSES, nb, 0);
    if (st == SB_OK)
        st = args(d, KF_SUB_MAX, "kf_sub_max", 10, A(d->b[B_CNT].h), A(n), A(nb), A(K), A(d->b[B_VALUE].h),
                         A(hassw), A(sw), A(d->b[B_CW].h), A(d->b[B_WMAX].h), A(d->b[B_BAD].h));
    if (st == SB_OK) st = launch_items(d, KF_SUB_MAX, pos, 1);
    if (st == SB_OK)
        st = args(d, KF_SUB_SCALE, "kf_sub_scale", 3, A(d->b[B_WMAX].h), A(nb), A(d->b[B_WEXP].h));
    if (st == SB_OK) st = launch_items(d, KF_SUB_SCALE, nb, 0);
    if (st == SB_OK)
        st = args(d, KF_SUB_FIX, "kf_sub_fix", 11, A(d->b[B_CNT].h), A(n), A(nb), A(K), A(d->b[B_VALUE].h),
                         A(hassw), A(sw), A(d->b[B_CW].h), A(d->b[B_WEXP].h), A(d->b[B_SUBWQ].h),
                         A(d->b[B_BAD].h));
    if (st == SB_OK) st = launch_items(d, KF_SUB_FIX, pos, 1);
    if (st == SB_OK) st = get(d, B_WEXP, wexp, sizeof(int32_t) * (size_t)nb, "tree weights");
    uint32_t *bad = st == SB_OK ? sb_malloc(sizeof(uint32_t) * 2 * (size_t)nb) : NULL;
    if (st == SB_OK && !bad) st = oom();
    if (st == SB_OK) st = get(d, B_BAD, bad, sizeof(uint32_t) * 2 * (size_t)nb, "tree weights");
    int32_t ti = -1;
    uint32_t row = 0;
    for (int32_t i = 0; st == SB_OK && i < nb && ti < 0; i++)
        if (bad[i] != UINT32_MAX || bad[nb + i] != UINT32_MAX) {
            ti = i;
            row = bad[i] != UINT32_MAX ? bad[i] : bad[nb + i];
        }
    sb_free(bad);
    if (st != SB_OK || ti < 0) return st;
    float w = 1.0f;
    if (hassw)
        if ((st = sb_device_read(d->dv, &d->b[B_SW], sizeof(float) * row, &w, sizeof w, "sample weight")) != SB_OK)
            return st;
    return sb_fail(SB_ERR_LIMIT,
                   "forest: the weight of row %lld in tree %d (sample weight %g times its class weight) is not "
                   "finite, or is positive but below the fixed-point resolution (2^-21 of the largest weight), "
                   "where it would count as zero",
                   (long long)row, (int)(t0 + ti), (double)w);
}

/* The batch's in-bag rows: draw counts (kf_boot, or 1 each), balanced_subsample's
 * tree weights, then each tree's rows with a count (and, weighted, a positive
 * weight) in row order (kf_compact: the tiles' counts, the host's scan of
 * them, the stable scatter). */
static sb_status focl_begin_x(sb_fdev *d, int32_t t0, int32_t nb, int64_t *count, int32_t *wexp) {
    for (int32_t i = 0; i < nb; i++) wexp[i] = d->s.rules.wexp; /* the setup's, unless balanced_subsample */
    const int64_t n = d->s.n, pos = n * nb;
    const int64_t tile = (int64_t)d->wg * FOCL_PER, tpt = n > 0 ? (n + tile - 1) / tile : 0, nt = tpt * nb;
    const size_t pb = sizeof(int32_t) * (size_t)(pos ? pos : 1);
    const int32_t weighted = d->s.rules.weighted, wmode = !weighted ? 0 : d->s.subsample ? 2 : 1;
    sb_status st = SB_OK;
    for (int i = B_ROWS; i <= B_CNT && st == SB_OK; i++) st = ensure(d, i, pb, "rows");
    if (st == SB_OK && weighted) st = ensure(d, B_WQ, pb, "weights");
    if (st == SB_OK && weighted) st = ensure(d, B_TWQ, pb, "weights");
    if (st == SB_OK) st = ensure(d, B_TCOUNT, sizeof(int32_t) * (size_t)(nt ? nt : 1), "tiles");
    if (st == SB_OK) st = ensure(d, B_TBASE, sizeof(int64_t) * (size_t)(nt ? nt : 1), "tiles");
    if (st != SB_OK) return st;
    if (pos == 0 || nt > INT32_MAX) {
        for (int32_t i = 0; i < nb; i++) count[i] = 0;
        return pos == 0 ? SB_OK : sb_fail(SB_ERR_INVALID_INPUT, "forest device: too many rows a batch");
    }
    if (d->s.bootstrap) {
        if ((st = fill(d, B_CNT, pos, 0)) != SB_OK) return st;
        if ((st = args(d, KF_BOOT, "kf_boot", 6, A(d->b[B_CNT].h), A(n), A(nb), A(t0), A(d->s.seed),
                              A(d->s.ndraw))) != SB_OK ||
            (st = launch_items(d, KF_BOOT, (int64_t)nb * d->s.ndraw, 1)) != SB_OK)
            return st;
    } else if ((st = fill(d, B_CNT, pos, 1)) != SB_OK) {
        return st;
    }
    if (wmode == 2 && (st = subsample_weights(d, t0, nb, wexp)) != SB_OK) return st;
    void *const w = d->b[wmode == 2 ? B_SUBWQ : wmode == 1 ? B_RWQ : B_CNT].h;
    void *const wq = wq_buf(d); /* B_CNT: not read */
    int32_t *tc = sb_malloc(sizeof(int32_t) * (size_t)nt);
    int64_t *tb = sb_malloc(sizeof(int64_t) * (size_t)nt);
    if (!tc || !tb) {
        sb_free(tc);
        sb_free(tb);
        return oom();
    }
    const int32_t itpt = (int32_t)tpt;
    for (int place = 0; place < 2 && st == SB_OK; place++) {
        st = args(d, KF_COMPACT, "kf_compact", 11, A(d->b[B_CNT].h), A(n), A(itpt), A(place),
                         A(d->b[B_TCOUNT].h), A(d->b[B_TBASE].h), A(d->b[B_ROWS].h), A(d->b[B_MULT].h), A(wmode),
                         A(w), A(wq));
        if (st == SB_OK) st = launch_groups(d, KF_COMPACT, nt);
        if (st == SB_OK && place == 0) {
            st = get(d, B_TCOUNT, tc, sizeof(int32_t) * (size_t)nt, "tile counts");
            int64_t at = 0;
            for (int32_t i = 0; i < nb && st == SB_OK; i++) {
                const int64_t first = at;
                for (int64_t g = (int64_t)i * tpt; g < (int64_t)(i + 1) * tpt; g++) {
                    tb[g] = at;
                    at += tc[g];
                }
                count[i] = at - first;
            }
            if (st == SB_OK) st = put(d, B_TBASE, tb, sizeof(int64_t) * (size_t)nt, "tile bases");
        }
    }
    sb_free(tc);
    sb_free(tb);
    return st;
}

static sb_status focl_sums_x(sb_fdev *d, const sb_fdev_node *nodes, int32_t nnodes, int64_t *sums) {
    const int32_t nv = d->s.rules.nv, crit = d->s.rules.criterion, weighted = d->s.rules.weighted;
    void *const wq = wq_buf(d);
    const size_t sb = sizeof(int64_t) * (size_t)nnodes * (size_t)nv;
    int32_t nt = 0;
    sb_status st = put(d, B_NODES, nodes, sizeof(sb_fdev_node) * (size_t)nnodes, "nodes");
    if (st == SB_OK) st = tiles(d, nodes, nnodes, (int64_t)d->wg * FOCL_PER, 0, &nt);
    if (st == SB_OK) st = ensure(d, B_TOT, sb, "sums");
    if (st == SB_OK) st = fill(d, B_TOT, (int64_t)nnodes * nv * 2, 0);
    if (st == SB_OK)
        st = args(d, KF_SUMS, "kf_sums", 11, A(d->b[B_NODES].h), A(d->b[B_TILES].h), A(nnodes), A(crit),
                         A(nv), A(weighted), A(d->b[B_ROWS].h), A(d->b[B_MULT].h), A(wq), A(d->b[B_VALUE].h),
                         A(d->b[B_TOT].h));
    if (st == SB_OK) st = launch_groups(d, KF_SUMS, nt);
    if (st == SB_OK) st = get(d, B_TOT, sums, sb, "sums");
    return st;
}

/* One group of nodes of split: all small (searched on their rows), or a
 * chunk of large ones (histograms, then the search). */
static sb_status split_group(sb_fdev *d, const sb_fdev_node *nodes, const int64_t *tot, int32_t m, int small,
                             sb_k_fsplit *out, int64_t *lsum) {
    const int32_t nv = d->s.rules.nv, mtry = d->s.mtry, nf = d->s.nf, slot = (d->maxnb + 1) * nv;
    const int32_t extra = d->s.extra, crit = d->s.rules.criterion, maxnb = d->maxnb, stride = d->stride;
    const int32_t weighted = d->s.rules.weighted;
    void *const wq = wq_buf(d);
    const size_t mm = (size_t)m;
    sb_status st = put(d, B_NODES, nodes, sizeof(sb_fdev_node) * mm, "nodes");
    if (st == SB_OK) st = put(d, B_TOT, tot, sizeof(int64_t) * mm * (size_t)nv, "sums");
    if (st == SB_OK) st = ensure(d, B_SPLIT, sizeof(sb_k_fsplit) * mm, "splits");
    if (st == SB_OK) st = ensure(d, B_LSUM, sizeof(int64_t) * mm * (size_t)nv, "left sums");
    if (st == SB_OK) st = ensure(d, B_DRAWS, sizeof(uint32_t) * mm * (size_t)nf, "draws");
    if (st != SB_OK) return st;
    if (small) {
        if ((st = ensure(d, B_SBIN, mm * SB_K_FOREST_SMALL_ROWS, "small nodes")) != SB_OK ||
            (st = ensure(d, B_SVAL, sizeof(int32_t) * mm * SB_K_FOREST_SMALL_ROWS, "small nodes")) != SB_OK ||
            (st = ensure(d, B_SMUL, sizeof(int32_t) * mm * SB_K_FOREST_SMALL_ROWS, "small nodes")) != SB_OK ||
            (weighted &&
             (st = ensure(d, B_SWQ, sizeof(int32_t) * mm * SB_K_FOREST_SMALL_ROWS, "small nodes")) != SB_OK) ||
            (st = ensure(d, B_SLM, sizeof(int64_t) * mm * 2 * SB_K_FOREST_SMALL_NV, "small nodes")) != SB_OK)
            return st;
        st = args(d, KF_SMALL, "kf_small", 22, A(d->b[B_NODES].h), A(d->b[B_TOT].h), A(m),
                         A(d->b[B_RULES].h), A(d->s.seed), A(extra), A(nf), A(mtry), A(d->b[B_BINS].h), A(stride),
                         A(d->b[B_ROWS].h), A(d->b[B_MULT].h), A(wq), A(d->b[B_VALUE].h), A(d->b[B_DRAWS].h),
                         A(d->b[B_SBIN].h), A(d->b[B_SVAL].h), A(d->b[B_SMUL].h),
                         A(d->b[weighted ? B_SWQ : B_SMUL].h), A(d->b[B_SLM].h), A(d->b[B_SPLIT].h),
                         A(d->b[B_LSUM].h));
        if (st == SB_OK) st = launch_items(d, KF_SMALL, m, 0);
    } else {
        const size_t hbytes = sizeof(int64_t) * (size_t)mtry * (size_t)slot;
        const int32_t use_local = hbytes <= d->local_cap, htile = FOCL_HTILE;
        int32_t nt = 0;
        if ((st = ensure(d, B_FEAT, sizeof(int32_t) * mm * (size_t)mtry, "features")) != SB_OK ||
            (st = ensure(d, B_HIST, hbytes * mm, "histograms")) != SB_OK ||
            (st = fill(d, B_HIST, (int64_t)(hbytes / 4) * m, 0)) != SB_OK ||
            (st = tiles(d, nodes, m, FOCL_HTILE, 0, &nt)) != SB_OK)
            return st;
        st = args(d, KF_SELECT, "kf_select", 7, A(d->b[B_NODES].h), A(m), A(d->s.seed), A(nf), A(mtry),
                         A(d->b[B_DRAWS].h), A(d->b[B_FEAT].h));
        if (st == SB_OK) st = launch_items(d, KF_SELECT, m, 0);
        if (st == SB_OK)
            st = args(d, KF_HIST, "kf_hist", 18, A(d->b[B_NODES].h), A(d->b[B_TILES].h), A(m), A(htile),
                             A(crit), A(nv), A(weighted), A(mtry), A(slot), A(d->b[B_FEAT].h), A(d->b[B_BINS].h),
                             A(stride), A(d->b[B_ROWS].h), A(d->b[B_MULT].h), A(wq), A(d->b[B_VALUE].h),
                             A(d->b[B_HIST].h), A(use_local));
        d->dyn = use_local ? hbytes : 8; /* kf_hist's SB_DYN_LOCAL */
        if (st == SB_OK) st = launch_groups(d, KF_HIST, nt);
        if (st == SB_OK)
            st = args(d, KF_BEST, "kf_best", 13, A(d->b[B_TOT].h), A(d->b[B_RULES].h), A(d->s.seed),
                             A(d->b[B_NODES].h), A(extra), A(mtry), A(maxnb), A(slot), A(d->b[B_FEAT].h),
                             A(d->b[B_NBINS].h), A(d->b[B_HIST].h), A(d->b[B_SPLIT].h), A(d->b[B_LSUM].h));
        if (st == SB_OK) st = launch_groups(d, KF_BEST, m);
    }
    if (st == SB_OK) st = get(d, B_SPLIT, out, sizeof(sb_k_fsplit) * mm, "splits");
    if (st == SB_OK) st = get(d, B_LSUM, lsum, sizeof(int64_t) * mm * (size_t)nv, "left sums");
    return st;
}

/* The grouping: the small nodes first in chunks, then the large
 * in chunks whose histograms fit the budget (_FOREST_CHUNK=N:
 * at most N nodes a launch; tests: chunks change no bit), the results put
 * back by index. */
static sb_status focl_split(sb_fdev *d, const sb_fdev_node *nodes, int32_t nnodes, const int64_t *tot,
                            sb_k_fsplit *out, int64_t *lsum) {
    const int32_t nv = d->s.rules.nv;
    const size_t hbytes = sizeof(int64_t) * (size_t)d->s.mtry * (size_t)(d->maxnb + 1) * (size_t)nv;
    int64_t chunk = (int64_t)(d->hist_budget / hbytes), small_chunk = FOCL_SMALL_CHUNK;
    if (d->chunk_cap > 0) {
        if (chunk > d->chunk_cap) chunk = d->chunk_cap;
        if (small_chunk > d->chunk_cap) small_chunk = d->chunk_cap;
    }
    if (chunk < 1) chunk = 1;
    int32_t *idx = sb_malloc(sizeof(int32_t) * (size_t)nnodes);
    sb_fdev_node *gn = sb_malloc(sizeof(sb_fdev_node) * (size_t)nnodes);
    int64_t *gt = sb_malloc(sizeof(int64_t) * (size_t)nnodes * (size_t)nv);
    int64_t *gl = sb_malloc(sizeof(int64_t) * (size_t)nnodes * (size_t)nv);
    sb_k_fsplit *gs = sb_malloc(sizeof(sb_k_fsplit) * (size_t)nnodes);
    sb_status st = SB_OK;
    if (!idx || !gn || !gt || !gl || !gs) st = oom();
    int32_t nsmall = 0, ng = 0;
    for (int pass = 0; pass < 2 && st == SB_OK; pass++)
        for (int32_t i = 0; i < nnodes; i++) {
            const int small = nodes[i].end - nodes[i].begin <= SB_K_FOREST_SMALL_ROWS && nv <= SB_K_FOREST_SMALL_NV;
            if (small != (pass == 0)) continue;
            idx[ng] = i;
            gn[ng] = nodes[i];
            memcpy(gt + (int64_t)ng * nv, tot + (int64_t)i * nv, sizeof(int64_t) * (size_t)nv);
            ng++;
            nsmall += small;
        }
    double t0 = d->dv->timing ? now_ms() : 0.0;
    for (int64_t at = 0; st == SB_OK && at < nsmall; at += small_chunk) {
        const int32_t m = (int32_t)(nsmall - at < small_chunk ? nsmall - at : small_chunk);
        st = split_group(d, gn + at, gt + at * nv, m, 1, gs + at, gl + at * nv);
    }
    t_end(d, FO_SMALL, t0);
    t0 = d->dv->timing ? now_ms() : 0.0;
    for (int64_t at = nsmall; st == SB_OK && at < ng; at += chunk) {
        const int32_t m = (int32_t)(ng - at < chunk ? ng - at : chunk);
        st = split_group(d, gn + at, gt + at * nv, m, 0, gs + at, gl + at * nv);
    }
    t_end(d, FO_LARGE, t0);
    for (int32_t g = 0; st == SB_OK && g < ng; g++) {
        out[idx[g]] = gs[g];
        memcpy(lsum + (int64_t)idx[g] * nv, gl + (int64_t)g * nv, sizeof(int64_t) * (size_t)nv);
    }
    sb_free(idx);
    sb_free(gn);
    sb_free(gt);
    sb_free(gl);
    sb_free(gs);
    return st;
}

/* The stable partition. Nodes of at most FOCL_PART_SERIAL rows: one
 * work-item each (kf_part_serial). Larger ones: each tile's rows going left
 * counted (kf_part pass 1), the host's scan of the counts into each tile's
 * left and right bases, the scatter (pass 2), and the rows copied back
 * (kf_part_copy). Either way every row lands where the stable partition puts
 * it. */
static sb_status focl_partition_x(sb_fdev *d, const sb_fdev_node *nodes, int32_t nnodes, int64_t *nleft) {
    const int64_t tile = (int64_t)d->wg * FOCL_PER, serial = FOCL_PART_SERIAL;
    const int32_t weighted = d->s.rules.weighted;
    void *const wq = wq_buf(d), *const twq = twq_buf(d);
    int32_t nt = 0;
    sb_status st = put(d, B_NODES, nodes, sizeof(sb_fdev_node) * (size_t)nnodes, "nodes");
    if (st == SB_OK) st = tiles(d, nodes, nnodes, tile, serial, &nt);
    if (st == SB_OK) st = ensure(d, B_TCOUNT, sizeof(int32_t) * (size_t)(nt ? nt : 1), "tiles");
    if (st == SB_OK) st = ensure(d, B_TBASE, sizeof(int64_t) * 2 * (size_t)(nt ? nt : 1), "tiles");
    if (st == SB_OK) st = ensure(d, B_LSUM, sizeof(int64_t) * (size_t)(nnodes ? nnodes : 1), "partition counts");
    if (st != SB_OK) return st;
    for (int32_t i = 0; i < nnodes; i++) nleft[i] = 0;
    st = args(d, KF_PSERIAL, "kf_part_serial", 13, A(d->b[B_NODES].h), A(nnodes), A(serial),
                     A(d->b[B_BINS].h), A(d->stride), A(d->b[B_ROWS].h), A(d->b[B_MULT].h), A(d->b[B_LSUM].h),
                     A(d->b[B_TROWS].h), A(d->b[B_TMULT].h), A(weighted), A(wq), A(twq));
    if (st == SB_OK) st = launch_items(d, KF_PSERIAL, nnodes, 0);
    if (st == SB_OK) st = get(d, B_LSUM, nleft, sizeof(int64_t) * (size_t)nnodes, "partition counts");
    if (st != SB_OK || nt == 0) return st;
    int32_t *tc = sb_malloc(sizeof(int32_t) * (size_t)nt);
    int64_t *tb = sb_malloc(sizeof(int64_t) * 2 * (size_t)nt);
    if (!tc || !tb) {
        sb_free(tc);
        sb_free(tb);
        return oom();
    }
    for (int place = 0; place < 2 && st == SB_OK; place++) {
        st = args(d, KF_PART, "kf_part", 15, A(d->b[B_NODES].h), A(d->b[B_TILES].h), A(nnodes), A(place),
                         A(d->b[B_BINS].h), A(d->stride), A(d->b[B_ROWS].h), A(d->b[B_MULT].h), A(d->b[B_TCOUNT].h),
                         A(d->b[B_TBASE].h), A(d->b[B_TROWS].h), A(d->b[B_TMULT].h), A(weighted), A(wq), A(twq));
        if (st == SB_OK) st = launch_groups(d, KF_PART, nt);
        if (st == SB_OK && place == 0) {
            st = get(d, B_TCOUNT, tc, sizeof(int32_t) * (size_t)nt, "tile counts");
            int32_t g = 0;
            for (int32_t i = 0; i < nnodes && st == SB_OK; i++) {
                const int64_t rows = nodes[i].end - nodes[i].begin;
                if (rows <= serial) continue; /* kf_part_serial's */
                const int64_t ntile = (rows + tile - 1) / tile;
                for (int64_t k = 0; k < ntile; k++) nleft[i] += tc[g + k];
                int64_t l = nodes[i].begin, r = nodes[i].begin + nleft[i];
                for (int64_t k = 0; k < ntile; k++, g++) {
                    const int64_t in_tile = (k + 1) * tile <= rows ? tile : rows - k * tile;
                    tb[2 * (int64_t)g] = l;
                    tb[2 * (int64_t)g + 1] = r;
                    l += tc[g];
                    r += in_tile - tc[g];
                }
            }
            if (st == SB_OK) st = put(d, B_TBASE, tb, sizeof(int64_t) * 2 * (size_t)nt, "tile bases");
        }
    }
    sb_free(tc);
    sb_free(tb);
    if (st == SB_OK)
        st = args(d, KF_PCOPY, "kf_part_copy", 10, A(d->b[B_NODES].h), A(d->b[B_TILES].h), A(nnodes),
                         A(d->b[B_TROWS].h), A(d->b[B_TMULT].h), A(d->b[B_ROWS].h), A(d->b[B_MULT].h), A(weighted),
                         A(twq), A(wq));
    if (st == SB_OK) st = launch_groups(d, KF_PCOPY, nt);
    return st;
}

/* The operations, timed when asked (_TIMING=1). */
static sb_status focl_begin(sb_fdev *d, int32_t t0, int32_t nb, int64_t *count, int32_t *wexp) {
    const double t = d->dv->timing ? now_ms() : 0.0;
    sb_status st = focl_begin_x(d, t0, nb, count, wexp);
    t_end(d, FO_BEGIN, t);
    return st;
}

static sb_status focl_sums(sb_fdev *d, const sb_fdev_node *nodes, int32_t nnodes, int64_t *sums) {
    const double t = d->dv->timing ? now_ms() : 0.0;
    sb_status st = focl_sums_x(d, nodes, nnodes, sums);
    t_end(d, FO_SUMS, t);
    return st;
}

static sb_status focl_partition(sb_fdev *d, const sb_fdev_node *nodes, int32_t nnodes, int64_t *nleft) {
    const double t = d->dv->timing ? now_ms() : 0.0;
    sb_status st = focl_partition_x(d, nodes, nnodes, nleft);
    t_end(d, FO_PART, t);
    return st;
}

/* Isolation forest: tree t0 + i's subsample at positions [i * psi, (i + 1) *
 * psi), a work-item a tree (kf_iso_sample), count 1 each; or, weighted, the
 * host's draws (rows) written there, count 1 each (the weights act only in
 * the draw). */
static sb_status focl_iso_begin(sb_fdev *d, int32_t t0, int32_t nb, const int32_t *rows) {
    const double t = d->dv->timing ? now_ms() : 0.0;
    const int64_t psi = d->s.psi, n = d->s.n, words = (n + 31) / 32;
    const size_t pb = sizeof(int32_t) * (size_t)(psi * nb > 0 ? psi * nb : 1);
    sb_status st = SB_OK;
    for (int i = B_ROWS; i <= B_TMULT && st == SB_OK; i++) st = ensure(d, i, pb, "rows");
    if (rows) {
        if (st == SB_OK) st = put(d, B_ROWS, rows, sizeof(int32_t) * (size_t)(psi * nb), "rows");
        if (st == SB_OK) st = fill(d, B_MULT, psi * nb, 1);
        t_end(d, FO_BEGIN, t);
        return st;
    }
    if (st == SB_OK) st = ensure(d, B_TAKEN, sizeof(uint32_t) * (size_t)(words * nb > 0 ? words * nb : 1), "subsample");
    if (st == SB_OK) st = fill(d, B_TAKEN, words * nb, 0);
    if (st == SB_OK)
        st = args(d, KF_ISO_SAMPLE, "kf_iso_sample", 9, A(nb), A(t0), A(d->s.seed), A(n), A(psi),
                         A(d->b[B_TAKEN].h), A(words), A(d->b[B_ROWS].h), A(d->b[B_MULT].h));
    if (st == SB_OK) st = launch_items(d, KF_ISO_SAMPLE, nb, 0);
    t_end(d, FO_BEGIN, t);
    return st;
}

/* Isolation forest: each node's split, in chunks whose bin ranges (nodes x
 * nf int32, twice) stay within 2^26 values: the ranges by integer atomics
 * over tiles of the nodes' rows (kf_iso_range, tile tables as the
 * partition's), then a work-item a node draws (kf_iso_pick). */
static sb_status focl_iso_split(sb_fdev *d, const sb_fdev_node *nodes, int32_t nnodes, sb_k_fsplit *out) {
    const double t = d->dv->timing ? now_ms() : 0.0;
    const int32_t nf = d->s.nf;
    int64_t chunk = ((int64_t)1 << 26) / nf;
    if (chunk < 1) chunk = 1;
    sb_status st = SB_OK;
    for (int64_t at = 0; at < nnodes && st == SB_OK; at += chunk) {
        const int32_t m = (int32_t)(nnodes - at < chunk ? nnodes - at : chunk);
        const int64_t words = (int64_t)m * nf;
        int32_t nt = 0;
        st = put(d, B_NODES, nodes + at, sizeof(sb_fdev_node) * (size_t)m, "nodes");
        if (st == SB_OK) st = tiles(d, nodes + at, m, (int64_t)d->wg * FOCL_PER, 0, &nt);
        if (st == SB_OK) st = ensure(d, B_SPLIT, sizeof(sb_k_fsplit) * (size_t)m, "splits");
        if (st == SB_OK) st = ensure(d, B_ILO, sizeof(int32_t) * (size_t)words, "bin ranges");
        if (st == SB_OK) st = ensure(d, B_IHI, sizeof(int32_t) * (size_t)words, "bin ranges");
        if (st == SB_OK) st = fill(d, B_ILO, words, 256);
        if (st == SB_OK) st = fill(d, B_IHI, words, -1);
        if (st == SB_OK)
            st = args(d, KF_ISO_RANGE, "kf_iso_range", 9, A(d->b[B_NODES].h), A(d->b[B_TILES].h), A(m),
                             A(nf), A(d->b[B_BINS].h), A(d->stride), A(d->b[B_ROWS].h), A(d->b[B_ILO].h),
                             A(d->b[B_IHI].h));
        if (st == SB_OK) st = launch_groups(d, KF_ISO_RANGE, nt);
        if (st == SB_OK)
            st = args(d, KF_ISO_PICK, "kf_iso_pick", 7, A(d->b[B_NODES].h), A(m), A(nf), A(d->s.seed),
                             A(d->b[B_ILO].h), A(d->b[B_IHI].h), A(d->b[B_SPLIT].h));
        if (st == SB_OK) st = launch_items(d, KF_ISO_PICK, m, 0);
        if (st == SB_OK) st = get(d, B_SPLIT, out + at, sizeof(sb_k_fsplit) * (size_t)m, "splits");
    }
    t_end(d, FO_ISO, t);
    return st;
}

/* Row positions a batch: 20 bytes each on the device (weighted 28, and 32 with
 * balanced_subsample's tree weights), so at most a 32nd of what one buffer may
 * hold (the device's memory, over what its largest buffer may be) and at most
 * 2^30 (32 GiB): every tree of a 10M-row forest of 32 trees in one batch on a
 * large GPU, a few on a small one. */
static int64_t focl_positions(sb_fdev *d) {
    int64_t p = d->dv->max_alloc / 32;
    if (p > (INT64_C(1) << 30)) p = INT64_C(1) << 30;
    return p < (INT64_C(1) << 20) ? INT64_C(1) << 20 : p;
}

/* batch_positions: before a device is open, the least any device takes */
static const sb_fdev_ops k_fgpu_ops = {"gpu",          INT64_C(1) << 20, focl_open,      focl_close,
                                       focl_begin,     focl_sums,        focl_split,     focl_partition,
                                       focl_iso_begin, focl_iso_split,   focl_positions};

const sb_fdev_ops *sb_fdev_gpu_ops(void) { return &k_fgpu_ops; }
