/*
 * gbdt.c: gradient boosting on the CPU, identical by construction.
 *
 * Stages, in the order the data flows: bin edges and the binned matrix
 * (trees/binning.c); the base score from exact sums; per iteration the bag and
 * column draws from the counter rng, the losses' gradients (kernels/gbdt.h),
 * their quantization to int32 with power-of-two scales (kernels/quantize.h), a
 * tree grown from exact integer histograms (trees/grow.c), and the margins
 * updated by adding the tree's leaves in tree order; metrics and early stopping
 * on exact sums (metrics.c). Every stage can be recorded on an identity card.
 */
#include "gbdt_params.h"
#include "metrics.h"
#include "rank.h"
#include "../model.h"
#include "../trees/binning.h"
#include "../trees/grow.h"
#include "../trees/grow_dev.h"
#include "../../core/rng.h"
#include "../../core/dist.h"
#include "../../io/dataset.h"
#include "../../kernels/tree.h"
#include <time.h>
#include "../../kernels/quantize.h"
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

_Static_assert(SB_K_OBJ_REGRESSION == SB_OBJ_REGRESSION && SB_K_OBJ_BINARY == SB_OBJ_BINARY &&
                   SB_K_OBJ_MULTICLASS == SB_OBJ_MULTICLASS && SB_K_OBJ_HUBER == SB_OBJ_HUBER &&
                   SB_K_OBJ_QUANTILE == SB_OBJ_QUANTILE && SB_K_OBJ_POISSON == SB_OBJ_POISSON &&
                   SB_K_OBJ_GAMMA == SB_OBJ_GAMMA && SB_K_OBJ_TWEEDIE == SB_OBJ_TWEEDIE &&
                   SB_K_OBJ_FOREST_CLASSES == SB_OBJ_FOREST_CLASSES && SB_K_OBJ_ISOLATION == SB_OBJ_ISOLATION,
               "kernel objective codes");

#define SB_PURPOSE_BAG 0x42414731u
#define SB_PURPOSE_COLS 0x434F4C31u
#define SB_PURPOSE_DART 0x44415254u      /* "DART": an iteration's draw to drop an earlier one */
#define SB_PURPOSE_DART_SKIP 0x44534B50u /* "DSKP": an iteration's draw to skip dropping */
#define ROW_GRAIN 8192
#define SB_GBDT_MAX_VALID 4096 /* validation sets a fit takes (sb_gbdt_fit_multi) */
#define QUANT_LEVELS 1073741824.0f /* |quantized gradient| <= 2^30: row sums fit int64 for 2^31 rows */

/* One validation set of a fit: the caller's dataset (NULL for the training
 * set itself, which is evaluated on the training rows' own margins and never
 * decides early stopping, as LightGBM's "training" set), its margins (owned
 * here), its query groups (ranking) and the name it is logged and kept under. */
typedef struct vset {
    const sb_dataset *d;
    const sb_table *t;
    float *pred;          /* t->nrows x K margins; NULL for the training set */
    sb_rank_groups q;
    char name[SB_EVALS_SET_NAME];
    const char *label;    /* the log's name: name, or "valid" for a single unnamed set (the log as it was) */
} vset;

typedef struct fit {
    const gbdt_params *p;
    const sb_table *tr, *va; /* va: the validation set update_valid_task adds to now */
    const sb_table *tm;      /* the training rows as metrics see them (before class weights) */
    int32_t nsets;           /* validation sets, in the caller's order */
    vset *sets;
    int32_t K;
    int32_t it0; /* continued training: the iterations the initial model holds (0: a fresh fit) */
    sb_card *card;
    sb_bins bins;
    uint8_t *binned;
    uint8_t *binned_rows; /* the CPU grower's row-major copy (sb_grow_rowwise_wanted), or NULL */
    int64_t *ghq;         /* with it: each row's gq and hq in one word (sb_grow_data.ghq) */
    float *pred, *vpred;  /* margins, n x K */
    float *g, *h;         /* gradients, class-major: K x n */
    int32_t *gq, *hq;
    int32_t *rows;        /* the bag, then the grower's permutation (int32: n < 2^31) */
    uint8_t *inbag;       /* per row, when subsampling */
    uint8_t *catm;        /* per feature: 1 = categorical (categorical_feature), or NULL: none */
    sb_k_cat_rules catr;  /* the categorical search's rules */
    uint8_t *mask;
    float *maxabs;        /* per task and class: largest |g| and h */
    sb_tree *trees;
    int32_t ntrees, cap;
    /* per-iteration inputs of the parallel bodies */
    int32_t cls;
    float g_scale, h_scale;
    const sb_grown *grown;
    sb_grow_scratch ws;   /* the grower's row buffers, kept across trees */
    /* a tree device (device=cuda or cpu-batched), NULL for the CPU grower */
    const sb_tdev_ops *ops;
    sb_tdev *dev;
    int32_t *hoff;        /* histogram layout: feature f's bins start at hoff[f] */
    /* ranking objectives (rank.c): the configuration and the query groups */
    int ranking;
    sb_rank_cfg rc;
    sb_rank_groups tq;
    float obj_param;      /* the objective's parameter (sb_gbdt_obj_param) */
    int l2_plain;         /* squared error without weights on the host: grad_task's and quant_task's short road */
    /* boosting=dart: per iteration of this fit, its weight (the factor its
     * trees carry against a plain tree's learning rate) and whether the
     * current iteration drops it; dart_k of them dropped */
    float *dart_w;
    uint8_t *dart_drop;
    int32_t dart_k;
    const float *base;    /* the K starting margins */
    sb_grow_cons gc;      /* per-node rules (trees/cons.h); gc.tree set before each tree */
    uint64_t *set_bits;   /* per feature: its interaction sets, one bit each (NULL: none) */
    /* distributed=mpi (docs/distributed.md): the communicator, or NULL in a
     * single process; this rank's rows are global rows [goff, goff + n) of
     * gn (after zero-weight rows are dropped); all_tm and all_pred are every
     * rank's labels, weights and margins in global row order, gathered for
     * the training rows' metrics; quiet: a rank other than 0 logs nothing */
    sb_dist *dist;
    int64_t gn, goff;
    sb_table all_tm;
    sb_rank_groups all_tq; /* ranking: the queries of all_tm */
    float *all_pred;
    int quiet;
} fit;

static sb_status record(fit *f, const char *tag, sb_dtype dt, const void *data, uint64_t n) {
    return f->card ? sb_card_record(f->card, tag, dt, data, n) : SB_OK;
}

/* ---- validation ---- */

static sb_status check_labels(const gbdt_params *p, const sb_table *t, const char *which, int32_t *K) {
    if (!t->label) return sb_fail(SB_ERR_INVALID_INPUT, "%s data has no labels", which);
    if (t->ntargets > 1)
        return sb_fail(SB_ERR_INVALID_INPUT, "%s data has %d targets a row: gradient boosting fits one", which,
                       (int)t->ntargets);
    int32_t maxc = 0;
    for (int64_t r = 0; r < t->nrows; r++) {
        float y = t->label[r];
        if (!(y == y) || y - y != 0.0f)
            return sb_fail(SB_ERR_INVALID_INPUT, "%s label of row %lld is not finite", which, (long long)r);
        if ((p->objective == SB_OBJ_POISSON || p->objective == SB_OBJ_TWEEDIE) && y < 0.0f)
            return sb_fail(SB_ERR_INVALID_INPUT, "%s label of row %lld is %g; objective=%s needs labels >= 0", which,
                           (long long)r, (double)y, sb_objective_name(p->objective));
        if (p->objective == SB_OBJ_GAMMA && !(y > 0.0f))
            return sb_fail(SB_ERR_INVALID_INPUT, "%s label of row %lld is %g; objective=gamma needs labels > 0", which,
                           (long long)r, (double)y);
        if (p->objective == SB_OBJ_BINARY && y != 0.0f && y != 1.0f)
            return sb_fail(SB_ERR_INVALID_INPUT, "%s label of row %lld is %g; objective=binary needs 0 or 1",
                           which, (long long)r, (double)y);
        if (p->objective == SB_OBJ_MULTICLASS || sb_gbdt_is_ranking(p->objective)) {
            if (sb_gbdt_is_ranking(p->objective)) continue; /* rank.c checks relevance labels */
            if (y > 1023.0f) /* the class limit, by name */
                return sb_fail(SB_ERR_LIMIT, "%s label of row %lld is %g; multiclass supports at most 1024 classes (labels 0..1023)",
                               which, (long long)r, (double)y);
            if (y < 0.0f || y > 1023.0f || y != (float)(int32_t)y)
                return sb_fail(SB_ERR_INVALID_INPUT, "%s label of row %lld is %g; objective=multiclass needs class indices 0..K-1",
                               which, (long long)r, (double)y);
            if ((int32_t)y > maxc) maxc = (int32_t)y;
        }
    }
    if (p->objective == SB_OBJ_MULTICLASS) {
        if (*K == 0) *K = maxc + 1 < 3 ? 3 : maxc + 1;
        if (maxc >= *K)
            return sb_fail(SB_ERR_INVALID_INPUT, "%s labels reach class %d but num_class=%d", which, (int)maxc, (int)*K);
    }
    if (t->weight)
        for (int64_t r = 0; r < t->nrows; r++)
            if (!(t->weight[r] >= 0.0f) || t->weight[r] - t->weight[r] != 0.0f)
                return sb_fail(SB_ERR_INVALID_INPUT, "%s weight of row %lld must be finite and >= 0", which, (long long)r);
    return SB_OK;
}

/* ---- base score ---- */

/* The margins every row starts from, one per class (K of them), as LightGBM's
 * boost_from_average: regression the weighted mean of the labels, binary the
 * logit of the weighted positive rate, multiclass per class the log of its
 * weighted frequency (clamped at 1e-15, so an absent class starts at
 * log(1e-15), as LightGBM's does), ranking 0. boost_from_average=false starts
 * at 0 and a given base_score wins over both. LightGBM's other regression
 * objectives: huber the weighted mean, quantile the weighted alpha-quantile of
 * the labels (quantile_base), poisson, gamma and tweedie the log of the
 * weighted mean (their log link; a mean of 0 is refused by name). Sums are exact (sb_sacc), so
 * the result does not depend on row order or threads. */
/* Order of (label, weight) pairs: label, then weight, as float keys. */
static int lw_cmp(const void *a, const void *b) {
    const float *x = a, *y = b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    if (x[1] != y[1]) return x[1] < y[1] ? -1 : 1;
    return 0;
}

/* The weighted alpha-quantile of n (value, weight) pairs lw (reordered): the
 * smallest value whose cumulative weight (values ascending, weights summed
 * exactly) reaches alpha of the total weight; fallback when every weight is 0.
 * The pairs are sorted by (value, weight), a total order on finite values, so
 * the result is one value whatever order the pairs came in. */
static float weighted_quantile(float *lw, int64_t n, float alpha, float fallback) {
    sb_sacc tot, acc;
    sb_sacc_init(&tot);
    sb_sacc_init(&acc);
    for (int64_t r = 0; r < n; r++) sb_sacc_add(&tot, lw[2 * r + 1]);
    qsort(lw, (size_t)n, 2 * sizeof(float), lw_cmp);
    const float target = alpha * sb_sacc_round_f32(&tot);
    for (int64_t r = 0; r < n; r++) {
        if (!(lw[2 * r + 1] > 0.0f)) continue;
        sb_sacc_add(&acc, lw[2 * r + 1]);
        if (sb_sacc_round_f32(&acc) >= target) return lw[2 * r];
    }
    return fallback;
}

/* The starting score of objective=quantile: the weighted alpha-quantile of
 * the labels (weighted_quantile). */
static sb_status quantile_base(const sb_table *t, float alpha, float *base) {
    const int64_t n = t->nrows;
    float *lw = sb_malloc(sizeof(float) * 2 * (size_t)(n > 0 ? n : 1));
    if (!lw) return sb_fail(SB_ERR_OUT_OF_MEMORY, "gbdt: out of memory");
    for (int64_t r = 0; r < n; r++) {
        lw[2 * r] = t->label[r];
        lw[2 * r + 1] = t->weight ? t->weight[r] : 1.0f;
    }
    base[0] = weighted_quantile(lw, n, alpha, 0.0f);
    sb_free(lw);
    return SB_OK;
}

/* The exact sums of every rank merged into each of a[0..n) (sb_sacc_merge's
 * result, by integer sums): normalised limbs and one count per flag bit,
 * summed over the ranks, then normalised; the flags are those some rank
 * saw. Every rank ends with the accumulator one process would hold. */
static void dist_sacc(const sb_dist *d, sb_sacc *a, int32_t n) {
    enum { W = SB_SACC_LIMBS + 32 };
    int64_t *v = sb_malloc(sizeof(int64_t) * W * (size_t)n);
    if (!v) sb_dist_fail(d, SB_ERR_OUT_OF_MEMORY, "gbdt: out of memory");
    for (int32_t k = 0; k < n; k++) {
        sb_sacc_normalize(&a[k]);
        for (int32_t i = 0; i < SB_SACC_LIMBS; i++) v[W * k + i] = a[k].limb[i];
        for (int32_t b = 0; b < 32; b++) v[W * k + SB_SACC_LIMBS + b] = (a[k].flags >> b) & 1u;
    }
    sb_dist_sum_i64(d, v, (int64_t)W * n);
    for (int32_t k = 0; k < n; k++) {
        for (int32_t i = 0; i < SB_SACC_LIMBS; i++) a[k].limb[i] = v[W * k + i];
        a[k].flags = 0;
        for (int32_t b = 0; b < 32; b++) a[k].flags |= v[W * k + SB_SACC_LIMBS + b] > 0 ? 1u << b : 0u;
        a[k].pending = 0;
        sb_sacc_normalize(&a[k]);
    }
    sb_free(v);
}

