/*
 * isolation.c: isolation forest (Liu, Ting and Zhou, "Isolation Forest", ICDM
 * 2008), identical by construction.
 *
 * Each tree isolates a subsample of psi rows (drawn without replacement) by
 * random splits: a random feature among those not constant in the node, and a
 * random threshold between the node's smallest and largest value, in bin space
 * (the binned matrix of trees/binning.c: "bin <= b" is "x <= edge"). Growth stops
 * at depth ceil(log2 psi) or a single row. A row's path length is the depth of
 * the leaf it reaches plus c(size of that leaf), c(n) = 2 H(n - 1) - 2 (n - 1) / n
 * the average path length of an unsuccessful search in a binary search tree
 * (H the harmonic number: ln i + Euler's constant, with the profile's log); the
 * anomaly score is 2^(-E[h] / c(psi)).
 *
 * Stored as one model tree per estimator whose leaves hold (depth + c(leaf))
 * / (T c(psi)), so the model's raw margin, the leaves added in tree order, is
 * E[h] / c(psi), the same bits everywhere; objective "isolation" turns it into
 * the score with the profile's exp (kernels/tree.h: sb_k_finish_row).
 * Sample weights (docs/forest.md, "Isolation forest sample weights"): each
 * tree's subsample is drawn without replacement, each draw taking a row not
 * yet drawn with probability proportional to its weight (successive sampling,
 * the distribution of Efraimidis and Spirakis's weighted random sampling,
 * 2006), on fixed-point integer weights through a Fenwick tree: exact
 * integers, no float operation. Equal weights take the unweighted draw below.
 * Every draw is keyed by what it is for: the subsample by (seed, tree, draw),
 * a node's feature and threshold by (seed, node key), the node's key naming its
 * path from the root (src/kernels/forest.h: sb_k_forest_child_key), not the
 * order nodes are made, so a level-wise device grower (forest_dev.c) draws the
 * same; trees are tasks stored by index: the thread count cannot show.
 */
#include "forest_params.h"
#include "../model.h"
#include "../trees/binning.h"
#include "../../core/rng.h"
#include "../../core/dist.h"
#include "../../io/dataset.h"
#include "../../kernels/tree.h"
#include "../../kernels/forest.h"
#include "forest_dev.h"
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SB_PURPOSE_ISUB SB_K_PURPOSE_ISUB

/* c(n): the average path length of an unsuccessful search among n rows
 * (src/kernels/forest.h, shared with the device grower). */
static float c_of(int64_t n) { return sb_k_iforest_c(n); }

/* ---- the weighted subsample ---- */

/* A weight's fixed point, w * 2^(31 - emax) truncated (emax: the exponent of
 * the largest weight, so that one lands in [2^31, 2^32)), from the float's
 * bits by integer shifts: no rounding, on every machine alike. */
static uint32_t wfixed(uint32_t bits, int32_t emax) {
    const int32_t ef = (int32_t)((bits >> 23) & 0xFFu);
    const uint64_t m = ef ? ((bits & 0x7FFFFFu) | 0x800000u) : (bits & 0x7FFFFFu);
    const int32_t s = (ef ? ef : 1) - 150 + 31 - emax; /* w = m * 2^((ef ? ef : 1) - 150) */
    if (s >= 0) return (uint32_t)(m << s);
    return -s >= 32 ? 0u : (uint32_t)(m >> -s);
}

/* floor(log2 w) of a positive finite float, from its bits. */
static int32_t wexp_of(uint32_t bits) {
    const int32_t ef = (int32_t)((bits >> 23) & 0xFFu);
    if (ef) return ef - 127;
    int32_t h = 22;
    while (!((bits >> h) & 1u)) h--;
    return h - 149;
}

