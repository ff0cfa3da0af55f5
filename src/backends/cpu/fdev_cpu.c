/*
 * fdev_cpu.c: the "cpu-batched" forest device, the reference implementation
 * of src/backends/fdev.h on the host. It keeps the data as the CUDA device
 * does (one row array per batch of trees with a multiplicity per position,
 * histograms of nv int64 per bin for each drawn feature of a node, cumulated
 * in place) and runs the same kernel bodies of src/kernels/forest.h one node
 * at a time, so CI, which has no GPU, runs the level-wise grower and every
 * kernel body the GPU runs. Written for clarity, not speed: forests train on
 * the CPU grower (forest.c) unless device=cpu-batched is asked for.
 */
#include "../fdev.h"
#include <string.h>

struct sb_fdev {
    sb_fdev_setup s;
    uint8_t *binned;  /* feature-major, n x nf */
    int32_t *nbins, *value;
    int32_t maxnb;    /* the largest nbins: a histogram slot has maxnb + 1 bins */
    int32_t *rows, *mult, *tmp_rows, *tmp_mult; /* the batch's positions */
    int32_t *cnt;     /* n: one tree's draw counts */
    int64_t cap;      /* positions allocated */
    sb_u32 *draws;    /* nf */
    int32_t *feat;    /* mtry: a node's features */
    int64_t *hist;    /* mtry x (maxnb + 1) x nv */
};

static sb_status oom(void) { return sb_fail(SB_ERR_OUT_OF_MEMORY, "cpu-batched forest device: out of memory"); }

static void cpu_close(sb_fdev *d) {
    if (!d) return;
    sb_free(d->binned);
    sb_free(d->nbins);
    sb_free(d->value);
    sb_free(d->rows);
    sb_free(d->mult);
    sb_free(d->tmp_rows);
    sb_free(d->tmp_mult);
    sb_free(d->cnt);
    sb_free(d->draws);
    sb_free(d->feat);
    sb_free(d->hist);
    sb_free(d);
}

static sb_status cpu_open(const sb_fdev_setup *s, sb_fdev **out) {
    *out = NULL;
    sb_fdev *d = sb_calloc(1, sizeof *d);
    if (!d) return oom();
    d->s = *s;
    const size_t n = (size_t)(s->n ? s->n : 1), nf = (size_t)s->nf, nv = (size_t)s->rules.nv;
    d->binned = sb_malloc(n * nf);
    d->nbins = sb_malloc(sizeof(int32_t) * nf);
    d->value = sb_malloc(sizeof(int32_t) * n);
    d->cnt = sb_malloc(sizeof(int32_t) * n);
    d->draws = sb_malloc(sizeof(sb_u32) * nf);
    d->feat = sb_malloc(sizeof(int32_t) * nf);
    if (!d->binned || !d->nbins || !d->value || !d->cnt || !d->draws || !d->feat) {
        cpu_close(d);
        return oom();
    }
    memcpy(d->binned, s->binned, (size_t)s->n * nf);
    memcpy(d->nbins, s->nbins, sizeof(int32_t) * nf);
    memcpy(d->value, s->value, sizeof(int32_t) * (size_t)s->n);
    for (int32_t f = 0; f < s->nf; f++)
        if (s->nbins[f] > d->maxnb) d->maxnb = s->nbins[f];
    d->hist = sb_malloc(sizeof(int64_t) * (size_t)s->mtry * (size_t)(d->maxnb + 1) * nv);
    if (!d->hist) {
        cpu_close(d);
        return oom();
    }
    d->s.binned = NULL;
    d->s.nbins = NULL;
    d->s.value = NULL;
    *out = d;
    return SB_OK;
}

/* Positions for at least cap rows. */
static sb_status reserve(sb_fdev *d, int64_t cap) {
    if (cap <= d->cap) return SB_OK;
    int32_t **a[4] = {&d->rows, &d->mult, &d->tmp_rows, &d->tmp_mult};
    for (int i = 0; i < 4; i++) {
        int32_t *p = sb_realloc(*a[i], sizeof(int32_t) * (size_t)cap);
        if (!p) return oom();
        *a[i] = p;
    }
    d->cap = cap;
    return SB_OK;
}