static sb_status base_scores(const fit *f, float *base) {
    const gbdt_params *p = f->p;
    const int32_t K = f->K;
    if (p->has_base_score || p->no_boost_from_average || sb_gbdt_is_ranking(p->objective)) {
        const float v = p->has_base_score ? p->base_score : 0.0f;
        for (int32_t c = 0; c < K; c++) base[c] = v;
        return SB_OK;
    }
    const float *w = f->tr->weight, *y = f->tr->label;
    if (p->objective == SB_OBJ_QUANTILE) /* distributed=mpi: over every rank's labels (f->all_tm) */
        return quantile_base(f->dist ? &f->all_tm : f->tr, p->alpha, base);
    if (p->objective == SB_OBJ_MULTICLASS) {
        sb_sacc *num = sb_malloc(sizeof(sb_sacc) * (size_t)K), den;
        if (!num) return sb_fail(SB_ERR_OUT_OF_MEMORY, "gbdt: out of memory");
        for (int32_t c = 0; c < K; c++) sb_sacc_init(&num[c]);
        sb_sacc_init(&den);
        for (int64_t r = 0; r < f->tr->nrows; r++) {
            const float wr = w ? w[r] : 1.0f;
            sb_sacc_add(&num[(int32_t)y[r]], wr);
            sb_sacc_add(&den, wr);
        }
        if (f->dist) {
            dist_sacc(f->dist, num, K);
            dist_sacc(f->dist, &den, 1);
        }
        const float d = sb_sacc_round_f32(&den);
        for (int32_t c = 0; c < K; c++) {
            float pc = d > 0.0f ? sb_sacc_round_f32(&num[c]) / d : 0.0f;
            if (!(pc >= 1e-15f)) pc = 1e-15f;
            base[c] = sb_logf(pc);
        }
        sb_free(num);
        return SB_OK;
    }
    sb_sacc num, den;
    sb_sacc_init(&num);
    sb_sacc_init(&den);
    for (int64_t r = 0; r < f->tr->nrows; r++) {
        const float wr = w ? w[r] : 1.0f;
        sb_sacc_add(&num, w ? y[r] * wr : y[r]);
        sb_sacc_add(&den, wr);
    }
    if (f->dist) {
        dist_sacc(f->dist, &num, 1);
        dist_sacc(f->dist, &den, 1);
    }
    float d = sb_sacc_round_f32(&den);
    float mean = d > 0.0f ? sb_sacc_round_f32(&num) / d : 0.0f;
    if (p->objective == SB_OBJ_POISSON || p->objective == SB_OBJ_GAMMA || p->objective == SB_OBJ_TWEEDIE) {
        /* log link: the log of the weighted mean label */
        if (!(mean > 0.0f))
            return sb_fail(SB_ERR_INVALID_INPUT, "objective=%s: the weighted mean label is %g; the log link needs "
                           "some positive label (or give base_score)", sb_objective_name(p->objective), (double)mean);
        base[0] = sb_logf(mean);
        return SB_OK;
    }
    if (p->objective != SB_OBJ_REGRESSION && p->objective != SB_OBJ_HUBER) {
        if (mean < 1e-6f) mean = 1e-6f;
        if (mean > 1.0f - 1e-6f) mean = 1.0f - 1e-6f;
        mean = sb_logf(mean / (1.0f - mean)); /* logit of the positive rate */
    }
    base[0] = mean;
    return SB_OK;
}

/* ---- gradients ---- */

/* Gradients of the rows of one task, and per class the task's largest |g| and h
 * (f->maxabs[2 (task K + c)], [... + 1]). Taking the maxima here rather than in
 * a second pass saves reading g and h again; a max is order-free, so the
 * quantization scale is the same. */
static void grad_task(void *ctx, int64_t task) {
    fit *f = ctx;
    const int64_t n = f->tr->nrows;
    const int32_t K = f->K;
    int64_t b, e;
    sb_chunk_range(n, ROW_GRAIN, task, &b, &e);
    float prob[SB_MODEL_MAX_CLASS_STACK];
    if (f->l2_plain) {
        /* squared error, unweighted: g = pred - y (sb_k_grad_squared with
         * w = 1: x * 1 is x, the same bits), h = 1. Only the maxima are
         * taken here; quant_task quantizes pred - y straight from the
         * margins, so g and h are never written or read back (two of the
         * four arrays' traffic of the general path) */
        const float *restrict pr = f->pred, *restrict y = f->tr->label;
        sb_u32 mg0 = 0u, mg1 = 0u;
        int64_t r = b;
        for (; r + 2 <= e; r += 2) {
            const sb_u32 a0 = sb_k_maxkey_abs(pr[r] - y[r]), a1 = sb_k_maxkey_abs(pr[r + 1] - y[r + 1]);
            mg0 = a0 > mg0 ? a0 : mg0;
            mg1 = a1 > mg1 ? a1 : mg1;
        }
        for (; r < e; r++) {
            const sb_u32 a = sb_k_maxkey_abs(pr[r] - y[r]);
            mg0 = a > mg0 ? a : mg0;
        }
        f->maxabs[2 * task] = sb_u2f(mg1 > mg0 ? mg1 : mg0);
        f->maxabs[2 * task + 1] = e > b ? 1.0f : 0.0f; /* the largest h: sb_k_maxkey_pos(1) of a row */
        return;
    } else if (f->p->objective == SB_OBJ_BINARY) {
        /* the logistic loss of sb_k_grad_logistic, its sigmoids a block at a
         * time (sb_sigmoidf_n: sb_sigmoidf's bits without a branch per row) */
        const float *y = f->tr->label, *w = f->tr->weight;
        float p[256];
        for (int64_t r0 = b; r0 < e; r0 += 256) {
            const int64_t m = e - r0 < 256 ? e - r0 : 256;
            sb_sigmoidf_n(f->pred + r0, p, m);
            for (int64_t k = 0; k < m; k++) {
                const float wr = w ? w[r0 + k] : 1.0f;
                float hh = p[k] * (1.0f - p[k]);
                if (hh < SB_GBDT_MIN_HESS) hh = SB_GBDT_MIN_HESS;
                f->g[r0 + k] = (p[k] - y[r0 + k]) * wr;
                f->h[r0 + k] = hh * wr;
            }
        }
    } else {
        for (int64_t r = b; r < e; r++)
            sb_k_row_gradients(f->p->objective, K, f->pred + r * K, f->tr->label[r],
                               f->tr->weight ? f->tr->weight[r] : 1.0f, f->g + r, f->h + r, n, prob, f->obj_param);
    }
    /* The maxima of the keys (kernels/quantize.h): |g| by clearing the sign bit
     * (a branch on the sign would be mispredicted half the time; -0 becomes
     * +0, which no max can tell apart from 0), and two running maxima per
     * quantity so each max waits on the one before last, not the last. An
     * unsigned max is order-free, so it is the same however the rows are
     * split, and a non-finite value (a NaN too) wins it, for check_maxima. */
    for (int32_t c = 0; c < K; c++) {
        const float *g = f->g + c * n, *h = f->h + c * n;
        sb_u32 mg0 = 0u, mg1 = 0u, mh0 = 0u, mh1 = 0u;
        int64_t r = b;
        for (; r + 2 <= e; r += 2) {
            sb_u32 a0 = sb_k_maxkey_abs(g[r]), a1 = sb_k_maxkey_abs(g[r + 1]);
            sb_u32 b0 = sb_k_maxkey_pos(h[r]), b1 = sb_k_maxkey_pos(h[r + 1]);
            mg0 = a0 > mg0 ? a0 : mg0;
            mg1 = a1 > mg1 ? a1 : mg1;
            mh0 = b0 > mh0 ? b0 : mh0;
            mh1 = b1 > mh1 ? b1 : mh1;
        }
        for (; r < e; r++) {
            sb_u32 a = sb_k_maxkey_abs(g[r]), bb = sb_k_maxkey_pos(h[r]);
            mg0 = a > mg0 ? a : mg0;
            mh0 = bb > mh0 ? bb : mh0;
        }
        f->maxabs[2 * (task * K + c)] = sb_u2f(mg1 > mg0 ? mg1 : mg0);
        f->maxabs[2 * (task * K + c) + 1] = sb_u2f(mh1 > mh0 ? mh1 : mh0);
    }
}

/* The largest of two maxima made of keys, compared as keys (a NaN wins). */
static float max_key(float a, float b) {
    return sb_f2u(a) > sb_f2u(b) ? a : b;
}

/* Refuse, by name, a class's gradients or hessians that are not all finite,
 * before they are quantized (DESIGN.md rule 5 needs finite values; the
 * quantization of inf or NaN has no meaning). mg, mh: the class's maxima of
 * the keys (kernels/quantize.h), non-finite exactly when some value is, so
 * this one check serves every path: the CPU loop, the devices (their
 * k_maxabs reduces the same keys) and ranking (rank.c). Finite labels,
 * weights and margins can still overflow: labels near +-3e38 make pred - y
 * infinite, weights near 1e30 times a large residual too, and margins grow
 * past float32 when leaves pile up. Whether a float is finite is fixed by
 * IEEE, so the refusal is the same on every machine (a NaN's sign and payload
 * are not, which is why a NaN must never reach a tree). */
static sb_status check_maxima(int32_t it, int32_t c, float mg, float mh, int64_t n) {
    const char *what = !sb_k_key_finite(sb_f2u(mg)) ? "gradient" : !sb_k_key_finite(sb_f2u(mh)) ? "hessian" : NULL;
    /* A node's gradient sum is at most n * mg; the gain squares it (kernels/
     * gbdt.h, sb_k_leaf_score), which passes float32 from 2^64 on and makes
     * the gain NaN, a candidate no split takes: the tree would silently be a
     * stump. Refused from 2^63 (a margin for the dequantized sum's rounding):
     * the bound is the maxima's, the same numbers on every backend. */
    if (!what && (double)mg * (double)n >= 0x1p63)
        return sb_fail(SB_ERR_LIMIT,
                       "gradient boosting: iteration %d, class %d: the gradients' sum over %lld rows can reach "
                       "%.3g (|gradient| up to %.3g), past 2^63: its square in the split gain would overflow "
                       "float32 (weights near 1e30, or labels of that size; docs/gbdt.md, \"Limits of float32\")",
                       (int)it, (int)c, (long long)n, (double)mg * (double)n, (double)mg);
    if (!what) return SB_OK;
    return sb_fail(SB_ERR_LIMIT,
                   "gradient boosting: iteration %d, class %d: a %s is not finite (inf or NaN): labels, weights "
                   "or raw scores too large for float32 (|label|, |raw score| or weight x residual near 3.4e38); "
                   "refusing before quantizing it (docs/gbdt.md, \"Limits of float32\")",
                   (int)it, (int)c, what);
}

/* Ranking: every row's gradient from its query (rank.c); the maxima go where
 * grad_task's would, task 0 holding them and the others zero. */
static sb_status rank_gradients(fit *f, int64_t ntasks) {
    float mx[2];
    sb_status st = sb_rank_gradients(&f->rc, &f->tq, f->tr->label, f->tr->weight, f->pred, f->g, f->h, mx);
    if (st != SB_OK) return st;
    for (int64_t k = 0; k < ntasks; k++) f->maxabs[2 * k] = f->maxabs[2 * k + 1] = 0.0f;
    f->maxabs[0] = mx[0];
    f->maxabs[1] = mx[1];
    return SB_OK;
}

/* Rows of one task quantized, 8 at a time: the branch-free rounding is the same
 * few integer and float operations for every row, and a fixed-length inner loop
 * over unaliased arrays lets the compiler run them on vector lanes at -O2. Each
 * lane rounds as the scalar code does (IEEE operations, element by element), so
 * the integers are the same. */
#define QUANT_LANES 8
static void quant_rows(const float *restrict g, const float *restrict h, float gs, float hs, int32_t *restrict gq,
                       int32_t *restrict hq, int64_t b, int64_t e) {
    int64_t r = b;
    for (; r + QUANT_LANES <= e; r += QUANT_LANES)
        for (int k = 0; k < QUANT_LANES; k++) {
            gq[r + k] = sb_round_half_even_i32(g[r + k] * gs);
            hq[r + k] = sb_round_half_even_i32(h[r + k] * hs);
        }
    for (; r < e; r++) {
        gq[r] = sb_round_half_even_i32(g[r] * gs);
        hq[r] = sb_round_half_even_i32(h[r] * hs);
    }
}

/* quant_rows for unweighted squared error, from the margins and labels: g =
 * pred - y (exact as grad_task's), h = 1 (hq1: its quantized value). Own
 * function with restrict parameters, so that it runs in lanes as quant_rows. */
static void quant_l2_rows(const float *restrict pr, const float *restrict y, float gs, int32_t hq1,
                          int32_t *restrict gq, int32_t *restrict hq, int64_t b, int64_t e) {
    int64_t r = b;
    for (; r + QUANT_LANES <= e; r += QUANT_LANES)
        for (int k = 0; k < QUANT_LANES; k++) {
            gq[r + k] = sb_round_half_even_i32((pr[r + k] - y[r + k]) * gs);
            hq[r + k] = hq1;
        }
    for (; r < e; r++) {
        gq[r] = sb_round_half_even_i32((pr[r] - y[r]) * gs);
        hq[r] = hq1;
    }
}

static void quant_task(void *ctx, int64_t task) {
    fit *f = ctx;
    const int64_t n = f->tr->nrows;
    int64_t b, e;
    sb_chunk_range(n, ROW_GRAIN, task, &b, &e);
    if (f->l2_plain) { /* grad_task's squared error: g = pred - y, h = 1 */
        quant_l2_rows(f->pred, f->tr->label, f->g_scale, sb_round_half_even_i32(1.0f * f->h_scale), f->gq, f->hq, b, e);
    } else {
        quant_rows(f->g + f->cls * n, f->h + f->cls * n, f->g_scale, f->h_scale, f->gq, f->hq, b, e);
    }
    if (f->ghq)
        for (int64_t r = b; r < e; r++) f->ghq[r] = sb_grow_pack_gh(f->gq[r], f->hq[r]);
}

/* The power-of-two scale that maps the largest |v| into [2^29, 2^30]. A max is
 * order-free, so the scale is the same however the rows were split. */
static float quant_scale(float maxabs) {
    return maxabs > 0.0f ? sb_pow2f(sb_quantize_exponent(maxabs, QUANT_LEVELS)) : 1.0f;
}

/* ---- margins ---- */

/* Rows outside the bag walk the tree on their bins. */
static void update_oob_task(void *ctx, int64_t task) {
    fit *f = ctx;
    int64_t b, e;
    sb_chunk_range(f->tr->nrows, ROW_GRAIN, task, &b, &e);
    const sb_tree_node *nodes = f->grown->tree.nodes;
    for (int64_t r = b; r < e; r++) {
        if (f->inbag[r]) continue;
        int32_t leaf = sb_tree_leaf_binned(f->grown, f->binned, f->tr->nrows, r);
        float *m = &f->pred[r * f->K + f->cls];
        *m = *m + nodes[leaf].value;
    }
}

/* Rows in the bag: the grower left each leaf's rows as one range of
 * f->rows, the ranges side by side over [0, nbag). The same addition as a
 * walk down the tree, without the walk. Tasks are fixed blocks of positions,
 * not leaves, so one large leaf is shared by every worker; each row is still
 * updated once, by one addition, so the blocks reach no bit. */