sb_status sb_iso_wdraw_init(const float *w, int64_t n, sb_iso_wdraw *out) {
    memset(out, 0, sizeof *out);
    out->n = n;
    out->npos = n;
    if (!w) return SB_OK;
    int64_t npos = 0, imax = -1;
    int equal = 1;
    for (int64_t i = 0; i < n; i++) {
        if (!(w[i] >= 0.0f && w[i] <= FLT_MAX))
            return sb_fail(SB_ERR_INVALID_INPUT, "isolation forest: weight of row %lld is %g: weights must be finite "
                           "and >= 0", (long long)i, (double)w[i]);
        if (w[i] > 0.0f) npos++;
        if (w[i] != w[0]) equal = 0;
        if (imax < 0 || w[i] > w[imax]) imax = i;
    }
    if (npos == 0) return sb_fail(SB_ERR_INVALID_INPUT, "isolation forest: every weight is zero: nothing to draw");
    if (npos < 2)
        return sb_fail(SB_ERR_INVALID_INPUT, "isolation forest: needs 2 rows of positive weight; %lld has one",
                       (long long)n);
    out->npos = npos;
    if (equal) return SB_OK; /* the unweighted draw: its distribution, and its bytes */
    out->q = sb_malloc(sizeof(uint32_t) * (size_t)n);
    out->fen = sb_calloc((size_t)n + 1, sizeof(uint64_t));
    if (!out->q || !out->fen) {
        sb_iso_wdraw_release(out);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "isolation forest: out of memory");
    }
    const int32_t emax = wexp_of(sb_f2u(w[imax]));
    for (int64_t i = 0; i < n; i++) {
        uint32_t q = w[i] > 0.0f ? wfixed(sb_f2u(w[i]), emax) : 0u;
        if (w[i] > 0.0f && q == 0) q = 1; /* a positive weight stays drawable */
        out->q[i] = q;
        out->total += q; /* n < 2^31 values below 2^32 */
    }
    /* the Fenwick tree: fen[i] sums q over (i - lowbit(i), i] */
    for (int64_t i = 1; i <= n; i++) {
        out->fen[i] += out->q[i - 1];
        const int64_t j = i + (i & -i);
        if (j <= n) out->fen[j] += out->fen[i];
    }
    return SB_OK;
}

void sb_iso_wdraw_release(sb_iso_wdraw *wd) {
    sb_free(wd->q);
    sb_free(wd->fen);
    wd->q = NULL;
    wd->fen = NULL;
}

void sb_iso_wdraw_tree(const sb_iso_wdraw *wd, uint64_t seed, int32_t t, int32_t psi, uint64_t *scratch,
                       int32_t *rows) {
    const int64_t n = wd->n;
    int64_t top = 1;
    while (top * 2 <= n) top *= 2;
    uint64_t left = wd->total; /* the weight of the rows not yet drawn */
#ifdef SB_SABOTAGE_IFOREST_WDRAW
    uint64_t e = 0;
#endif
    for (int32_t d = 0; d < psi; d++) {
        /* draw d: the point v of [0, left); its row is the one whose interval
         * of the remaining rows' weights (in row order) holds v */
        uint64_t v = sb_k_iforest_wsample_value(seed, t, (uint64_t)d, left);
#ifdef SB_SABOTAGE_IFOREST_WDRAW
        /* Separating arm: the same distribution by another rule, draws with
         * replacement over every row's weight, repeats rejected */
        int64_t pos;
        for (;;) {
            v = sb_k_iforest_wsample_value(seed, t, e++, wd->total);
            pos = 0;
            for (uint64_t acc = 0; pos < n; pos++) {
                acc += wd->q[pos];
                if (acc > v) break;
            }
            int32_t k = 0;
            while (k < d && rows[k] != pos) k++;
            if (k == d) break;
        }
#else
        int64_t pos = 0;
        for (int64_t step = top; step > 0; step >>= 1)
            if (pos + step <= n && scratch[pos + step] <= v) {
                pos += step;
                v -= scratch[pos];
            }
#endif
        rows[d] = (int32_t)pos;
        const uint64_t q = wd->q[pos];
        for (int64_t i = pos + 1; i <= n; i += i & -i) scratch[i] -= q;
        left -= q;
    }
    /* the drawn rows' weights back: scratch is wd->fen again for the next tree */
    for (int32_t d = 0; d < psi; d++)
        for (int64_t i = (int64_t)rows[d] + 1; i <= n; i += i & -i) scratch[i] += wd->q[rows[d]];
}

/* ---- the trees ---- */

typedef struct ictx {
    const sb_table *tr;
    int32_t T, psi, max_depth;
    uint64_t seed;
    sb_bins bins;
    uint8_t *binned;
    float cpsi;
    sb_tree *trees;
    sb_status *status;
    int32_t first; /* the task index's tree offset: warm start grows trees first.. */
    int32_t key_shift; /* subtracted from a tree's index in its draws: 0, but for the test arm (iso_fit) */
    const sb_iso_wdraw *wd; /* the weighted draw (wd->fen NULL: unweighted) */
    /* distributed=mpi (docs/distributed.md): the communicator (NULL: one
     * process), this rank's first row and every rank's rows together (0 and
     * tr->nrows in one process); wd then weighs every rank's rows */
    const sb_dist *dist;
    int64_t goff, gn;
} ictx;

