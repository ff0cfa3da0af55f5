/*
 * fdev_cpu.c: the "cpu-batched" forest device, the reference implementation
 * of fdev.h on the host. It keeps the data as the CUDA device
 * does (one row array per batch of trees with a multiplicity per position,
 * histograms of nv int64 per bin for each drawn feature of a node, cumulated
 * in place) and runs the same kernel bodies of src/kernels/forest.h one node
 * at a time, so CI, which has no GPU, runs the level-wise grower and every
 * kernel body the GPU runs. Written for clarity, not speed: forests train on
 * the CPU grower (forest.c) unless device=cpu-batched is asked for.
 */
#include "fdev.h"
#include <string.h>

struct sb_fdev {
    sb_fdev_setup s;
    uint8_t *binned;  /* feature-major, n x nf */
    int32_t *nbins, *value;
    int32_t maxnb;    /* the largest nbins: a histogram slot has maxnb + 1 bins */
    int32_t *rows, *mult, *wq, *tmp_rows, *tmp_mult, *tmp_wq; /* the batch's positions: row, count, fixed-point weight */
    int32_t *rwq;     /* n: every row's fixed-point weight (weighted), or one tree's (balanced_subsample) */
    float *sw;        /* n: sample weights (balanced_subsample with sample weights), or NULL */
    uint8_t *taken;   /* n: isolation forest subsample */
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
    sb_free(d->wq);
    sb_free(d->tmp_wq);
    sb_free(d->rwq);
    sb_free(d->sw);
    sb_free(d->taken);
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
    int32_t stride; /* row-major bins' (unused: the host keeps them feature-major) */
    sb_fdev_setup_keep(s, &d->s, &stride, &d->maxnb);
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
    if (s->value) memcpy(d->value, s->value, sizeof(int32_t) * (size_t)s->n);
    else memset(d->value, 0, sizeof(int32_t) * (size_t)s->n);
    if (s->rules.weighted) {
        if (!(d->rwq = sb_malloc(sizeof(int32_t) * n))) {
            cpu_close(d);
            return oom();
        }
        if (s->wq) memcpy(d->rwq, s->wq, sizeof(int32_t) * (size_t)s->n);
    }
    if (s->sw) {
        if (!(d->sw = sb_malloc(sizeof(float) * n))) {
            cpu_close(d);
            return oom();
        }
        memcpy(d->sw, s->sw, sizeof(float) * (size_t)s->n);
    }
    d->hist = sb_malloc(sizeof(int64_t) * (size_t)s->mtry * (size_t)(d->maxnb + 1) * nv);
    if (!d->hist) {
        cpu_close(d);
        return oom();
    }
    *out = d;
    return SB_OK;
}

/* Positions for at least cap rows. */
static sb_status reserve(sb_fdev *d, int64_t cap) {
    if (cap <= d->cap) return SB_OK;
    int32_t **a[6] = {&d->rows, &d->mult, &d->wq, &d->tmp_rows, &d->tmp_mult, &d->tmp_wq};
    for (int i = 0; i < 6; i++) {
        int32_t *p = sb_realloc(*a[i], sizeof(int32_t) * (size_t)cap);
        if (!p) return oom();
        *a[i] = p;
    }
    d->cap = cap;
    return SB_OK;
}

/* balanced_subsample: tree t's fixed-point weights into d->rwq from its draw
 * counts d->cnt (forest.c's subsample_weights, with the same kernel bodies):
 * class weights from the draws, the scale from the largest weight of a drawn
 * row, each drawn row's weight rounded at it. *e: the scale. A weight not
 * finite or vanishing at the scale: SB_ERR_LIMIT, named by tree and row. */
static sb_status subsample_weights(sb_fdev *d, int32_t t, int32_t *e) {
    const int64_t n = d->s.n;
    const int32_t K = d->s.rules.nv - 1;
    sb_i64 *nk = sb_calloc((size_t)K, sizeof(sb_i64));
    float *cw = sb_malloc(sizeof(float) * (size_t)K);
    if (!nk || !cw) {
        sb_free(nk);
        sb_free(cw);
        return oom();
    }
    int64_t nt = 0;
    for (int64_t r = 0; r < n; r++) {
        nk[d->value[r]] += d->cnt[r];
        nt += d->cnt[r];
    }
    int32_t kt = 0;
    for (int32_t k = 0; k < K; k++) kt += nk[k] > 0;
    for (int32_t k = 0; k < K; k++) cw[k] = sb_k_forest_class_weight(nt, kt, nk[k]);
    float mx = 0.0f;
    int64_t bad = -1;
    for (int64_t r = 0; r < n && bad < 0; r++) {
        if (!d->cnt[r]) continue;
        const float w = sb_k_forest_row_weight(d->sw ? d->sw[r] : 1.0f, cw[d->value[r]]);
        if (w - w != 0.0f) bad = r;
        else if (w > mx) mx = w;
    }
    *e = mx > 0.0f ? sb_quantize_exponent(mx, SB_K_FOREST_W_LEVELS) : 0;
    for (int64_t r = 0; r < n && bad < 0; r++) {
        const float w = sb_k_forest_row_weight(d->sw ? d->sw[r] : 1.0f, cw[d->value[r]]);
        d->rwq[r] = d->cnt[r] ? sb_k_forest_weight_fixed(w, *e) : 0;
        if (d->cnt[r] && d->rwq[r] == 0 && w > 0.0f) bad = r;
    }
    sb_free(nk);
    sb_free(cw);
    if (bad >= 0)
        return sb_fail(SB_ERR_LIMIT,
                       "forest: the weight of row %lld in tree %d (sample weight %g times its class weight) is not "
                       "finite, or is positive but below the fixed-point resolution (2^-21 of the largest weight), "
                       "where it would count as zero",
                       (long long)bad, (int)t, (double)(d->sw ? d->sw[bad] : 1.0f));
    return SB_OK;
}