typedef struct leaf_span {
    int64_t begin, end;
    float value;
} leaf_span;

typedef struct update_job {
    fit *f;
    const leaf_span *spans; /* the leaves, by begin */
    int32_t nspans;
    int64_t npos;
} update_job;

static int span_cmp(const void *a, const void *b) {
    const leaf_span *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

static void update_leaf_task(void *ctx, int64_t task) {
    const update_job *j = ctx;
    fit *f = j->f;
    int64_t b, e;
    sb_chunk_range(j->npos, ROW_GRAIN, task, &b, &e);
    int32_t lo = 0, hi = j->nspans; /* the first span that ends after b */
    while (lo < hi) {
        const int32_t mid = (lo + hi) / 2;
        if (j->spans[mid].end <= b) lo = mid + 1;
        else hi = mid;
    }
    for (int32_t s = lo; s < j->nspans && j->spans[s].begin < e; s++) {
        const int64_t i0 = j->spans[s].begin > b ? j->spans[s].begin : b;
        const int64_t i1 = j->spans[s].end < e ? j->spans[s].end : e;
        const float v = j->spans[s].value;
        for (int64_t i = i0; i < i1; i++) {
            float *m = &f->pred[f->rows[i] * f->K + f->cls];
            *m = *m + v;
        }
    }
}

/* update_leaf_task over the grown tree's leaves; 0 when out of memory. */
static int update_leaves(fit *f, int64_t nbag) {
    const sb_grown *g = f->grown;
    leaf_span *spans = sb_malloc(sizeof(leaf_span) * (size_t)(g->tree.nnodes > 0 ? g->tree.nnodes : 1));
    if (!spans) return 0;
    int32_t ns = 0;
    for (int32_t k = 0; k < g->tree.nnodes; k++)
        if (g->tree.nodes[k].feature < 0 && g->leaf_end[k] > g->leaf_begin[k]) {
            spans[ns].begin = g->leaf_begin[k];
            spans[ns].end = g->leaf_end[k];
            spans[ns].value = g->tree.nodes[k].value;
            ns++;
        }
    qsort(spans, (size_t)ns, sizeof *spans, span_cmp); /* begins are distinct: no tie */
    update_job j = {f, spans, ns, nbag};
    sb_parallel_for(sb_chunk_count(nbag, ROW_GRAIN), update_leaf_task, &j);
    sb_free(spans);
    return 1;
}

static void update_valid_task(void *ctx, int64_t task) {
    fit *f = ctx;
    int64_t b, e;
    sb_chunk_range(f->va->nrows, ROW_GRAIN, task, &b, &e);
    const sb_tree *t = &f->grown->tree;
    const sb_tree_node *n = t->nodes;
    for (int64_t r = b; r < e; r++) {
        const float *x = f->va->x + r * f->va->ncols;
        int32_t k = 0;
        while (n[k].feature >= 0) k = sb_tree_goes_left(t, &n[k], x[n[k].feature]) ? n[k].left : n[k].right;
        float *m = &f->vpred[r * f->K + f->cls];
        *m = *m + n[k].value;
    }
}

/* The tree just grown (f->grown, class f->cls) added to every validation
 * set's margins (the training set's are the training rows', updated apart). */
static void update_valid(fit *f) {
    for (int32_t s = 0; s < f->nsets; s++) {
        if (!f->sets[s].d) continue;
        f->va = f->sets[s].t;
        f->vpred = f->sets[s].pred;
        sb_parallel_for(sb_chunk_count(f->va->nrows, ROW_GRAIN), update_valid_task, f);
    }
}

/* Leaf renewal of objective=quantile: the Newton step of the pinball loss
 * (hessian 1) only moves a leaf by the share of its rows on either side, so
 * every leaf's value becomes the weighted alpha-quantile of its in-bag rows'
 * residuals y - margin, times the learning rate: the exact line search of
 * Friedman's gradient boosting for absolute loss ("Greedy Function
 * Approximation", 2001, sec. 4.2, LAD_TreeBoost: the leaf's median of the
 * residuals) at level alpha, which LightGBM's quantile objective applies too.
 * The bag is rows[0, nbag) (every row when nbag = n); each row's leaf is the
 * walk of its bins; the residuals come from the host's margins (read back
 * from a device first), and weighted_quantile sorts them, so the values do not
 * depend on the rows' order, the thread count or the device. */
static sb_status renew_quantile_leaves(fit *f, sb_grown *gr, int64_t nbag) {
    if (f->p->objective != SB_OBJ_QUANTILE) return SB_OK;
    const int64_t n = f->tr->nrows;
    const int32_t nn = gr->tree.nnodes;
    sb_status st = SB_OK;
    if (f->dev && (st = f->ops->read_margins(f->dev, f->pred)) != SB_OK) return st;
    int64_t *start = sb_calloc((size_t)nn + 1, sizeof(int64_t));
    int32_t *leaf = sb_malloc(sizeof(int32_t) * (size_t)(nbag > 0 ? nbag : 1));
    float *lw = sb_malloc(sizeof(float) * 2 * (size_t)(nbag > 0 ? nbag : 1));
    if (!start || !leaf || !lw) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "gbdt: out of memory");
        goto done;
    }
    for (int64_t i = 0; i < nbag; i++) {
        const int64_t r = nbag == n ? i : f->rows[i];
        leaf[i] = sb_tree_leaf_binned(gr, f->binned, n, r);
        start[leaf[i] + 1]++;
    }
    if (f->dist) {
        /* distributed=mpi: every rank's (leaf, residual, weight) of its bag,
         * gathered to every rank; each leaf's pairs are then its rows' over
         * all ranks (in rank order; weighted_quantile sorts them, so the
         * order does not matter) */
        uint32_t *mine = sb_malloc(sizeof(uint32_t) * 3 * (size_t)(nbag > 0 ? nbag : 1));
        if (!mine) {
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "gbdt: out of memory");
            goto done;
        }
        for (int64_t i = 0; i < nbag; i++) {
            const int64_t r = nbag == n ? i : f->rows[i];
            mine[3 * i] = (uint32_t)leaf[i];
            mine[3 * i + 1] = sb_f2u(f->tr->label[r] - f->pred[r * f->K + f->cls]);
            mine[3 * i + 2] = sb_f2u(f->tr->weight ? f->tr->weight[r] : 1.0f);
        }
        void *all = NULL;
        int64_t bytes = 0;
        sb_dist_gather(f->dist, mine, (int64_t)sizeof(uint32_t) * 3 * nbag, &all, &bytes);
        sb_free(mine);
        const uint32_t *a = all;
        const int64_t m = bytes / (int64_t)(3 * sizeof(uint32_t));
        sb_free(lw);
        lw = sb_malloc(sizeof(float) * 2 * (size_t)(m > 0 ? m : 1));
        if (!lw) {
            sb_free(all);
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "gbdt: out of memory");
            goto done;
        }
        memset(start, 0, sizeof(int64_t) * ((size_t)nn + 1));
        for (int64_t i = 0; i < m; i++) start[a[3 * i] + 1]++;
        for (int32_t k = 0; k < nn; k++) start[k + 1] += start[k];
        for (int64_t i = 0; i < m; i++) {
            const int64_t at = start[a[3 * i]]++;
            lw[2 * at] = sb_u2f(a[3 * i + 1]);
            lw[2 * at + 1] = sb_u2f(a[3 * i + 2]);
        }
        sb_free(all);
    } else {
        for (int32_t k = 0; k < nn; k++) start[k + 1] += start[k];
        for (int64_t i = 0; i < nbag; i++) {
            const int64_t r = nbag == n ? i : f->rows[i], at = start[leaf[i]]++;
            lw[2 * at] = f->tr->label[r] - f->pred[r * f->K + f->cls];
            lw[2 * at + 1] = f->tr->weight ? f->tr->weight[r] : 1.0f;
        }
    }
    /* start[k] is now the end of leaf k's pairs, start[k - 1] (0 for k = 0) its beginning */
    for (int32_t k = 0; k < nn; k++) {
        sb_tree_node *nd = &gr->tree.nodes[k];
        const int64_t b = k ? start[k - 1] : 0, e = start[k];
        if (nd->feature >= 0 || e == b) continue;
        const float q = weighted_quantile(lw + 2 * b, e - b, f->p->alpha, sb_u2f(0x7FC00000u));
        if (q == q) nd->value = q * f->p->learning_rate; /* NaN: every weight 0, the Newton value stays */
    }
done:
    sb_free(start);
    sb_free(leaf);
    sb_free(lw);
    return st;
}

/* ---- draws ---- */

/* Rows of iteration it's bag, ascending: row r is in when its uniform draw keyed
 * by (seed, iteration, row) is below subsample. All rows when subsample = 1. */
#ifdef SB_SABOTAGE_RNG_ORDER
/* Separating arm for rule 6: draws from one sequential stream per thread,
 * seeded by the thread's index and the thread count, the chunks dealt to the
 * threads round-robin (chunk t to thread t mod width), each stream consumed in
 * the order its thread meets its rows: the bag depends on the thread count.
 * Dealt statically, and the count in the seed, rather than by who takes a
 * chunk first, so the arm parts from the reference at every width above 1
 * whatever the scheduler does (with dynamic taking, a caller that ran every
 * chunk itself, or the only chunk of a small fixture, drew the reference's
 * bag). At one thread it is the reference. */
typedef struct bag_job {
    const fit *f;
    int32_t it, width;
    uint8_t *in;
} bag_job;

static void bag_task(void *ctx, int64_t task) {
    bag_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->f->tr->nrows, ROW_GRAIN, task, &b, &e);
    const int64_t w = task % j->width;
    uint64_t pos = (uint64_t)(task / j->width) * ROW_GRAIN; /* the rows its thread drew before */
    for (int64_t r = b; r < e; r++)
        j->in[r] = sb_rng_unit_f32(j->f->p->seed + (uint64_t)(w + j->width - 1), SB_PURPOSE_BAG,
                                   ((uint64_t)(uint32_t)j->it << 32) | pos++) < j->f->p->subsample;
}
#endif

/* The rows of iteration it's bag into f->rows (their count returned): each
 * row drawn with probability subsample, keyed by the first iteration of its
 * bagging_freq period, so a bag is kept for bagging_freq iterations (1: a new
 * bag every iteration). */
static void fill_rows_task(void *ctx, int64_t task) {
    const fit *f = ctx;
    int64_t b, e;
    sb_chunk_range(f->tr->nrows, ROW_GRAIN, task, &b, &e);
    for (int64_t r = b; r < e; r++) f->rows[r] = (int32_t)r;
}

static int64_t draw_bag(const fit *f, int32_t it) {
    int64_t k = 0;
    it -= it % (f->p->bagging_freq > 0 ? f->p->bagging_freq : 1);
#ifdef SB_SABOTAGE_RNG_ORDER
    if (f->p->subsample < 1.0f) {
        int32_t width = sb_parallel_width();
        uint8_t *in = sb_malloc((size_t)f->tr->nrows);
        if (in) {
            bag_job j = {f, it, width > 0 ? width : 1, in};
            sb_parallel_for_width(sb_chunk_count(f->tr->nrows, ROW_GRAIN), width, bag_task, &j);
            for (int64_t r = 0; r < f->tr->nrows; r++)
                if (in[r]) f->rows[k++] = (int32_t)r;
        }
        sb_free(in);
        if (k > 0) return k;
    }
#endif
    if (f->p->subsample >= 1.0f) { /* every row, in order: a fill the workers share */
        sb_parallel_for(sb_chunk_count(f->tr->nrows, ROW_GRAIN), fill_rows_task, (void *)f);
        return f->tr->nrows;
    }
    for (int64_t r = 0; r < f->tr->nrows; r++) { /* keyed by the global row (goff: 0 in one process) */
        if (f->p->subsample < 1.0f && !(sb_rng_unit_f32(f->p->seed, SB_PURPOSE_BAG,
                                                        ((uint64_t)(uint32_t)it << 32) | (uint64_t)(f->goff + r)) <
                                        f->p->subsample))
            continue;
        f->rows[k++] = (int32_t)r;
    }
    int64_t all = k; /* the bag over every rank */
    if (f->dist) sb_dist_sum_i64(f->dist, &all, 1);
    if (all == 0) /* a bag cannot be empty: fall back to every row */
        for (; k < f->tr->nrows; k++) f->rows[k] = (int32_t)k;
    return k;
}

/* Features of tree t: the ceil(colsample * nf) features with the smallest draws
 * keyed by (seed, tree, feature), ties by feature index. */
static void draw_columns(fit *f, int32_t t) {
    const int32_t nf = f->tr->ncols;
    if (f->p->colsample >= 1.0f) {
        memset(f->mask, 1, (size_t)nf);
        return;
    }
    int32_t want = (int32_t)(f->p->colsample * (float)nf);
    if ((float)want < f->p->colsample * (float)nf) want++;
    if (want < 1) want = 1;
    memset(f->mask, 0, (size_t)nf);
    for (int32_t chosen = 0; chosen < want; chosen++) {
        int32_t best = -1;
        uint32_t best_key = 0;
        for (int32_t c = 0; c < nf; c++) {
            if (f->mask[c]) continue;
            uint32_t w[4];
            sb_rng_words(f->p->seed, SB_PURPOSE_COLS, ((uint64_t)(uint32_t)t << 32) | (uint64_t)c, 0u, w);
            if (best < 0 || w[0] < best_key) {
                best = c;
                best_key = w[0];
            }
        }
        f->mask[best] = 1;
    }
}

/* ---- DART ---- */

/* boosting=dart, after Rashmi and Gilad-Bachrach, "DART: Dropouts meet
 * Multiple Additive Regression Trees" (AISTATS 2015), with LightGBM's
 * parameters (drop_rate, max_drop, skip_drop, uniform_drop,
 * xgboost_dart_mode). Iteration it (of this fit; the first drops nothing):
 *   - skips dropping when its draw keyed by (seed, DSKP, it) is below skip_drop;
 *   - else drops each earlier iteration i when the draw keyed by
 *     (seed, DART, it << 32 | i) is below p_i: drop_rate (uniform_drop), or
 *     drop_rate * w_i * it / W (W: the weights w_0 + ... + w_{it-1} added in
 *     order, in float), at most 1; above max_drop drops, the max_drop of
 *     smallest draw (ties: the earlier iteration) stay dropped;
 *   - with k > 0 dropped, its gradients are taken at the margins without the
 *     dropped iterations' trees, its trees' leaves are scaled by
 *     lr / (k + 1) (xgboost_dart_mode: lr / (k + lr)) in place of lr, and the
 *     dropped trees' leaves are multiplied by k / (k + 1) (k / (k + lr)), the
 *     factor rounded once; w_i follows the same factors (w = 1 for a plain
 *     tree). Margins are then recomputed: the base plus every tree in tree
 *     order, the sum prediction makes, so the training margins stay the bits
 *     the model predicts.
 * Every decision is the host's, from draws keyed by position and floats in a
 * fixed order: devices only grow the trees, so every device drops alike. */