static void itree_task(void *ctx, int64_t i) {
    ictx *f = ctx;
    const int64_t t = i + f->first;
    const int32_t kt = (int32_t)(t - f->key_shift); /* the index its draws are keyed by */
    const int64_t n = f->tr->nrows, gn = f->gn;
    const int32_t nf = f->tr->ncols;
    int32_t *rows = sb_malloc(sizeof(int32_t) * (size_t)f->psi), *tmp = sb_malloc(sizeof(int32_t) * (size_t)f->psi);
    int32_t *cand = sb_malloc(sizeof(int32_t) * (size_t)nf), *lo = sb_malloc(sizeof(int32_t) * (size_t)nf);
    int32_t *hi = sb_malloc(sizeof(int32_t) * (size_t)nf);
    sb_tree_node *nodes = sb_calloc((size_t)(2 * f->psi), sizeof(sb_tree_node));
    uint8_t *taken = sb_calloc((size_t)gn, 1), *sub = NULL;
    typedef struct item {
        int32_t node, depth, b, e;
        uint64_t key;
    } item;
    item *stack = sb_malloc(sizeof(item) * (size_t)(2 * f->max_depth + 4));
    const int weighted = f->wd && f->wd->fen;
    uint64_t *scratch = weighted ? sb_malloc(sizeof(uint64_t) * (size_t)(gn + 1)) : NULL;
    sb_status st = SB_OK;
    if (!rows || !tmp || !cand || !lo || !hi || !nodes || !taken || !stack || (weighted && !scratch)) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "isolation forest: out of memory");
        goto done;
    }
    if (weighted) {
        /* the weighted subsample (sb_iso_wdraw_tree), kept in row order */
        memcpy(scratch, f->wd->fen, sizeof(uint64_t) * (size_t)(gn + 1));
        sb_iso_wdraw_tree(f->wd, f->seed, kt, f->psi, scratch, tmp);
        for (int32_t i = 0; i < f->psi; i++) taken[tmp[i]] = 1;
        int32_t k = 0;
        for (int64_t r = 0; r < gn; r++)
            if (taken[r]) rows[k++] = (int32_t)r;
    } else {
        /* the subsample: psi distinct rows, drawn in order by (seed, tree, draw) with
         * rejection of repeats; kept in row order */
        int32_t got = 0;
        for (uint64_t d = 0; got < f->psi; d++) {
#ifdef SB_SABOTAGE_RNG_ORDER
            /* separating arm for rule 6: one sequential stream per worker */
            static _Thread_local uint64_t pos = 0;
            uint32_t r = sb_rng_below(f->seed + (uint64_t)sb_worker_index(), SB_PURPOSE_ISUB, pos++, (uint32_t)n);
#else
            uint32_t r = sb_k_iforest_sample_row(f->seed, kt, d, (uint32_t)gn);
#endif
            if (taken[r]) continue;
            taken[r] = 1;
            got++;
        }
        int32_t k = 0;
        for (int64_t r = 0; r < gn; r++)
            if (taken[r]) rows[k++] = (int32_t)r;
    }
    /* rows: the subsample as global row numbers, in row order. One process
     * reads their bins from the binned matrix; under distributed=mpi each rank
     * sends the bins of the drawn rows in its block, every rank receives all
     * psi rows' bins in global row order (psi x features bytes a tree) and
     * grows the tree on that small matrix, rows numbered 0..psi-1 in the same
     * order: the same bins in the same places, so the same tree. */
    const uint8_t *bm = f->binned;
    int64_t stride = n;
    if (f->dist) {
        uint8_t *mine = sb_malloc((size_t)f->psi * (size_t)nf);
        if (!mine) sb_dist_fail(f->dist, SB_ERR_OUT_OF_MEMORY, "isolation forest: out of memory");
        int64_t k = 0;
        for (int32_t i = 0; i < f->psi; i++) {
            const int64_t r = (int64_t)rows[i] - f->goff;
            if (r < 0 || r >= n) continue;
            for (int32_t j = 0; j < nf; j++) mine[k * nf + j] = f->binned[(int64_t)j * n + r];
            k++;
        }
        void *all = NULL;
        int64_t bytes = 0;
        sb_dist_gather(f->dist, mine, k * nf, &all, &bytes);
        sb_free(mine);
        sub = sb_malloc((size_t)f->psi * (size_t)nf);
        if (!sub || bytes != (int64_t)f->psi * nf) sb_dist_fail(f->dist, SB_ERR_INTERNAL, "isolation forest: the "
                                                                "ranks' subsample rows do not add up");
        const uint8_t *a = all;
        for (int32_t i = 0; i < f->psi; i++) {
            for (int32_t j = 0; j < nf; j++) sub[(int64_t)j * f->psi + i] = a[(int64_t)i * nf + j];
            rows[i] = i;
        }
        sb_free(all);
        bm = sub;
        stride = f->psi;
    }
    int32_t nn = 1, sp = 0;
    nodes[0].feature = -1;
    nodes[0].left = nodes[0].right = -1;
    stack[sp++] = (item){0, 0, 0, f->psi, sb_k_forest_root_key(kt)};
    while (sp > 0) {
        item it = stack[--sp];
        sb_tree_node *nd = &nodes[it.node];
        const int32_t size = it.e - it.b;
        nd->count = size;
        int32_t nc = 0;
        if (it.depth < f->max_depth && size > 1) {
            /* features not constant in the node (by bin; missing values count as bin 0) */
            for (int32_t j = 0; j < nf; j++) {
                const uint8_t *col = bm + (int64_t)j * stride;
                int32_t a = 256, z = -1;
                for (int32_t i = it.b; i < it.e; i++) {
                    const int32_t b = col[rows[i]];
                    if (b < a) a = b;
                    if (b > z) z = b;
                }
                if (a < z) {
                    lo[nc] = a;
                    hi[nc] = z;
                    cand[nc++] = j;
                }
            }
        }
        if (nc == 0) {
            nd->feature = -1;
            nd->value = sb_k_iforest_leaf(it.depth, size, f->T, f->cpsi);
            continue;
        }
        int32_t k;
        uint32_t u;
        sb_k_iforest_pick(f->seed, it.key, nc, &k, &u);
        const int32_t feat = cand[k];
        /* threshold bin in [lo, hi - 1]: rows with bin <= it go left; missing
         * values (bin 0) are the smallest, so they go left with the small values */
        const int32_t bin = sb_k_iforest_bin(u, lo[k], hi[k]);
        const uint8_t *col = bm + (int64_t)feat * stride;
        int32_t l = it.b;
        for (int32_t i = it.b; i < it.e; i++)
            if (col[rows[i]] <= bin) tmp[l++] = rows[i];
        const int32_t mid = l;
        for (int32_t i = it.b; i < it.e; i++)
            if (col[rows[i]] > bin) tmp[l++] = rows[i];
        memcpy(rows + it.b, tmp + it.b, sizeof(int32_t) * (size_t)size);
        const int32_t lc = nn++, rc = nn++;
        memset(&nodes[lc], 0, sizeof nodes[lc]);
        memset(&nodes[rc], 0, sizeof nodes[rc]);
        nodes[lc].feature = nodes[rc].feature = -1;
        nodes[lc].left = nodes[lc].right = nodes[rc].left = nodes[rc].right = -1;
        nd->feature = feat;
        nd->left = lc;
        nd->right = rc;
        nd->default_left = 1;
        /* bin 0 (missing) has no edge: a split at bin 0 sends NaN left and every
         * value right (the threshold -inf also sends a -inf left: documented) */
        nd->threshold = bin == 0 ? sb_u2f(0xFF800000u) : f->bins.upper[f->bins.offset[feat] + bin - 1];
        stack[sp++] = (item){rc, it.depth + 1, mid, it.e, sb_k_forest_child_key(it.key, 1)};
        stack[sp++] = (item){lc, it.depth + 1, it.b, mid, sb_k_forest_child_key(it.key, 0)};
    }
    f->trees[t].nodes = sb_realloc(nodes, sizeof(sb_tree_node) * (size_t)nn);
    if (!f->trees[t].nodes) f->trees[t].nodes = nodes;
    f->trees[t].nnodes = nn;
    nodes = NULL;
