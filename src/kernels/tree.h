/*
 * tree.h: the decisions of tree growing, written once for every backend: the
 * split search over one feature's integer histogram, the total order that
 * picks among equal gains, where a row goes at a split, and the walk of a row's
 * bins down a tree. The CPU grower (src/models/trees/grow.c), the batched
 * device grower (src/models/trees/grow_dev.c) and the CUDA kernels
 * (src/backends/cuda/gbdt_cuda.cu) all call these; none re-spells them.
 * The gain and leaf formulas are in gbdt.h.
 */
#ifndef SB_KERNELS_TREE_H
#define SB_KERNELS_TREE_H
#include "compat.h"
#include "gbdt.h"

/* One histogram bin: exact integer sums of quantized gradients, hessians and
 * the row count. Bin 0 of a feature holds its missing values. */
typedef struct sb_k_hbin {
    sb_i64 g, h, c;
} sb_k_hbin;
SB_STATIC_ASSERT(sizeof(sb_k_hbin) == 24, "sb_k_hbin is three int64");

/* A split candidate: rows with bin <= bin go left; missing values go left when
 * default_left. lg, lh, lc: the left child's sums. valid = 0: no split. */
typedef struct sb_k_split {
    sb_i32 valid;
    float gain;
    sb_i32 feature, bin, default_left, pad_;
    sb_i64 lg, lh, lc;
} sb_k_split;
SB_STATIC_ASSERT(sizeof(sb_k_split) == 48, "sb_k_split layout is shared by host and device");

/* What a split must satisfy, and the scales that turn sums back into floats. */
typedef struct sb_k_split_rules {
    sb_i64 min_samples_leaf;
    float min_child_weight, min_split_gain, reg_lambda;
    float g_scale, h_scale; /* g = sum / g_scale (powers of two) */
    float reg_alpha;        /* L1 on leaf values (lambda_l1); 0: none */
} sb_k_split_rules;
SB_STATIC_ASSERT(sizeof(sb_k_split_rules) == 32, "sb_k_split_rules layout is shared by host and device");

/* Monotone constraints (monotone_constraints; LightGBM's "basic" method as
 * its documentation describes it): every node carries bounds [lo, hi] on its
 * output (before the learning rate); a candidate's children take their
 * outputs clamped to the node's bounds, a candidate on a feature constrained
 * increasing (dir = +1) whose left output exceeds its right one is no split
 * (decreasing, dir = -1: the mirror), and a bound that moved an output scores
 * that child at the bounded output (sb_k_leaf_score_at). active = 0: no
 * constraint in the model, the plain search bit for bit. */
typedef struct sb_k_mono {
    sb_i32 active, dir;
    float lo, hi;
} sb_k_mono;
SB_STATIC_ASSERT(sizeof(sb_k_mono) == 16, "sb_k_mono layout is shared by host and device");

/* The score of a node with sums (G, H) under bounds m (its output clamped). */
SB_FN float sb_k_node_score_c(sb_i64 G, sb_i64 H, const sb_k_split_rules *r, const sb_k_mono *m) {
    const float g = sb_k_dequant(G, r->g_scale), h = sb_k_dequant(H, r->h_scale);
    if (m->active) {
        const float o = sb_k_leaf_output(g, h, r->reg_lambda, r->reg_alpha);
        const float w = sb_k_clamp(o, m->lo, m->hi);
        if (w != o) return sb_k_leaf_score_at(g, h, r->reg_lambda, r->reg_alpha, w);
    }
    return sb_k_leaf_score(g, h, r->reg_lambda, r->reg_alpha);
}

/* A node of a tree as the device walks it on bins: go left when the row's bin
 * of feature is <= split_bin (bin 0, missing: default_left); leaves have
 * feature = -1 and carry the value the tree adds. A categorical split has
 * default_left = -s (s >= 1): its left bins are the 256-bit set held in
 * t[s .. s + 8).split_bin, one word each, after the tree's nodes. */
typedef struct sb_k_bnode {
    sb_i32 feature, split_bin, left, right, default_left;
    float value;
} sb_k_bnode;
SB_STATIC_ASSERT(sizeof(sb_k_bnode) == 24, "sb_k_bnode layout is shared by host and device");

/* The profile's total order on candidates: larger gain, then smaller feature,
 * then smaller bin, then missing-right before missing-left. Every pair of
 * distinct valid candidates is ordered, so the best of a set is the same
 * whatever order or grouping the candidates are compared in. */
SB_FN int sb_k_split_better(const sb_k_split *a, const sb_k_split *b) {
    if (!a->valid) return 0;
    if (!b->valid) return 1;
#ifdef SB_SABOTAGE_TIES
    /* separating arm (SABOTAGE=ties, CUDA_VARIANT=ties, SAMEBITS_OPENCL_ARM=ties):
     * the last equal candidate wins, an order that depends on the comparisons' order */
    return a->gain >= b->gain;
#else
    if (a->gain != b->gain) return a->gain > b->gain;
    if (a->feature != b->feature) return a->feature < b->feature;
    if (a->bin != b->bin) return a->bin < b->bin;
    return a->default_left < b->default_left;
#endif
}

/* Whether a node of this depth and row count may be split at all. */
SB_FN int sb_k_node_may_split(sb_i32 depth, sb_i64 count, sb_i32 max_depth, sb_i64 min_samples_leaf) {
    if (max_depth >= 0 && depth >= max_depth) return 0;
    return count >= 2 * (min_samples_leaf > 1 ? min_samples_leaf : 1);
}