static void dart_choose(fit *f, int32_t it) {
    const gbdt_params *p = f->p;
    const uint64_t seed = p->has_drop_seed ? p->drop_seed : p->seed;
    memset(f->dart_drop, 0, (size_t)(it > 0 ? it : 1));
    f->dart_k = 0;
    if (it == 0 || sb_rng_unit_f32(seed, SB_PURPOSE_DART_SKIP, (uint64_t)it) < p->skip_drop) return;
    float W = 0.0f;
    for (int32_t i = 0; i < it; i++) W = W + f->dart_w[i];
    for (int32_t i = 0; i < it; i++) {
        float pi = p->drop_rate;
        if (!p->uniform_drop) {
            pi = W > 0.0f ? ((p->drop_rate * f->dart_w[i]) * (float)it) / W : 0.0f;
            if (pi > 1.0f) pi = 1.0f;
        }
        if (sb_rng_unit_f32(seed, SB_PURPOSE_DART, ((uint64_t)(uint32_t)it << 32) | (uint32_t)i) < pi) {
            f->dart_drop[i] = 1;
            f->dart_k++;
        }
    }
    while (p->max_drop > 0 && f->dart_k > p->max_drop) { /* release the dropped one of largest draw */
        int32_t worst = -1;
        float wu = 0.0f;
        for (int32_t i = 0; i < it; i++) {
            if (!f->dart_drop[i]) continue;
            const float u = sb_rng_unit_f32(seed, SB_PURPOSE_DART, ((uint64_t)(uint32_t)it << 32) | (uint32_t)i);
            if (worst < 0 || u >= wu) {
                worst = i;
                wu = u;
            }
        }
        f->dart_drop[worst] = 0;
        f->dart_k--;
    }
}

typedef struct dart_job {
    fit *f;
    const sb_table *t;
    float *m;     /* t's margins, n x K */
    int skip;     /* leave out the dropped iterations' trees */
} dart_job;

/* Rows of one task: the base, then every tree in tree order (prediction's walk
 * on the raw features). */
static void dart_margin_task(void *ctx, int64_t task) {
    const dart_job *j = ctx;
    const fit *f = j->f;
    const int32_t K = f->K;
    int64_t b, e;
    sb_chunk_range(j->t->nrows, ROW_GRAIN, task, &b, &e);
    for (int64_t r = b; r < e; r++) {
        const float *x = j->t->x + r * j->t->ncols;
        float *m = j->m + r * K;
        for (int32_t c = 0; c < K; c++) m[c] = j->t->init ? j->t->init[r * K + c] : f->base[c];
        for (int32_t t = 0; t < f->ntrees; t++) {
            if (j->skip && f->dart_drop[t / K]) continue;
            const sb_tree_node *n = f->trees[t].nodes;
            int32_t k = 0;
            while (n[k].feature >= 0) k = sb_tree_goes_left(&f->trees[t], &n[k], x[n[k].feature]) ? n[k].left : n[k].right;
            m[t % K] = m[t % K] + n[k].value;
        }
    }
}

/* The training margins (without the dropped trees when skip) and, unless
 * skip, the validation margins, recomputed; a device gets the training ones. */
static sb_status dart_margins(fit *f, int skip) {
    dart_job j = {f, f->tr, f->pred, skip};
    sb_parallel_for(sb_chunk_count(f->tr->nrows, ROW_GRAIN), dart_margin_task, &j);
    for (int32_t s = 0; s < f->nsets && !skip; s++)
        if (f->sets[s].d) {
            dart_job v = {f, f->sets[s].t, f->sets[s].pred, 0};
            sb_parallel_for(sb_chunk_count(f->sets[s].t->nrows, ROW_GRAIN), dart_margin_task, &v);
        }
    return f->dev ? f->ops->set_margins(f->dev, f->pred) : SB_OK;
}

/* The learning rate of iteration it's new trees (lr when nothing is dropped). */
static float dart_rate(const fit *f) {
    const float lr = f->p->learning_rate, k = (float)f->dart_k;
    if (f->dart_k == 0) return lr;
    return f->p->xgboost_dart_mode ? lr / (k + lr) : lr / (k + 1.0f);
}

/* After iteration it's trees: the dropped trees' leaves and weights scaled,
 * the new iteration's weight set, and the margins recomputed. */
static sb_status dart_finish(fit *f, int32_t it) {
    const float lr = f->p->learning_rate, k = (float)f->dart_k;
    if (f->dart_k == 0) {
        f->dart_w[it] = 1.0f;
        return SB_OK;
    }
    const float drop = f->p->xgboost_dart_mode ? k / (k + lr) : k / (k + 1.0f);
    f->dart_w[it] = dart_rate(f) / lr;
    for (int32_t i = 0; i < it; i++) {
        if (!f->dart_drop[i]) continue;
        f->dart_w[i] = f->dart_w[i] * drop;
        for (int32_t c = 0; c < f->K; c++) {
            sb_tree *t = &f->trees[(int64_t)i * f->K + c];
            for (int32_t q = 0; q < t->nnodes; q++)
                if (t->nodes[q].feature < 0) {
#ifdef SB_SABOTAGE_DART_SCALE
                    /* separating arm (make SABOTAGE=dart-scale): the factor's
                     * two roundings, v * k / (k + 1), in place of one */
                    t->nodes[q].value = (t->nodes[q].value * k) / (f->p->xgboost_dart_mode ? k + lr : k + 1.0f);
#else
                    t->nodes[q].value = t->nodes[q].value * drop;
#endif
                }
        }
    }
    if (f->card) {
        int32_t *ids = sb_malloc(sizeof(int32_t) * (size_t)f->dart_k);
        if (!ids) return sb_fail(SB_ERR_OUT_OF_MEMORY, "gbdt: out of memory");
        int32_t nd = 0;
        for (int32_t i = 0; i < it; i++)
            if (f->dart_drop[i]) ids[nd++] = i;
        char tag[48];
        snprintf(tag, sizeof tag, "dart%d.dropped", (int)it);
        sb_status st = record(f, tag, SB_DTYPE_I32, ids, (uint64_t)nd);
        sb_free(ids);
        if (st != SB_OK) return st;
    }
    return dart_margins(f, 0);
}

/* ---- cards ---- */

static sb_status record_tree(fit *f, int32_t t, const sb_grown *gr) {
    if (!f->card) return SB_OK;
    char tag[64];
    const int32_t nn = gr->tree.nnodes;
    int64_t *ints = sb_malloc(sizeof(int64_t) * 6 * (size_t)nn);
    float *floats = sb_malloc(sizeof(float) * 3 * (size_t)nn);
    sb_status st = SB_OK;
    if (!ints || !floats) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "card: out of memory");
        goto done;
    }
    for (int32_t k = 0; k < nn; k++) {
        const sb_tree_node *n = &gr->tree.nodes[k];
        ints[6 * k] = n->feature;
        ints[6 * k + 1] = gr->split_bin[k];
        ints[6 * k + 2] = n->default_left;
        ints[6 * k + 3] = n->left;
        ints[6 * k + 4] = n->right;
        ints[6 * k + 5] = n->count;
        floats[3 * k] = n->threshold;
        floats[3 * k + 1] = n->value;
        floats[3 * k + 2] = n->gain;
    }
    snprintf(tag, sizeof tag, "tree%d.grad_q", (int)t);
    if ((st = record(f, tag, SB_DTYPE_I32, f->gq, (uint64_t)f->tr->nrows)) != SB_OK) goto done;
    snprintf(tag, sizeof tag, "tree%d.hess_q", (int)t);
    if ((st = record(f, tag, SB_DTYPE_I32, f->hq, (uint64_t)f->tr->nrows)) != SB_OK) goto done;
    snprintf(tag, sizeof tag, "tree%d.root_hist", (int)t);
    if ((st = record(f, tag, SB_DTYPE_I64, gr->root_hist, 3 * (uint64_t)f->bins.total)) != SB_OK) goto done;
    snprintf(tag, sizeof tag, "tree%d.splits", (int)t);
    if ((st = record(f, tag, SB_DTYPE_I64, ints, 6 * (uint64_t)nn)) != SB_OK) goto done;
    snprintf(tag, sizeof tag, "tree%d.values", (int)t);
    if ((st = record(f, tag, SB_DTYPE_F32, floats, 3 * (uint64_t)nn)) != SB_OK) goto done;
    if (gr->tree.ncat > 0) { /* categorical splits: each set's codes (only then: other cards keep their stages) */
        snprintf(tag, sizeof tag, "tree%d.cat_start", (int)t);
        if ((st = record(f, tag, SB_DTYPE_I32, gr->tree.cat_start, (uint64_t)gr->tree.ncat + 1)) != SB_OK) goto done;
        snprintf(tag, sizeof tag, "tree%d.cat_codes", (int)t);
        st = record(f, tag, SB_DTYPE_F32, gr->tree.cat_codes, (uint64_t)gr->tree.cat_start[gr->tree.ncat]);
    }
done:
    sb_free(ints);
    sb_free(floats);
    return st;
}

/* ---- the model ---- */

/* Adds a grown tree to the model, or refuses it by name when a leaf value or
 * split gain is not finite: with finite gradients near float32's limit the
 * dequantized sums (kernels/gbdt.h: sb_k_dequant) can still overflow, and an
 * inf leaf turns margins into inf and NaN (a NaN's bits differ by machine).
 * The verdict depends only on IEEE's finite/non-finite, the same everywhere. */
static sb_status push_tree(fit *f, sb_grown *gr) {
    for (int32_t k = 0; k < gr->tree.nnodes; k++) {
        const sb_tree_node *nd = &gr->tree.nodes[k];
        if (!sb_k_key_finite(sb_f2u(nd->value)) || !sb_k_key_finite(sb_f2u(nd->gain)))
            return sb_fail(SB_ERR_LIMIT,
                           "gradient boosting: tree %d node %d: a %s is not finite: the sums of the gradients "
                           "overflow float32 (labels or weights too large); refusing (docs/gbdt.md, \"Limits of float32\")",
                           (int)f->ntrees, (int)k, !sb_k_key_finite(sb_f2u(nd->value)) ? "leaf value" : "split gain");
    }
    if (f->ntrees == f->cap) {
        int32_t cap = f->cap ? f->cap * 2 : 64;
        sb_tree *t = sb_realloc(f->trees, sizeof(sb_tree) * (size_t)cap);
        if (!t) return sb_fail(SB_ERR_OUT_OF_MEMORY, "gbdt: out of memory");
        f->trees = t;
        f->cap = cap;
    }
    f->trees[f->ntrees++] = gr->tree; /* the model takes the nodes and the code sets */
    memset(&gr->tree, 0, sizeof gr->tree);
    return SB_OK;
}

static sb_status make_model(fit *f, const float *base, sb_model **out) {
    sb_model *m;
    sb_status st = sb_model_alloc(&m);
    if (st != SB_OK) return st;
    m->family = SB_FAMILY_GBDT;
    m->objective = f->p->objective;
    m->num_class = f->K;
    m->num_features = f->tr->ncols;
    m->numeric_mode = f->p->numeric_mode;
    m->base_score = sb_malloc(sizeof(float) * (size_t)f->K);
    m->feature_names = sb_calloc((size_t)f->tr->ncols, sizeof(char *));
    if (!m->base_score || !m->feature_names) {
        sb_model_free(m);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "gbdt: out of memory");
    }
    for (int32_t c = 0; c < f->K; c++) m->base_score[c] = base[c];
    for (int32_t k = 0; k < f->tr->ncols; k++) {
        m->feature_names[k] = sb_strdup(f->tr->names[k]);
        if (!m->feature_names[k]) {
            sb_model_free(m);
            return sb_fail(SB_ERR_OUT_OF_MEMORY, "gbdt: out of memory");
        }
    }
    if ((st = sb_gbdt_params_text(f->p, &m->params)) != SB_OK) {
        sb_model_free(m);
        return st;
    }
    m->trees = f->trees;
    m->ntrees = f->ntrees;
    f->trees = NULL;
    f->ntrees = 0;
    *out = m;
    return SB_OK;
}

/* ---- trees on a device ---- */

static void dist_reduce_hist(void *ctx, int64_t *v, int64_t n);

/* distributed=nccl: a histogram in CUDA memory summed over the ranks there. */
static void dist_sum_hist_dev(void *ctx, void *dptr, int64_t n) {
    const fit *f = ctx;
    sb_dist_sum_hist_device(f->dist, dptr, n);
}

/* Open the device named by the parameters on the binned training data. */
static sb_status dev_open(fit *f, const float *base) {
    const sb_device_kind kind = (sb_device_kind)f->p->device;
    const char *name = sb_device_kind_name(kind);
    sb_status st = sb_tdev_find(kind, &f->ops);
    if (st != SB_OK) return st;
    if (f->K > SB_TDEV_MAX_CLASS)
        return sb_fail(SB_ERR_LIMIT, "device %s supports up to %d classes", name, SB_TDEV_MAX_CLASS);
    const int32_t nf = f->tr->ncols;
    f->hoff = sb_malloc(sizeof(int32_t) * (size_t)(nf ? nf : 1));
    if (!f->hoff) return sb_fail(SB_ERR_OUT_OF_MEMORY, "gbdt: out of memory");
    for (int32_t k = 0; k < nf; k++) f->hoff[k] = f->bins.offset[k] + k;
    sb_tdev_setup s = {f->binned, f->tr->nrows, nf, f->bins.nbins, f->hoff, f->bins.total,
                       f->tr->label, f->tr->weight, f->p->objective, f->K, base, kind, f->obj_param};
    return f->ops->open(&s, &f->dev);
}

/* One boosting iteration's K trees on the device: the same stages, draws and
 * records as the CPU loop in sb_gbdt_fit, with the margins kept on the device. */
