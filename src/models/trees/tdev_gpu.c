/*
 * tdev_gpu.c: the tree device (tdev.h) on a GPU of the device layer
 * (src/device/device.h): one host schedule for every backend, CUDA and
 * OpenCL, launching the entry kernels of src/kernels/entry/tree_entry.h,
 * which both compile from the same source. The arithmetic is the kernel
 * bodies of src/kernels/ (the same the CPU runs); no float atomic, no float
 * reduction in thread order, so the schedule below moves no bit.
 *
 * The schedule: a partition spread over tiles of rows, one work-group each
 * (count, scan per segment, stable scatter, copy); histograms per work-group
 * in local memory over feature groups that fit it, then into the node's by
 * 64-bit global atomics, with as many work-groups as fill the compute units;
 * or, where local memory cannot hold a group (or SAMEBITS_<BACKEND>_HIST=global,
 * BACKEND being CUDA or OPENCL), 64-bit global atomics per row. Knobs, each
 * read for the backend in use (sb_device_env): _TIMING=1 times each operation
 * (a clFinish / cudaDeviceSynchronize around it) and prints the totals at
 * close; _CHECK_PARTITION=1 has the host check that every partition is the
 * stable one (tests). None changes a result.
 */
#include "tdev.h"
#include "../../device/device.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The schedule's sizes (tree_entry.h). A partition tile is 8 rows a
 * work-item. A histogram tile has at most 16384 rows (the count packed above
 * bit 48 of a local bin needs fewer than 2^16) and at least 1024 (each
 * work-group flushes its bins with global atomics). A feature group has at
 * most 256 features and as many bins as local memory holds, 64 KiB at most. */
#define PART_PER 8
#define HIST_TILE_MAX 16384
#define HIST_TILE_MIN 1024
#define HIST_GROUP_FEATURES 256
#define HIST_LOCAL_CAP 65536
#define HIST_RUN_ENTRIES (4 * 256) /* a run of 4 features of 255 bins (and missing) */

typedef struct fgroup { /* features [f0, f1) whose bins are entries [e0, e1) (tree_entry.h's ocl_fgroup) */
    int32_t f0, f1, e0, e1;
} fgroup;

SB_STATIC_ASSERT(sizeof(sb_tdev_seg) == 64, "sb_tdev_seg is tree_entry.h's ocl_seg");
SB_STATIC_ASSERT(sizeof(sb_tdev_hjob) == 24, "sb_tdev_hjob is tree_entry.h's ocl_hjob");
SB_STATIC_ASSERT(sizeof(sb_tdev_sub) == 8, "sb_tdev_sub is tree_entry.h's ocl_sub");
SB_STATIC_ASSERT(sizeof(sb_tdev_node) == 32, "sb_tdev_node is tree_entry.h's ocl_node");
SB_STATIC_ASSERT(sizeof(fgroup) == 16, "fgroup is tree_entry.h's ocl_fgroup");

enum { U_A, U_B, U_N }; /* per-call upload buffers */

struct sb_tdev {
    sb_device *dv;
    int64_t wg;
    int64_t n;
    int32_t nf, stride, total, K, objective, nslots;
    float obj_param;
    sb_dbuf bins, nbins, hoff, label, weight, margin, g, h, gq, hq, rows, tmp, mask, slots, maxbits, best;
    sb_dbuf up[U_N];
    sb_dbuf tleft, sleft; /* partition scratch: left rows per tile, per segment */
    sb_dbuf rsum;         /* reduce_hist's scratch: one slot */
    int hist_local;       /* 1: local-memory histograms over the feature groups; 0: the global fallback */
    int hist_bytes;       /* local bytes a bin: 20 (k_hist_local32, the default) or 16 (k_hist_local) */
    char hist_why[160];
    sb_dbuf groups;       /* ngroups fgroups */
    int32_t ngroups;
    size_t hist_acc;      /* local bytes a k_hist_local work-group needs (its largest group's bins) */
    int32_t most_ptiles, most_htiles, most_hrows; /* the largest launches seen, for the timing's schedule line */
    uint8_t *check_bins;  /* _CHECK_PARTITION=1: the row-major bins on the host (see part_check) */
    int64_t part_checked; /* rows whose partition was checked */
    double t0, tms[8];
    long tcalls[8];
};

static const char *const k_tnames[8] = {"gradients", "quantize", "set_rows", "partition",
                                        "histograms", "subtract", "split search", "add_tree"};

/* The backend's name for messages ("cuda", "opencl"). */
static const char *bname(const sb_tdev *d) { return sb_device_kind_name(d->dv->kind); }

static void gpu_close(sb_tdev *d) {
    if (!d) return;
    const char *bn = d->dv ? bname(d) : "device";
    if (d->dv) {
        sb_device_finish(d->dv);
        if (d->dv->timing) {
            double total = 0.0;
            for (int k = 0; k < 8; k++) total += d->tms[k];
            for (int k = 0; k < 8; k++)
                fprintf(stderr, "%s timing: %-13s %9.1f ms in %7ld calls (%4.1f%%)\n", bname(d), k_tnames[k], d->tms[k],
                        d->tcalls[k], total > 0 ? 100.0 * d->tms[k] / total : 0.0);
            fprintf(stderr, "%s timing: %-13s %9.1f ms\n", bname(d), "all", total);
            if (d->hist_local)
                fprintf(stderr,
                        "%s schedule: work-groups of %lld; partition up to %d work-groups a call; histograms in local "
                        "memory (%d-bit atomics), %d feature group(s) of up to %zu bytes, up to %d tile(s) of %d rows a "
                        "call, %d compute units\n",
                        bname(d), (long long)d->wg, d->most_ptiles, d->hist_bytes == 20 ? 32 : 64, d->ngroups,
                        d->hist_acc, d->most_htiles,
                        d->most_hrows, d->dv->cus);
            else
                fprintf(stderr,
                        "%s schedule: work-groups of %lld; partition up to %d work-groups a call; histograms by "
                        "global atomics (%s)\n",
                        bname(d), (long long)d->wg, d->most_ptiles, d->hist_why);
        }
        sb_dbuf *ms[] = {&d->bins,  &d->nbins, &d->hoff,  &d->label, &d->weight, &d->margin,  &d->g,
                         &d->h,     &d->gq,    &d->hq,    &d->rows,  &d->tmp,    &d->mask,    &d->slots,
                         &d->maxbits, &d->best, &d->up[0], &d->up[1], &d->tleft, &d->sleft, &d->groups, &d->rsum};
        for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) sb_device_release(d->dv, ms[i]);
        sb_device_close(d->dv);
    }
    if (d->check_bins)
        fprintf(stderr, "%s partition check: %lld rows placed as the stable partition places them\n", bn,
                (long long)d->part_checked);
    sb_free(d->check_bins);
    sb_free(d);
}