/* The structure score of a node with sums G, H. */
SB_FN float sb_k_node_score(sb_i64 G, sb_i64 H, const sb_k_split_rules *r) {
    return sb_k_leaf_score(sb_k_dequant(G, r->g_scale), sb_k_dequant(H, r->h_scale), r->reg_lambda, r->reg_alpha);
}

/* Candidate (f, bin, dl) with left sums (lg, lh, lc) of a node with sums
 * (G, H, C) and score parent_score (sb_k_node_score_c), under the node's
 * monotone state m (m->dir: feature f's constraint); replaces *best when it is
 * valid and better. */
SB_FN void sb_k_split_consider_c(const sb_k_split_rules *r, const sb_k_mono *m, sb_i64 G, sb_i64 H, sb_i64 C,
                                 float parent_score, sb_i32 f, sb_i32 bin, sb_i32 dl, sb_i64 lg, sb_i64 lh,
                                 sb_i64 lc, sb_k_split *best) {
    sb_i64 rc = C - lc;
    if (lc < r->min_samples_leaf || rc < r->min_samples_leaf || lc == 0 || rc == 0) return;
    float gl = sb_k_dequant(lg, r->g_scale), hl = sb_k_dequant(lh, r->h_scale);
    float gr = sb_k_dequant(G - lg, r->g_scale), hr = sb_k_dequant(H - lh, r->h_scale);
    if (hl < r->min_child_weight || hr < r->min_child_weight) return;
    float sl = sb_k_leaf_score(gl, hl, r->reg_lambda, r->reg_alpha);
    float sr = sb_k_leaf_score(gr, hr, r->reg_lambda, r->reg_alpha);
    if (m->active) {
        const float ol = sb_k_leaf_output(gl, hl, r->reg_lambda, r->reg_alpha);
        const float orr = sb_k_leaf_output(gr, hr, r->reg_lambda, r->reg_alpha);
        const float wl = sb_k_clamp(ol, m->lo, m->hi), wr = sb_k_clamp(orr, m->lo, m->hi);
#ifdef SB_SABOTAGE_MONOTONE
        /* separating arm (make SABOTAGE=monotone): the order check reversed,
         * shown to fail the constrained fixture */
        if ((m->dir > 0 && wl < wr) || (m->dir < 0 && wl > wr)) return;
#else
        if ((m->dir > 0 && wl > wr) || (m->dir < 0 && wl < wr)) return;
#endif
        if (wl != ol) sl = sb_k_leaf_score_at(gl, hl, r->reg_lambda, r->reg_alpha, wl);
        if (wr != orr) sr = sb_k_leaf_score_at(gr, hr, r->reg_lambda, r->reg_alpha, wr);
    }
    float gain = sb_k_split_gain(sl, sr, parent_score);
    if (!(gain > r->min_split_gain)) return;
    sb_k_split x;
    x.valid = 1;
    x.gain = gain;
    x.feature = f;
    x.bin = bin;
    x.default_left = dl;
    x.pad_ = 0;
    x.lg = lg;
    x.lh = lh;
    x.lc = lc;
    if (sb_k_split_better(&x, best)) *best = x;
}

/* The candidates of feature f (nb value bins) at bin t, given the cumulative
 * sums (ag, ah, ac) of bins 1..t, bin t's own count ct and the missing bin's
 * sums (mg, mh, mc): rows with bin <= t go left, missing values right and left
 * when the node has any. When it has none, training cannot say where a missing
 * value belongs, and the one candidate sends missing values with the majority:
 * to the child with more training rows, left on a tie (the fallback of
 * Breiman et al.'s CART as rpart documents it, usesurrogate = 2: "send the
 * observation in the majority direction"). New data's NaN in a feature that
 * training rarely saw missing then follows most of the node's rows, which is
 * what held-out error on shifted data rewards (NYC taxi 2020: 6.6% of the test
 * rows miss four features that 0.16% of training rows miss; docs/gbdt.md).
 * The rule reads exact counts only, so every backend decides it alike. An
 * empty bin gives the partition of the bin before it and is skipped; at the
 * last bin only "every value left, missing right" is a split, and only if
 * some are missing. */
SB_FN void sb_k_split_at_c(const sb_k_split_rules *r, const sb_k_mono *m, sb_i64 G, sb_i64 H, sb_i64 C,
                           float parent_score, sb_i32 f, sb_i32 t, sb_i32 nb, sb_i64 ct, sb_i64 ag, sb_i64 ah,
                           sb_i64 ac, sb_i64 mg, sb_i64 mh, sb_i64 mc, sb_k_split *best) {
    if (t == nb) {
        if (mc > 0) sb_k_split_consider_c(r, m, G, H, C, parent_score, f, t, 0, ag, ah, ac, best);
        return;
    }
    if (ct == 0 && t > 1) return;
    if (mc == 0) {
#ifdef SB_SABOTAGE_NAN_SIDE
        /* Separating arm (make SABOTAGE=nan-side): missing values always left,
         * the rule before the majority's; shown to fail the missing-value fixtures. */
        sb_k_split_consider_c(r, m, G, H, C, parent_score, f, t, 1, ag, ah, ac, best);
#else
        sb_k_split_consider_c(r, m, G, H, C, parent_score, f, t, ac >= C - ac, ag, ah, ac, best);
#endif
        return;
    }
    sb_k_split_consider_c(r, m, G, H, C, parent_score, f, t, 0, ag, ah, ac, best);
    sb_k_split_consider_c(r, m, G, H, C, parent_score, f, t, 1, ag + mg, ah + mh, ac + mc, best);
}