static sb_status dev_iteration(fit *f, int32_t it, const sb_grow_params *gp) {
    const int64_t n = f->tr->nrows;
    const int32_t K1 = f->K;
    sb_status st;
    if (f->ranking) {
        /* Ranking gradients are the host's (rank.c), from the device's margins. */
        if ((st = f->ops->read_margins(f->dev, f->pred)) != SB_OK) return st;
        if ((st = rank_gradients(f, 1)) != SB_OK) return st;
        st = f->ops->set_gradients(f->dev, 0, f->g, f->h);
    } else {
        st = f->ops->gradients(f->dev, f->maxabs);
    }
    if (st != SB_OK) return st;
    if (f->dist) { /* the largest keys over every rank (order-free), as the CPU loop takes them */
        uint32_t *k2 = sb_malloc(sizeof(uint32_t) * 2 * (size_t)K1);
        if (!k2) sb_dist_fail(f->dist, SB_ERR_OUT_OF_MEMORY, "gbdt: out of memory");
        for (int32_t i = 0; i < 2 * K1; i++) k2[i] = sb_f2u(f->maxabs[i]);
        sb_dist_max_u32(f->dist, k2, 2 * (int64_t)K1);
        for (int32_t i = 0; i < 2 * K1; i++) f->maxabs[i] = sb_u2f(k2[i]);
        sb_free(k2);
    }
    for (int32_t c = 0; c < K1; c++) {
        const int32_t t = it * K1 + c;
        f->cls = c;
        if ((st = check_maxima(it, c, f->maxabs[2 * c], f->maxabs[2 * c + 1], f->gn)) != SB_OK) return st;
        f->g_scale = quant_scale(f->maxabs[2 * c]);
        f->h_scale = quant_scale(f->maxabs[2 * c + 1]);
        if ((st = f->ops->quantize(f->dev, c, f->g_scale, f->h_scale)) != SB_OK) return st;
        /* Without subsampling the bag is every row: the device makes that list itself. */
        int64_t nbag = f->p->subsample < 1.0f ? draw_bag(f, it) : n;
        if ((st = f->ops->set_rows(f->dev, nbag < n ? f->rows : NULL, nbag)) != SB_OK) return st;
        draw_columns(f, t);
        f->gc.tree = (uint64_t)t;
        if ((st = f->ops->set_mask(f->dev, f->mask)) != SB_OK) return st;
        sb_grown gr;
        if ((st = sb_tree_grow_dev(f->ops, f->dev, gp, &f->bins, f->tr->ncols, f->hoff, f->bins.total, f->g_scale,
                                   f->h_scale, f->mask, f->catm, &f->catr, nbag, f->card != NULL,
                                   f->dist ? dist_reduce_hist : NULL,
                                   sb_dist_device_sums(f->dist) ? dist_sum_hist_dev : NULL, f, &gr)) != SB_OK)
            return st;
        sb_k_bnode *bn = NULL;
        int32_t nbn = 0;
        st = renew_quantile_leaves(f, &gr, nbag);
        if (st == SB_OK) st = sb_grown_bnodes(&gr, &bn, &nbn);
        if (st == SB_OK) st = f->ops->add_tree(f->dev, bn, nbn, c);
        sb_free(bn);
        f->grown = &gr;
        if (st == SB_OK) update_valid(f);
        if (st == SB_OK && f->card) st = f->ops->read_quantized(f->dev, f->gq, f->hq);
        if (st == SB_OK) st = record_tree(f, t, &gr);
        if (st == SB_OK) st = push_tree(f, &gr);
        sb_grown_release(&gr);
        f->grown = NULL;
        if (st != SB_OK) return st;
    }
    return SB_OK;
}

/* The metrics of iteration it on validation set s (s < 0: the training rows,
 * logged as "train"): the first nm of p->metrics (the first is p->metric at
 * p->metric_at) into vals[0..nm), each logged to stderr when log is set
 * ("[it] <set> <metric>: value"); with ev, all nm values and names kept there
 * as iteration it's, in set s's slot of the row. Values are computed on the
 * host from the margins by exact sums (metrics.c): they never feed the trees. */
static sb_status eval_metrics(const fit *f, int32_t it, int32_t s, int log, int32_t nm, float *vals, sb_evals *ev) {
    const gbdt_params *p = f->p;
    const vset *vs = s >= 0 ? &f->sets[s] : NULL;
    const int train = !vs || !vs->d;
    const sb_table *et = train ? (f->dist ? &f->all_tm : f->tm) : vs->t;
    const float *pred = train ? (f->dist ? f->all_pred : f->pred) : vs->pred;
    log = log && !f->quiet;
    for (int32_t j = 0; j < nm; j++) {
        const int32_t mj = j ? p->metrics[j] : p->metric, atj = j ? p->metrics_at[j] : p->metric_at;
        float vj;
        sb_status st = f->ranking ? sb_rank_metric(mj == SB_METRIC_MAP, atj, &f->rc,
                                                   train ? (f->dist ? &f->all_tq : &f->tq) : &vs->q,
                                                   et->label, pred, &vj)
                                  : sb_metric_eval(mj, p->objective, p->alpha, p->tweedie_power, pred, et->nrows, f->K, et->label, et->weight, &vj);
        if (st != SB_OK) return st;
        char nj[48];
        if (f->ranking)
            snprintf(nj, sizeof nj, "%s@%d", sb_metric_name(mj), (int)atj);
        else
            snprintf(nj, sizeof nj, "%s", sb_metric_name(mj));
        vals[j] = vj;
        if (log) fprintf(stderr, "[%d] %s %s: %.6g\n", (int)(it + 1), vs ? vs->label : "train", nj, (double)vj);
        if (ev && vs) {
            ev->values[((int64_t)(it - f->it0) * ev->nsets + s) * ev->nm + j] = vj;
            memcpy(ev->names[j], nj, sizeof nj);
        }
    }
    if (ev && vs) ev->niter = it - f->it0 + 1;
    return SB_OK;
}

/* The progress line (progress=true, set by the CLI when standard error is a
 * terminal): iterations done of the fit's, the rate, the time left at that
 * rate, redrawn in place at most every half second and at the end. Timing
 * only: nothing of the fit reads it. */
/* One block of rows of the feature-major bins copied row-major. */
static void rows_major_task(void *ctx, int64_t task) {
    fit *f = ctx;
    const int64_t n = f->tr->nrows;
    const int32_t nf = f->tr->ncols;
    int64_t b, e;
    sb_chunk_range(n, ROW_GRAIN, task, &b, &e);
    for (int32_t k = 0; k < nf; k++) {
        const uint8_t *col = f->binned + (int64_t)k * n;
        for (int64_t r = b; r < e; r++) f->binned_rows[r * nf + k] = col[r];
    }
}

/* Seconds on the monotonic clock (SAMEBITS_GBDT_TIMING's phase sums only). */
static double gbdt_clock(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* When on: *acc += the time since *t, and *t = now. */
static void gbdt_phase(int on, double *acc, double *t) {
    if (!on) return;
    const double now = gbdt_clock();
    *acc += now - *t;
    *t = now;
}

static void progress_line(int32_t done, int32_t total, double start, double *last) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    const double now = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    if (done < total && (done == 0 || now - *last < 0.5)) return;
    *last = now;
    const double rate = done / (now - start > 1e-9 ? now - start : 1e-9);
    const double left = rate > 0.0 ? (total - done) / rate : 0.0;
    fprintf(stderr, "\r[%d/%d] %.1f iterations/s, %s %.0f s   ", (int)done, (int)total, rate,
            done < total ? "about" : "done in", done < total ? left : now - start);
    if (done == total) fputc('\n', stderr);
    fflush(stderr);
}

static sb_status dist_refusal(const gbdt_params *p, const sb_card *card);

sb_status sb_gbdt_params_check(const sb_params *params) {
    sb_clear_error();
    gbdt_params p;
    sb_status st = sb_gbdt_params_parse(params, &p);
    return st == SB_OK && p.distributed ? dist_refusal(&p, NULL) : st;
}

/* Continued training's checks: init must be a gradient boosting model of
 * this profile, objective, class count and feature count, whole iterations
 * of trees; a named error otherwise. */
static sb_status check_init(const sb_model *init, const gbdt_params *p, int32_t K1, int32_t nf) {
    const char *prof = init->profile ? init->profile : SB_PROFILE_VERSION;
    if (init->family != SB_FAMILY_GBDT)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "init_model: a %s model; continued training takes a gradient boosting "
                       "model", sb_family_name((sb_family)init->family));
    if (strcmp(prof, SB_PROFILE_VERSION) != 0)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "init_model was trained under %s; this library trains under %s, and "
                       "continued training stays on one profile's trajectory", prof, SB_PROFILE_VERSION);
    if (init->objective != p->objective)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "init_model's objective is %s, the parameters' %s",
                       sb_objective_name(init->objective), sb_objective_name(p->objective));
    if (init->num_class != K1)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "init_model has %d margins a row, the data %d", (int)init->num_class,
                       (int)K1);
    if (init->num_features != nf)
        return sb_fail(SB_ERR_INVALID_INPUT, "init_model has %d features, the training data %d",
                       (int)init->num_features, (int)nf);
    if (init->ntrees % K1 != 0)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "init_model holds %d trees, not whole iterations of %d",
                       (int)init->ntrees, (int)K1);
    return SB_OK;
}

/* Class weights of objective=binary (LightGBM's scale_pos_weight and
 * is_unbalance), folded into the training rows' weights here, on the host,
 * before any device sees them, so every device grows from the same weights.
 * A row's weight w (1 when the data has none) becomes w * factor, one float32
 * multiplication rounded to nearest, factor being scale_pos_weight for a
 * positive row and 1 for a negative one; is_unbalance (as LightGBM's label
 * weights) gives the rows of the rarer class the factor n_major / n_minor,
 * the quotient of the two row counts (of the rows training keeps) in float64,
 * rounded once to float32; equal counts, or one class absent, change nothing.
 * When a factor other than 1 applies, *tab := t with its weights replaced by
 * *w (allocated here, the caller frees it) and *folded := 1; otherwise
 * nothing is allocated and *folded := 0. A product that overflows float32 is
 * SB_ERR_LIMIT by name. */
static sb_status fold_class_weights(const gbdt_params *p, const sb_table *t, const sb_dist *dist, sb_table *tab,
                                    float **w, int *folded) {
    *folded = 0;
    *w = NULL;
    if (p->objective != SB_OBJ_BINARY) return SB_OK;
    float fpos = p->scale_pos_weight, fneg = 1.0f;
    if (p->is_unbalance) {
        int64_t cnt[2] = {0, t->nrows}; /* positives and rows, over every rank when distributed */
        for (int64_t r = 0; r < t->nrows; r++) cnt[0] += t->label[r] == 1.0f;
        if (dist) sb_dist_sum_i64(dist, cnt, 2);
        const int64_t npos = cnt[0], nneg = cnt[1] - cnt[0];
        if (npos > 0 && nneg > 0) {
            if (npos > nneg) fneg = (float)((double)npos / (double)nneg);
            else fpos = (float)((double)nneg / (double)npos);
        }
    }
    if (fpos == 1.0f && fneg == 1.0f) return SB_OK;
    float *nw = sb_malloc(sizeof(float) * (size_t)(t->nrows ? t->nrows : 1));
    if (!nw) return sb_fail(SB_ERR_OUT_OF_MEMORY, "gbdt: out of memory for the class weights of %lld rows",
                            (long long)t->nrows);
    for (int64_t r = 0; r < t->nrows; r++) {
        const float w0 = t->weight ? t->weight[r] : 1.0f;
        nw[r] = w0 * (t->label[r] == 1.0f ? fpos : fneg);
        if (nw[r] - nw[r] != 0.0f) {
            sb_free(nw);
            return sb_fail(SB_ERR_LIMIT, "training row %lld: its weight %g times the class weight %g is not finite "
                           "in float32", (long long)r, (double)w0, (double)(t->label[r] == 1.0f ? fpos : fneg));
        }
    }
    *tab = *t;
    tab->weight = nw;
    *w = nw;
    *folded = 1;
    return SB_OK;
}

/* The validation sets' checks and setup, before any training: each set not
 * the training set itself has the training data's feature count and valid
 * labels (named errors naming the set), a name (names[s], else "training" for
 * the training set and "valid_<s>" for the others, LightGBM's) of 1 to 127
 * bytes, and its ranking groups; f->sets (allocated here) owns the groups,
 * the margins are allocated later. */
static sb_status setup_sets(fit *f, const gbdt_params *p, const sb_dataset *train, const sb_dataset *const *valid,
                            int32_t nvalid, const char *const *names, int32_t *K) {
    if (nvalid < 0 || (nvalid > 0 && !valid))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "gbdt: %d validation sets and %s list", (int)nvalid,
                       valid ? "a" : "no");
    if (nvalid > SB_GBDT_MAX_VALID)
        return sb_fail(SB_ERR_LIMIT, "gbdt: %d validation sets; at most %d", (int)nvalid, (int)SB_GBDT_MAX_VALID);
    if (nvalid == 0) return SB_OK;
    if (!(f->sets = sb_calloc((size_t)nvalid, sizeof *f->sets)))
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "gbdt: out of memory for %d validation sets", (int)nvalid);
    f->nsets = nvalid;
    const int32_t nf = train->t.ncols;
    for (int32_t s = 0; s < nvalid; s++) {
        vset *vs = &f->sets[s];
        if (!valid[s]) return sb_fail(SB_ERR_INVALID_ARGUMENT, "gbdt: validation set %d is NULL", (int)s);
        const char *nm = names && names[s] ? names[s] : NULL;
        if (nm && (!nm[0] || strlen(nm) >= SB_EVALS_SET_NAME))
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "gbdt: validation set %d's name must have 1 to %d bytes", (int)s,
                           SB_EVALS_SET_NAME - 1);
        if (nm) snprintf(vs->name, sizeof vs->name, "%s", nm);
        else if (valid[s] == train) snprintf(vs->name, sizeof vs->name, "training");
        else snprintf(vs->name, sizeof vs->name, "valid_%d", (int)s);
        vs->label = nvalid == 1 && !nm && valid[s] != train ? "valid" : vs->name;
        if (valid[s] == train) continue; /* the training rows: checked as such */
        vs->d = valid[s];
        vs->t = &valid[s]->t;
        char which[SB_EVALS_SET_NAME + 32];
        if (nvalid == 1 && !nm) snprintf(which, sizeof which, "validation"); /* the words of one set, as before */
        else snprintf(which, sizeof which, "validation set '%s'", vs->name);
        if (vs->t->ncols != nf)
            return sb_fail(SB_ERR_INVALID_INPUT, "%s%s has %d features, training data %d", which,
                           nvalid == 1 && !nm ? " data" : "", (int)vs->t->ncols, (int)nf);
        sb_status st = check_labels(p, vs->t, which, K);
        if (st != SB_OK) return st;
        if (f->ranking) {
            if ((st = sb_rank_check_labels(&f->rc, vs->t, which)) != SB_OK) return st;
            if ((st = sb_rank_groups_build(vs->t, which, &vs->q)) != SB_OK) return st;
        }
    }
    return SB_OK;
}