/* Upload buffer u holding bytes (contents not kept when it grows). Writes
 * block and operations run in order, so a buffer is never overwritten while
 * a kernel that reads it is pending. */
static sb_status upload(sb_tdev *d, int u, const void *src, size_t bytes, const char *what) {
    sb_status st = sb_device_ensure(d->dv, &d->up[u], bytes, what);
    return st != SB_OK ? st : sb_device_write(d->dv, &d->up[u], 0, src, bytes, what);
}

/* The tile table of items (segments or histogram jobs: structs of `size`
 * bytes that begin with int64 begin, end) whose rows [begin, end) are cut
 * into tiles of `tile` rows: ts[i] = the tiles before item i, ts[nitems] =
 * all of them (malloc'ed; NULL when out of memory or past 2^31 - 1 tiles). */
static int32_t *tile_table(const void *items, int32_t nitems, size_t size, int64_t tile) {
    int32_t *ts = sb_malloc(sizeof(int32_t) * ((size_t)nitems + 1));
    if (!ts) return NULL;
    int64_t acc = 0;
    for (int32_t i = 0; i < nitems; i++) {
        int64_t p[2]; /* begin, end */
        memcpy(p, (const char *)items + size * (size_t)i, sizeof p);
        ts[i] = (int32_t)acc;
        acc += (p[1] - p[0] + tile - 1) / tile;
        if (acc > INT32_MAX) {
            sb_free(ts);
            return NULL;
        }
    }
    ts[nitems] = (int32_t)acc;
    return ts;
}

/* Work-groups that cover items work-items. */
static int64_t groups_of(const sb_tdev *d, int64_t items) { return (items + d->wg - 1) / d->wg; }

/* How the histograms are built: in local memory (a work-group's bins for a
 * group of features, when the device's local memory holds at least a run of
 * 4 features of 255 bins and missing, 20 KiB, beside the kernel's own 2 KiB),
 * by 32-bit local atomics (k_hist_local32, 20 bytes a bin: the default) or
 * 64-bit ones (k_hist_local, 16 bytes); or by 64-bit global atomics straight
 * into the node's histogram (the fallback), with why. All give the same bits.
 * _HIST=local32, local64 or global asks for one (comparisons, tests); "local"
 * or unset: the default where it fits; anything else is refused. */
static sb_status hist_path(sb_tdev *d, int *local) {
    const char *env = sb_device_env(d->dv, "HIST");
    const char *bn = d->dv->kind == SB_DEVICE_CUDA ? "CUDA" : "OPENCL";
    *local = 0;
    d->hist_bytes = 20;
    if (env && *env && strcmp(env, "global") != 0 && strcmp(env, "local") != 0 && strcmp(env, "local32") != 0 &&
        strcmp(env, "local64") != 0)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "SAMEBITS_%s_HIST='%s': expected local, local32, local64 or global", bn,
                       env);
    if (env && !strcmp(env, "global")) {
        snprintf(d->hist_why, sizeof d->hist_why, "SAMEBITS_%s_HIST=global", bn);
        return SB_OK;
    }
    if (env && !strcmp(env, "local64")) d->hist_bytes = 16;
    const int64_t need = (int64_t)HIST_RUN_ENTRIES * d->hist_bytes + 2048;
    if (d->dv->local_mem < need) {
        snprintf(d->hist_why, sizeof d->hist_why, "local memory %lld KiB < %lld KiB",
                 (long long)(d->dv->local_mem / 1024), (long long)(need / 1024));
        return SB_OK;
    }
    *local = 1;
    return SB_OK;
}

/* The feature groups of the local-memory histograms: runs of 4 features (a
 * row's bins are read 4 at a time) whose bins fit the device's local memory
 * beside k_hist_local's own (64 KiB at most), at most 256 features a group.
 * A function of the data's shape and the device, and no bit depends on it.
 * Where local memory is refused (hist_path) or cannot hold one run, the
 * global fallback. */
static sb_status plan_hist(sb_tdev *d, const sb_tdev_setup *s) {
    int local = 0;
    sb_status st = hist_path(d, &local);
    if (st != SB_OK) return st;
    d->hist_local = local && s->nf > 0;
    if (!d->hist_local) return SB_OK;
    const int32_t kern = d->hist_bytes == 20 ? SB_KT_k_hist_local32 : SB_KT_k_hist_local;
    size_t kl = sb_device_kernel_local(d->dv, kern);
    if (!kl) kl = 4 * HIST_GROUP_FEATURES;
    const int64_t lm = d->dv->local_mem;
    int64_t budget = lm > (int64_t)kl + 1024 ? lm - (int64_t)kl - 1024 : 0; /* 1 KiB spare for what a driver keeps */
    if (budget > HIST_LOCAL_CAP) budget = HIST_LOCAL_CAP;
    const int32_t max_entries = (int32_t)(budget / d->hist_bytes), nf = s->nf;
    fgroup *gs = sb_malloc(sizeof(fgroup) * (size_t)(nf / 4 + 1));
    if (!gs) return sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory", bname(d));
    int32_t ng = 0, widest = 0;
    for (int32_t f = 0; f < nf;) {
        fgroup g = {f, f, s->hoff[f], s->hoff[f]};
        while (g.f1 < nf) {
            const int32_t f1 = g.f1 + 4 < nf ? g.f1 + 4 : nf, e1 = s->hoff[f1 - 1] + s->nbins[f1 - 1] + 1;
            if (g.f1 > g.f0 && (e1 - g.e0 > max_entries || f1 - g.f0 > HIST_GROUP_FEATURES)) break;
            g.f1 = f1;
            g.e1 = e1;
        }
        if (g.e1 - g.e0 > max_entries) { /* not even one run fits: the fallback */
            sb_free(gs);
            d->hist_local = 0;
            snprintf(d->hist_why, sizeof d->hist_why, "a run of 4 features does not fit local memory");
            return SB_OK;
        }
        if (g.e1 - g.e0 > widest) widest = g.e1 - g.e0;
        gs[ng++] = g;
        f = g.f1;
    }
    d->ngroups = ng;
    d->hist_acc = (size_t)d->hist_bytes * (size_t)widest;
    st = sb_device_alloc(d->dv, &d->groups, sizeof(fgroup) * (size_t)ng, "feature groups");
    if (st == SB_OK) st = sb_device_write(d->dv, &d->groups, 0, gs, sizeof(fgroup) * (size_t)ng, "feature groups");
    sb_free(gs);
    return st;
}

