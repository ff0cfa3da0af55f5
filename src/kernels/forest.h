/*
 * forest.h: the decisions of random forests and Extra Trees, written once for
 * every backend: a node's key, which features it may split on, the Extra
 * Trees threshold, the impurity scores of exact integer sums and the total
 * order among split candidates. The CPU grower (src/models/forest/forest.c),
 * the device grower (src/models/forest/forest_dev.c), its host reference
 * (src/backends/cpu/fdev_cpu.c) and its CUDA kernels
 * (src/backends/cuda/fdev_cuda.cu) all call these; none re-spells them.
 */
#ifndef SB_KERNELS_FOREST_H
#define SB_KERNELS_FOREST_H
#include "compat.h"
#include "gbdt.h"
#include "quantize.h"
#include "../core/rng.h"
#include "../math/sb_math.h"

#define SB_K_PURPOSE_BOOT 0x424F4F54u /* "BOOT" */
#define SB_K_PURPOSE_FEAT 0x46454154u /* "FEAT" */
#define SB_K_PURPOSE_THR 0x54485231u  /* "THR1" */
#define SB_K_PURPOSE_NODE 0x4E4F4445u /* "NODE" */

/* ---- node keys ---- */

/* The key of tree t's root. A node's key names it by its path from the root,
 * so a grower that builds level by level (a GPU) and one that builds depth
 * first (the CPU) draw the same features and thresholds for it. */
SB_FN sb_u64 sb_k_forest_root_key(sb_i32 t) { return (sb_u64)(sb_u32)t; }

/* The key of the left (side 0) or right (side 1) child of the node keyed
 * parent: one counter-generator block of (parent, side), 64 bits of it. */
SB_FN sb_u64 sb_k_forest_child_key(sb_u64 parent, sb_i32 side) {
    sb_u32 w[4];
    sb_rng_words(0u, SB_K_PURPOSE_NODE, parent, (sb_u32)side, w);
    return ((sb_u64)w[1] << 32) | (sb_u64)w[0];
}

/* The draw that ranks feature j at the node keyed key: the node's features
 * are the mtry with the smallest (draw, j). */
SB_FN sb_u32 sb_k_forest_feature_draw(sb_u64 seed, sb_u64 key, sb_i32 j) {
    sb_u32 w[4];
    sb_rng_words(seed, SB_K_PURPOSE_FEAT, key, (sb_u32)j, w);
    return w[0];
}

/* The row of tree t's draw d of a bootstrap over n rows. */
SB_FN sb_u32 sb_k_forest_boot_row(sb_u64 seed, sb_i32 t, sb_i64 d, sb_u32 n) {
    return sb_rng_below(seed, SB_K_PURPOSE_BOOT, ((sb_u64)(sb_u32)t << 32) | (sb_u64)d, n);
}

/* draws[0, nf): the features' draws at the node keyed key. */
SB_FN void sb_k_forest_draws(sb_u64 seed, sb_u64 key, sb_i32 nf, SB_GLOBAL sb_u32 *draws) {
    for (sb_i32 j = 0; j < nf; j++) draws[j] = sb_k_forest_feature_draw(seed, key, j);
}

/* Whether feature j is one of the node's features: the mtry with the smallest
 * (draw, feature) of draws[0, nf). The same set as any selection of them. */
SB_FN int sb_k_forest_selected(const SB_GLOBAL sb_u32 *draws, sb_i32 nf, sb_i32 mtry, sb_i32 j) {
    sb_i32 rank = 0;
    for (sb_i32 i = 0; i < nf; i++) rank += draws[i] < draws[j] || (draws[i] == draws[j] && i < j);
    return rank < mtry;
}

/* Extra Trees: the value bin in [lo, hi) (lo < hi) whose upper edge is the
 * threshold of feature feat at the node keyed key. Multiply-shift: uniform up
 * to (hi - lo) / 2^32, a pure function of the key. */
SB_FN sb_i32 sb_k_forest_et_pick(sb_u64 seed, sb_u64 key, sb_i32 feat, sb_i32 lo, sb_i32 hi) {
    sb_u32 w[4];
    sb_rng_words(seed, SB_K_PURPOSE_THR, key, (sb_u32)feat, w);
    return lo + (sb_i32)(((sb_u64)w[0] * (sb_u64)(sb_u32)(hi - lo)) >> 32);
}

/* ---- split scores (exact integer sums in, one float formula out) ---- */