static sb_status gbdt_fit(const sb_params *params, const sb_dataset *train, const sb_dataset *const *valid,
                          int32_t nvalid, const char *const *names, const sb_model *init, sb_card *card,
                          sb_model **out);

sb_status sb_gbdt_fit(const sb_params *params, const sb_dataset *train, const sb_dataset *valid, sb_card *card,
                      sb_model **out) {
    return gbdt_fit(params, train, valid ? &valid : NULL, valid ? 1 : 0, NULL, NULL, card, out);
}

sb_status sb_gbdt_fit_continue(const sb_params *params, const sb_dataset *train, const sb_dataset *valid,
                               const sb_model *init, sb_card *card, sb_model **out) {
    sb_clear_error();
    if (!init) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_gbdt_fit_continue: NULL init model");
    return gbdt_fit(params, train, valid ? &valid : NULL, valid ? 1 : 0, NULL, init, card, out);
}

sb_status sb_gbdt_fit_multi(const sb_params *params, const sb_dataset *train, const sb_dataset *const *valid,
                            int32_t nvalid, const char *const *names, const sb_model *init, sb_card *card,
                            sb_model **out) {
    return gbdt_fit(params, train, valid, nvalid, names, init, card, out);
}

/* ---- distributed=mpi (docs/distributed.md) ---- */

/* The histogram all-reduce the grower calls (grow.h, reduce): exact int64
 * sums, so the global histogram is the one a single process builds, bit for
 * bit, whatever the rank count and whatever order MPI adds the ranks in. */
static void dist_reduce_hist(void *ctx, int64_t *v, int64_t n) {
    const fit *f = ctx;
    sb_dist_sum_hist(f->dist, v, n); /* the arm SABOTAGE=float-allreduce breaks (dist.c) */
}

/* Every rank's training labels and weights (as metrics see them: f->tm), in
 * global row order, for the training rows' metrics (f->all_tm). */
static sb_status dist_gather_train(fit *f) {
    const sb_table *t = f->tm;
    void *all = NULL;
    int64_t bytes = 0;
    memset(&f->all_tm, 0, sizeof f->all_tm);
    f->all_tm.nrows = f->gn;
    f->all_tm.ntargets = 1;
    sb_dist_gather(f->dist, t->label, (int64_t)sizeof(float) * t->nrows, &all, &bytes);
    f->all_tm.label = all;
    if (t->weight) {
        sb_dist_gather(f->dist, t->weight, (int64_t)sizeof(float) * t->nrows, &all, &bytes);
        f->all_tm.weight = all;
    }
    if (f->ranking) { /* the queries too, for the training rows' ranking metrics: every rank's in rank order */
        int64_t *len = sb_malloc(sizeof(int64_t) * (size_t)(f->tq.nq > 0 ? f->tq.nq : 1));
        if (!len) return sb_fail(SB_ERR_OUT_OF_MEMORY, "gbdt: out of memory");
        for (int64_t q = 0; q < f->tq.nq; q++) len[q] = f->tq.start[q + 1] - f->tq.start[q];
        sb_dist_gather(f->dist, len, (int64_t)sizeof(int64_t) * f->tq.nq, &all, &bytes);
        sb_free(len);
        const int64_t *a = all, nq = bytes / (int64_t)sizeof(int64_t);
        f->all_tq.start = sb_malloc(sizeof(int64_t) * (size_t)(nq + 1));
        if (!f->all_tq.start) {
            sb_free(all);
            return sb_fail(SB_ERR_OUT_OF_MEMORY, "gbdt: out of memory");
        }
        f->all_tq.nq = nq;
        f->all_tq.start[0] = 0;
        for (int64_t q = 0; q < nq; q++) {
            f->all_tq.start[q + 1] = f->all_tq.start[q] + a[q];
            if (a[q] > f->all_tq.maxq) f->all_tq.maxq = a[q];
        }
        sb_free(all);
    }
    return SB_OK;
}

/* Every rank's training margins in global row order (f->all_pred). */
static void dist_gather_pred(fit *f) {
    void *all = NULL;
    int64_t bytes = 0;
    sb_free(f->all_pred);
    sb_dist_gather(f->dist, f->pred, (int64_t)sizeof(float) * f->tr->nrows * f->K, &all, &bytes);
    f->all_pred = all;
}

/* The bins from the sample a single process draws (sb_bins_in_sample, keyed
 * by the global row): each rank sends its sampled rows, every rank receives
 * them all in global row order and builds the same edges from them (the
 * edges depend on the sampled values alone, sorted by a total order). */
static sb_status dist_bins(fit *f, int32_t nf, sb_bins *out) {
    const gbdt_params *p = f->p;
    const int64_t n = f->tr->nrows;
    float *mine = sb_malloc(sizeof(float) * (size_t)(n > 0 ? n : 1) * (size_t)(nf > 0 ? nf : 1));
    if (!mine) return sb_fail(SB_ERR_OUT_OF_MEMORY, "gbdt: out of memory for the binning sample");
    int64_t k = 0;
    for (int64_t r = 0; r < n; r++)
        if (sb_bins_in_sample(p->seed, f->gn, p->bin_sample_rows, f->goff + r))
            memcpy(mine + k++ * nf, f->tr->x + r * nf, sizeof(float) * (size_t)nf);
    void *all = NULL;
    int64_t bytes = 0;
    sb_dist_gather(f->dist, mine, (int64_t)sizeof(float) * k * nf, &all, &bytes);
    sb_free(mine);
    const int64_t m = nf > 0 ? bytes / ((int64_t)sizeof(float) * nf) : 0;
    sb_status st = sb_bins_build_cat(all, m, nf, p->max_bin, p->seed, 0, f->catm, out);
    sb_free(all);
    return st;
}

/* distributed_rows=given: this rank's dataset is its own rows, the training
 * set the concatenation of every rank's in rank order. The ranks must agree
 * on the columns, each hold rows, and have weights and initial scores on all
 * ranks or none; ranking takes each rank's queries as whole queries (the
 * training set's queries are every rank's in rank order: a query is never
 * joined across ranks). Failures are every rank's alike (*coll). */
static sb_status dist_given_rows(fit *f, gbdt_params *p, const sb_dataset *train, sb_table *blk, int *coll) {
    const sb_dist *d = f->dist;
    const sb_table *t = &train->t;
    int64_t v[2] = {t->ncols, t->nrows > 0 ? 0 : 1};
    uint32_t mx = (uint32_t)t->ncols;
    sb_dist_sum_i64(d, v, 2);
    sb_dist_max_u32(d, &mx, 1);
    *coll = 1;
    if (v[0] != (int64_t)mx * d->size)
        return sb_fail(SB_ERR_INVALID_INPUT, "distributed_rows=given: the %d ranks' training data have different "
                       "column counts", (int)d->size);
    if (v[1] > 0)
        return sb_fail(SB_ERR_LIMIT, "distributed_rows=given: %lld of the %d ranks hold no training rows; every "
                       "rank needs rows", (long long)v[1], (int)d->size);
    /* weights and initial scores: on every rank or on none (the collectives and the
     * single process's meaning depend on it) */
    int64_t has[2] = {t->weight != NULL, t->init != NULL};
    sb_dist_sum_i64(d, has, 2);
    if ((has[0] != 0 && has[0] != d->size) || (has[1] != 0 && has[1] != d->size))
        return sb_fail(SB_ERR_INVALID_INPUT, "distributed_rows=given: %s on %lld of the %d ranks; give them on "
                       "every rank or on none", has[0] != 0 && has[0] != d->size ? "weights" : "initial scores",
                       (long long)(has[0] != 0 && has[0] != d->size ? has[0] : has[1]), (int)d->size);
    if (sb_gbdt_is_ranking(p->objective)) { /* every rank needs its queries (a query id per row) */
        int64_t have = t->qid != NULL;
        sb_dist_sum_i64(d, &have, 1);
        if (have != d->size)
            return sb_fail(SB_ERR_INVALID_INPUT, "distributed_rows=given: ranking needs query ids on every rank");
    }
    *coll = 0;
    *blk = *t;
    f->quiet = d->rank != 0;
    if (f->quiet) p->progress = 0;
    return SB_OK;
}

/* distributed=mpi's refusals (before anything is exchanged, the same on
 * every rank: they read the arguments alone), then the communicator and
 * this rank's block of the training rows: rank k of N takes global rows
 * [floor(k n / N), floor((k + 1) n / N)) of the n rows every rank was given
 * (the same file); ranking takes whole queries by the same rule on the G
 * queries, so no query is cut. *blk is a view of train's rows (nothing is
 * copied); *coll := 1 for a failure every rank meets alike. */
/* What distributed= cannot run, by name, from the parameters alone (so
 * every rank refuses alike, before anything is exchanged). */
static sb_status dist_refusal(const gbdt_params *p, const sb_card *card) {
    const char *no = NULL, *engine = p->distributed == SB_GBDT_DIST_NCCL ? "nccl" : "mpi";
    /* the tree devices (cpu-batched, cuda, opencl) train each rank's block
     * with the histograms summed over the ranks on the host (grow_dev.c),
     * or with distributed=nccl on the GPUs */
    if (card) no = "an identity card: record cards in one process";
    else if (p->distributed == SB_GBDT_DIST_NCCL && p->device != SB_GBDT_DEVICE_CUDA)
        no = "a fit off CUDA GPUs: NCCL sums the histograms in CUDA memory; give device=cuda, or "
             "distributed=mpi for the CPU and the other devices";
    if (no)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "distributed=%s does not support %s (docs/distributed.md, "
                       "\"What is refused\")", engine, no);
    return SB_OK;
}

static sb_status dist_setup(fit *f, gbdt_params *p, const sb_dataset *train, const sb_card *card, sb_table *blk,
                            int *coll) {
    sb_status rs = dist_refusal(p, card);
    if (rs != SB_OK) return rs;
    if (p->distributed == SB_GBDT_DIST_NCCL) { /* NCCL's library before MPI starts: absent, every rank says so */
        sb_status ns = sb_dist_nccl_load();
        if (ns != SB_OK) return ns;
    }
    if (p->dist_given && !p->distributed)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "distributed_rows=given needs distributed=mpi");
    sb_status st = sb_dist_open("mpi", &f->dist);
    if (st != SB_OK) return st;
    const sb_dist *d = f->dist;
    if (p->dist_given) return dist_given_rows(f, p, train, blk, coll);
    /* every rank must hold the same rows: compare the counts (and the columns) */
    int64_t shape[2] = {train->t.nrows, train->t.ncols}, sum[2] = {shape[0], shape[1]};
    uint32_t top[4] = {(uint32_t)((uint64_t)shape[0] >> 32), (uint32_t)shape[0], (uint32_t)shape[1], 0};
    sb_dist_sum_i64(d, sum, 2);
    sb_dist_max_u32(d, top, 3);
    const uint64_t mx = ((uint64_t)top[0] << 32) | top[1];
    if (sum[0] != (int64_t)mx * d->size || sum[1] != (int64_t)top[2] * d->size) {
        *coll = 1;
        return sb_fail(SB_ERR_INVALID_INPUT, "distributed=mpi: the %d ranks were given different training data "
                       "(row or column counts differ); give every rank the same file", (int)d->size);
    }
    const int64_t n = shape[0], N = d->size, k = d->rank;
    if (n < N) {
        *coll = 1;
        return sb_fail(SB_ERR_LIMIT, "distributed=mpi: %lld training rows for %d ranks; every rank needs rows",
                       (long long)n, (int)N);
    }
    int64_t b = n * k / N, e = n * (k + 1) / N;
    if (sb_gbdt_is_ranking(p->objective)) { /* ranking: blocks of whole queries, by the same rule on queries */
        sb_rank_groups q;
        memset(&q, 0, sizeof q);
        sb_status gs = sb_rank_groups_build(&train->t, "training", &q);
        if (gs != SB_OK) {
            *coll = 1; /* every rank holds the same rows: the same verdict */
            return gs;
        }
        if (q.nq < N) {
            sb_rank_groups_release(&q);
            *coll = 1;
            return sb_fail(SB_ERR_LIMIT, "distributed=mpi: %lld queries for %d ranks; every rank needs a query",
                           (long long)q.nq, (int)N);
        }
        b = q.start[q.nq * k / N];
        e = q.start[q.nq * (k + 1) / N];
        sb_rank_groups_release(&q);
    }
    sb_table_rows_view(&train->t, b, e, blk);
    f->quiet = d->rank != 0;
    if (f->quiet) p->progress = 0;
    return SB_OK;
}

/* The last collective of a distributed fit: every rank's model digest
 * compared (the largest of each word and of its complement over the ranks:
 * equal to this rank's only when every rank holds the same bytes). A
 * difference is a defect, named on every rank; agreement also means no rank
 * returns its model before every rank has finished. */
static sb_status dist_agree(fit *f, const sb_model *m, int *coll) {
    char hex[65];
    sb_status st = sb_model_digest(m, hex);
    if (st != SB_OK) return st;
    uint32_t w[16];
    for (int i = 0; i < 8; i++) {
        w[i] = (uint32_t)strtoul((char[9]){hex[8 * i], hex[8 * i + 1], hex[8 * i + 2], hex[8 * i + 3], hex[8 * i + 4],
                                            hex[8 * i + 5], hex[8 * i + 6], hex[8 * i + 7], 0},
                                 NULL, 16);
        w[8 + i] = ~w[i];
    }
    uint32_t g[16];
    memcpy(g, w, sizeof g);
    sb_dist_max_u32(f->dist, g, 16);
    if (memcmp(g, w, sizeof g) != 0) {
        *coll = 1;
        return sb_fail(SB_ERR_INTERNAL, "distributed=mpi: the ranks' models differ (rank %d's digest %s); a defect: "
                       "please report it", (int)f->dist->rank, hex);
    }
    return SB_OK;
}

/* What categorical features (p->catf) need before anything long, refused by
 * name otherwise: training values that are codes:
 * NaN or negative (missing), or integral in [0, 2^31). */