static sb_status open_inner(sb_tdev *d, const sb_tdev_setup *s) {
    sb_status st = sb_device_open(s->device, SB_PROG_TREE, &d->dv);
    if (st != SB_OK) return st;
    d->wg = d->dv->wg;
    const size_t n = (size_t)s->n, K = (size_t)s->K, nf = (size_t)s->nf;
    d->n = s->n;
    d->nf = s->nf;
    d->stride = (s->nf + 3) & ~3;
    d->total = s->total;
    d->K = s->K;
    d->objective = s->objective;
    d->obj_param = s->obj_param;
    uint8_t *rb = sb_calloc(n ? n : 1, (size_t)d->stride);
    float *w = sb_malloc(sizeof(float) * (n ? n : 1));
    uint8_t *ones = sb_malloc(nf ? nf : 1);
    if (!rb || !w || !ones) {
        sb_free(rb), sb_free(w), sb_free(ones);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory", bname(d));
    }
    for (size_t r = 0; r < n; r++)
        for (size_t f = 0; f < nf; f++) rb[r * (size_t)d->stride + f] = s->binned[f * n + r];
    for (size_t r = 0; r < n; r++) w[r] = s->weight ? s->weight[r] : 1.0f;
    memset(ones, 1, nf ? nf : 1);
    sb_device *v = d->dv;
    if ((st = sb_device_alloc(v, &d->bins, n * (size_t)d->stride, "bins")) == SB_OK &&
        (st = sb_device_write(v, &d->bins, 0, rb, n * (size_t)d->stride, "bins")) == SB_OK &&
        (st = sb_device_alloc(v, &d->nbins, 4 * nf, "nbins")) == SB_OK &&
        (st = sb_device_write(v, &d->nbins, 0, s->nbins, 4 * nf, "nbins")) == SB_OK &&
        (st = sb_device_alloc(v, &d->hoff, 4 * nf, "hoff")) == SB_OK &&
        (st = sb_device_write(v, &d->hoff, 0, s->hoff, 4 * nf, "hoff")) == SB_OK &&
        (st = sb_device_alloc(v, &d->label, 4 * n, "labels")) == SB_OK &&
        (st = sb_device_write(v, &d->label, 0, s->label, 4 * n, "labels")) == SB_OK &&
        (st = sb_device_alloc(v, &d->weight, 4 * n, "weights")) == SB_OK &&
        (st = sb_device_write(v, &d->weight, 0, w, 4 * n, "weights")) == SB_OK &&
        (st = sb_device_alloc(v, &d->mask, nf, "mask")) == SB_OK &&
        (st = sb_device_write(v, &d->mask, 0, ones, nf, "mask")) == SB_OK &&
        (st = sb_device_alloc(v, &d->margin, 4 * n * K, "margins")) == SB_OK &&
        (st = sb_device_alloc(v, &d->g, 4 * n * K, "gradients")) == SB_OK &&
        (st = sb_device_alloc(v, &d->h, 4 * n * K, "hessians")) == SB_OK &&
        (st = sb_device_alloc(v, &d->gq, 4 * n, "gradients")) == SB_OK &&
        (st = sb_device_alloc(v, &d->hq, 4 * n, "hessians")) == SB_OK &&
        (st = sb_device_alloc(v, &d->rows, 4 * n, "rows")) == SB_OK &&
        (st = sb_device_alloc(v, &d->tmp, 4 * n, "rows")) == SB_OK &&
        (st = sb_device_alloc(v, &d->maxbits, 8 * K, "maxima")) == SB_OK) {
        const int64_t nk = s->n * s->K;
        int same = 1;
        for (int32_t c = 1; c < s->K; c++) same &= sb_f2u(s->base[c]) == sb_f2u(s->base[0]);
        if (same) { /* one value: filled on the device */
            const float base = s->base[0];
            st = SB_LAUNCH(v, SB_KT_k_fill, groups_of(d, nk), 1, 0, SB_ARG(d->margin.h), SB_ARG(nk), SB_ARG(base));
        } else { /* a value per class (multiclass): the rows' margins copied in, bit for bit */
            float *m0 = sb_malloc(sizeof(float) * (size_t)nk);
            if (!m0) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "tree device: out of memory");
            else {
                for (int64_t i = 0; i < nk; i++) m0[i] = s->base[i % s->K];
                st = sb_device_write(v, &d->margin, 0, m0, sizeof(float) * (size_t)nk, "margins");
                sb_free(m0);
            }
        }
        if (st == SB_OK) st = plan_hist(d, s);
    }
    const char *cp = sb_device_env(v, "CHECK_PARTITION");
    if (st == SB_OK && cp && cp[0] == '1')
        d->check_bins = rb; /* kept for part_check */
    else
        sb_free(rb);
    sb_free(w), sb_free(ones);
    return st;
}

static sb_status gpu_open(const sb_tdev_setup *s, sb_tdev **out) {
    *out = NULL;
    sb_tdev *d = sb_calloc(1, sizeof *d);
    if (!d) return sb_fail(SB_ERR_OUT_OF_MEMORY, "tree device: out of memory");
    sb_status st = open_inner(d, s);
    if (st != SB_OK) {
        gpu_close(d);
        return st;
    }
    *out = d;
    return SB_OK;
}