static sb_status cpu_begin(sb_fdev *d, int32_t t0, int32_t ntrees, int64_t *count, int32_t *wexp) {
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
        wexp[i] = d->s.rules.wexp;
        if (d->s.subsample && (st = subsample_weights(d, t0 + i, &wexp[i])) != SB_OK) return st;
        const int64_t first = at;
        for (int64_t r = 0; r < n; r++)
            if (d->cnt[r] && (!d->s.rules.weighted || d->rwq[r] > 0)) {
                d->rows[at] = (int32_t)r;
                d->wq[at] = d->s.rules.weighted ? d->rwq[r] : 1;
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
            sb_k_forest_put(&d->s.rules, v, d->value[d->rows[q]], d->mult[q], d->wq[q]);
    }
    return SB_OK;
}

/* A small node (sb_k_forest_small_feature): its rows gathered per feature,
 * as a GPU thread does; features in descending order. */
static void small_split(sb_fdev *d, const sb_k_forest_rules *rules, const sb_fdev_node *q, const int64_t *t, int32_t m,
                        sb_k_fsplit *best) {
    const int64_t n = d->s.n;
    const int32_t cnt = (int32_t)(q->end - q->begin);
    sb_u8 bin[SB_K_FOREST_SMALL_ROWS];
    sb_i32 val[SB_K_FOREST_SMALL_ROWS], mult[SB_K_FOREST_SMALL_ROWS], wq[SB_K_FOREST_SMALL_ROWS];
    sb_i64 l[SB_K_FOREST_SMALL_NV], miss[SB_K_FOREST_SMALL_NV];
    for (int32_t a = m - 1; a >= 0; a--) {
        const uint8_t *col = d->binned + (int64_t)d->feat[a] * n;
        for (int32_t i = 0; i < cnt; i++) {
            const int32_t r = d->rows[q->begin + i];
            bin[i] = col[r];
            val[i] = d->value[r];
            mult[i] = d->mult[q->begin + i];
            wq[i] = d->wq[q->begin + i];
        }
        sb_k_forest_small_feature(rules, d->s.seed, q->key, d->s.extra, t, bin, val, mult, wq, cnt, d->feat[a], l,
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
        sb_k_forest_rules rules = d->s.rules; /* with the node's tree's min_w */
        rules.min_w = q->min_w;
        /* the node's features, in feature order */
        sb_k_forest_draws(d->s.seed, q->key, nf, d->draws);
        int32_t m = 0;
        for (int32_t j = 0; j < nf; j++)
            if (sb_k_forest_selected(d->draws, nf, d->s.mtry, j)) d->feat[m++] = j;
        sb_k_fsplit best;
        memset(&best, 0, sizeof best);
        int64_t *ls = lsum + (int64_t)i * nv;
        if (q->end - q->begin <= SB_K_FOREST_SMALL_ROWS && nv <= SB_K_FOREST_SMALL_NV) {
            small_split(d, &rules, q, t, m, &best);
            /* the left child's sums from its rows */
            memset(ls, 0, sizeof(int64_t) * (size_t)nv);
            if (best.valid) {
                const uint8_t *col = d->binned + (int64_t)best.feature * n;
                for (int64_t p = q->begin; p < q->end; p++)
                    if (sb_k_goes_left(col[d->rows[p]], best.bin, best.dl))
                        sb_k_forest_put(&d->s.rules, ls, d->value[d->rows[p]], d->mult[p], d->wq[p]);
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
                sb_k_forest_put(&d->s.rules, h + (int64_t)col[r] * nv, d->value[r], d->mult[p], d->wq[p]);
            }
            sb_k_forest_cumulate(h, d->nbins[d->feat[a]], nv);
        }
        /* every candidate, features in descending order: the total order, not
         * the visiting order, decides (the GPU compares them in any grouping) */
        for (int32_t a = m - 1; a >= 0; a--) {
            const int32_t f = d->feat[a], nb = d->nbins[f];
            const int64_t *h = d->hist + (int64_t)a * slot;
            if (d->s.extra)
                sb_k_forest_et_feature(&rules, d->s.seed, q->key, t, h, h, nb, f, &best);
            else
                for (int32_t b = nb; b >= 1; b--) sb_k_forest_rf_at(&rules, t, h, h, nb, f, b, &best);
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
            d->tmp_wq[at] = d->wq[p];
        }
        memcpy(d->rows + q->begin, d->tmp_rows + q->begin, sizeof(int32_t) * (size_t)(q->end - q->begin));
        memcpy(d->mult + q->begin, d->tmp_mult + q->begin, sizeof(int32_t) * (size_t)(q->end - q->begin));
        memcpy(d->wq + q->begin, d->tmp_wq + q->begin, sizeof(int32_t) * (size_t)(q->end - q->begin));
        nleft[i] = l - q->begin;
    }
    return SB_OK;
}

/* ---- isolation forest ---- */

/* Tree t0 + i's subsample: psi distinct rows, drawn in order with repeats
 * rejected (isolation.c's draws), or rows' (weighted), at positions
 * [i * psi, (i + 1) * psi). */
static sb_status cpu_iso_begin(sb_fdev *d, int32_t t0, int32_t ntrees, const int32_t *rows) {
    const int64_t n = d->s.n, psi = d->s.psi;
    sb_status st = reserve(d, psi * ntrees);
    if (st != SB_OK) return st;
    if (rows) { /* the host's weighted draws, placed as given */
        for (int64_t p = 0; p < psi * ntrees; p++) {
            d->rows[p] = rows[p];
            d->mult[p] = 1;
            d->wq[p] = 1;
        }
        return SB_OK;
    }
    if (!d->taken && !(d->taken = sb_malloc((size_t)n))) return oom();
    for (int32_t i = 0; i < ntrees; i++) {
        memset(d->taken, 0, (size_t)n);
        int64_t got = 0;
        for (sb_u64 q = 0; got < psi; q++) {
            const sb_u32 r = sb_k_iforest_sample_row(d->s.seed, t0 + i, q, (sb_u32)n);
            if (d->taken[r]) continue;
            d->taken[r] = 1;
            d->rows[i * psi + got] = (int32_t)r;
            d->mult[i * psi + got] = 1;
            d->wq[i * psi + got] = 1;
            got++;
        }
    }
    return SB_OK;
}

/* Each node's isolation split: every feature's smallest and largest bin over
 * its rows (integer min and max: any order), the candidates in feature order,
 * the drawn one (sb_k_iforest_pick, sb_k_iforest_bin). */
static sb_status cpu_iso_split(sb_fdev *d, const sb_fdev_node *nodes, int32_t nnodes, sb_k_fsplit *out) {
    const int64_t n = d->s.n;
    const int32_t nf = d->s.nf;
    for (int32_t i = 0; i < nnodes; i++) {
        const sb_fdev_node *q = &nodes[i];
        int32_t nc = 0;
        for (int32_t j = 0; j < nf; j++) {
            const uint8_t *col = d->binned + (int64_t)j * n;
            int32_t lo = 256, hi = -1;
            for (int64_t p = q->begin; p < q->end; p++) {
                const int32_t b = col[d->rows[p]];
                if (b < lo) lo = b;
                if (b > hi) hi = b;
            }
            if (lo < hi) {
                d->feat[nc] = j; /* candidates, and their ranges in draws (lo << 16 | hi) */
                d->draws[nc++] = (sb_u32)lo << 16 | (sb_u32)hi;
            }
        }
        memset(&out[i], 0, sizeof out[i]);
        if (nc == 0) continue;
        int32_t k;
        sb_u32 u;
        sb_k_iforest_pick(d->s.seed, q->key, nc, &k, &u);
        out[i].valid = 1;
        out[i].feature = d->feat[k];
        out[i].bin = sb_k_iforest_bin(u, (int32_t)(d->draws[k] >> 16), (int32_t)(d->draws[k] & 0xFFFFu));
        out[i].dl = 1;
    }
    return SB_OK;
}

static const sb_fdev_ops k_cpu_ops = {"cpu-batched", INT64_C(1) << 24, cpu_open, cpu_close, cpu_begin, cpu_sums, cpu_split,
                                      cpu_partition, cpu_iso_begin, cpu_iso_split, NULL};

const sb_fdev_ops *sb_fdev_host_ops(void) { return &k_cpu_ops; }

sb_status sb_fdev_find(sb_device_kind k, const sb_fdev_ops **out) {
    *out = NULL;
    if (k == SB_DEVICE_CPU_BATCHED) {
        *out = &k_cpu_ops;
        return SB_OK;
    }
    if (k != SB_DEVICE_CUDA && k != SB_DEVICE_OPENCL)
        return sb_fail(SB_ERR_INTERNAL, "device '%s' has no forest device", sb_device_kind_name(k));
    if (!sb_device_built(k)) return sb_device_parse(sb_device_kind_name(k), &k); /* the one wording of the refusal */
    *out = sb_fdev_gpu_ops();
    return SB_OK;
}
