/*
 * tdev_host.c: the "cpu-batched" tree device, the reference implementation of
 * tdev.h on the host. It keeps the data in the layouts the GPU
 * backends use (row-major bins with a padded stride, histogram slots in one
 * pool, margins row-major) and runs the same kernel bodies one row at a time,
 * so CI, which has no GPU, runs the batched grower and every kernel body the
 * GPU runs. It is written for clarity, not speed: training uses the CPU
 * grower (src/models/trees/grow.c) unless device=cpu-batched is asked for.
 */
#include "tdev.h"
#include "../../kernels/quantize.h"
#include <string.h>

struct sb_tdev {
    int64_t n;
    int32_t nf, stride, total, K, objective;
    float obj_param;
    uint8_t *bins;     /* n x stride, row-major */
    int32_t *nbins, *hoff;
    float *label, *weight, *margin, *g, *h; /* g, h: K x n, class-major */
    int32_t *gq, *hq, *rows, *tmp;
    uint8_t *mask;
    sb_k_hbin *slots;  /* nslots x total */
    int32_t nslots;
};

static sb_status oom(void) { return sb_fail(SB_ERR_OUT_OF_MEMORY, "cpu-batched device: out of memory"); }

static void cpu_close(sb_tdev *d) {
    if (!d) return;
    sb_free(d->bins);
    sb_free(d->nbins);
    sb_free(d->hoff);
    sb_free(d->label);
    sb_free(d->weight);
    sb_free(d->margin);
    sb_free(d->g);
    sb_free(d->h);
    sb_free(d->gq);
    sb_free(d->hq);
    sb_free(d->rows);
    sb_free(d->tmp);
    sb_free(d->mask);
    sb_free(d->slots);
    sb_free(d);
}

static sb_status cpu_open(const sb_tdev_setup *s, sb_tdev **out) {
    *out = NULL;
    sb_tdev *d = sb_calloc(1, sizeof *d);
    if (!d) return oom();
    const size_t n = (size_t)(s->n ? s->n : 1), K = (size_t)s->K;
    d->n = s->n;
    d->nf = s->nf;
    d->stride = (s->nf + 3) & ~3;
    d->total = s->total;
    d->K = s->K;
    d->objective = s->objective;
    d->obj_param = s->obj_param;
    d->bins = sb_calloc(n, (size_t)d->stride);
    d->nbins = sb_malloc(sizeof(int32_t) * (size_t)s->nf);
    d->hoff = sb_malloc(sizeof(int32_t) * (size_t)s->nf);
    d->label = sb_malloc(sizeof(float) * n);
    d->weight = sb_malloc(sizeof(float) * n);
    d->margin = sb_malloc(sizeof(float) * n * K);
    d->g = sb_malloc(sizeof(float) * n * K);
    d->h = sb_malloc(sizeof(float) * n * K);
    d->gq = sb_malloc(sizeof(int32_t) * n);
    d->hq = sb_malloc(sizeof(int32_t) * n);
    d->rows = sb_malloc(sizeof(int32_t) * n);
    d->tmp = sb_malloc(sizeof(int32_t) * n);
    d->mask = sb_malloc((size_t)(s->nf ? s->nf : 1));
    if (!d->bins || !d->nbins || !d->hoff || !d->label || !d->weight || !d->margin || !d->g || !d->h || !d->gq ||
        !d->hq || !d->rows || !d->tmp || !d->mask) {
        cpu_close(d);
        return oom();
    }
    for (int64_t r = 0; r < s->n; r++)
        for (int32_t f = 0; f < s->nf; f++) d->bins[r * d->stride + f] = s->binned[(int64_t)f * s->n + r];
    memcpy(d->nbins, s->nbins, sizeof(int32_t) * (size_t)s->nf);
    memcpy(d->hoff, s->hoff, sizeof(int32_t) * (size_t)s->nf);
    memcpy(d->label, s->label, sizeof(float) * (size_t)s->n);
    for (int64_t r = 0; r < s->n; r++) d->weight[r] = s->weight ? s->weight[r] : 1.0f;
    for (int64_t i = 0; i < s->n * s->K; i++) d->margin[i] = s->base[i % s->K];
    memset(d->mask, 1, (size_t)s->nf);
    *out = d;
    return SB_OK;
}