static sb_status gpu_gradients(sb_tdev *d, float *maxabs) {
    sb_device *v = d->dv;
    sb_status st;
    if (d->objective == SB_K_OBJ_MULTICLASS)
        st = SB_LAUNCH(v, SB_KT_k_gradk, groups_of(d, d->n), 1, 0, SB_ARG(d->K), SB_ARG(d->margin.h), SB_ARG(d->label.h),
                       SB_ARG(d->weight.h), SB_ARG(d->g.h), SB_ARG(d->h.h), SB_ARG(d->n));
    else
        st = SB_LAUNCH(v, SB_KT_k_grad1, groups_of(d, d->n), 1, 0, SB_ARG(d->objective), SB_ARG(d->margin.h),
                       SB_ARG(d->label.h), SB_ARG(d->weight.h), SB_ARG(d->g.h), SB_ARG(d->h.h), SB_ARG(d->n),
                       SB_ARG(d->obj_param));
    if (st != SB_OK) return st;
    uint32_t bits[2 * SB_TDEV_MAX_CLASS];
    memset(bits, 0, sizeof(uint32_t) * 2 * (size_t)d->K);
    if ((st = sb_device_write(v, &d->maxbits, 0, bits, sizeof(uint32_t) * 2 * (size_t)d->K, "maxima")) != SB_OK)
        return st;
    int64_t items = d->n < d->wg * 64 ? d->n : d->wg * 64; /* a few groups, each strides */
    if (items < 1) items = 1;
    if ((st = SB_LAUNCH(v, SB_KT_k_maxabs, groups_of(d, items), d->K, 0, SB_ARG(d->g.h), SB_ARG(d->h.h), SB_ARG(d->n),
                        SB_ARG(d->maxbits.h))) != SB_OK)
        return st;
    if ((st = sb_device_read(v, &d->maxbits, 0, bits, sizeof(uint32_t) * 2 * (size_t)d->K, "maxima")) != SB_OK)
        return st;
    for (int32_t i = 0; i < 2 * d->K; i++) memcpy(&maxabs[i], &bits[i], sizeof(float));
    return SB_OK;
}

static sb_status gpu_quantize(sb_tdev *d, int32_t cls, float gs, float hs) {
    const int64_t off = (int64_t)cls * d->n; /* class cls's gradients */
    return SB_LAUNCH(d->dv, SB_KT_k_quantize, groups_of(d, d->n), 1, 0, SB_ARG(d->g.h), SB_ARG(d->h.h), SB_ARG(off),
                     SB_ARG(d->n), SB_ARG(gs), SB_ARG(hs), SB_ARG(d->gq.h), SB_ARG(d->hq.h));
}

static sb_status gpu_set_rows(sb_tdev *d, const int32_t *rows, int64_t nrows) {
    if (rows) return sb_device_write(d->dv, &d->rows, 0, rows, sizeof(int32_t) * (size_t)nrows, "rows");
    return SB_LAUNCH(d->dv, SB_KT_k_iota, groups_of(d, d->n), 1, 0, SB_ARG(d->rows.h), SB_ARG(d->n));
}

static sb_status gpu_set_mask(sb_tdev *d, const uint8_t *mask) {
    return sb_device_write(d->dv, &d->mask, 0, mask, (size_t)d->nf, "mask");
}

static sb_status gpu_reserve(sb_tdev *d, int32_t nslots) {
    if (nslots <= d->nslots) return SB_OK;
    const size_t per = sizeof(int64_t) * 3 * (size_t)d->total;
    sb_dbuf s = {NULL, 0};
    sb_status st = sb_device_alloc(d->dv, &s, per * (size_t)nslots, "histogram slots");
    if (st != SB_OK) return st;
    if (d->nslots > 0 && (st = sb_device_copy(d->dv, &s, 0, &d->slots, 0, per * (size_t)d->nslots, "histogram slots")) != SB_OK) {
        sb_device_release(d->dv, &s);
        return st;
    }
    sb_device_release(d->dv, &d->slots);
    d->slots = s;
    d->nslots = nslots;
    return SB_OK;
}

/* _CHECK_PARTITION=1 (tests; slow): the partition's self-check. Before the
 * kernels run, the host reads each segment's rows and works out the stable
 * partition itself (left rows in their order, then right rows in theirs, by
 * sb_tdev_seg_left on its copy of the bins); after them, it reads the rows back
 * and any difference is an error. Stability moves no bit of a model
 * (histograms are integer sums), so this is where it is shown. phase 0:
 * expect (want := the host's partition); phase 1: compare. */
static sb_status part_check(sb_tdev *d, const sb_tdev_seg *segs, int32_t nseg, int phase, int32_t **want) {
    int64_t all = 0;
    for (int32_t i = 0; i < nseg; i++) all += segs[i].end - segs[i].begin;
    int32_t *got = sb_malloc(sizeof(int32_t) * (size_t)(all + 1));
    if (!got) return sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory (partition check)", bname(d));
    int64_t at = 0;
    sb_status st = SB_OK;
    for (int32_t i = 0; i < nseg && st == SB_OK; i++) {
        const int64_t len = segs[i].end - segs[i].begin;
        st = sb_device_read(d->dv, &d->rows, sizeof(int32_t) * (size_t)segs[i].begin, got + at,
                            sizeof(int32_t) * (size_t)len, "rows");
        at += len;
    }
    if (st == SB_OK && phase == 0) {
        if (!(*want = sb_malloc(sizeof(int32_t) * (size_t)(all + 1)))) {
            sb_free(got);
            return sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory (partition check)", bname(d));
        }
        int64_t o = 0, base = 0;
        for (int32_t i = 0; i < nseg; i++) {
            const sb_tdev_seg *g = &segs[i];
            const int64_t len = g->end - g->begin;
            for (int pass = 1; pass >= 0; pass--) /* left rows, then right rows, each in order */
                for (int64_t k = 0; k < len; k++) {
                    const uint8_t b = d->check_bins[(size_t)got[base + k] * (size_t)d->stride + (size_t)g->feature];
                    if (sb_tdev_seg_left(g, b) == pass) (*want)[o++] = got[base + k];
                }
            base += len;
        }
    } else if (st == SB_OK) {
        if (memcmp(got, *want, sizeof(int32_t) * (size_t)all) != 0)
            st = sb_fail(SB_ERR_INTERNAL, "%s: partition check: the rows of %d segment(s) are not the stable partition",
                         bname(d), nseg);
        else
            d->part_checked += all;
    }
    sb_free(got);
    return st;
}