done:
    f->status[t] = st;
    sb_free(rows);
    sb_free(tmp);
    sb_free(cand);
    sb_free(lo);
    sb_free(hi);
    sb_free(nodes);
    sb_free(taken);
    sb_free(sub);
    sb_free(stack);
    sb_free(scratch);
}

/* Warm start: init's tree t kept as model tree t, its leaves valued for T
 * trees. A leaf holds (depth + c(size)) / (T c(psi)); its depth (walked from
 * the root) and size (the node's count) are in the tree, so the value is the
 * uninterrupted fit's, byte for byte, whatever data this fit is given. */
static sb_status keep_tree(const sb_tree *from, int32_t T, float cpsi, sb_tree *to) {
    const int32_t nn = from->nnodes;
    int32_t *depth = sb_malloc(sizeof(int32_t) * (size_t)(nn > 0 ? nn : 1));
    if (!depth || !(to->nodes = sb_malloc(sizeof(sb_tree_node) * (size_t)(nn > 0 ? nn : 1)))) {
        sb_free(depth);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "isolation forest: out of memory");
    }
    memcpy(to->nodes, from->nodes, sizeof(sb_tree_node) * (size_t)nn);
    to->nnodes = nn;
    /* children come after their parent (isolation.c's and the device's numbering) */
    for (int32_t j = 0; j < nn; j++) depth[j] = -1;
    if (nn > 0) depth[0] = 0;
    for (int32_t j = 0; j < nn; j++) {
        sb_tree_node *d = &to->nodes[j];
        if (depth[j] < 0) break;
        if (d->feature < 0) {
            d->value = sb_k_iforest_leaf(depth[j], d->count, T, cpsi);
            continue;
        }
        if (d->left <= j || d->right <= j || d->left >= nn || d->right >= nn) break;
        depth[d->left] = depth[d->right] = depth[j] + 1;
    }
    for (int32_t j = 0; j < nn; j++)
        if (depth[j] < 0) {
            sb_free(depth);
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "init_model: a tree whose nodes are not numbered from the root "
                           "down; not an isolation forest this library wrote");
        }
    sb_free(depth);
    return SB_OK;
}