#define SB_K_CRIT_GINI 0
#define SB_K_CRIT_ENTROPY 1
#define SB_K_CRIT_SQUARED 2

/* What a split must satisfy and how sums become scores. A node's sums are nv
 * int64: K class counts weighted by bootstrap multiplicity (gini, entropy:
 * nv = K), or (w, sum of y in fixed point) (squared error: nv = 2).
 * Weighted (sample weights or class weights, docs/forest.md): the
 * multiplicity is the bootstrap count times the row's fixed-point weight
 * (weight x 2^wexp), and the sums carry one more value, the rows counted with
 * their bootstrap multiplicity (nv = K + 1 or 3), which min_samples_leaf and
 * min_samples_split limit; min_w is the weight each child needs
 * (min_weight_fraction_leaf of the tree's total, 0: none). */
typedef struct sb_k_forest_rules {
    sb_i64 min_samples_leaf;
    sb_i32 criterion, nv;
    float yscale;    /* y = fixed point / yscale (a power of two) */
    sb_i32 weighted; /* 1: the last of the nv sums is the row count */
    sb_i32 wexp;     /* weighted: fixed-point weight = weight x 2^wexp */
    float min_w;
} sb_k_forest_rules;
SB_STATIC_ASSERT(sizeof(sb_k_forest_rules) == 32, "sb_k_forest_rules layout is shared by host and device");

/* A split candidate: value bins 1..bin go left, missing values too when dl.
 * score: the sum of the children's scores (larger is better); wl: the left
 * child's weight. valid = 0: none. */
typedef struct sb_k_fsplit {
    sb_i32 valid;
    float score;
    sb_i32 feature, bin, dl, pad_;
    sb_i64 wl;
} sb_k_fsplit;
SB_STATIC_ASSERT(sizeof(sb_k_fsplit) == 32, "sb_k_fsplit layout is shared by host and device");

/* A row's contribution (multiplicity mult) to nv sums: its class count, or
 * (w, s): the one place both growers add a row, exactly. */
SB_FN void sb_k_forest_add_row(const sb_k_forest_rules *r, SB_GLOBAL sb_i64 *v, sb_i32 cls_or_yq, sb_i64 mult) {
    if (r->criterion == SB_K_CRIT_SQUARED) {
        v[0] += mult;
#ifdef SB_SABOTAGE_FLOAT_HIST
        v[1] = (sb_i64)((float)v[1] + (float)(mult * cls_or_yq)); /* arm: float impurity sums */
#else
        v[1] += mult * cls_or_yq;
#endif
    } else {
        v[cls_or_yq] += mult;
    }
}

/* A position's contribution to nv sums: its row's value with bootstrap count
 * cnt and, weighted, fixed-point weight wq: the multiplicity cnt x wq, and
 * cnt to the row count (the sums' last value). Unweighted, the multiplicity
 * is cnt (wq is not read). */
SB_FN void sb_k_forest_put(const sb_k_forest_rules *r, SB_GLOBAL sb_i64 *v, sb_i32 cls_or_yq, sb_i32 cnt, sb_i32 wq) {
    if (r->weighted) {
        sb_k_forest_add_row(r, v, cls_or_yq, (sb_i64)cnt * wq);
        v[r->nv - 1] += cnt;
    } else {
        sb_k_forest_add_row(r, v, cls_or_yq, cnt);
    }
}

/* ---- weights in fixed point (docs/forest.md) ---- */

/* The largest row weight is scaled into (2^19, 2^20]. */
#define SB_K_FOREST_W_LEVELS 1048576.0f

/* scikit-learn's "balanced" weight of a class drawn nk times among nt draws
 * of kt classes: nt / (kt x nk), one spelling; 0 for a class not drawn. */
SB_FN float sb_k_forest_class_weight(sb_i64 nt, sb_i32 kt, sb_i64 nk) {
    return nk > 0 ? (float)nt / ((float)kt * (float)nk) : 0.0f;
}

/* A row's weight: its sample weight sw (1 when there are none) times its
 * class's weight cw, one float product. */
SB_FN float sb_k_forest_row_weight(float sw, float cw) { return sw * cw; }

/* A weight w in fixed point at scale 2^e: w x 2^e (exact), rounded half to even. */
SB_FN sb_i32 sb_k_forest_weight_fixed(float w, sb_i32 e) { return sb_round_half_even_i32(w * sb_pow2f(e)); }