/* Stable partition of every segment, each spread over tiles of wg x 8 rows
 * (tree_entry.h): count the left rows per tile, scan the counts per segment,
 * scatter each tile's rows into tmp, copy tmp back. */
static sb_status part_run(sb_tdev *d, const sb_tdev_seg *segs, int32_t nseg) {
    const int64_t tile = d->wg * PART_PER;
    int32_t *ts = tile_table(segs, nseg, sizeof(sb_tdev_seg), tile);
    if (!ts) return sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory (partition tiles)", bname(d));
    const int32_t ntiles = ts[nseg];
    sb_status st = upload(d, U_A, segs, sizeof(sb_tdev_seg) * (size_t)nseg, "segments");
    if (st == SB_OK) st = upload(d, U_B, ts, sizeof(int32_t) * ((size_t)nseg + 1), "segments");
    sb_free(ts);
    if (st != SB_OK || ntiles == 0) return st;
    if (ntiles > d->most_ptiles) d->most_ptiles = ntiles;
    sb_device *v = d->dv;
    if ((st = sb_device_ensure(v, &d->tleft, sizeof(int32_t) * (size_t)ntiles, "partition")) != SB_OK ||
        (st = sb_device_ensure(v, &d->sleft, sizeof(int32_t) * (size_t)nseg, "partition")) != SB_OK)
        return st;
    if ((st = SB_LAUNCH(v, SB_KT_k_part_count, ntiles, 1, 0, SB_ARG(d->up[U_A].h), SB_ARG(d->up[U_B].h), SB_ARG(nseg),
                        SB_ARG(d->rows.h), SB_ARG(d->bins.h), SB_ARG(d->stride), SB_ARG(d->tleft.h))) != SB_OK ||
        (st = SB_LAUNCH(v, SB_KT_k_part_scan, nseg, 1, 0, SB_ARG(d->up[U_B].h), SB_ARG(d->tleft.h),
                        SB_ARG(d->sleft.h))) != SB_OK ||
        (st = SB_LAUNCH(v, SB_KT_k_part_scatter, ntiles, 1, 0, SB_ARG(d->up[U_A].h), SB_ARG(d->up[U_B].h),
                        SB_ARG(nseg), SB_ARG(d->rows.h), SB_ARG(d->bins.h), SB_ARG(d->stride), SB_ARG(d->tleft.h),
                        SB_ARG(d->sleft.h), SB_ARG(d->tmp.h))) != SB_OK)
        return st;
    return SB_LAUNCH(v, SB_KT_k_part_copy, ntiles, 1, 0, SB_ARG(d->up[U_A].h), SB_ARG(d->up[U_B].h), SB_ARG(nseg),
                     SB_ARG(d->tmp.h), SB_ARG(d->rows.h));
}

static sb_status gpu_partition(sb_tdev *d, const sb_tdev_seg *segs, int32_t nseg) {
    if (nseg <= 0) return SB_OK;
    if (!d->check_bins) return part_run(d, segs, nseg);
    int32_t *want = NULL;
    sb_status st = part_check(d, segs, nseg, 0, &want);
    if (st == SB_OK) st = part_run(d, segs, nseg);
    if (st == SB_OK) st = part_check(d, segs, nseg, 1, &want);
    sb_free(want);
    return st;
}

/* The global fallback: one work-item per row of every job, 64-bit atomics
 * straight into the slots (already zeroed). */
static sb_status hist_global(sb_tdev *d, const sb_tdev_hjob *jobs, int32_t njobs) {
    int64_t *js = sb_malloc(sizeof(int64_t) * ((size_t)njobs + 1));
    if (!js) return sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory", bname(d));
    js[0] = 0;
    for (int32_t i = 0; i < njobs; i++) js[i + 1] = js[i] + (jobs[i].end - jobs[i].begin);
    const int64_t items = js[njobs];
    sb_status st = upload(d, U_B, js, sizeof(int64_t) * ((size_t)njobs + 1), "histogram jobs");
    sb_free(js);
    if (st != SB_OK) return st;
    return SB_LAUNCH(d->dv, SB_KT_k_hist, groups_of(d, items), 1, 0, SB_ARG(d->up[U_A].h), SB_ARG(d->up[U_B].h),
                     SB_ARG(njobs), SB_ARG(d->rows.h), SB_ARG(d->bins.h), SB_ARG(d->stride), SB_ARG(d->nf),
                     SB_ARG(d->gq.h), SB_ARG(d->hq.h), SB_ARG(d->hoff.h), SB_ARG(d->mask.h), SB_ARG(d->slots.h),
                     SB_ARG(d->total));
}

/* Local-memory histograms: work-groups of (tile of a job's rows) x (feature
 * group). Rows a tile: enough work-groups to give each compute unit about 8,
 * within [HIST_TILE_MIN, HIST_TILE_MAX], a multiple of the work-group size;
 * a function of the rows and the device, never of a bit. */
static sb_status hist_local(sb_tdev *d, const sb_tdev_hjob *jobs, int32_t njobs) {
    int64_t rows_all = 0;
    for (int32_t i = 0; i < njobs; i++) rows_all += jobs[i].end - jobs[i].begin;
    int64_t want = (int64_t)d->dv->cus * 8 / d->ngroups;
    if (want < 1) want = 1;
    int64_t tile = (rows_all + want - 1) / want;
    tile = (tile + d->wg - 1) / d->wg * d->wg;
    if (tile < HIST_TILE_MIN) tile = HIST_TILE_MIN;
    if (tile > HIST_TILE_MAX) tile = HIST_TILE_MAX;
    int32_t *ts = tile_table(jobs, njobs, sizeof(sb_tdev_hjob), tile);
    if (!ts) return sb_fail(SB_ERR_OUT_OF_MEMORY, "%s: out of memory (histogram tiles)", bname(d));
    const int32_t ntiles = ts[njobs], tile_rows = (int32_t)tile;
    sb_status st = upload(d, U_B, ts, sizeof(int32_t) * ((size_t)njobs + 1), "histogram jobs");
    sb_free(ts);
    if (st != SB_OK || ntiles == 0) return st;
    if (ntiles > d->most_htiles) d->most_htiles = ntiles, d->most_hrows = tile_rows;
    return SB_LAUNCH(d->dv, d->hist_bytes == 20 ? SB_KT_k_hist_local32 : SB_KT_k_hist_local, ntiles, d->ngroups,
                     d->hist_acc, SB_ARG(d->up[U_A].h),
                     SB_ARG(d->up[U_B].h), SB_ARG(njobs), SB_ARG(tile_rows), SB_ARG(d->groups.h), SB_ARG(d->rows.h),
                     SB_ARG(d->bins.h), SB_ARG(d->stride), SB_ARG(d->gq.h), SB_ARG(d->hq.h), SB_ARG(d->hoff.h),
                     SB_ARG(d->mask.h), SB_ARG(d->slots.h), SB_ARG(d->total));
}