static sb_status iso_fit(const sb_params *params, const sb_dataset *train, const sb_model *init, sb_card *card,
                         sb_model **out);

sb_status sb_isolation_forest_fit(const sb_params *params, const sb_dataset *train, sb_card *card, sb_model **out) {
    return iso_fit(params, train, NULL, card, out);
}

sb_status sb_isolation_forest_fit_continue(const sb_params *params, const sb_dataset *train, const sb_model *init,
                                           sb_card *card, sb_model **out) {
    sb_clear_error();
    if (!init) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_isolation_forest_fit_continue: NULL init model");
    return iso_fit(params, train, init, card, out);
}

/* distributed=mpi's refusals (from the parameters alone: every rank refuses
 * alike), the communicator and this rank's block of rows by gradient
 * boosting's row rule (a view); *coll := 1 for a failure every rank meets. */
static sb_status idist_setup(ictx *f, const sb_dataset *train, const char *device, const sb_card *card, int given,
                             sb_table *blk, int *coll) {
    const char *no = NULL;
    if (strcmp(device, "cpu") != 0) no = "a forest device (device=...): the ranks grow trees on their CPUs";
    else if (card) no = "an identity card (--card): record cards in one process";
    if (no)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "distributed=mpi does not support %s (docs/distributed.md, "
                       "\"What is refused\")", no);
    sb_dist *d = NULL;
    sb_status st = sb_dist_open("mpi", &d);
    if (st != SB_OK) return st;
    f->dist = d;
    if (given) {
        int64_t roff = 0;
        if ((st = sb_forest_dist_given(d, &train->t, blk, &roff, coll)) != SB_OK) return st;
        int64_t total = 0;
        sb_dist_prefix(d, train->t.nrows, &f->goff, &total);
        f->gn = total;
        return SB_OK;
    }
    const int64_t n = train->t.nrows, N = d->size, k = d->rank;
    int64_t sum[3] = {n, train->t.ncols, train->t.weight != NULL};
    uint32_t top[4] = {(uint32_t)((uint64_t)n >> 32), (uint32_t)n, (uint32_t)train->t.ncols,
                       (uint32_t)(train->t.weight != NULL)};
    sb_dist_sum_i64(d, sum, 3);
    sb_dist_max_u32(d, top, 4);
    const uint64_t mx = ((uint64_t)top[0] << 32) | top[1];
    *coll = 1;
    if (sum[0] != (int64_t)mx * N || sum[1] != (int64_t)top[2] * N || sum[2] != (int64_t)top[3] * N)
        return sb_fail(SB_ERR_INVALID_INPUT, "distributed=mpi: the %d ranks were given different training data "
                       "(row or column counts, or weights, differ); give every rank the same file", (int)N);
    if (n < N)
        return sb_fail(SB_ERR_LIMIT, "distributed=mpi: %lld training rows for %d ranks; every rank needs rows",
                       (long long)n, (int)N);
    *coll = 0;
    const int64_t b = n * k / N, e = n * (k + 1) / N;
    sb_table_rows_view(&train->t, b, e, blk);
    f->goff = b;
    f->gn = n;
    return SB_OK;
}

/* The bins from the sample one process draws (keyed by global row): every
 * rank's sampled rows gathered in global row order, the same edges. */