/* Sum k of a child given as parts: the left child's value is l[k] (plus m[k]
 * when dl), the right child's is t[k] minus that. One function, so a child is
 * never materialized (a GPU thread has no room for K counts). */
SB_FN sb_i64 sb_k_forest_part(const SB_GLOBAL sb_i64 *t, const SB_GLOBAL sb_i64 *l, const SB_GLOBAL sb_i64 *m,
                              sb_i32 dl, sb_i32 side, sb_i32 k) {
    const sb_i64 left = l[k] + (dl ? m[k] : 0);
    return side ? t[k] - left : left;
}

/* The weight (rows counted with multiplicity; weighted: the fixed-point
 * weight) of a child given as parts. */
SB_FN sb_i64 sb_k_forest_part_weight(const sb_k_forest_rules *r, const SB_GLOBAL sb_i64 *t,
                                     const SB_GLOBAL sb_i64 *l, const SB_GLOBAL sb_i64 *m, sb_i32 dl, sb_i32 side) {
    if (r->criterion == SB_K_CRIT_SQUARED) return sb_k_forest_part(t, l, m, dl, side, 0);
    sb_i64 w = 0;
    for (sb_i32 k = 0; k < r->nv - r->weighted; k++) w += sb_k_forest_part(t, l, m, dl, side, k);
    return w;
}

/* The rows (counted with their bootstrap multiplicity) of a child given as
 * parts: min_samples_leaf's measure. Unweighted, its weight. */
SB_FN sb_i64 sb_k_forest_part_count(const sb_k_forest_rules *r, const SB_GLOBAL sb_i64 *t,
                                    const SB_GLOBAL sb_i64 *l, const SB_GLOBAL sb_i64 *m, sb_i32 dl, sb_i32 side) {
    return r->weighted ? sb_k_forest_part(t, l, m, dl, side, r->nv - 1) : sb_k_forest_part_weight(r, t, l, m, dl, side);
}

/* x * 2^-e (e in [-126, 127]) by exact power-of-two factors. */
SB_FN float sb_k_forest_unscale(float x, sb_i32 e) {
    return -e >= -126 ? x * sb_pow2f(-e) : (x * sb_pow2f(-126)) * sb_pow2f(126 - e);
}

/* The weight of sums v. */
SB_FN sb_i64 sb_k_forest_weight(const sb_k_forest_rules *r, const SB_GLOBAL sb_i64 *v) {
    return sb_k_forest_part_weight(r, v, v, v, 0, 0);
}

/* Larger is better, for a child given as parts. Gini: sum_k c_k^2 / w (the
 * weighted Gini impurity is w minus it). Entropy: sum_k c_k log c_k - w log w
 * (minus the weighted entropy), with the profile's log. Squared error: s^2 / w
 * (the weighted variance is sum y^2 minus it). Classes are added in order. */
SB_FN float sb_k_forest_part_score(const sb_k_forest_rules *r, const SB_GLOBAL sb_i64 *t,
                                   const SB_GLOBAL sb_i64 *l, const SB_GLOBAL sb_i64 *m, sb_i32 dl, sb_i32 side) {
    if (r->criterion == SB_K_CRIT_SQUARED) {
        const sb_i64 w = sb_k_forest_part(t, l, m, dl, side, 0);
        if (w <= 0) return 0.0f;
        float s = sb_k_dequant(sb_k_forest_part(t, l, m, dl, side, 1), r->yscale), fw = (float)w;
        if (r->weighted) { /* back to weight units (exact), so the fixed point's 2^20 cannot overflow s * s */
            s = sb_k_forest_unscale(s, r->wexp);
            fw = sb_k_forest_unscale(fw, r->wexp);
        }
        return s * s / fw;
    }
    const sb_i64 w = sb_k_forest_part_weight(r, t, l, m, dl, side);
    if (w <= 0) return 0.0f;
    float acc = 0.0f;
    if (r->criterion == SB_K_CRIT_GINI) {
        for (sb_i32 k = 0; k < r->nv - r->weighted; k++) {
            const float c = (float)sb_k_forest_part(t, l, m, dl, side, k);
            acc = acc + c * c;
        }
        return acc / (float)w;
    }
    for (sb_i32 k = 0; k < r->nv - r->weighted; k++) {
        const sb_i64 v = sb_k_forest_part(t, l, m, dl, side, k);
        if (v > 0) {
            const float c = (float)v;
            acc = acc + c * sb_logf(c);
        }
    }
    const float fw = (float)w;
    return acc - fw * sb_logf(fw);
}