static sb_status gpu_hist(sb_tdev *d, const sb_tdev_hjob *jobs, int32_t njobs) {
    if (njobs <= 0) return SB_OK;
    sb_status st = upload(d, U_A, jobs, sizeof(sb_tdev_hjob) * (size_t)njobs, "histogram jobs");
    if (st != SB_OK) return st;
    if ((st = SB_LAUNCH(d->dv, SB_KT_k_zero_slots, groups_of(d, (int64_t)d->total * 3), njobs, 0, SB_ARG(d->up[U_A].h),
                        SB_ARG(d->slots.h), SB_ARG(d->total))) != SB_OK)
        return st;
    return d->hist_local ? hist_local(d, jobs, njobs) : hist_global(d, jobs, njobs);
}

static sb_status gpu_subtract(sb_tdev *d, const sb_tdev_sub *subs, int32_t nsubs) {
    if (nsubs <= 0) return SB_OK;
    sb_status st = upload(d, U_A, subs, sizeof(sb_tdev_sub) * (size_t)nsubs, "subtractions");
    if (st != SB_OK) return st;
    return SB_LAUNCH(d->dv, SB_KT_k_subtract, groups_of(d, (int64_t)d->total * 3), nsubs, 0, SB_ARG(d->up[U_A].h),
                     SB_ARG(d->slots.h), SB_ARG(d->total));
}

static sb_status gpu_best(sb_tdev *d, const sb_tdev_node *nodes, int32_t nnodes, const sb_k_split_rules *r,
                          sb_k_split *out) {
    if (nnodes <= 0) return SB_OK;
    sb_status st;
    if ((st = sb_device_ensure(d->dv, &d->best, sizeof(sb_k_split) * (size_t)nnodes, "splits")) != SB_OK ||
        (st = upload(d, U_A, nodes, sizeof(sb_tdev_node) * (size_t)nnodes, "nodes")) != SB_OK ||
        (st = upload(d, U_B, r, sizeof *r, "split rules")) != SB_OK)
        return st;
    if ((st = SB_LAUNCH(d->dv, SB_KT_k_best, nnodes, 1, 0, SB_ARG(d->up[U_A].h), SB_ARG(d->up[U_B].h),
                        SB_ARG(d->slots.h), SB_ARG(d->total), SB_ARG(d->hoff.h), SB_ARG(d->nbins.h), SB_ARG(d->mask.h),
                        SB_ARG(d->nf), SB_ARG(d->best.h))) != SB_OK)
        return st;
    return sb_device_read(d->dv, &d->best, 0, out, sizeof(sb_k_split) * (size_t)nnodes, "splits");
}

static sb_status gpu_read_hist(sb_tdev *d, int32_t slot, int32_t first, int32_t count, sb_k_hbin *out) {
    return sb_device_read(d->dv, &d->slots, sizeof(sb_k_hbin) * ((size_t)slot * (size_t)d->total + (size_t)first), out,
                          sizeof(sb_k_hbin) * (size_t)count, "histogram");
}

static sb_status gpu_add_tree(sb_tdev *d, const sb_k_bnode *nodes, int32_t nnodes, int32_t cls) {
    sb_status st = upload(d, U_A, nodes, sizeof(sb_k_bnode) * (size_t)nnodes, "tree");
    if (st != SB_OK) return st;
    return SB_LAUNCH(d->dv, SB_KT_k_add_tree, groups_of(d, d->n), 1, 0, SB_ARG(d->up[U_A].h), SB_ARG(d->bins.h),
                     SB_ARG(d->stride), SB_ARG(d->margin.h), SB_ARG(d->n), SB_ARG(d->K), SB_ARG(cls));
}

static sb_status gpu_read_quantized(sb_tdev *d, int32_t *gq, int32_t *hq) {
    sb_status st = sb_device_read(d->dv, &d->gq, 0, gq, sizeof(int32_t) * (size_t)d->n, "quantized gradients");
    return st != SB_OK ? st : sb_device_read(d->dv, &d->hq, 0, hq, sizeof(int32_t) * (size_t)d->n, "quantized hessians");
}

static sb_status gpu_read_margins(sb_tdev *d, float *m) {
    return sb_device_read(d->dv, &d->margin, 0, m, sizeof(float) * (size_t)d->n * (size_t)d->K, "margins");
}

/* Host-computed gradients of class cls (the ranking objectives) into the
 * device's class-major gradient buffers. */
static sb_status gpu_set_gradients(sb_tdev *d, int32_t cls, const float *g, const float *h) {
    const size_t off = sizeof(float) * (size_t)cls * (size_t)d->n, bytes = sizeof(float) * (size_t)d->n;
    sb_status st = sb_device_write(d->dv, &d->g, off, g, bytes, "gradients");
    return st != SB_OK ? st : sb_device_write(d->dv, &d->h, off, h, bytes, "hessians");
}

/* _TIMING=1: each operation is bracketed by a finish and timed on the host
 * clock (so the queue no longer overlaps host work), and the totals are
 * printed to stderr at close: for finding where a tree's time goes. It
 * changes no result. */
static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void t_begin(sb_tdev *d) {
    if (!d->dv->timing) return;
    sb_device_finish(d->dv);
    d->t0 = now_ms();
}

static sb_status t_end(sb_tdev *d, int k, sb_status st) {
    if (!d->dv->timing) return st;
    sb_device_finish(d->dv);
    d->tms[k] += now_ms() - d->t0;
    d->tcalls[k]++;
    return st;
}