static sb_status idist_bins(const ictx *f, int32_t max_bin, uint64_t seed, int64_t bin_rows, sb_bins *out) {
    const int64_t n = f->tr->nrows;
    const int32_t nf = f->tr->ncols;
    float *mine = sb_malloc(sizeof(float) * (size_t)(n > 0 ? n : 1) * (size_t)nf);
    if (!mine) return sb_fail(SB_ERR_OUT_OF_MEMORY, "isolation forest: out of memory");
    int64_t k = 0;
    for (int64_t r = 0; r < n; r++)
        if (sb_bins_in_sample(seed, f->gn, bin_rows, f->goff + r))
            memcpy(mine + k++ * nf, f->tr->x + r * nf, sizeof(float) * (size_t)nf);
    void *all = NULL;
    int64_t bytes = 0;
    sb_dist_gather(f->dist, mine, (int64_t)sizeof(float) * k * nf, &all, &bytes);
    sb_free(mine);
    sb_status st = sb_bins_build(all, bytes / ((int64_t)sizeof(float) * nf), nf, max_bin, seed, 0, out);
    sb_free(all);
    return st;
}

static sb_status iso_fit_run(const sb_params *params, const sb_dataset *train, const sb_model *init, sb_card *card,
                             sb_model **out, const sb_dist **dist_out, int *coll);

/* sb_isolation_forest_fit, keeping init's trees when init is given (warm
 * start: trees 0..T0-1 are init's, their leaves valued for n_estimators;
 * trees T0.. grow with their own draws, keyed by their index). Under
 * distributed=mpi a failure only this rank has ends the job by name. */
static sb_status iso_fit(const sb_params *params, const sb_dataset *train, const sb_model *init, sb_card *card,
                         sb_model **out) {
    const sb_dist *dist = NULL;
    int coll = 0;
    sb_status st = iso_fit_run(params, train, init, card, out, &dist, &coll);
    if (st != SB_OK && dist && !coll) sb_dist_fail(dist, st, sb_last_error());
    return st;
}

/* iso_fit's body; distributed=mpi (docs/distributed.md, "Isolation
 * forests"): each rank holds a block of rows, every rank holds every rank's
 * weights (gathered once) and so makes every tree's subsample draw itself,
 * keyed by global row; the drawn rows' bins are gathered per tree. */