/* The score of sums v (a node's own, for its impurity decrease). */
SB_FN float sb_k_forest_score(const sb_k_forest_rules *r, const SB_GLOBAL sb_i64 *v) {
    return sb_k_forest_part_score(r, v, v, v, 0, 0);
}

/* min_weight_fraction_leaf (frac > 0): the weight each child needs, the
 * fraction frac of the tree's total weight, its root's sums (scikit-learn's
 * rule); 0 when frac is 0. */
SB_FN float sb_k_forest_min_w(const sb_k_forest_rules *r, float frac, const SB_GLOBAL sb_i64 *root) {
    return frac > 0.0f ? frac * (float)sb_k_forest_weight(r, root) : 0.0f;
}

/* The profile's total order on candidates: larger score, then smaller
 * feature, then smaller bin, then missing-right before missing-left. Every
 * pair of distinct valid candidates is ordered, so the best of a set is the
 * same whatever order or grouping the candidates are compared in. */
SB_FN int sb_k_fsplit_better(const sb_k_fsplit *a, const sb_k_fsplit *b) {
    if (!a->valid) return 0;
    if (!b->valid) return 1;
    if (a->score != b->score) return a->score > b->score;
#if defined(SB_SABOTAGE_FOREST_TIES)
    /* Separating arm for rule 7 (make SABOTAGE=forest-ties on the CPU,
     * CUDA_VARIANT=forest-ties, SAMEBITS_OPENCL_ARM=forest-ties): equal scores
     * go to the higher feature and bin, a total order still, but not the
     * profile's; the forest fixtures' exact ties then pick other splits. */
    if (a->feature != b->feature) return a->feature > b->feature;
    if (a->bin != b->bin) return a->bin > b->bin;
#else
    if (a->feature != b->feature) return a->feature < b->feature;
    if (a->bin != b->bin) return a->bin < b->bin;
#endif
    return a->dl < b->dl;
}

/* Candidate (feat, bin, dl) of a node with sums tot: left = l (the sums of
 * value bins 1..bin) plus the missing sums m when dl. Each child needs
 * min_samples_leaf weight and at least one row; replaces *best when better. */
SB_FN void sb_k_forest_consider(const sb_k_forest_rules *r, const SB_GLOBAL sb_i64 *tot, const SB_GLOBAL sb_i64 *l,
                                const SB_GLOBAL sb_i64 *m, sb_i32 feat, sb_i32 bin, sb_i32 dl, sb_k_fsplit *best) {
    const sb_i64 wl = sb_k_forest_part_weight(r, tot, l, m, dl, 0), wr = sb_k_forest_part_weight(r, tot, l, m, dl, 1);
    if (wl == 0 || wr == 0) return;
    if (r->weighted) {
        if (sb_k_forest_part_count(r, tot, l, m, dl, 0) < r->min_samples_leaf ||
            sb_k_forest_part_count(r, tot, l, m, dl, 1) < r->min_samples_leaf)
            return;
    } else if (wl < r->min_samples_leaf || wr < r->min_samples_leaf) {
        return;
    }
    if (r->min_w > 0.0f && ((float)wl < r->min_w || (float)wr < r->min_w)) return;
    sb_k_fsplit x;
    x.valid = 1;
    x.score = sb_k_forest_part_score(r, tot, l, m, dl, 0) + sb_k_forest_part_score(r, tot, l, m, dl, 1);
    x.feature = feat;
    x.bin = bin;
    x.dl = dl;
    x.pad_ = 0;
    x.wl = wl;
    if (sb_k_fsplit_better(&x, best)) *best = x;
}

/* Random forest: the candidates of feature feat at value bin t (1..nb) of a
 * node with sums tot, given the feature's histogram after sb_k_forest_cumulate:
 * cum + t * nv holds the sums of value bins 1..t, and its bin 0, m, the
 * missing values' sums.
 * A split at t exists when bin t has rows (else it is bin t - 1's split) and
 * some value bin after t has rows; missing values then go right, and, when
 * there are any, left. */