static sb_status cpu_begin(sb_fdev *d, int32_t t0, int32_t ntrees, int64_t *count) {
    const int64_t n = d->s.n;
    sb_status st = reserve(d, n * ntrees);
    if (st != SB_OK) return st;
    int64_t at = 0;
    for (int32_t i = 0; i < ntrees; i++) {
        if (d->s.bootstrap) {
            memset(d->cnt, 0, sizeof(int32_t) * (size_t)n);
            for (int64_t q = 0; q < d->s.ndraw; q++) d->cnt[sb_k_forest_boot_row(d->s.seed, t0 + i, q, (sb_u32)n)]++;
        } else {
            for (int64_t r = 0; r < n; r++) d->cnt[r] = 1;
        }
        const int64_t first = at;
        for (int64_t r = 0; r < n; r++)
            if (d->cnt[r]) {
                d->rows[at] = (int32_t)r;
                d->mult[at++] = d->cnt[r];
            }
        count[i] = at - first;
    }
    return SB_OK;
}

static sb_status cpu_sums(sb_fdev *d, const sb_fdev_node *nodes, int32_t nnodes, int64_t *sums) {
    const int32_t nv = d->s.rules.nv;
    for (int32_t i = 0; i < nnodes; i++) {
        int64_t *v = sums + (int64_t)i * nv;
        memset(v, 0, sizeof(int64_t) * (size_t)nv);
        for (int64_t q = nodes[i].begin; q < nodes[i].end; q++)
            sb_k_forest_add_row(&d->s.rules, v, d->value[d->rows[q]], d->mult[q]);
    }
    return SB_OK;
}

/* A small node (sb_k_forest_small_feature): its rows gathered per feature,
 * as a GPU thread does; features in descending order. */
static void small_split(sb_fdev *d, const sb_fdev_node *q, const int64_t *t, int32_t m, sb_k_fsplit *best) {
    const int64_t n = d->s.n;
    const int32_t cnt = (int32_t)(q->end - q->begin);
    sb_u8 bin[SB_K_FOREST_SMALL_ROWS];
    sb_i32 val[SB_K_FOREST_SMALL_ROWS], mult[SB_K_FOREST_SMALL_ROWS];
    sb_i64 l[SB_K_FOREST_SMALL_NV], miss[SB_K_FOREST_SMALL_NV];
    for (int32_t a = m - 1; a >= 0; a--) {
        const uint8_t *col = d->binned + (int64_t)d->feat[a] * n;
        for (int32_t i = 0; i < cnt; i++) {
            const int32_t r = d->rows[q->begin + i];
            bin[i] = col[r];
            val[i] = d->value[r];
            mult[i] = d->mult[q->begin + i];
        }
        sb_k_forest_small_feature(&d->s.rules, d->s.seed, q->key, d->s.extra, t, bin, val, mult, cnt, d->feat[a], l,
                                  miss, best);
    }
}