static sb_status iso_fit_run(const sb_params *params, const sb_dataset *train, const sb_model *init, sb_card *card,
                             sb_model **out, const sb_dist **dist_out, int *coll) {
    sb_clear_error();
    if (!train || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_isolation_forest_fit: NULL argument");
    *out = NULL;
    if (sb_threads_ready() != SB_OK) return SB_ERR_INVALID_ARGUMENT;
    int64_t T = 100, psi = 256, max_bin = 255, bin_rows = 200000;
    uint64_t seed = 0;
    const char *key, *v;
    sb_numeric_mode mode;
    const char *device = "cpu";
    int dist_on = 0, dist_given = 0;
    static const char *const aliases[] = {"seed|random_state", "model|family", NULL};
    sb_status st = sb_params_refuse_aliases(params, aliases, "isolation forests");
    if (st != SB_OK) return st;
    st = sb_params_resolve_mode(params, SB_FAMILY_ISOLATION_FOREST, &mode);
    if (st != SB_OK) return st;
    for (int64_t k = 0; params && sb_params_entry(params, k, &key, &v) == SB_OK; k++) {
        int64_t x = 0;
        if (!strcmp(key, "n_estimators")) st = sb_param_int(key, v, 1, 100000, &T);
        else if (!strcmp(key, "max_samples")) st = sb_param_int(key, v, 2, 1 << 24, &psi);
        else if (!strcmp(key, "seed") || !strcmp(key, "random_state")) {
            if ((st = sb_param_int(key, v, 0, INT64_MAX, &x)) == SB_OK) seed = (uint64_t)x;
        } else if (!strcmp(key, "max_bin")) st = sb_param_int(key, v, 2, 255, &max_bin);
        else if (!strcmp(key, "bin_sample_rows")) st = sb_param_int(key, v, 1000, INT64_C(1) << 40, &bin_rows);
        else if (!strcmp(key, "numeric_mode")) st = SB_OK;
        else if (!strcmp(key, "model") || !strcmp(key, "family")) {
            if (strcmp(v, "isolation_forest") != 0)
                return sb_fail(SB_ERR_INVALID_ARGUMENT, "model '%s' is not an isolation forest", v);
        } else if (!strcmp(key, "device")) {
            /* the forest devices (src/models/forest/fdev.h): the same trees;
             * the device layer's one parser and refusals */
            sb_device_kind k;
            if ((st = sb_device_parse(v, &k)) != SB_OK) return st;
            device = sb_device_kind_name(k);
        } else if (!strcmp(key, "distributed")) {
            /* data-parallel training (docs/distributed.md); a run setting, not in the model */
            if (!strcmp(v, "mpi")) dist_on = 1;
            else if (!strcmp(v, "none") || !strcmp(v, "false") || !strcmp(v, "0")) dist_on = 0;
            else return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter distributed='%s': give mpi (or none)", v);
        } else if (!strcmp(key, "distributed_rows")) {
            if (!strcmp(v, "split")) dist_given = 0;
            else if (!strcmp(v, "given")) dist_given = 1;
            else return sb_fail(SB_ERR_INVALID_ARGUMENT, "parameter distributed_rows='%s': give split or given", v);
        } else {
            return sb_fail(SB_ERR_INVALID_ARGUMENT, "unknown parameter '%s' for isolation forests (docs/forest.md)", key);
        }
        if (st != SB_OK) return st;
    }
    ictx f;
    memset(&f, 0, sizeof f);
    f.tr = &train->t;
    f.gn = f.tr->nrows;
    sb_table blk; /* distributed=mpi: this rank's block of the rows (a view) */
    if (dist_given && !dist_on)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "distributed_rows=given needs distributed=mpi");
    if (dist_on) {
        st = idist_setup(&f, train, device, card, dist_given, &blk, coll);
        *dist_out = f.dist;
        if (st != SB_OK) return st;
        f.tr = &blk;
    }
    const int64_t n = f.tr->nrows, gn = f.gn;
    const int32_t nf = f.tr->ncols;
    if (gn < 2 || nf < 1) return sb_fail(SB_ERR_INVALID_INPUT, "isolation forest: needs 2 rows and a feature");
    if (gn > INT32_MAX) return sb_fail(SB_ERR_LIMIT, "isolation forest: at most %d rows", (int)INT32_MAX);
    /* the weights, checked before any work; rows of weight zero are never
     * drawn, so a tree draws at most the rows of positive weight.
     * distributed=mpi: every rank's weights, gathered once in row order (4
     * bytes a row), so every rank makes each tree's weighted draw itself */
    const float *w = f.tr->weight;
    void *allw = NULL;
    if (f.dist && w) {
        int64_t bytes = 0;
        sb_dist_gather(f.dist, w, (int64_t)sizeof(float) * n, &allw, &bytes);
        w = allw;
    }
    sb_iso_wdraw wd;
    st = sb_iso_wdraw_init(w, gn, &wd);
    sb_free(allw);
    if (st != SB_OK) {
        *coll = 1; /* every rank checked every weight */
        return st;
    }
    f.wd = &wd;
    f.T = (int32_t)T;
    f.psi = (int32_t)(psi < wd.npos ? psi : wd.npos);
    f.max_depth = 0;
    while ((1 << f.max_depth) < f.psi) f.max_depth++; /* ceil(log2 psi) */
    f.seed = seed;
    f.cpsi = c_of(f.psi);
    char text[256];
    snprintf(text, sizeof text, "bin_sample_rows=%lld\nmax_bin=%lld\nmax_samples=%d\nn_estimators=%lld\nseed=%llu\n",
             (long long)bin_rows, (long long)max_bin, (int)f.psi, (long long)T, (unsigned long long)seed);
    int32_t first = 0;
    if (init) {
        /* init: an isolation forest of this profile and feature count, fitted
         * with these parameters but n_estimators, with at most T trees */
        sb_status st = sb_forest_warm_kind(init, SB_FAMILY_ISOLATION_FOREST, nf);
        /* the text records max_samples as drawn (at most the rows of positive
         * weight), so rows of another count give another text: said so */
        const char *ms = st == SB_OK && init->params ? strstr(init->params, "\nmax_samples=") : NULL;
        const long drawn = ms ? strtol(ms + 13, NULL, 10) : f.psi;
        if (drawn != f.psi && (drawn < psi || f.psi < psi))
            st = sb_fail(SB_ERR_INVALID_ARGUMENT, "init_model drew %ld rows a tree and this fit would draw %d "
                         "(max_samples=%lld, at most the training rows of positive weight): a warm start continues "
                         "on the rows it began on", drawn, (int)f.psi, (long long)psi);
        if (st == SB_OK) st = sb_forest_warm_params(init, text, T, init->ntrees);
        if (st != SB_OK) {
            sb_iso_wdraw_release(&wd);
            return st;
        }
        first = init->ntrees;
    }
    sb_model *m = NULL;
    f.binned = sb_malloc((size_t)n * (size_t)nf);
    f.trees = sb_calloc((size_t)T, sizeof(sb_tree));
    f.status = sb_malloc(sizeof(sb_status) * (size_t)T);
    if (!f.binned || !f.trees || !f.status) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "isolation forest: out of memory");
        goto done;
    }
    if ((st = f.dist ? idist_bins(&f, (int32_t)max_bin, seed, bin_rows, &f.bins)
                     : sb_bins_build(f.tr->x, n, nf, (int32_t)max_bin, seed, bin_rows, &f.bins)) != SB_OK)
        goto done;
    sb_bins_apply(&f.bins, f.tr->x, n, nf, f.binned);
    if (card && (st = sb_card_record(card, "iforest.binned", SB_DTYPE_U8, f.binned, (uint64_t)n * nf)) != SB_OK)
        goto done;
    /* weighted fits only (an unweighted card is unchanged): the fixed-point weights */
    if (card && wd.fen && (st = sb_card_record(card, "iforest.weight_fixed", SB_DTYPE_U32, wd.q, (uint64_t)n)) != SB_OK)
        goto done;
    for (int32_t t = 0; t < first; t++)
        if ((st = keep_tree(&init->trees[t], f.T, f.cpsi, &f.trees[t])) != SB_OK) goto done;
    if (first == f.T) {
        /* nothing to grow */
    } else if (strcmp(device, "cpu") != 0) {
        /* level by level on a forest device (forest_dev.c): the same draws by
         * the same keys, so the same trees */
        sb_fdev_setup s;
        memset(&s, 0, sizeof s);
        s.binned = f.binned;
        s.n = n;
        s.nf = nf;
        s.nbins = f.bins.nbins;
        s.seed = seed;
        s.psi = f.psi;
        if ((st = sb_iforest_grow_dev(device, &s, &f.bins, first, f.T, f.max_depth, f.cpsi, &wd, f.trees)) !=
            SB_OK)
            goto done;
    } else {
        f.first = first;
        /* the separating arm of the warm start's identity test (forest.c's):
         * the grown trees' draws keyed from 0 instead of their index */
        const char *arm = getenv("SAMEBITS_TEST_FOREST_WARM_FROM_ZERO");
        if (init && arm && arm[0] == '1') f.key_shift = first;
        if (f.dist) { /* every rank grows the trees in tree order: their gathers come in the same order */
            for (int64_t i = 0; i < T - first; i++) itree_task(&f, i);
        } else {
            sb_parallel_for(T - first, itree_task, &f);
        }
        for (int64_t t = first; t < T; t++)
            if (f.status[t] != SB_OK) {
                st = sb_fail(f.status[t], "isolation forest: tree %d failed", (int)t);
                goto done;
            }
    }
    if ((st = sb_model_alloc(&m)) != SB_OK) goto done;
    m->family = SB_FAMILY_ISOLATION_FOREST;
    m->objective = SB_OBJ_ISOLATION;
    m->num_class = 1;
    m->num_features = nf;
    m->numeric_mode = (int32_t)mode;
    m->base_score = sb_calloc(1, sizeof(float));
    m->feature_names = sb_calloc((size_t)nf, sizeof(char *));
    m->params = sb_strdup(text);
    if (!m->base_score || !m->feature_names || !m->params) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "isolation forest: out of memory");
        goto done;
    }
    for (int32_t k = 0; k < nf; k++)
        if (!(m->feature_names[k] = sb_strdup(f.tr->names[k]))) {
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "isolation forest: out of memory");
            goto done;
        }
    m->trees = f.trees;
    m->ntrees = (int32_t)T;
    f.trees = NULL;
    if (card &&
        (st = sb_model_record(card, m, train, SB_PREDICT_VALUE, "iforest.train_score", "iforest.model_bytes")) != SB_OK)
        goto done;
    if (f.dist) { /* the last exchange: every rank holds the same bytes */
        char hex[65];
        if ((st = sb_model_digest(m, hex)) != SB_OK) goto done;
        if ((st = sb_dist_agree(f.dist, hex)) != SB_OK) {
            *coll = 1;
            goto done;
        }
    }
    *out = m;
    m = NULL;
done:
    sb_model_free(m);
    sb_iso_wdraw_release(&wd);
    sb_bins_release(&f.bins);
    sb_free(f.binned);
    sb_free(f.status);
    if (f.trees)
        for (int64_t t = 0; t < T; t++) sb_free(f.trees[t].nodes);
    sb_free(f.trees);
    return st;
}