SB_FN void sb_k_forest_rf_at(const sb_k_forest_rules *r, const SB_GLOBAL sb_i64 *tot, const SB_GLOBAL sb_i64 *cum,
                             const SB_GLOBAL sb_i64 *m, sb_i32 nb, sb_i32 feat, sb_i32 t, sb_k_fsplit *best) {
    const sb_i32 nv = r->nv;
    const sb_i64 wt = sb_k_forest_weight(r, cum + (sb_i64)t * nv);
    const sb_i64 wprev = t > 1 ? sb_k_forest_weight(r, cum + (sb_i64)(t - 1) * nv) : 0;
    if (wt == wprev) return;                                      /* bin t is empty */
    if (wt == sb_k_forest_weight(r, cum + (sb_i64)nb * nv)) return; /* no value bin after t has rows */
    sb_k_forest_consider(r, tot, cum + (sb_i64)t * nv, m, feat, t, 0, best);
    if (sb_k_forest_weight(r, m) > 0) sb_k_forest_consider(r, tot, cum + (sb_i64)t * nv, m, feat, t, 1, best);
}

/* Extra Trees from a cumulative histogram (as in sb_k_forest_rf_at): the
 * smallest and largest value bins with rows, lo and hi (0, 0 when none), by
 * binary search on the cumulative weight, which never decreases. */
SB_FN void sb_k_forest_et_range(const sb_k_forest_rules *r, const SB_GLOBAL sb_i64 *cum, sb_i32 nb, sb_i32 *lo,
                                sb_i32 *hi) {
    const sb_i32 nv = r->nv;
    const sb_i64 wall = sb_k_forest_weight(r, cum + (sb_i64)nb * nv);
    *lo = 0;
    *hi = 0;
    if (wall == 0) return;
    sb_i32 a = 1, b = nb; /* lo: the first t with weight(cum[t]) > 0 */
    while (a < b) {
        const sb_i32 mid = a + (b - a) / 2;
        if (sb_k_forest_weight(r, cum + (sb_i64)mid * nv) > 0) b = mid;
        else a = mid + 1;
    }
    *lo = a;
    b = nb; /* hi: the first t with weight(cum[t]) == wall */
    while (a < b) {
        const sb_i32 mid = a + (b - a) / 2;
        if (sb_k_forest_weight(r, cum + (sb_i64)mid * nv) == wall) b = mid;
        else a = mid + 1;
    }
    *hi = a;
}

/* Extra Trees on feature feat of the node keyed key with sums tot, from its
 * cumulative histogram and missing sums: one threshold drawn between its
 * smallest and largest value bins with rows, missing values right and, when
 * there are any, left. */
SB_FN void sb_k_forest_et_feature(const sb_k_forest_rules *r, sb_u64 seed, sb_u64 key, const SB_GLOBAL sb_i64 *tot,
                                  const SB_GLOBAL sb_i64 *cum, const SB_GLOBAL sb_i64 *m, sb_i32 nb, sb_i32 feat,
                                  sb_k_fsplit *best) {
    sb_i32 lo, hi;
    sb_k_forest_et_range(r, cum, nb, &lo, &hi);
    if (hi == 0 || lo == hi) return; /* no value split on this feature here */
    const sb_i32 pick = sb_k_forest_et_pick(seed, key, feat, lo, hi);
    sb_k_forest_consider(r, tot, cum + (sb_i64)pick * r->nv, m, feat, pick, 0, best);
    if (sb_k_forest_weight(r, m) > 0) sb_k_forest_consider(r, tot, cum + (sb_i64)pick * r->nv, m, feat, pick, 1, best);
}

/* ---- small nodes: candidates from the rows themselves ---- */

/* A node of at most SB_K_FOREST_SMALL_ROWS rows (and at most
 * SB_K_FOREST_SMALL_NV sums a child) may be searched without histograms: a
 * histogram of every bin would cost more than the node's rows. Which path a
 * node takes is a schedule: both give the same candidates with the same
 * integer sums, so the same split. */
#define SB_K_FOREST_SMALL_ROWS 64
#define SB_K_FOREST_SMALL_NV 16

/* Feature feat of a small node with sums tot, given its cnt rows' bins of feat,
 * values (class or fixed-point y), bootstrap counts and fixed-point weights
 * (wq, read when weighted: sb_k_forest_put); l and m: scratch of nv
 * sums. Its arrays are SB_GLOBAL (OpenCL C 1.2 has no generic address space:
 * its small-node kernel keeps them in global scratch; elsewhere the
 * qualifier is empty). The same candidates as from the node's histogram: random forest, a
 * split at every value bin that has rows and is not the largest such; Extra
 * Trees, one drawn between the smallest and the largest (sb_k_forest_et_pick).
 * Missing values right and, when there are any, left. */