static sb_status t_gradients(sb_tdev *d, float *maxabs) {
    t_begin(d);
    return t_end(d, 0, gpu_gradients(d, maxabs));
}
static sb_status t_quantize(sb_tdev *d, int32_t cls, float gs, float hs) {
    t_begin(d);
    return t_end(d, 1, gpu_quantize(d, cls, gs, hs));
}
static sb_status t_set_rows(sb_tdev *d, const int32_t *rows, int64_t nrows) {
    t_begin(d);
    return t_end(d, 2, gpu_set_rows(d, rows, nrows));
}
static sb_status t_partition(sb_tdev *d, const sb_tdev_seg *segs, int32_t nseg) {
    t_begin(d);
    return t_end(d, 3, gpu_partition(d, segs, nseg));
}
static sb_status t_hist(sb_tdev *d, const sb_tdev_hjob *jobs, int32_t njobs) {
    t_begin(d);
    return t_end(d, 4, gpu_hist(d, jobs, njobs));
}
static sb_status t_subtract(sb_tdev *d, const sb_tdev_sub *subs, int32_t nsubs) {
    t_begin(d);
    return t_end(d, 5, gpu_subtract(d, subs, nsubs));
}
static sb_status t_best(sb_tdev *d, const sb_tdev_node *nodes, int32_t nnodes, const sb_k_split_rules *r,
                        sb_k_split *out) {
    t_begin(d);
    return t_end(d, 6, gpu_best(d, nodes, nnodes, r, out));
}
static sb_status t_add_tree(sb_tdev *d, const sb_k_bnode *nodes, int32_t nnodes, int32_t cls) {
    t_begin(d);
    return t_end(d, 7, gpu_add_tree(d, nodes, nnodes, cls));
}

static sb_status gpu_set_margins(sb_tdev *d, const float *m) {
    return sb_device_write(d->dv, &d->margin, 0, m, sizeof(float) * (size_t)d->n * (size_t)d->K, "margins");
}

/* The slot's histogram summed over the ranks on the device (tdev.h,
 * reduce_hist): a copy of the slot in rsum, dev_sum on rsum's CUDA memory,
 * rsum read back. CUDA only: rsum's handle is a device address there alone
 * (an OpenCL buffer is an object, never given to a foreign library). */
static sb_status gpu_reduce_hist(sb_tdev *d, int32_t slot, sb_k_hbin *out,
                                 void (*dev_sum)(void *ctx, void *dptr, int64_t n), void *ctx) {
    if (d->dv->kind != SB_DEVICE_CUDA)
        return sb_fail(SB_ERR_INTERNAL, "%s: histograms are summed on the device only on CUDA (a defect)", bname(d));
    const size_t per = sizeof(sb_k_hbin) * (size_t)d->total;
    sb_status st = sb_device_ensure(d->dv, &d->rsum, per, "histogram sum");
    if (st == SB_OK) st = sb_device_copy(d->dv, &d->rsum, 0, &d->slots, per * (size_t)slot, per, "histogram sum");
    if (st != SB_OK) return st;
    dev_sum(ctx, d->rsum.h, 3 * (int64_t)d->total);
    return sb_device_read(d->dv, &d->rsum, 0, out, per, "histogram sum");
}

static const sb_tdev_ops k_gpu_ops = {
    "gpu",          gpu_open,     gpu_close,     t_gradients, t_quantize, t_set_rows,
    gpu_set_mask,   gpu_reserve,  t_partition,   t_hist,      t_subtract, t_best,
    gpu_read_hist,  t_add_tree,   gpu_read_quantized, gpu_read_margins, gpu_set_gradients, gpu_set_margins,
    gpu_reduce_hist,
};

const sb_tdev_ops *sb_tdev_gpu_ops(void) { return &k_gpu_ops; }

/* ---- prediction ---- */

sb_status sb_tree_predict_device(sb_device_kind kind, const sb_k_pnode *nodes, int32_t nn, const int32_t *start,
                                 int32_t ntrees, int32_t K, int32_t objective, const float *base, const float *x,
                                 int64_t n, int32_t ncols, int32_t kind_, int32_t per_row, float *out) {
    sb_device *v = NULL;
    sb_status st = sb_device_open(kind, SB_PROG_TREE, &v);
    if (st != SB_OK) return st;
    sb_dbuf b[6];
    memset(b, 0, sizeof b);
    const size_t nb = sizeof(sb_k_pnode) * (size_t)nn, sb = sizeof(int32_t) * (size_t)ntrees;
    const size_t xb = sizeof(float) * (size_t)n * (size_t)ncols, mb = sizeof(float) * (size_t)n * (size_t)K;
    const size_t ob = sizeof(float) * (size_t)n * (size_t)per_row;
    if ((st = sb_device_alloc(v, &b[0], nb, "trees")) == SB_OK && (st = sb_device_write(v, &b[0], 0, nodes, nb, "trees")) == SB_OK &&
        (st = sb_device_alloc(v, &b[1], sb, "trees")) == SB_OK && (st = sb_device_write(v, &b[1], 0, start, sb, "trees")) == SB_OK &&
        (st = sb_device_alloc(v, &b[2], sizeof(float) * (size_t)K, "base")) == SB_OK &&
        (st = sb_device_write(v, &b[2], 0, base, sizeof(float) * (size_t)K, "base")) == SB_OK &&
        (st = sb_device_alloc(v, &b[3], xb, "features")) == SB_OK && (st = sb_device_write(v, &b[3], 0, x, xb, "features")) == SB_OK &&
        (st = sb_device_alloc(v, &b[4], mb, "margins")) == SB_OK && (st = sb_device_alloc(v, &b[5], ob, "predictions")) == SB_OK &&
        (st = SB_LAUNCH(v, SB_KT_k_predict, (n + v->wg - 1) / v->wg, 1, 0, SB_ARG(b[0].h), SB_ARG(b[1].h), SB_ARG(ntrees),
                        SB_ARG(K), SB_ARG(objective), SB_ARG(b[2].h), SB_ARG(b[3].h), SB_ARG(n), SB_ARG(ncols),
                        SB_ARG(kind_), SB_ARG(per_row), SB_ARG(b[4].h), SB_ARG(b[5].h))) == SB_OK)
        st = sb_device_read(v, &b[5], 0, out, ob, "predictions");
    for (int i = 0; i < 6; i++) sb_device_release(v, &b[i]);
    sb_device_close(v);
    return st;
}