/* sb_k_split_at_c without constraints (the device kernels' search). */
SB_FN void sb_k_split_at(const sb_k_split_rules *r, sb_i64 G, sb_i64 H, sb_i64 C, float parent_score, sb_i32 f,
                         sb_i32 t, sb_i32 nb, sb_i64 ct, sb_i64 ag, sb_i64 ah, sb_i64 ac, sb_i64 mg, sb_i64 mh,
                         sb_i64 mc, sb_k_split *best) {
    const sb_k_mono none = {0, 0, 0.0f, 0.0f};
    sb_k_split_at_c(r, &none, G, H, C, parent_score, f, t, nb, ct, ag, ah, ac, mg, mh, mc, best);
}

/* Every split of feature f (nb bins plus bin 0 for missing values, histogram
 * h[0..nb]) of a node with sums (G, H, C), scanned left to right; the best
 * goes into *best under the total order. Bins are cumulated in bin order from
 * exact integers, so the sums at each bin are the same however a backend
 * cuts the scan (the CUDA kernel gives each lane a run of bins). */
SB_FN void sb_k_split_scan_c(const SB_GLOBAL sb_k_hbin *h, sb_i32 nb, sb_i32 f, sb_i64 G, sb_i64 H, sb_i64 C,
                             float parent_score, const sb_k_split_rules *r, const sb_k_mono *m, sb_k_split *best) {
    const sb_i64 mg = h[0].g, mh = h[0].h, mc = h[0].c;
    sb_i64 ag = 0, ah = 0, ac = 0;
    for (sb_i32 t = 1; t <= nb; t++) {
        ag += h[t].g;
        ah += h[t].h;
        ac += h[t].c;
        sb_k_split_at_c(r, m, G, H, C, parent_score, f, t, nb, h[t].c, ag, ah, ac, mg, mh, mc, best);
    }
}

/* sb_k_split_scan_c without constraints. */
SB_FN void sb_k_split_scan(const SB_GLOBAL sb_k_hbin *h, sb_i32 nb, sb_i32 f, sb_i64 G, sb_i64 H, sb_i64 C,
                           float parent_score, const sb_k_split_rules *r, sb_k_split *best) {
    const sb_k_mono none = {0, 0, 0.0f, 0.0f};
    sb_k_split_scan_c(h, nb, f, G, H, C, parent_score, r, &none, best);
}

/* ---- categorical features (issue 20) ----
 * A categorical feature's value bins 1..nb are its kept categories in
 * ascending code order; bin 0 holds missing values, negative values and the
 * categories binning did not keep (docs/gbdt.md, "Categorical features"). A
 * split sends a set of value bins left and everything else (bin 0 always)
 * right. The search follows LightGBM's documented method (after Fisher, "On
 * grouping for maximum homogeneity", 1958): with at most max_cat_to_onehot
 * categories present in the node, each category alone against the rest;
 * otherwise the categories with at least cat_smooth rows are sorted by
 * g / (h + cat_smooth) (the dequantized exact sums, ties by bin), and the
 * first t of them in either direction (t up to max_cat_threshold and half of
 * them) go left, the children scored with reg_lambda + cat_l2 against the
 * parent's score at reg_lambda (LightGBM's gains): a cut is tried only once the
 * categories taken since the last cut tried hold min_data_per_group rows (a
 * "group"), and the right side keeps at least min_data_per_group rows. */
typedef struct sb_k_cat_rules {
    sb_i32 max_cat_to_onehot, max_cat_threshold;
    sb_i64 min_data_per_group;
    float cat_smooth, cat_l2;
} sb_k_cat_rules;
SB_STATIC_ASSERT(sizeof(sb_k_cat_rules) == 24, "sb_k_cat_rules layout is shared by host and device");

/* Whether bin b is in the 256-bit set bits. */
SB_FN int sb_k_cat_has(const sb_u32 *bits, sb_u32 b) { return (bits[b >> 5] >> (b & 31u)) & 1u; }

/* The many-vs-many order of a node's categories: order[0..n) := the value
 * bins with at least cat_smooth rows (and at least one), ascending by
 * g / (h + cat_smooth), ties by the smaller bin; returns n. An insertion
 * sort: at most 255 entries, and its result is the one total order. */