static sb_status cpu_gradients(sb_tdev *d, float *maxabs) {
    float prob[SB_TDEV_MAX_CLASS];
    for (int64_t r = 0; r < d->n; r++)
        sb_k_row_gradients(d->objective, d->K, d->margin + r * d->K, d->label[r], d->weight[r], d->g + r, d->h + r,
                           d->n, prob, d->obj_param);
    /* the maxima of the keys, as k_maxabs takes them (kernels/quantize.h) */
    for (int32_t c = 0; c < d->K; c++) {
        sb_u32 mg = 0u, mh = 0u;
        for (int64_t r = 0; r < d->n; r++) {
            sb_u32 a = sb_k_maxkey_abs(d->g[c * d->n + r]), b = sb_k_maxkey_pos(d->h[c * d->n + r]);
            mg = a > mg ? a : mg;
            mh = b > mh ? b : mh;
        }
        maxabs[2 * c] = sb_u2f(mg);
        maxabs[2 * c + 1] = sb_u2f(mh);
    }
    return SB_OK;
}

static sb_status cpu_quantize(sb_tdev *d, int32_t cls, float gs, float hs) {
    const float *g = d->g + cls * d->n, *h = d->h + cls * d->n;
    for (int64_t r = 0; r < d->n; r++) {
        d->gq[r] = sb_round_half_even_i32(g[r] * gs);
        d->hq[r] = sb_round_half_even_i32(h[r] * hs);
    }
    return SB_OK;
}

static sb_status cpu_set_rows(sb_tdev *d, const int32_t *rows, int64_t nrows) {
    for (int64_t i = 0; i < (rows ? nrows : d->n); i++) d->rows[i] = rows ? rows[i] : (int32_t)i;
    return SB_OK;
}

static sb_status cpu_set_mask(sb_tdev *d, const uint8_t *mask) {
    memcpy(d->mask, mask, (size_t)d->nf);
    return SB_OK;
}

static sb_status cpu_reserve(sb_tdev *d, int32_t nslots) {
    if (nslots <= d->nslots) return SB_OK;
    sb_k_hbin *s = sb_realloc(d->slots, sizeof(sb_k_hbin) * (size_t)d->total * (size_t)nslots);
    if (!s) return oom();
    d->slots = s;
    d->nslots = nslots;
    return SB_OK;
}

static sb_status cpu_partition(sb_tdev *d, const sb_tdev_seg *segs, int32_t nseg) {
    for (int32_t k = 0; k < nseg; k++) {
        const sb_tdev_seg *s = &segs[k];
        int64_t l = s->begin;
        for (int64_t i = s->begin; i < s->end; i++) {
            int32_t r = d->rows[i];
            if (sb_tdev_seg_left(s, d->bins[(int64_t)r * d->stride + s->feature])) d->tmp[l++] = r;
        }
        for (int64_t i = s->begin; i < s->end; i++) {
            int32_t r = d->rows[i];
            if (!sb_tdev_seg_left(s, d->bins[(int64_t)r * d->stride + s->feature])) d->tmp[l++] = r;
        }
        memcpy(d->rows + s->begin, d->tmp + s->begin, sizeof(int32_t) * (size_t)(s->end - s->begin));
    }
    return SB_OK;
}

static sb_status cpu_hist(sb_tdev *d, const sb_tdev_hjob *jobs, int32_t njobs) {
    for (int32_t k = 0; k < njobs; k++) {
        sb_k_hbin *hs = d->slots + (int64_t)jobs[k].slot * d->total;
        memset(hs, 0, sizeof(sb_k_hbin) * (size_t)d->total);
        for (int64_t i = jobs[k].begin; i < jobs[k].end; i++) {
            const int32_t r = d->rows[i];
            const uint8_t *b = d->bins + (int64_t)r * d->stride;
            for (int32_t f = 0; f < d->nf; f++) {
                if (!d->mask[f]) continue; /* unusable features' bins stay zero */
                sb_k_hbin *e = &hs[d->hoff[f] + b[f]];
#ifdef SB_SABOTAGE_FLOAT_HIST
                e->g = (int64_t)((float)e->g + (float)d->gq[r]); /* arm: float sums */
#else
                e->g += d->gq[r];
#endif
                e->h += d->hq[r];
                e->c += 1;
            }
        }
    }
    return SB_OK;
}