/* ---- explanations (src/models/explain.c) ---- */

/* A device buffer of bytes (at least 4) holding src when src is not NULL. */
static sb_status put_buf(sb_device *v, sb_dbuf *b, const void *src, size_t bytes, const char *what) {
    sb_status st = sb_device_alloc(v, b, bytes ? bytes : 4, what);
    if (st == SB_OK && src && bytes) st = sb_device_write(v, b, 0, src, bytes, what);
    return st;
}

sb_status sb_tree_leaf_device(sb_device_kind kind, const sb_k_pnode *nodes, int32_t nn, const int32_t *start,
                              const int32_t *leafno, int32_t ntrees, const float *x, int64_t n, int32_t ncols,
                              float *out, int32_t *iout) {
    sb_device *v = NULL;
    sb_status st = sb_device_open(kind, SB_PROG_TREE, &v);
    if (st != SB_OK) return st;
    sb_dbuf b[5];
    memset(b, 0, sizeof b);
    const size_t ob = sizeof(int32_t) * (size_t)n * (size_t)ntrees;
    int32_t *tmp = iout ? NULL : sb_malloc(ob ? ob : 4);
    if (!iout && !tmp) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "pred_leaf: out of memory");
    if (st == SB_OK && (st = put_buf(v, &b[0], nodes, sizeof(sb_k_pnode) * (size_t)nn, "trees")) == SB_OK &&
        (st = put_buf(v, &b[1], start, sizeof(int32_t) * (size_t)ntrees, "trees")) == SB_OK &&
        (st = put_buf(v, &b[2], leafno, sizeof(int32_t) * (size_t)nn, "leaf numbers")) == SB_OK &&
        (st = put_buf(v, &b[3], x, sizeof(float) * (size_t)n * (size_t)ncols, "features")) == SB_OK &&
        (st = put_buf(v, &b[4], NULL, ob, "leaf indices")) == SB_OK && n > 0 &&
        (st = SB_LAUNCH(v, SB_KT_k_predict_leaf, (n + v->wg - 1) / v->wg, 1, 0, SB_ARG(b[0].h), SB_ARG(b[1].h),
                        SB_ARG(b[2].h), SB_ARG(ntrees), SB_ARG(b[3].h), SB_ARG(n), SB_ARG(ncols),
                        SB_ARG(b[4].h))) == SB_OK && ob)
        st = sb_device_read(v, &b[4], 0, iout ? iout : tmp, ob, "leaf indices");
    if (st == SB_OK && !iout)
        for (size_t i = 0; i < (size_t)n * (size_t)ntrees; i++) out[i] = (float)tmp[i]; /* exact: below 2^24 */
    sb_free(tmp);
    for (int i = 0; i < 5; i++) sb_device_release(v, &b[i]);
    sb_device_close(v);
    return st;
}

/* Scratch of one launch of k_predict_contrib: at most this many bytes, and at
 * least one row. */
#define CONTRIB_SCRATCH_BYTES ((size_t)256 << 20)

sb_status sb_tree_contrib_device(sb_device_kind kind, const sb_k_pnode *nodes, int32_t nn, const int32_t *start,
                                 const float *cover, const float *ev, int32_t ntrees, int32_t K, int32_t F,
                                 int32_t depth, int32_t cap, const float *x, int64_t n, int32_t ncols, float *out) {
    sb_device *v = NULL;
    sb_status st = sb_device_open(kind, SB_PROG_TREE, &v);
    if (st != SB_OK) return st;
    sb_dbuf b[8];
    memset(b, 0, sizeof b);
    const int32_t levels = depth + 1;
    const size_t row_scratch = sizeof(sb_k_shap_elem) * (size_t)levels * (size_t)cap + sizeof(sb_k_shap_frame) * (size_t)levels;
    int64_t batch = (int64_t)(CONTRIB_SCRATCH_BYTES / row_scratch);
    if (batch < 1) batch = 1;
    if (batch > n) batch = n;
    batch = batch < 1 ? 1 : batch;
    const size_t ob = sizeof(float) * (size_t)n * (size_t)K * ((size_t)F + 1);
    if ((st = put_buf(v, &b[0], nodes, sizeof(sb_k_pnode) * (size_t)nn, "trees")) == SB_OK &&
        (st = put_buf(v, &b[1], cover, sizeof(float) * (size_t)nn, "covers")) == SB_OK &&
        (st = put_buf(v, &b[2], start, sizeof(int32_t) * (size_t)ntrees, "trees")) == SB_OK &&
        (st = put_buf(v, &b[3], ev, sizeof(float) * (size_t)K, "expected values")) == SB_OK &&
        (st = put_buf(v, &b[4], x, sizeof(float) * (size_t)n * (size_t)ncols, "features")) == SB_OK &&
        (st = put_buf(v, &b[5], NULL, ob, "contributions")) == SB_OK &&
        (st = put_buf(v, &b[6], NULL, sizeof(sb_k_shap_elem) * (size_t)batch * (size_t)levels * (size_t)cap,
                      "TreeSHAP paths")) == SB_OK &&
        (st = put_buf(v, &b[7], NULL, sizeof(sb_k_shap_frame) * (size_t)batch * (size_t)levels, "TreeSHAP frames")) ==
            SB_OK) {
        for (int64_t r0 = 0; r0 < n && st == SB_OK; r0 += batch) {
            const int64_t nb = n - r0 < batch ? n - r0 : batch;
            st = SB_LAUNCH(v, SB_KT_k_predict_contrib, (nb + v->wg - 1) / v->wg, 1, 0, SB_ARG(b[0].h), SB_ARG(b[1].h),
                           SB_ARG(b[2].h), SB_ARG(ntrees), SB_ARG(K), SB_ARG(F), SB_ARG(b[3].h), SB_ARG(b[4].h),
                           SB_ARG(r0), SB_ARG(nb), SB_ARG(ncols), SB_ARG(b[5].h), SB_ARG(b[6].h), SB_ARG(b[7].h),
                           SB_ARG(levels), SB_ARG(cap));
        }
        if (st == SB_OK && ob) st = sb_device_read(v, &b[5], 0, out, ob, "contributions");
    }
    for (int i = 0; i < 8; i++) sb_device_release(v, &b[i]);
    sb_device_close(v);
    return st;
}