/* The first step of sb_k_forest_small_feature: the sums m of a small node's
 * rows that miss feature feat (bins bin[0, cnt)), and its smallest and largest
 * value bin; whether a value split exists on it (lo < hi). */
SB_FN int sb_k_forest_small_range(const sb_k_forest_rules *r, const SB_GLOBAL sb_u8 *bin, const SB_GLOBAL sb_i32 *val,
                                  const SB_GLOBAL sb_i32 *mult, const SB_GLOBAL sb_i32 *wq, sb_i32 cnt,
                                  SB_GLOBAL sb_i64 *m, sb_i32 *lo_out, sb_i32 *hi_out) {
    sb_i32 lo = 256, hi = 0;
    for (sb_i32 k = 0; k < r->nv; k++) m[k] = 0;
    for (sb_i32 i = 0; i < cnt; i++) {
        const sb_i32 b = bin[i];
        if (b == 0) {
            sb_k_forest_put(r, m, val[i], mult[i], wq[i]);
        } else {
            if (b < lo) lo = b;
            if (b > hi) hi = b;
        }
    }
    *lo_out = lo;
    *hi_out = hi;
    return hi != 0 && lo != hi;
}

/* Candidate i of feature feat of a small node, after sb_k_forest_small_range
 * gave lo, hi and m: random forest, the bin of row i when it is a value bin
 * below hi that no earlier row has; Extra Trees, for i = 0 only, the drawn
 * threshold (sb_k_forest_et_pick). Considered with missing values right and,
 * when there are any, left; l: scratch of nv sums. The candidates are
 * independent and *best keeps the best under a total order, so any division
 * of 0..cnt-1 among workers, their bests merged by sb_k_fsplit_better, gives
 * what the serial loop gives. */
SB_FN void sb_k_forest_small_candidate(const sb_k_forest_rules *r, sb_u64 seed, sb_u64 key, sb_i32 extra,
                                       const SB_GLOBAL sb_i64 *tot, const SB_GLOBAL sb_u8 *bin,
                                       const SB_GLOBAL sb_i32 *val, const SB_GLOBAL sb_i32 *mult,
                                       const SB_GLOBAL sb_i32 *wq, sb_i32 cnt, sb_i32 feat, sb_i32 i, sb_i32 lo,
                                       sb_i32 hi, const SB_GLOBAL sb_i64 *m, SB_GLOBAL sb_i64 *l, sb_k_fsplit *best) {
    const sb_i32 nv = r->nv;
    sb_i32 t;
    if (extra) {
        if (i > 0) return; /* one candidate threshold */
        t = sb_k_forest_et_pick(seed, key, feat, lo, hi);
    } else {
        t = bin[i];
        if (t == 0 || t >= hi) return;
        for (sb_i32 j = 0; j < i; j++) /* each bin once: at its first row */
            if (bin[j] == t) return;
    }
    for (sb_i32 k = 0; k < nv; k++) l[k] = 0;
    for (sb_i32 j = 0; j < cnt; j++)
        if (bin[j] >= 1 && bin[j] <= t) sb_k_forest_put(r, l, val[j], mult[j], wq[j]);
    sb_k_forest_consider(r, tot, l, m, feat, t, 0, best);
    if (sb_k_forest_weight(r, m) > 0) sb_k_forest_consider(r, tot, l, m, feat, t, 1, best);
}

SB_FN void sb_k_forest_small_feature(const sb_k_forest_rules *r, sb_u64 seed, sb_u64 key, sb_i32 extra,
                                     const SB_GLOBAL sb_i64 *tot, const SB_GLOBAL sb_u8 *bin,
                                     const SB_GLOBAL sb_i32 *val, const SB_GLOBAL sb_i32 *mult,
                                     const SB_GLOBAL sb_i32 *wq, sb_i32 cnt, sb_i32 feat, SB_GLOBAL sb_i64 *l,
                                     SB_GLOBAL sb_i64 *m, sb_k_fsplit *best) {
    sb_i32 lo, hi;
    if (!sb_k_forest_small_range(r, bin, val, mult, wq, cnt, m, &lo, &hi)) return; /* no value split here */
    for (sb_i32 i = 0; i < cnt; i++)
        sb_k_forest_small_candidate(r, seed, key, extra, tot, bin, val, mult, wq, cnt, feat, i, lo, hi, m, l, best);
}