SB_FN sb_i32 sb_k_cat_order(const SB_GLOBAL sb_k_hbin *h, sb_i32 nb, const sb_k_split_rules *r,
                            const sb_k_cat_rules *cr, sb_i32 *order, float *key) {
    sb_i32 n = 0;
    for (sb_i32 b = 1; b <= nb; b++) {
        if (h[b].c == 0 || (float)h[b].c < cr->cat_smooth) continue;
        const float d = sb_k_dequant(h[b].h, r->h_scale) + cr->cat_smooth;
        const float k = d > 0.0f ? sb_k_dequant(h[b].g, r->g_scale) / d : 0.0f;
        sb_i32 i = n++;
#ifdef SB_SABOTAGE_CAT_TIES
        /* separating arm (make SABOTAGE=cat-ties): equal keys keep the larger bin first */
        while (i > 0 && (key[i - 1] > k || key[i - 1] == k)) {
#else
        while (i > 0 && key[i - 1] > k) {
#endif
            key[i] = key[i - 1];
            order[i] = order[i - 1];
            i--;
        }
        key[i] = k;
        order[i] = b;
    }
    return n;
}

/* The best categorical split of feature f (nb value bins, histogram h[0..nb])
 * of a node with sums (G, H, C) and output bounds m (monotone constraints on
 * other features; m->dir is taken as 0: a category set has no order),
 * replacing *best under the total order when better; its candidates are numbered in bin (one-vs-rest: the category's
 * bin; many-vs-many: 256 + t first-t ascending, 512 + t descending), so ties
 * within the feature go to the smaller number. When it replaces *best, bits
 * (8 words) := the bins the split sends left. */
SB_FN void sb_k_cat_scan(const SB_GLOBAL sb_k_hbin *h, sb_i32 nb, sb_i32 f, sb_i64 G, sb_i64 H, sb_i64 C,
                         float parent_score, const sb_k_split_rules *r, const sb_k_cat_rules *cr,
                         const sb_k_mono *m, sb_k_split *best, sb_u32 *bits) {
    const sb_k_mono bounds = {m->active, 0, m->lo, m->hi}; /* the node's bounds; no order on a set */
    sb_k_split mine;
    mine.valid = 0;
    sb_i32 used = 0;
    for (sb_i32 b = 1; b <= nb; b++) used += h[b].c > 0;
    sb_i32 order[256];
    float key[256];
    sb_i32 n = 0;
    if (used <= cr->max_cat_to_onehot) {
        for (sb_i32 b = 1; b <= nb; b++)
            if (h[b].c > 0)
                sb_k_split_consider_c(r, &bounds, G, H, C, parent_score, f, b, 0, h[b].g, h[b].h, h[b].c, &mine);
    } else {
        n = sb_k_cat_order(h, nb, r, cr, order, key);
        sb_k_split_rules rc = *r;
        rc.reg_lambda = r->reg_lambda + cr->cat_l2; /* the children's L2; the parent's score keeps reg_lambda */
        const sb_i32 tmax = cr->max_cat_threshold < (n + 1) / 2 ? cr->max_cat_threshold : (n + 1) / 2;
        for (sb_i32 dir = 0; dir < 2; dir++) {
            sb_i64 ag = 0, ah = 0, ac = 0, group = 0;
            for (sb_i32 t = 1; t <= tmax; t++) {
                const sb_i32 b = order[dir == 0 ? t - 1 : n - t];
                ag += h[b].g;
                ah += h[b].h;
                ac += h[b].c;
                group += h[b].c;
                if (ac < r->min_samples_leaf || sb_k_dequant(ah, r->h_scale) < r->min_child_weight) continue;
                if (C - ac < r->min_samples_leaf || C - ac < cr->min_data_per_group ||
                    sb_k_dequant(H - ah, r->h_scale) < r->min_child_weight)
                    break; /* the right side only shrinks from here */
                if (group < cr->min_data_per_group) continue; /* a cut only after a group of that many rows */
                group = 0;
                sb_k_split_consider_c(&rc, &bounds, G, H, C, parent_score, f, 256 * (dir + 1) + t, 0, ag, ah, ac,
                                      &mine);
            }
        }
    }
    if (!sb_k_split_better(&mine, best)) return;
    *best = mine;
    for (sb_i32 w = 0; w < 8; w++) bits[w] = 0u;
    if (mine.bin < 256) {
        bits[mine.bin >> 5] |= 1u << (mine.bin & 31);
    } else {
        const sb_i32 dir = mine.bin / 256 - 1, t = mine.bin % 256;
        for (sb_i32 i = 0; i < t; i++) {
            const sb_i32 b = order[dir == 0 ? i : n - 1 - i];
            bits[b >> 5] |= 1u << (b & 31);
        }
    }
}

/* Whether a row with this bin goes left at a split (bin 0: missing). */
SB_FN int sb_k_goes_left(sb_u32 bin, sb_i32 split_bin, sb_i32 default_left) {
    return bin == 0 ? default_left != 0 : (sb_i32)bin <= split_bin;
}

/* Whether a row with this bin goes left at node n of tree t (sb_k_bnode). */
SB_FN int sb_k_bnode_left(const SB_GLOBAL sb_k_bnode *t, const SB_GLOBAL sb_k_bnode *n, sb_u32 bin) {
    const sb_i32 d = n->default_left;
    if (d >= 0) return sb_k_goes_left(bin, n->split_bin, d);
    return (int)(((sb_u32)t[(bin >> 5) - d].split_bin >> (bin & 31u)) & 1u);
}

/* The leaf a row reaches: its bin of feature f is bins[f * fstride]. */
SB_FN sb_i32 sb_k_walk_bins(const SB_GLOBAL sb_k_bnode *t, const SB_GLOBAL sb_u8 *bins, sb_i64 fstride) {
    sb_i32 k = 0;
    while (t[k].feature >= 0) {
        const SB_GLOBAL sb_k_bnode *n = &t[k];
        k = sb_k_bnode_left(t, n, bins[(sb_i64)n->feature * fstride]) ? n->left : n->right;
    }
    return k;
}

/* Objectives as kernels see them (the values of enum sb_objective). */
#define SB_K_OBJ_REGRESSION 0
#define SB_K_OBJ_BINARY 1
#define SB_K_OBJ_MULTICLASS 2
#define SB_K_OBJ_LAMBDARANK 3     /* ranking: gradients from the host (gbdt/rank.c); a margin is a score */
#define SB_K_OBJ_RANK_PAIRWISE 4
#define SB_K_OBJ_HUBER 5          /* the parameter: delta (LightGBM's alpha) */
#define SB_K_OBJ_QUANTILE 6       /* the parameter: the quantile level alpha */
#define SB_K_OBJ_POISSON 7        /* log link; the parameter: poisson_max_delta_step */
#define SB_K_OBJ_GAMMA 8          /* log link */
#define SB_K_OBJ_TWEEDIE 9        /* log link; the parameter: tweedie_variance_power */
#define SB_K_OBJ_FOREST_CLASSES 10
#define SB_K_OBJ_ISOLATION 11
/* Kernel-only (never in a model file): a forest classifier of profile
 * sb-identical-v5 or later, whose probabilities are its margins normalized
 * (sb_k_forest_proba). The host picks it from the model's profile
 * (sb_model_kernel_objective); older forest classifiers keep 10. */
#define SB_K_OBJ_FOREST_PROBA 12

/* Whether an objective's prediction is exp of the margin (the log links). */
SB_FN int sb_k_obj_log_link(sb_i32 objective) {
    return objective == SB_K_OBJ_POISSON || objective == SB_K_OBJ_GAMMA || objective == SB_K_OBJ_TWEEDIE;
}

/* Gradients and hessians of one row for every class: its K margins m, label y
 * and weight w; class c's values go to g[c * stride], h[c * stride]. prob is
 * K floats of scratch (multiclass). param is the objective's one float
 * parameter (huber, quantile: alpha; poisson: max_delta_step; tweedie: the
 * variance power), ignored by the others. */
SB_FN void sb_k_row_gradients(sb_i32 objective, sb_i32 K, const SB_GLOBAL float *m, float y, float w,
                              SB_GLOBAL float *g, SB_GLOBAL float *h, sb_i64 stride, float *prob, float param) {
    if (objective == SB_K_OBJ_REGRESSION) {
        float gg, hh;
        sb_k_grad_squared(m[0], y, w, &gg, &hh);
        g[0] = gg;
        h[0] = hh;
    } else if (objective >= SB_K_OBJ_HUBER && objective <= SB_K_OBJ_TWEEDIE) {
        float gg, hh;
        if (objective == SB_K_OBJ_HUBER) sb_k_grad_huber(m[0], y, w, param, &gg, &hh);
        else if (objective == SB_K_OBJ_QUANTILE) sb_k_grad_quantile(m[0], y, w, param, &gg, &hh);
        else if (objective == SB_K_OBJ_POISSON) sb_k_grad_poisson(m[0], y, w, param, &gg, &hh);
        else if (objective == SB_K_OBJ_GAMMA) sb_k_grad_gamma(m[0], y, w, &gg, &hh);
        else sb_k_grad_tweedie(m[0], y, w, param, &gg, &hh);
        g[0] = gg;
        h[0] = hh;
    } else if (objective == SB_K_OBJ_BINARY) {
        float gg, hh;
        sb_k_grad_logistic(m[0], y, w, &gg, &hh);
        g[0] = gg;
        h[0] = hh;
    } else {
        sb_k_softmax(m, K, prob);
        for (sb_i32 c = 0; c < K; c++) {
            float gg, hh;
            sb_k_grad_softmax(prob[c], (sb_i32)y == c, K, w, &gg, &hh);
            g[(sb_i64)c * stride] = gg;
            h[(sb_i64)c * stride] = hh;
        }
    }
}

/* ---- prediction on raw features ---- */

/* A node as prediction walks it: go left when x[feature] <= threshold, NaN
 * left when default_left; leaves have feature = -1 and carry their value.
 * A categorical split (default_left = -s, s >= 1) goes left when x[feature]
 * equals one of the codes of its set, held after the tree's nodes: t[s].feature
 * is their count n, t[s + 1 .. s + n].threshold the codes ascending (integral
 * floats >= 0). NaN, negative and unknown values equal none and go right. */
typedef struct sb_k_pnode {
    sb_i32 feature;
    float threshold;
    sb_i32 left, right;
    float value;
    sb_i32 default_left;
} sb_k_pnode;
SB_STATIC_ASSERT(sizeof(sb_k_pnode) == 24, "sb_k_pnode layout is shared by host and device");

/* Whether value v goes left at node k of tree t (see sb_k_pnode). A binary
 * search over the set's codes: comparisons only, the same on every device. */
SB_FN int sb_k_pnode_left(const SB_GLOBAL sb_k_pnode *t, sb_i32 k, float v) {
    const sb_i32 d = t[k].default_left;
    if (d >= 0) return v != v ? d != 0 : v <= t[k].threshold;
    const SB_GLOBAL sb_k_pnode *set = t + 1 - d; /* the codes: set[0 .. n) */
    sb_i32 lo = 0, hi = t[-d].feature;
    while (lo < hi) {
        const sb_i32 mid = (lo + hi) >> 1;
        if (set[mid].threshold < v) lo = mid + 1;
        else hi = mid;
    }
    return lo < t[-d].feature && set[lo].threshold == v;
}

/* The value of the leaf row x reaches in tree t. */
SB_FN float sb_k_tree_value(const SB_GLOBAL sb_k_pnode *t, const SB_GLOBAL float *x) {
    sb_i32 k = 0;
    while (t[k].feature >= 0) {
        const int left = sb_k_pnode_left(t, k, x[t[k].feature]);
        k = left ? t[k].left : t[k].right;
    }
    return t[k].value;
}

/* Raw margins of row x: base[c] plus every tree's leaf, added in tree order,
 * tree i to class i % K (nodes of tree i start at nodes + start[i]). This
 * order is the one training used, so prediction gives training's bits. */
SB_FN void sb_k_margins(const SB_GLOBAL sb_k_pnode *nodes, const SB_GLOBAL sb_i32 *start, sb_i32 ntrees, sb_i32 K,
                        const SB_GLOBAL float *base, const SB_GLOBAL float *x, SB_GLOBAL float *out) {
    for (sb_i32 c = 0; c < K; c++) out[c] = base[c];
    for (sb_i32 i = 0; i < ntrees; i++) {
        const sb_i32 c = i % K;
        out[c] = out[c] + sb_k_tree_value(nodes + start[i], x);
    }
}

/* Prediction kinds (the values of sb_predict_kind). */
#define SB_K_PREDICT_RAW 0
#define SB_K_PREDICT_PROBA 1
#define SB_K_PREDICT_VALUE 2

/* The sum a forest classifier's row is normalized by (sb_k_forest_proba):
 * its K margins added in class order in float32, from +0. */
SB_FN float sb_k_forest_proba_sum(sb_i32 K, const SB_GLOBAL float *m) {
    float s = 0.0f;
    for (sb_i32 c = 0; c < K; c++) s = s + m[c];
    return s;
}

/* Class c's probability from a row's K margins m and their sum s
 * (sb_k_forest_proba_sum): m[c] / s, one correctly rounded float32 division,
 * when s > 0; otherwise (every margin zero, or a hand-made file's negative
 * leaves) 1 / K. For margins >= 0 (every trained forest) s >= m[c], so the
 * probability is at most 1: rounding is monotone. */
SB_FN float sb_k_forest_proba_of(sb_i32 K, const SB_GLOBAL float *m, float s, sb_i32 c) {
#if defined(SB_SABOTAGE_PROBA_RECIP)
    /* the separating arm: the division spelled as a reciprocal and a product
     * (two roundings), as -freciprocal-math or nvcc's -prec-div=false spell it */
    return s > 0.0f ? m[c] * (1.0f / s) : 1.0f / (float)K;
#else
    return s > 0.0f ? m[c] / s : 1.0f / (float)K;
#endif
}

/* A forest classifier's probabilities (profile sb-identical-v5 and later):
 * out[c] = sb_k_forest_proba_of(K, m, s, c) with s = sb_k_forest_proba_sum(K,
 * m), for c = 0..K-1. Each is in [0, 1] and the row sums to 1 within K
 * roundings. out may be m: s is taken before anything is written. */
SB_FN void sb_k_forest_proba(sb_i32 K, const SB_GLOBAL float *m, SB_GLOBAL float *out) {
    const float s = sb_k_forest_proba_sum(K, m);
    for (sb_i32 c = 0; c < K; c++) out[c] = sb_k_forest_proba_of(K, m, s, c);
}

/* What a row's K margins m become: raw margins (K values), a probability
 * (binary: one; multiclass: K, softmax; a forest classifier: the margins
 * themselves under SB_K_OBJ_FOREST_CLASSES, normalized by sb_k_forest_proba
 * under SB_K_OBJ_FOREST_PROBA), or a value (regression: the margin; binary: 1
 * when the margin is > 0; multiclass and SB_K_OBJ_FOREST_CLASSES: the class of
 * the largest margin, SB_K_OBJ_FOREST_PROBA: of the largest probability, ties
 * to the lowest, so that it is the argmax of the row's probabilities; poisson,
 * gamma, tweedie: exp(margin), the mean under their log link). Writes the
 * row's values at out. */
SB_FN void sb_k_finish_row(sb_i32 objective, sb_i32 kind, sb_i32 K, const SB_GLOBAL float *m, SB_GLOBAL float *out) {
    if (kind == SB_K_PREDICT_RAW) {
        for (sb_i32 c = 0; c < K; c++) out[c] = m[c];
    } else if (objective == SB_K_OBJ_REGRESSION || objective == SB_K_OBJ_LAMBDARANK ||
               objective == SB_K_OBJ_RANK_PAIRWISE || objective == SB_K_OBJ_HUBER || objective == SB_K_OBJ_QUANTILE) {
        out[0] = m[0];
    } else if (sb_k_obj_log_link(objective)) {
        out[0] = sb_expf(m[0]); /* the mean, exp(margin) */
    } else if (objective == SB_K_OBJ_ISOLATION) {
        out[0] = sb_expf(-m[0] * 0.693147182f); /* the anomaly score 2^(-E[h] / c(psi)) */
    } else if (objective == SB_K_OBJ_BINARY) {
        out[0] = kind == SB_K_PREDICT_PROBA ? sb_sigmoidf(m[0]) : (m[0] > 0.0f ? 1.0f : 0.0f);
    } else if (kind == SB_K_PREDICT_PROBA && objective == SB_K_OBJ_FOREST_CLASSES) {
        for (sb_i32 c = 0; c < K; c++) out[c] = m[c]; /* profiles v1..v4: the margins are the probabilities */
    } else if (kind == SB_K_PREDICT_PROBA && objective == SB_K_OBJ_FOREST_PROBA) {
        sb_k_forest_proba(K, m, out);
    } else if (objective == SB_K_OBJ_FOREST_PROBA) {
        const float s = sb_k_forest_proba_sum(K, m);
        sb_i32 best = 0;
        float pbest = sb_k_forest_proba_of(K, m, s, 0);
        for (sb_i32 c = 1; c < K; c++) {
            const float p = sb_k_forest_proba_of(K, m, s, c);
            if (p > pbest) best = c, pbest = p;
        }
        out[0] = (float)best;
    } else if (kind == SB_K_PREDICT_PROBA) {
        sb_k_softmax_g(m, K, out);
    } else {
        sb_i32 best = 0;
        for (sb_i32 c = 1; c < K; c++)
            if (m[c] > m[best]) best = c;
        out[0] = (float)best;
    }
}

/* ---- explanations: leaf indices and TreeSHAP (issues 20 and 21) ---- */

/* The index, within tree t, of the leaf row x reaches: the same decisions as
 * sb_k_tree_value (NaN goes with default_left), so pred_leaf and prediction
 * always agree on the leaf. */
SB_FN sb_i32 sb_k_tree_leaf_node(const SB_GLOBAL sb_k_pnode *t, const SB_GLOBAL float *x) {
    sb_i32 k = 0;
    while (t[k].feature >= 0) {
        const int left = sb_k_pnode_left(t, k, x[t[k].feature]);
        k = left ? t[k].left : t[k].right;
    }
    return k;
}

/* Row x's leaf in every tree: out[i] = leafno[start[i] + k] for the node k it
 * reaches in tree i (leafno: the host's leaf numbering of every flattened node,
 * src/models/explain.c). */
SB_FN void sb_k_leaves(const SB_GLOBAL sb_k_pnode *nodes, const SB_GLOBAL sb_i32 *start,
                       const SB_GLOBAL sb_i32 *leafno, sb_i32 ntrees, const SB_GLOBAL float *x,
                       SB_GLOBAL sb_i32 *out) {
    for (sb_i32 i = 0; i < ntrees; i++) out[i] = leafno[start[i] + sb_k_tree_leaf_node(nodes + start[i], x)];
}

/*
 * TreeSHAP, path-dependent: Lundberg, Erion and Lee, "Consistent
 * individualized feature attribution for tree ensembles" (2018, arXiv
 * 1802.03888), Algorithm 2, written here from the paper in the kernel subset
 * and without recursion (OpenCL has none): an explicit stack of one frame per
 * depth. The value of a feature subset S is the tree's expectation when the
 * features of S follow x and the others split the weight among both children
 * in proportion to their covers (cover[k]: the training count of node k as a
 * float). Every float operation is written out in one order, so the host and
 * every device compute the same bits.
 *
 * A path element: the feature split on (-1 for the root's placeholder), the
 * fraction of the weight that flows down the path when the feature is not in
 * S (zero) and when it is (one), and w, the weight of the subsets of each size
 * (element i's w is the weight of subsets of size i of the path's features).
 */
typedef struct sb_k_shap_elem {
    sb_i32 feature;
    float zero, one, w;
} sb_k_shap_elem;
SB_STATIC_ASSERT(sizeof(sb_k_shap_elem) == 16, "sb_k_shap_elem layout is shared by host and device");

/* One depth of the walk: the node, its path's last index after the node's own
 * feature was unwound, the next step (0: the hot child, 1: the cold one, 2:
 * done), both children, and the fractions the node's feature carried earlier
 * on the path (1 and 1 when it is new). */
typedef struct sb_k_shap_frame {
    sb_i32 node, ud, state, hot, cold, pad_;
    float iz, io;
} sb_k_shap_frame;
SB_STATIC_ASSERT(sizeof(sb_k_shap_frame) == 32, "sb_k_shap_frame layout is shared by host and device");

/* Algorithm 2's EXTEND: p[0..ud-1] grows by p[ud] = (pi, pz, po), and the
 * subset weights are those of the longer path. */
SB_FN void sb_k_shap_extend(SB_GLOBAL sb_k_shap_elem *p, sb_i32 ud, float pz, float po, sb_i32 pi) {
    p[ud].feature = pi;
    p[ud].zero = pz;
    p[ud].one = po;
    p[ud].w = ud == 0 ? 1.0f : 0.0f;
    const float d = (float)(ud + 1);
    for (sb_i32 i = ud - 1; i >= 0; i--) {
        p[i + 1].w = p[i + 1].w + ((po * p[i].w) * (float)(i + 1)) / d;
        p[i].w = ((pz * p[i].w) * (float)(ud - i)) / d;
    }
}

/* Algorithm 2's UNWIND: EXTEND undone for element k of p[0..ud]; afterwards
 * p[0..ud-1] is the path without it. */
SB_FN void sb_k_shap_unwind(SB_GLOBAL sb_k_shap_elem *p, sb_i32 ud, sb_i32 k) {
    const float one = p[k].one, zero = p[k].zero, d = (float)(ud + 1);
    float next = p[ud].w;
    for (sb_i32 i = ud - 1; i >= 0; i--) {
        if (one != 0.0f) {
            const float tmp = p[i].w;
            p[i].w = (next * d) / ((float)(i + 1) * one);
            next = tmp - ((p[i].w * zero) * (float)(ud - i)) / d;
        } else {
            p[i].w = (p[i].w * d) / (zero * (float)(ud - i));
        }
    }
    for (sb_i32 i = k; i < ud; i++) {
        p[i].feature = p[i + 1].feature;
        p[i].zero = p[i + 1].zero;
        p[i].one = p[i + 1].one;
    }
}

/* The sum of the weights sb_k_shap_unwind(p, ud, k) would leave, by the same
 * operations, without changing p. */
SB_FN float sb_k_shap_unwound_sum(const SB_GLOBAL sb_k_shap_elem *p, sb_i32 ud, sb_i32 k) {
    const float one = p[k].one, zero = p[k].zero, d = (float)(ud + 1);
    float next = p[ud].w, total = 0.0f;
    for (sb_i32 i = ud - 1; i >= 0; i--) {
        if (one != 0.0f) {
            const float tmp = (next * d) / ((float)(i + 1) * one);
            total = total + tmp;
            next = p[i].w - ((tmp * zero) * (float)(ud - i)) / d;
        } else {
            total = total + (p[i].w * d) / (zero * (float)(ud - i));
        }
    }
    return total;
}

/* Algorithm 2's RECURSE entered at depth l for node with the fractions (pz,
 * po) of feature pi: the parent's path (depth l - 1) is copied to depth l's
 * row of path (cap elements a depth) and extended. At a leaf, each feature of
 * the path gets its share of the leaf's value in phi and 0 is returned; at an
 * internal node, its feature is unwound from the path if it was on it, frame
 * l is set up and 1 is returned. */
SB_FN int sb_k_shap_enter(const SB_GLOBAL sb_k_pnode *t, const SB_GLOBAL float *x,
                          SB_GLOBAL float *phi, SB_GLOBAL sb_k_shap_elem *path, SB_GLOBAL sb_k_shap_frame *fr,
                          sb_i32 cap, sb_i32 l, sb_i32 node, float pz, float po, sb_i32 pi) {
    SB_GLOBAL sb_k_shap_elem *p = path + (sb_i64)l * cap;
    sb_i32 ud = 0;
    if (l > 0) {
        const SB_GLOBAL sb_k_shap_elem *q = path + (sb_i64)(l - 1) * cap;
        ud = fr[l - 1].ud + 1;
        for (sb_i32 i = 0; i < ud; i++) {
            p[i].feature = q[i].feature;
            p[i].zero = q[i].zero;
            p[i].one = q[i].one;
            p[i].w = q[i].w;
        }
    }
    sb_k_shap_extend(p, ud, pz, po, pi);
    const SB_GLOBAL sb_k_pnode *n = &t[node];
    if (n->feature < 0) {
        for (sb_i32 i = 1; i <= ud; i++) {
            const float w = sb_k_shap_unwound_sum(p, ud, i);
            phi[p[i].feature] = phi[p[i].feature] + (w * (p[i].one - p[i].zero)) * n->value;
        }
        return 0;
    }
    const int left = sb_k_pnode_left(t, node, x[n->feature]);
    float iz = 1.0f, io = 1.0f;
    sb_i32 k = 1;
    while (k <= ud && p[k].feature != n->feature) k++;
    if (k <= ud) {
        iz = p[k].zero;
        io = p[k].one;
        sb_k_shap_unwind(p, ud, k);
        ud--;
    }
    fr[l].node = node;
    fr[l].ud = ud;
    fr[l].state = 0;
    fr[l].hot = left ? n->left : n->right;
    fr[l].cold = left ? n->right : n->left;
    fr[l].pad_ = 0;
    fr[l].iz = iz;
    fr[l].io = io;
    return 1;
}

/* phi[f] += the SHAP value of feature f for row x in tree t (covers cover),
 * the hot child (the one x goes to) before the cold one at every node. A cold
 * child whose weight fraction is 0 (a node of count 0) adds nothing and is
 * skipped. Scratch: path holds cap elements for each depth 0..D and fr D + 1
 * frames, D the tree's depth and cap at least min(D, features) + 1. */
SB_FN void sb_k_shap_tree(const SB_GLOBAL sb_k_pnode *t, const SB_GLOBAL float *cover, const SB_GLOBAL float *x,
                          SB_GLOBAL float *phi, SB_GLOBAL sb_k_shap_elem *path, SB_GLOBAL sb_k_shap_frame *fr,
                          sb_i32 cap) {
    sb_i32 l = 0;
    if (!sb_k_shap_enter(t, x, phi, path, fr, cap, 0, 0, 1.0f, 1.0f, -1)) return;
    while (l >= 0) {
        SB_GLOBAL sb_k_shap_frame *f = &fr[l];
        if (f->state == 2) {
            l--;
            continue;
        }
        const sb_i32 child = f->state == 0 ? f->hot : f->cold;
        const float pz = f->iz * (cover[child] / cover[f->node]);
        const float po = f->state == 0 ? f->io : 0.0f;
        f->state = f->state + 1;
        if (pz == 0.0f && po == 0.0f) continue;
        if (sb_k_shap_enter(t, x, phi, path, fr, cap, l + 1, child, pz, po, t[f->node].feature)) l++;
    }
}

/* The expectation of tree t over its training rows: the sum, in node order,
 * of each leaf's value times its cover over the root's. */
SB_FN float sb_k_tree_expectation(const SB_GLOBAL sb_k_pnode *t, const SB_GLOBAL float *cover, sb_i32 nnodes) {
    float e = 0.0f;
    for (sb_i32 k = 0; k < nnodes; k++)
        if (t[k].feature < 0) e = e + t[k].value * (cover[k] / cover[0]);
    return e;
}

/* The feature contributions of row x (F features, K classes) in LightGBM's
 * layout: out[c * (F + 1) + f] for feature f of class c, out[c * (F + 1) + F]
 * = ev[c], the expected value (base score and every tree's expectation).
 * Trees are added in tree order, tree i to class i % K. */
SB_FN void sb_k_contrib_row(const SB_GLOBAL sb_k_pnode *nodes, const SB_GLOBAL float *cover,
                            const SB_GLOBAL sb_i32 *start, sb_i32 ntrees, sb_i32 K, sb_i32 F,
                            const SB_GLOBAL float *ev, const SB_GLOBAL float *x, SB_GLOBAL float *out,
                            SB_GLOBAL sb_k_shap_elem *path, SB_GLOBAL sb_k_shap_frame *fr, sb_i32 cap) {
    const sb_i64 w = (sb_i64)F + 1;
    for (sb_i64 i = 0; i < (sb_i64)K * w; i++) out[i] = 0.0f;
    for (sb_i32 i = 0; i < ntrees; i++)
        sb_k_shap_tree(nodes + start[i], cover + start[i], x, out + (sb_i64)(i % K) * w, path, fr, cap);
    for (sb_i32 c = 0; c < K; c++) out[(sb_i64)c * w + F] = ev[c];
}

#endif