static sb_status cpu_subtract(sb_tdev *d, const sb_tdev_sub *subs, int32_t nsubs) {
    for (int32_t k = 0; k < nsubs; k++) {
        sb_k_hbin *a = d->slots + (int64_t)subs[k].large * d->total;
        const sb_k_hbin *b = d->slots + (int64_t)subs[k].small * d->total;
        for (int32_t i = 0; i < d->total; i++) {
            a[i].g -= b[i].g;
            a[i].h -= b[i].h;
            a[i].c -= b[i].c;
        }
    }
    return SB_OK;
}

static sb_status cpu_best(sb_tdev *d, const sb_tdev_node *nodes, int32_t nnodes, const sb_k_split_rules *r,
                          sb_k_split *out) {
    for (int32_t k = 0; k < nnodes; k++) {
        const sb_tdev_node *q = &nodes[k];
        const sb_k_hbin *hs = d->slots + (int64_t)q->slot * d->total;
        const float parent = sb_k_node_score(q->G, q->H, r);
        sb_k_split best;
        memset(&best, 0, sizeof best);
        /* features in descending order: the total order, not the visiting
         * order, decides (a GPU compares them in any grouping) */
        for (int32_t f = d->nf - 1; f >= 0; f--)
            if (d->mask[f]) sb_k_split_scan(hs + d->hoff[f], d->nbins[f], f, q->G, q->H, q->C, parent, r, &best);
        out[k] = best;
    }
    return SB_OK;
}

static sb_status cpu_read_hist(sb_tdev *d, int32_t slot, int32_t first, int32_t count, sb_k_hbin *out) {
    memcpy(out, d->slots + (int64_t)slot * d->total + first, sizeof(sb_k_hbin) * (size_t)count);
    return SB_OK;
}

static sb_status cpu_add_tree(sb_tdev *d, const sb_k_bnode *nodes, int32_t nnodes, int32_t cls) {
    (void)nnodes;
    for (int64_t r = 0; r < d->n; r++) {
        float *m = &d->margin[r * d->K + cls];
        *m = *m + nodes[sb_k_walk_bins(nodes, d->bins + r * d->stride, 1)].value;
    }
    return SB_OK;
}

static sb_status cpu_read_quantized(sb_tdev *d, int32_t *gq, int32_t *hq) {
    memcpy(gq, d->gq, sizeof(int32_t) * (size_t)d->n);
    memcpy(hq, d->hq, sizeof(int32_t) * (size_t)d->n);
    return SB_OK;
}

static sb_status cpu_read_margins(sb_tdev *d, float *m) {
    memcpy(m, d->margin, sizeof(float) * (size_t)d->n * (size_t)d->K);
    return SB_OK;
}

static sb_status cpu_set_gradients(sb_tdev *d, int32_t cls, const float *g, const float *h) {
    memcpy(d->g + (int64_t)cls * d->n, g, sizeof(float) * (size_t)d->n);
    memcpy(d->h + (int64_t)cls * d->n, h, sizeof(float) * (size_t)d->n);
    return SB_OK;
}

static sb_status cpu_set_margins(sb_tdev *d, const float *m) {
    memcpy(d->margin, m, sizeof(float) * (size_t)d->n * (size_t)d->K);
    return SB_OK;
}

static const sb_tdev_ops k_cpu_ops = {
    "cpu-batched", cpu_open,     cpu_close,    cpu_gradients, cpu_quantize,  cpu_set_rows,
    cpu_set_mask,  cpu_reserve,  cpu_partition, cpu_hist,     cpu_subtract,  cpu_best,
    cpu_read_hist, cpu_add_tree, cpu_read_quantized, cpu_read_margins, cpu_set_gradients, cpu_set_margins,
    NULL, /* reduce_hist: the host's memory is summed by the caller (grow_dev.c) */
};

const sb_tdev_ops *sb_tdev_host_ops(void) { return &k_cpu_ops; }

sb_status sb_tdev_find(sb_device_kind k, const sb_tdev_ops **out) {
    *out = NULL;
    if (k == SB_DEVICE_CPU_BATCHED) {
        *out = &k_cpu_ops;
        return SB_OK;
    }
    if (k != SB_DEVICE_CUDA && k != SB_DEVICE_OPENCL)
        return sb_fail(SB_ERR_INTERNAL, "device '%s' has no tree device", sb_device_kind_name(k));
    if (!sb_device_built(k)) return sb_device_parse(sb_device_kind_name(k), &k); /* the one wording of the refusal */
    *out = sb_tdev_gpu_ops();
    return SB_OK;
}