/* Sum k of a feature's histogram h (nb + 1 bins of nv sums; bin 0: missing)
 * cumulated in place over its value bins 1..nb: exact integer additions in
 * bin order. Each k is independent (a GPU gives each its own thread). */
SB_FN void sb_k_forest_cumulate_one(SB_GLOBAL sb_i64 *h, sb_i32 nb, sb_i32 nv, sb_i32 k) {
    for (sb_i32 t = 2; t <= nb; t++) h[(sb_i64)t * nv + k] += h[(sb_i64)(t - 1) * nv + k];
}

/* Every sum of a feature's histogram cumulated (sb_k_forest_cumulate_one). */
SB_FN void sb_k_forest_cumulate(SB_GLOBAL sb_i64 *h, sb_i32 nb, sb_i32 nv) {
    for (sb_i32 k = 0; k < nv; k++) sb_k_forest_cumulate_one(h, nb, nv, k);
}

/* Whether a node may be split at all: not pure (classification), enough
 * rows (counted with multiplicity) for min_samples_split and for two children
 * of min_samples_leaf, not too deep (at most 128 levels whatever max_depth
 * says). */
SB_FN int sb_k_forest_may_split(const sb_k_forest_rules *r, const SB_GLOBAL sb_i64 *tot, sb_i64 min_samples_split,
                                sb_i32 depth, sb_i32 max_depth) {
    const sb_i64 w = sb_k_forest_weight(r, tot);
    if (r->criterion != SB_K_CRIT_SQUARED)
        for (sb_i32 k = 0; k < r->nv - r->weighted; k++)
            if (tot[k] == w) return 0;
    const sb_i64 rows = r->weighted ? tot[r->nv - 1] : w;
    /* each child needs min_samples_leaf rows (sb_k_forest_consider): fewer
     * than twice that can have no valid split, so the node is a leaf as
     * surely as after a search that finds none */
    if (rows < 2 * r->min_samples_leaf) return 0;
    return rows >= min_samples_split && (max_depth < 0 || depth < max_depth) && depth < 128;
}

/* A split's weighted impurity decrease (feature importance): the children's
 * score minus the node's (sums tot); weighted class counts back from fixed
 * point to weight units (exact; squared error is in weight units already). */
SB_FN float sb_k_forest_gain(const sb_k_forest_rules *r, float score, const SB_GLOBAL sb_i64 *tot) {
    const float g = score - sb_k_forest_score(r, tot);
    return r->weighted && r->criterion != SB_K_CRIT_SQUARED ? sb_k_forest_unscale(g, r->wexp) : g;
}

/* The value leaf sums v put in model tree k (class k's; regression: k = 0) of
 * a forest of ntrees: the class frequency or the mean, divided by ntrees, so
 * that prediction adds the trees' leaves into the forest's average. */
SB_FN float sb_k_forest_leaf_value(const sb_k_forest_rules *r, const SB_GLOBAL sb_i64 *v, sb_i32 k, sb_i32 ntrees) {
    float mean;
    if (r->criterion == SB_K_CRIT_SQUARED)
        mean = v[0] > 0 ? sb_k_dequant(v[1], r->yscale) / (float)v[0] : 0.0f;
    else
        mean = (float)v[k] / (float)sb_k_forest_weight(r, v);
    return mean / (float)ntrees;
}

/* ---- isolation forest (src/models/forest/isolation.c) ---- */

#define SB_K_PURPOSE_ISUB 0x49535542u /* "ISUB": the subsample */
#define SB_K_PURPOSE_ISPL 0x4953504Cu /* "ISPL": a node's feature and threshold */

/* The row of tree t's draw d of its subsample over n rows (repeats are
 * rejected by the caller, in draw order). */
SB_FN sb_u32 sb_k_iforest_sample_row(sb_u64 seed, sb_i32 t, sb_u64 d, sb_u32 n) {
    return sb_rng_below(seed, SB_K_PURPOSE_ISUB, ((sb_u64)(sb_u32)t << 32) | d, n);
}

#define SB_K_PURPOSE_IWSB 0x49575342u /* "IWSB": a weighted subsample's draws */