static sb_status check_categorical(const gbdt_params *p, const sb_table *t) {
    for (int32_t i = 0; i < p->ncat; i++) {
        const int32_t c = p->catf[i];
        for (int64_t r = 0; r < t->nrows; r++) {
            const float v = t->x[r * t->ncols + c];
            if (!(v >= 0.0f)) continue; /* NaN, negative: missing */
            if (!(v < 2147483648.0f) || (float)(int64_t)v != v)
                return sb_fail(SB_ERR_INVALID_INPUT, "categorical feature %d (%s), row %lld: %g is not a category code: "
                               "codes are whole numbers 0 to 2147483647 (NaN and negative values are missing)",
                               (int)c, t->names && t->names[c] ? t->names[c] : "unnamed", (long long)r, (double)v);
        }
    }
    return SB_OK;
}

/* sb_gbdt_fit_multi: sb_gbdt_fit with any number of validation sets, from
 * init's trees when init is given (continued training: the margins start at
 * init's predictions, the iterations count on from init's, so every draw
 * keyed by the iteration is the uninterrupted fit's). The validation sets
 * are read only; the trees never depend on them except through where early
 * stopping cuts. */
static sb_status gbdt_fit_run(const sb_params *params, const sb_dataset *train, const sb_dataset *const *valid,
                              int32_t nvalid, const char *const *names, const sb_model *init, sb_card *card,
                              sb_model **out, const sb_dist **dist_out, int *coll) {
    sb_evals *ev = NULL; /* the metric log (below), owned here until the model takes it */
    sb_clear_error();
    if (!train || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_gbdt_fit: NULL argument");
    *out = NULL;
    if (sb_threads_ready() != SB_OK) return SB_ERR_INVALID_ARGUMENT;
    gbdt_params p;
    sb_status st = sb_gbdt_params_parse(params, &p);
    if (st != SB_OK) return st;
    fit f;
    float *base = NULL; /* the K starting margins (base_scores) */
    memset(&f, 0, sizeof f);
    sb_table kept; /* the training rows of nonzero weight, when some weigh zero (below) */
    sb_table weighted; /* the training rows with the class weights folded in (fold_class_weights) */
    float *cw = NULL;  /* their weights, owned here */
    int dropped = 0, folded = 0;
    float *any_val = NULL; /* early stopping: per (set, metric) the best value and its iteration */
    int32_t *any_best = NULL;
    memset(&kept, 0, sizeof kept);
    f.p = &p;
    f.tr = &train->t;
    f.card = card;
    sb_table blk; /* distributed=mpi: this rank's block of the training rows (a view) */
    if (p.distributed) {
        if ((st = dist_setup(&f, &p, train, card, &blk, coll)) != SB_OK) {
            *dist_out = f.dist;
            return st;
        }
        *dist_out = f.dist;
        f.tr = &blk;
    }
    int64_t n = f.tr->nrows;
    const int32_t nf = f.tr->ncols;
    int32_t K = p.num_class;
    if ((st = check_labels(&p, f.tr, "training", &K)) != SB_OK) return st;
    if (f.dist) { /* multiclass without num_class: the classes every rank's labels reach */
        uint32_t kk = (uint32_t)K;
        sb_dist_max_u32(f.dist, &kk, 1);
        K = (int32_t)kk;
    }
    if (p.nmono > 0 && p.nmono != nf)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "monotone_constraints has %d entries and the data %d features: give "
                       "one per feature (0: none)", (int)p.nmono, (int)nf);
    for (int32_t i = 0; i < p.set_start[p.nsets]; i++)
        if (p.set_feat[i] >= nf)
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "interaction_constraints names feature %d; the data has %d features "
                           "(0 to %d)", (int)p.set_feat[i], (int)nf, (int)nf - 1);
    if ((st = sb_gbdt_resolve_categorical(&p, nf, f.tr->names)) != SB_OK) return st;
    if (p.ncat > 0 && (st = check_categorical(&p, f.tr)) != SB_OK) return st;
    if (sb_gbdt_is_ranking(p.objective)) {
        f.ranking = 1;
        f.rc = (sb_rank_cfg){p.objective, p.rank_truncation, p.rank_norm, p.rank_sigma, p.ngain, p.label_gain};
    }
    if ((st = setup_sets(&f, &p, train, valid, nvalid, names, &K)) != SB_OK) goto done;
    int32_t nwatch = 0; /* the sets early stopping watches: every one but the training set */
    for (int32_t s = 0; s < f.nsets; s++) nwatch += f.sets[s].d != NULL;
    if (p.early_stopping_rounds > 0 && !nwatch) {
        st = sb_fail(SB_ERR_INVALID_ARGUMENT, "early_stopping_rounds needs validation data");
        goto done;
    }
    if (n > INT32_MAX) { /* row indices are int32 (trees/grow.h) */
        st = sb_fail(SB_ERR_LIMIT, "gbdt: %lld training rows; at most %d", (long long)n, (int)INT32_MAX);
        goto done;
    }
    if (f.ranking) {
        if ((st = sb_rank_check_labels(&f.rc, f.tr, "training")) != SB_OK) goto done;
        if ((st = sb_rank_groups_build(f.tr, "training", &f.tq)) != SB_OK) goto done;
    }
    f.K = p.objective == SB_OBJ_MULTICLASS ? K : 1;
    f.obj_param = sb_gbdt_obj_param(&p);
    f.l2_plain = p.objective == SB_OBJ_REGRESSION && !f.tr->weight && !f.ranking;
    p.num_class = p.objective == SB_OBJ_MULTICLASS ? K : 0;
    const int32_t K1 = f.K;
    /* initial scores (sb_dataset_set_init_score): every row's and class's, before anything long */
    int any_init = f.tr->init != NULL;
    for (int32_t s = 0; s < f.nsets; s++) any_init |= f.sets[s].d && f.sets[s].t->init;
    if (any_init) {
        if (init) {
            st = sb_fail(SB_ERR_INVALID_ARGUMENT, "initial scores and init_model are two starts for one fit: give "
                         "one (continued training starts at init_model's predictions)");
            goto done;
        }
        if (p.has_base_score) {
            st = sb_fail(SB_ERR_INVALID_ARGUMENT, "initial scores replace base_score (the model's base is 0 and "
                         "every row starts at its score): give one");
            goto done;
        }
        for (int32_t s = -1; s < f.nsets; s++) {
            const sb_table *ts = s < 0 ? f.tr : f.sets[s].d ? f.sets[s].t : NULL;
            if (ts && ts->init && ts->init_k != K1) {
                st = sb_fail(SB_ERR_INVALID_INPUT, "the %s data's initial scores are %d a row; the model needs %d "
                             "(one per class of a multiclass model, else one)", s < 0 ? "training" : f.sets[s].name,
                             (int)ts->init_k, (int)K1);
                goto done;
            }
        }
    }
    if (init && p.dart) {
        st = sb_fail(SB_ERR_INVALID_ARGUMENT, "boosting=dart does not continue a model (init_model): the "
                     "dropped iterations' weights are not in the file");
        goto done;
    }
    if (init) {
        if ((st = check_init(init, &p, K1, nf)) != SB_OK) goto done;
        f.it0 = init->ntrees / K1;
    }
    if (((int64_t)f.it0 + p.n_estimators) * K1 > 10000000) { /* a model file's tree limit (docs/model-format.md) */
        st = sb_fail(SB_ERR_LIMIT, "gbdt: %d iterations x %d classes is more than 10,000,000 trees",
                     (int)(f.it0 + p.n_estimators), (int)K1);
        goto done;
    }
    /* A row of weight zero is an absent row (scikit-learn's meaning): the
     * bins, the trees' row counts and the subsample draws are those of the
     * other rows. Ranking keeps its rows (its query groups go by position). */
    if (!f.ranking && (st = sb_table_drop_zero_weight_ranks(f.dist, f.tr, &kept, &dropped)) != SB_OK) goto done;
    if (dropped) {
        f.tr = &kept;
        n = kept.nrows;
    }
    f.tm = f.tr; /* metrics of the training rows weigh them as given, as LightGBM's */
    if (f.dist) { /* this rank's place among the rows every rank keeps */
        sb_dist_prefix(f.dist, n, &f.goff, &f.gn);
        if ((st = dist_gather_train(&f)) != SB_OK) goto done;
    } else {
        f.gn = n;
    }
    if ((st = fold_class_weights(&p, f.tr, f.dist, &weighted, &cw, &folded)) != SB_OK) goto done;
    if (folded) f.tr = &weighted;
    sb_model *m = NULL;
    int64_t ntasks = sb_chunk_count(n, ROW_GRAIN);

    f.binned = sb_malloc((size_t)n * (size_t)nf);
    f.pred = sb_malloc(sizeof(float) * (size_t)n * (size_t)K1);
    f.g = sb_malloc(sizeof(float) * (size_t)n * (size_t)K1);
    f.h = sb_malloc(sizeof(float) * (size_t)n * (size_t)K1);
    f.gq = sb_malloc(sizeof(int32_t) * (size_t)n);
    f.hq = sb_malloc(sizeof(int32_t) * (size_t)n);
    f.rows = sb_malloc(sizeof(int32_t) * (size_t)n);
    f.mask = sb_malloc((size_t)nf);
    f.inbag = sb_malloc((size_t)n);
    f.maxabs = sb_malloc(sizeof(float) * 2 * (size_t)ntasks * (size_t)K1);
    base = sb_malloc(sizeof(float) * (size_t)K1);
    int vmem = 1;
    for (int32_t s = 0; s < f.nsets; s++)
        if (f.sets[s].d) {
            f.sets[s].pred = sb_malloc(sizeof(float) * (size_t)(f.sets[s].t->nrows ? f.sets[s].t->nrows : 1) * (size_t)K1);
            vmem = vmem && f.sets[s].pred;
        }
    if (p.dart) {
        f.dart_w = sb_malloc(sizeof(float) * (size_t)p.n_estimators);
        f.dart_drop = sb_malloc((size_t)p.n_estimators);
    }
    f.base = base;
    if (!base || !f.binned || !f.pred || !f.g || !f.h || !f.gq || !f.hq || !f.rows || !f.inbag || !f.mask || !f.maxabs ||
        !vmem || (p.dart && (!f.dart_w || !f.dart_drop))) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "gbdt: out of memory for %lld rows x %d features", (long long)n, (int)nf);
        goto done;
    }

    /* Bins. */
    if (p.ncat > 0) {
        if (!(f.catm = sb_calloc((size_t)nf, 1))) {
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "gbdt: out of memory");
            goto done;
        }
        for (int32_t i = 0; i < p.ncat; i++) f.catm[p.catf[i]] = 1;
        f.catr = (sb_k_cat_rules){p.max_cat_to_onehot, p.max_cat_threshold, p.min_data_per_group, p.cat_smooth,
                                  p.cat_l2};
    }
    /* SAMEBITS_GBDT_TIMING=1: the CPU fit's phase times, summed over trees, on
     * stderr at the end (where the time goes; bench/host_bench.py) */
    const char *tenv = getenv("SAMEBITS_GBDT_TIMING");
    f.ws.timing = tenv && tenv[0] == '1';
    double tph[8] = {0}, tclk = f.ws.timing ? gbdt_clock() : 0.0;
    if (f.dist) {
        if ((st = dist_bins(&f, nf, &f.bins)) != SB_OK) goto done;
    } else if ((st = sb_bins_build_cat(f.tr->x, n, nf, p.max_bin, p.seed, p.bin_sample_rows, f.catm, &f.bins)) !=
               SB_OK) {
        goto done;
    }
    sb_bins_apply(&f.bins, f.tr->x, n, nf, f.binned);
    if (p.device == SB_GBDT_DEVICE_CPU && (p.force_row_wise || (!p.force_col_wise && sb_grow_rowwise_wanted(n, nf)))) {
        if (!(f.binned_rows = sb_malloc((size_t)n * (size_t)nf)) || !(f.ghq = sb_malloc(sizeof(int64_t) * (size_t)n))) {
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "gbdt: out of memory for the row-major bins");
            goto done;
        }
        sb_parallel_for(sb_chunk_count(n, ROW_GRAIN), rows_major_task, &f);
    }
    gbdt_phase(f.ws.timing, &tph[0], &tclk);
    if ((st = record(&f, "gbdt.bin_edges", SB_DTYPE_F32, f.bins.upper, (uint64_t)f.bins.offset[nf])) != SB_OK) goto done;
    if ((st = record(&f, "gbdt.bin_counts", SB_DTYPE_I32, f.bins.nbins, (uint64_t)nf)) != SB_OK) goto done;
    if ((st = record(&f, "gbdt.binned", SB_DTYPE_U8, f.binned, (uint64_t)n * (uint64_t)nf)) != SB_OK) goto done;

    if (init) /* continued: init's starting margins */
        for (int32_t c = 0; c < K1; c++) base[c] = init->base_score[c];
    else if (f.tr->init) /* initial scores: the model's base is 0, each row starts at its own score */
        for (int32_t c = 0; c < K1; c++) base[c] = 0.0f;
    else if ((st = base_scores(&f, base)) != SB_OK)
        goto done;
    if (!sb_k_key_finite(sb_f2u(base[0]))) {
        st = sb_fail(SB_ERR_LIMIT, "gradient boosting: the base score (the weighted mean of the labels) is not "
                                   "finite: labels or weights too large for float32; refusing (docs/gbdt.md, \"Limits of float32\")");
        goto done;
    }
    if ((st = record(&f, "gbdt.base_score", SB_DTYPE_F32, base, (uint64_t)K1)) != SB_OK) goto done;
    for (int64_t i = 0; i < n * K1; i++) f.pred[i] = f.tr->init ? f.tr->init[i] : base[i % K1];
    for (int32_t s = 0; s < f.nsets; s++)
        if (f.sets[s].d) {
            const sb_table *vt = f.sets[s].t;
            for (int64_t i = 0; i < vt->nrows * K1; i++) f.sets[s].pred[i] = vt->init ? vt->init[i] : base[i % K1];
        }
    if (f.tr->init && (st = record(&f, "gbdt.init_score", SB_DTYPE_F32, f.tr->init, (uint64_t)n * (uint64_t)K1)) != SB_OK)
        goto done;
    if (init) {
        /* continued: the margins init's trees give (the base plus each tree's leaf in
         * tree order: the very additions its fit made), and its trees first in the model */
        sb_dataset rows = {*f.tr}; /* the rows training uses (zero-weight rows dropped), read only */
        if ((st = sb_model_predict(init, &rows, SB_PREDICT_RAW, f.pred, (size_t)n * (size_t)K1, NULL)) != SB_OK)
            goto done;
        for (int32_t s = 0; s < f.nsets && st == SB_OK; s++)
            if (f.sets[s].d)
                st = sb_model_predict(init, f.sets[s].d, SB_PREDICT_RAW, f.sets[s].pred,
                                      (size_t)f.sets[s].t->nrows * (size_t)K1, NULL);
        if (st != SB_OK) goto done;
        for (int32_t t = 0; t < init->ntrees && st == SB_OK; t++) {
            sb_grown g;
            memset(&g, 0, sizeof g);
            if ((st = sb_tree_copy(&init->trees[t], &g.tree)) != SB_OK) {
                st = sb_fail(SB_ERR_OUT_OF_MEMORY, "gbdt: out of memory for init_model's trees");
                break;
            }
            if ((st = push_tree(&f, &g)) != SB_OK) sb_tree_release(&g.tree);
        }
        if (st != SB_OK) goto done;
    }

    if (p.nsets > 0) {
        if (!(f.set_bits = sb_calloc((size_t)nf, sizeof(uint64_t)))) {
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "gbdt: out of memory");
            goto done;
        }
        for (int32_t k = 0; k < p.nsets; k++)
            for (int32_t i = p.set_start[k]; i < p.set_start[k + 1]; i++) f.set_bits[p.set_feat[i]] |= UINT64_C(1) << k;
    }
    f.gc = (sb_grow_cons){p.mono_any ? p.mono : NULL, f.set_bits, p.bynode, p.seed, 0};
    sb_grow_params gp = {p.num_leaves, p.max_depth, p.depthwise, p.min_samples_leaf, p.min_child_weight,
                         p.min_split_gain, p.reg_lambda, p.learning_rate, p.reg_alpha, &f.gc};
    int32_t best_iter = -1;
    /* with validation rows, every metric of every set and iteration is kept for
     * the fitted model (LightGBM's evals_result_; the trees do not depend on it) */
    const int32_t nm_all = p.nmetrics > 1 ? p.nmetrics : 1;
    if (f.nsets) {
        const size_t npair = (size_t)nm_all * (size_t)f.nsets;
        if (!(ev = sb_calloc(1, sizeof *ev)) ||
            !(ev->values = sb_malloc(sizeof(float) * npair * (size_t)(p.n_estimators > 0 ? p.n_estimators : 1))) ||
            !(ev->sets = sb_calloc((size_t)f.nsets, sizeof *ev->sets)) || !(any_val = sb_calloc(npair, sizeof(float))) ||
            !(any_best = sb_malloc(npair * sizeof(int32_t)))) {
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "gbdt: out of memory for the metric log");
            goto done;
        }
        for (size_t k = 0; k < npair; k++) any_best[k] = -1;
        ev->nm = nm_all;
        ev->nsets = f.nsets;
        for (int32_t s = 0; s < f.nsets; s++) memcpy(ev->sets[s], f.sets[s].name, sizeof f.sets[s].name);
    }
    if (p.device != SB_GBDT_DEVICE_CPU && (st = dev_open(&f, base)) != SB_OK) goto done;
    /* distributed=nccl: the communicator on the CUDA device just opened (a
     * failure may be this rank's alone: gbdt_fit then ends the job) */
    if (p.distributed == SB_GBDT_DIST_NCCL && (st = sb_dist_nccl_open(f.dist)) != SB_OK) goto done;
    if ((init || f.tr->init) && f.dev && (st = f.ops->set_margins(f.dev, f.pred)) != SB_OK)
        goto done; /* the initial trees' margins, or the initial scores */
    double pstart = 0.0, plast = 0.0;
    int32_t ran = 0; /* iterations grown (the progress line's count) */
    if (p.progress) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        pstart = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    }
    for (int32_t it = f.it0; it < f.it0 + p.n_estimators; it++) {
        if (p.progress) progress_line(it - f.it0, p.n_estimators, pstart, &plast);
        if (p.dart) { /* which earlier iterations this one drops, and its gradients' margins */
            dart_choose(&f, it);
            if (f.dart_k > 0 && (st = dart_margins(&f, 1)) != SB_OK) goto done;
            gp.learning_rate = dart_rate(&f);
        }
        if (f.dev) {
            if ((st = dev_iteration(&f, it, &gp)) != SB_OK) goto done;
        } else {
        if (f.ranking) {
            if ((st = rank_gradients(&f, ntasks)) != SB_OK) goto done;
        } else {
            sb_parallel_for(ntasks, grad_task, &f);
        }
        gbdt_phase(f.ws.timing, &tph[1], &tclk);
        for (int32_t c = 0; c < K1; c++) {
            const int32_t t = it * K1 + c;
            f.cls = c;
            float mg = 0.0f, mh = 0.0f;
            for (int64_t k = 0; k < ntasks; k++) {
                const float *m = f.maxabs + 2 * (k * K1 + c);
                mg = max_key(mg, m[0]);
                mh = max_key(mh, m[1]);
            }
            if (f.dist) { /* the largest keys over every rank: order-free */
                uint32_t k2[2] = {sb_f2u(mg), sb_f2u(mh)};
                sb_dist_max_u32(f.dist, k2, 2);
                mg = sb_u2f(k2[0]);
                mh = sb_u2f(k2[1]);
            }
            if ((st = check_maxima(it, c, mg, mh, f.gn)) != SB_OK) goto done;
            f.g_scale = quant_scale(mg);
            f.h_scale = quant_scale(mh);
            sb_parallel_for(ntasks, quant_task, &f);
            int64_t nbag = draw_bag(&f, it);
            draw_columns(&f, t);
            gbdt_phase(f.ws.timing, &tph[2], &tclk);
            f.gc.tree = (uint64_t)t;
            sb_grow_data gd = {f.binned, n, nf, &f.bins, f.gq, f.hq, f.g_scale, f.h_scale, f.mask, f.catm, &f.catr,
                               f.binned_rows, f.ghq, f.dist ? dist_reduce_hist : NULL, &f};
            sb_grown gr;
            if ((st = sb_tree_grow_i32(&gp, &gd, f.rows, nbag, &f.ws, &gr)) != SB_OK) goto done;
            gbdt_phase(f.ws.timing, &tph[3], &tclk);
            if ((st = renew_quantile_leaves(&f, &gr, nbag)) != SB_OK) {
                sb_grown_release(&gr);
                goto done;
            }
            f.grown = &gr;
            if (!update_leaves(&f, nbag)) {
                sb_grown_release(&gr);
                st = sb_fail(SB_ERR_OUT_OF_MEMORY, "gbdt: out of memory");
                goto done;
            }
            if (nbag < n) {
                memset(f.inbag, 0, (size_t)n);
                for (int64_t i = 0; i < nbag; i++) f.inbag[f.rows[i]] = 1;
                sb_parallel_for(ntasks, update_oob_task, &f);
            }
            update_valid(&f);
            gbdt_phase(f.ws.timing, &tph[4], &tclk);
            st = record_tree(&f, t, &gr);
            if (st == SB_OK) st = push_tree(&f, &gr);
            sb_grown_release(&gr);
            f.grown = NULL;
            if (st != SB_OK) goto done;
            gbdt_phase(f.ws.timing, &tph[5], &tclk);
        }
        }
        if (p.dart && (st = dart_finish(&f, it)) != SB_OK) goto done;
        ran = it - f.it0 + 1;
        /* Evaluation log and early stopping. */
        int log_now = p.eval_period > 0 && ((it + 1) % p.eval_period == 0 || it + 1 == f.it0 + p.n_estimators);
        if (log_now || p.early_stopping_rounds > 0 || ev) {
            float vals[SB_EVALS_MAX_METRICS];
            int has_train = 0;
            for (int32_t s = 0; s < f.nsets; s++) has_train |= f.sets[s].d == NULL;
            const int train_too = log_now && p.train_metric && f.nsets; /* LightGBM's is_training_metric */
            if (f.dev && (!f.nsets || train_too || has_train) && (st = f.ops->read_margins(f.dev, f.pred)) != SB_OK)
                goto done;
            if (f.dist && (!f.nsets || train_too || has_train)) dist_gather_pred(&f);
            const int32_t nm = (log_now || ev) && p.nmetrics > 1 ? p.nmetrics : 1;
            if ((train_too || !f.nsets) && (st = eval_metrics(&f, it, -1, log_now, nm, vals, NULL)) != SB_OK) goto done;
            for (int32_t s = 0; s < f.nsets; s++)
                if ((st = eval_metrics(&f, it, s, log_now, nm, vals, ev)) != SB_OK) goto done;
            if (p.early_stopping_rounds > 0) {
                /* LightGBM's rule: every (set, metric) pair in the log's order
                 * (set by set, the metrics in their list's order; the first metric
                 * only with first_metric_only=true; never the training set) keeps
                 * its own best iteration, and the first pair that has gone
                 * early_stopping_rounds without improving stops the fit at its best */
                const float *row = ev->values + (int64_t)(it - f.it0) * ev->nsets * ev->nm;
                int stop = 0;
                int32_t first = -1;
                for (int32_t s = 0; s < f.nsets && !stop; s++) {
                    if (!f.sets[s].d) continue;
                    for (int32_t j = 0; j < (p.stop_on_any ? ev->nm : 1) && !stop; j++) {
                        const int32_t k = s * ev->nm + j, mj = j ? p.metrics[j] : p.metric;
                        const float vj = row[k];
                        if (first < 0) first = k;
                        if (any_best[k] < 0 || sb_metric_better(mj, vj, any_val[k])) {
                            any_val[k] = vj;
                            any_best[k] = it;
                        } else if (it - any_best[k] >= p.early_stopping_rounds) {
                            best_iter = any_best[k];
                            if (p.eval_period > 0 && !f.quiet) {
                                if (f.sets[s].label != f.sets[s].name) /* one unnamed set: the line as it was */
                                    fprintf(stderr, "early stopping: best iteration %d, %s %.6g\n", (int)(best_iter + 1),
                                            ev->names[j], (double)any_val[k]);
                                else
                                    fprintf(stderr, "early stopping: best iteration %d, %s's %s %.6g\n",
                                            (int)(best_iter + 1), f.sets[s].name, ev->names[j], (double)any_val[k]);
                            }
                            stop = 1;
                        }
                    }
                }
                if (stop) break;
                best_iter = any_best[first]; /* the fit ran out: the first pair's best, as LightGBM's */
            }
        }
        gbdt_phase(f.ws.timing, &tph[6], &tclk);
    }
    if (f.ws.timing) {
        static const char *const what[7] = {"binning", "gradients", "quantize+bag", "grow", "leaf updates",
                                            "tree record", "metrics"};
        for (int k = 0; k < 7; k++) fprintf(stderr, "gbdt timing: %-14s %8.3f s\n", what[k], tph[k]);
        fprintf(stderr, "gbdt timing: grow: root hist %.3f s, partition %.3f s, hist %.3f s, search %.3f s, "
                        "batched leaves %.3f s (%d threads)\n", f.ws.t_root, f.ws.t_part, f.ws.t_hist, f.ws.t_search,
                f.ws.t_batch, (int)sb_parallel_width());
    }
    if (p.progress) progress_line(ran, ran, pstart, &plast);
    p.n_estimators += f.it0; /* the model's text: every iteration it holds, as the uninterrupted fit's */
    if (p.early_stopping_rounds > 0 && best_iter >= 0) {
        /* Keep the trees up to the best iteration. */
        while (f.ntrees > (best_iter + 1) * K1) sb_tree_release(&f.trees[--f.ntrees]);
        if (ev) ev->best = best_iter + 1;
    }
    if ((st = make_model(&f, base, &m)) != SB_OK) goto done;
    if (f.dist && (st = dist_agree(&f, m, coll)) != SB_OK) {
        sb_model_free(m);
        m = NULL;
        goto done;
    }
    m->evals = ev;
    ev = NULL;
    /* a model prediction would refuse is not returned either */
    if ((st = sb_model_check_score_range(m)) != SB_OK) {
        sb_model_free(m);
        m = NULL;
        goto done;
    }
    if (f.card) {
        /* Margins of the final model on the training rows, then its bytes. */
        st = sb_model_record(f.card, m, train, SB_PREDICT_RAW, "gbdt.train_margin", "gbdt.model_bytes");
        if (st != SB_OK) {
            sb_model_free(m);
            m = NULL;
            goto done;
        }
    }
    *out = m;