static sb_status cpu_split(sb_fdev *d, const sb_fdev_node *nodes, int32_t nnodes, const int64_t *tot,
                           sb_k_fsplit *out, int64_t *lsum) {
    const int32_t nv = d->s.rules.nv, nf = d->s.nf, slot = (d->maxnb + 1) * nv;
    const int64_t n = d->s.n;
    for (int32_t i = 0; i < nnodes; i++) {
        const sb_fdev_node *q = &nodes[i];
        const int64_t *t = tot + (int64_t)i * nv;
        /* the node's features, in feature order */
        sb_k_forest_draws(d->s.seed, q->key, nf, d->draws);
        int32_t m = 0;
        for (int32_t j = 0; j < nf; j++)
            if (sb_k_forest_selected(d->draws, nf, d->s.mtry, j)) d->feat[m++] = j;
        sb_k_fsplit best;
        memset(&best, 0, sizeof best);
        int64_t *ls = lsum + (int64_t)i * nv;
        if (q->end - q->begin <= SB_K_FOREST_SMALL_ROWS && nv <= SB_K_FOREST_SMALL_NV) {
            small_split(d, q, t, m, &best);
            /* the left child's sums from its rows */
            memset(ls, 0, sizeof(int64_t) * (size_t)nv);
            if (best.valid) {
                const uint8_t *col = d->binned + (int64_t)best.feature * n;
                for (int64_t p = q->begin; p < q->end; p++)
                    if (sb_k_goes_left(col[d->rows[p]], best.bin, best.dl))
                        sb_k_forest_add_row(&d->s.rules, ls, d->value[d->rows[p]], d->mult[p]);
            }
            out[i] = best;
            continue;
        }
        /* their histograms, then cumulated */
        memset(d->hist, 0, sizeof(int64_t) * (size_t)m * (size_t)slot);
        for (int32_t a = 0; a < m; a++) {
            const uint8_t *col = d->binned + (int64_t)d->feat[a] * n;
            int64_t *h = d->hist + (int64_t)a * slot;
            for (int64_t p = q->begin; p < q->end; p++) {
                const int32_t r = d->rows[p];
                sb_k_forest_add_row(&d->s.rules, h + (int64_t)col[r] * nv, d->value[r], d->mult[p]);
            }
            sb_k_forest_cumulate(h, d->nbins[d->feat[a]], nv);
        }
        /* every candidate, features in descending order: the total order, not
         * the visiting order, decides (the GPU compares them in any grouping) */
        for (int32_t a = m - 1; a >= 0; a--) {
            const int32_t f = d->feat[a], nb = d->nbins[f];
            const int64_t *h = d->hist + (int64_t)a * slot;
            if (d->s.extra)
                sb_k_forest_et_feature(&d->s.rules, d->s.seed, q->key, t, h, h, nb, f, &best);
            else
                for (int32_t b = nb; b >= 1; b--) sb_k_forest_rf_at(&d->s.rules, t, h, h, nb, f, b, &best);
        }
        /* the left child's sums from the winning feature's cumulative histogram */
        memset(ls, 0, sizeof(int64_t) * (size_t)nv);
        for (int32_t a = 0; a < m && best.valid; a++)
            if (d->feat[a] == best.feature) {
                const int64_t *h = d->hist + (int64_t)a * slot;
                for (int32_t k = 0; k < nv; k++) ls[k] = h[(int64_t)best.bin * nv + k] + (best.dl ? h[k] : 0);
            }
        out[i] = best;
    }
    return SB_OK;
}

static sb_status cpu_partition(sb_fdev *d, const sb_fdev_node *nodes, int32_t nnodes, int64_t *nleft) {
    const int64_t n = d->s.n;
    for (int32_t i = 0; i < nnodes; i++) {
        const sb_fdev_node *q = &nodes[i];
        const uint8_t *col = d->binned + (int64_t)q->feature * n;
        int64_t l = q->begin, r = q->end;
        /* left rows from the front, right rows from the back (reversed: the
         * order within a side is not part of the contract) */
        for (int64_t p = q->begin; p < q->end; p++) {
            const int64_t at = sb_k_goes_left(col[d->rows[p]], q->bin, q->dl) ? l++ : --r;
            d->tmp_rows[at] = d->rows[p];
            d->tmp_mult[at] = d->mult[p];
        }
        memcpy(d->rows + q->begin, d->tmp_rows + q->begin, sizeof(int32_t) * (size_t)(q->end - q->begin));
        memcpy(d->mult + q->begin, d->tmp_mult + q->begin, sizeof(int32_t) * (size_t)(q->end - q->begin));
        nleft[i] = l - q->begin;
    }
    return SB_OK;
}

static const sb_fdev_ops k_cpu_ops = {"cpu-batched", INT64_C(1) << 24, cpu_open, cpu_close, cpu_begin, cpu_sums, cpu_split,
                                      cpu_partition};

const sb_fdev_ops *sb_fdev_cpu_ops(void) { return &k_cpu_ops; }

sb_status sb_fdev_find(const char *name, const sb_fdev_ops **out) {
    *out = NULL;
    if (!strcmp(name, "cpu-batched")) {
        *out = &k_cpu_ops;
    } else if (!strcmp(name, "cuda")) {
        if (!(*out = sb_fdev_cuda_ops()))
            return sb_fail(SB_ERR_BACKEND_UNAVAILABLE,
                           "device 'cuda': this build has no CUDA backend (build with make CUDA=1)");
    } else if (!strcmp(name, "opencl")) {
        if (!(*out = sb_fdev_opencl_ops()))
            return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "device 'opencl': this build has no OpenCL backend");
    } else {
        return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "no forest device named '%s' (devices: cpu-batched, cuda, opencl)",
                       name);
    }
    return SB_OK;
}