/* Tree t's weighted draw d (docs/forest.md, "Isolation forest"): a uniform
 * integer in [0, w), w >= 1, the point of the fixed-point weight line that
 * picks the row. Exact integers only: 64 bits of the counter block masked to
 * the bit length of w - 1, rejected when >= w (two tries a block, then the
 * next block), so every machine takes the same value. */
SB_FN sb_u64 sb_k_iforest_wsample_value(sb_u64 seed, sb_i32 t, sb_u64 d, sb_u64 w) {
    sb_u64 mask = w - 1u;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    mask |= mask >> 32;
    for (sb_u32 sub = 0;; sub++) {
        sb_u32 x[4];
        sb_rng_words(seed, SB_K_PURPOSE_IWSB, ((sb_u64)(sb_u32)t << 32) | d, sub, x);
        for (int j = 0; j < 4; j += 2) {
            const sb_u64 v = (((sb_u64)x[j] << 32) | (sb_u64)x[j + 1]) & mask;
            if (v < w) return v;
        }
    }
}

/* The split of the node keyed key (its path key, sb_k_forest_child_key) with
 * nc candidate features (those not constant in it, in feature order): *k, the
 * candidate, and *u, the draw that places the threshold (sb_k_iforest_bin). */
SB_FN void sb_k_iforest_pick(sb_u64 seed, sb_u64 key, sb_i32 nc, sb_i32 *k, sb_u32 *u) {
    sb_u32 w[4];
    sb_rng_words(seed, SB_K_PURPOSE_ISPL, key, 0u, w);
    *k = (sb_i32)(((sb_u64)w[0] * (sb_u64)(sb_u32)nc) >> 32);
    *u = w[1];
}

/* The threshold bin in [lo, hi - 1] of a feature whose bins in the node span
 * [lo, hi] (lo < hi; bin 0, missing, the smallest): rows of bin <= it go left. */
SB_FN sb_i32 sb_k_iforest_bin(sb_u32 u, sb_i32 lo, sb_i32 hi) {
    return lo + (sb_i32)(((sb_u64)u * (sb_u64)(sb_u32)(hi - lo)) >> 32);
}

/* The split of an isolation node keyed key from its features' bin ranges
 * (lo[f], hi[f]: smallest and largest bin of feature f over its rows, missing
 * as bin 0): the candidates are the features whose bins vary, in feature
 * order; sb_k_iforest_pick draws one and sb_k_iforest_bin its threshold;
 * missing values go left. *out valid = 0 when no feature varies. (The GPU
 * kernels' form; the CPU growers, which scan a node's rows feature by
 * feature, pick the same way from their own candidate lists.) */
SB_FN void sb_k_iforest_split(sb_u64 seed, sb_u64 key, sb_i32 nf, const SB_GLOBAL sb_i32 *lo,
                              const SB_GLOBAL sb_i32 *hi, sb_k_fsplit *out) {
    out->valid = 0;
    out->score = 0.0f;
    out->feature = out->bin = out->dl = out->pad_ = 0;
    out->wl = 0;
    sb_i32 nc = 0;
    for (sb_i32 f = 0; f < nf; f++) nc += lo[f] < hi[f];
    if (nc == 0) return;
    sb_i32 k;
    sb_u32 u;
    sb_k_iforest_pick(seed, key, nc, &k, &u);
    for (sb_i32 f = 0, c = 0; f < nf; f++) {
        if (!(lo[f] < hi[f])) continue;
        if (c++ == k) {
            out->valid = 1;
            out->feature = f;
            out->bin = sb_k_iforest_bin(u, lo[f], hi[f]);
            out->dl = 1;
            return;
        }
    }
}

/* c(n): the average path length of an unsuccessful search among n rows,
 * 2 H(n - 1) - 2 (n - 1) / n, H(i) = ln i + Euler's constant (the profile's log). */
SB_FN float sb_k_iforest_c(sb_i64 n) {
    if (n <= 1) return 0.0f;
    if (n == 2) return 1.0f;
    const float m = (float)(n - 1);
    const float h = sb_logf(m) + 0.5772156649f;
    return 2.0f * h - 2.0f * m / (float)n;
}

/* The value of a leaf at depth holding size rows, in a forest of ntrees with
 * c(psi) = cpsi: (depth + c(size)) / (ntrees x cpsi). */
SB_FN float sb_k_iforest_leaf(sb_i32 depth, sb_i64 size, sb_i32 ntrees, float cpsi) {
    return ((float)depth + sb_k_iforest_c(size)) / ((float)ntrees * cpsi);
}

#endif