done:
    sb_table_drop_release(&kept);
    sb_free(cw);
    sb_free(any_val);
    sb_free(any_best);
    for (int32_t s = 0; s < f.nsets; s++) {
        sb_free(f.sets[s].pred);
        sb_rank_groups_release(&f.sets[s].q);
    }
    sb_free(f.sets);
    sb_evals_free(ev);
    sb_free(base);
    if (f.dist) sb_dist_nccl_close(f.dist); /* before the device: NCCL's communicator uses its context */
    if (f.ops) f.ops->close(f.dev);
    sb_rank_groups_release(&f.tq);
    sb_free(f.hoff);
    sb_grow_scratch_release(&f.ws);
    sb_bins_release(&f.bins);
    sb_free(f.binned);
    sb_free(f.binned_rows);
    sb_free(f.ghq);
    sb_free(f.pred);
    sb_free(f.g);
    sb_free(f.h);
    sb_free(f.gq);
    sb_free(f.hq);
    sb_free(f.rows);
    sb_free(f.mask);
    sb_free(f.inbag);
    sb_free(f.maxabs);
    sb_free(f.set_bits);
    sb_free(f.catm);
    sb_free(f.dart_w);
    sb_free(f.dart_drop);
    for (int32_t k = 0; k < f.ntrees; k++) sb_tree_release(&f.trees[k]);
    sb_free(f.trees);
    sb_free(f.all_tm.label);
    sb_free(f.all_tm.weight);
    sb_rank_groups_release(&f.all_tq);
    sb_free(f.all_pred);
    return st;
}

/* A fit, and under distributed=mpi the rule that keeps a job from hanging: a
 * failure on one rank that the others cannot know of (bad rows in its block,
 * out of memory) would leave them waiting in the next collective, so it ends
 * the whole job by name (sb_dist_fail); failures every rank meets alike (the
 * refusals, different data on different ranks) return as usual. */
static sb_status gbdt_fit(const sb_params *params, const sb_dataset *train, const sb_dataset *const *valid,
                          int32_t nvalid, const char *const *names, const sb_model *init, sb_card *card,
                          sb_model **out) {
    const sb_dist *dist = NULL;
    int coll = 0;
    sb_status st = gbdt_fit_run(params, train, valid, nvalid, names, init, card, out, &dist, &coll);
    if (st != SB_OK && dist && !coll) sb_dist_fail(dist, st, sb_last_error());
    return st;
}
