/*
 * grow.c: one tree from integer histograms, depth-wise or best-first.
 * See grow.h for the contract; the arithmetic is src/kernels/gbdt.h.
 */
#include "grow.h"
#include "../../kernels/tree.h"
#include <math.h>
#include <string.h>
#include <time.h>

/* Seconds on the monotonic clock, for SAMEBITS_GBDT_TIMING's phase sums only. */
static double grow_clock(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Rows per histogram block. Within a block the hessian and the count share one
 * 64-bit word (see hist_block), which is exact for up to 2^14 rows of any int32
 * hessians; 16384 rows of gathered gradients (12 bytes each) also stay in L2. */
#define HIST_BLOCK 16384
#define HC_SHIFT 48   /* the count's place in the packed hessian+count word */
#define HIST_GROUP 8  /* features updated per pass over a block's rows */
/* Below this many row x feature updates a node's histogram is one task: a
 * hand-off to the pool and back (a few microseconds, more on a busy virtual
 * machine) would cost more than the work it shares. A function of the node's
 * shape only; the sum is exact, so either schedule gives the same bits. */
#define HIST_SERIAL_WORK (1 << 16)
/* Rows per block for nodes smaller than two HIST_BLOCKs: small enough that
 * such a node still splits into several row blocks for the workers, large
 * enough that flushing a block's bins stays a small part of its work. */
#define HIST_SMALL_BLOCK 4096

typedef sb_k_hbin hentry;  /* g, h, count: src/kernels/tree.h */
typedef sb_k_split cand;

typedef struct leaf {
    int32_t node;
    int64_t begin, end;
    int32_t depth;
    int64_t G, H, C;
    hentry *hist; /* owned; NULL once the leaf is final or expanded */
    cand best;
    sb_node_cons nc; /* the per-node rules' state (cons.h); set when c->cons_on */
    uint32_t catbits[8]; /* when best is on a categorical feature: the bins it sends left */
    struct leaf *kids; /* owned: its two children, computed ahead of its turn (see expand), or NULL */
} leaf;

typedef struct grow_ctx {
    const sb_grow_params *p;
    const sb_grow_data *d;
    int32_t *hoff;      /* feature f's histogram starts at hoff[f] (bin 0 = missing) */
    int32_t total;      /* histogram entries */
    int32_t width;      /* per-worker scratch count */
    hentry *scratch;    /* width x total */
    int32_t *rows;      /* row indices fit int32: gbdt refuses more than 2^31 - 1 rows */
    int32_t *tmp;       /* partition scratch */
    int32_t *og;        /* the node's quantized gradients in node row order */
    uint64_t *ohc;      /* and its hessians packed with a count of one (see hist_block) */
    sb_grow_scratch *ws; /* buffers kept from tree to tree (histograms among them) */
    int32_t *act;       /* the features the mask allows, ascending */
    int32_t nactive;
    int cons_on;        /* per-node rules (p->cons) in force: the search is sb_cons_best */
    /* the tree being built */
    sb_node_list t;     /* the tree being built */
} grow_ctx;

/* ---- histograms ---- */

/* A histogram buffer (c->total entries, contents undefined) from the kept
 * ones, or a new one; NULL when out of memory. Called on the growing thread
 * only (never inside a pool task). */
static hentry *hist_get(grow_ctx *c) {
    sb_grow_scratch *ws = c->ws;
    if (ws->hist_total == c->total && ws->nhist_free > 0) return ws->hist_free[--ws->nhist_free];
    return sb_malloc(sizeof(hentry) * (size_t)c->total);
}

/* Give a histogram buffer back to be kept for the next node or tree. */
static void hist_put(grow_ctx *c, hentry *h) {
    sb_grow_scratch *ws = c->ws;
    if (!h) return;
    if (ws->hist_total != c->total) { /* kept ones of another size: drop them */
        for (int32_t i = 0; i < ws->nhist_free; i++) sb_free(ws->hist_free[i]);
        ws->nhist_free = 0;
        ws->hist_total = c->total;
    }
    if (ws->nhist_free == ws->hist_free_cap) {
        int32_t cap = ws->hist_free_cap ? 2 * ws->hist_free_cap : 64;
        void **f = sb_realloc(ws->hist_free, sizeof(void *) * (size_t)cap);
        if (!f) {
            sb_free(h);
            return;
        }
        ws->hist_free = f;
        ws->hist_free_cap = cap;
    }
    ws->hist_free[ws->nhist_free++] = h;
}

/* A node's histogram is an exact integer sum, so any split of the work gives
 * the same bits. The work is cut into blocks of HIST_BLOCK node rows; a block
 * first gathers its rows' quantized gradients into node order (og, ohc), then
 * adds them into the bins of HIST_GROUP features at a time: one pass over the
 * block's rows updates several histograms, so the row index and gradients are
 * loaded once per group, and the updates of different features are independent
 * (a run of rows in one bin no longer serializes the loop).
 * Two schedules: row blocks as tasks (each worker adds into its own partial
 * histogram, added up after; with one thread straight into the output), or,
 * with many features, feature groups as tasks, each writing its own slice. */

typedef struct hist_job {
    grow_ctx *c;
    const int32_t *rows;
    int64_t n;
    int64_t blk;  /* rows per block task: HIST_BLOCK or HIST_SMALL_BLOCK */
    hentry *out;
    int32_t *og;  /* the node's slice of c->og and c->ohc (its rows' positions), */
    uint64_t *ohc; /* so nodes with disjoint rows can be built at the same time */
    int direct;   /* one pass covers every feature: read gq, hq by row, no gather */
    int rowwise;  /* read d->binned_rows: every feature of a row in one pass, no gather */
    uint8_t *used; /* row-block schedule: per worker, whether its partial holds sums yet */
    hentry *final; /* row-block schedule: the output (zeroed), where worker 0 adds */
} hist_job;

static void gather_rows(const hist_job *j, int64_t b, int64_t e) {
    if (j->direct) return;
    const int32_t *gq = j->c->d->gq, *hq = j->c->d->hq, *rows = j->rows;
    for (int64_t i = b; i < e; i++) {
        j->og[i] = gq[rows[i]];
        j->ohc[i] = (uint64_t)(int64_t)hq[rows[i]] + ((uint64_t)1 << HC_SHIFT);
    }
}

#ifndef SB_SABOTAGE_FLOAT_HIST
static void gather_task(void *ctx, int64_t task) {
    hist_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n, j->blk, task, &b, &e);
    gather_rows(j, b, e);
}
#endif

/* A bin's running sums within one block: g, and h + count * 2^48 in one word
 * (modulo 2^64). One add per row instead of two, and 16 bytes per entry
 * instead of 24. Exact: a block has at most 2^14 rows, so |sum of h| < 2^45
 * (any int32 hessians) fits the low 48 bits as a signed number, and the count,
 * at most 2^14, fits above them. */
typedef struct pentry {
    int64_t g;
    uint64_t hc;
} pentry;

/* Node rows [b, e) (at most HIST_BLOCK of them, gradients gathered) into out,
 * for the nfs <= HIST_GROUP features fs. The row loop is spelled out for each
 * group size so the per-feature updates are straight-line code. */
static void hist_block(const hist_job *j, int64_t b, int64_t e, const int32_t *fs, int nfs, hentry *out) {
    const grow_ctx *c = j->c;
    const int32_t *rows = j->rows;
    pentry loc[HIST_GROUP][SB_MAX_BIN + 1];
    const uint8_t *col[HIST_GROUP] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    int32_t nb[HIST_GROUP] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int k = 0; k < nfs; k++) {
        col[k] = c->d->binned + (int64_t)fs[k] * c->d->n;
        nb[k] = c->d->bins->nbins[fs[k]] + 1;
        memset(loc[k], 0, sizeof(pentry) * (size_t)nb[k]);
    }
    const int32_t *og = j->og, *gq = c->d->gq, *hq = c->d->hq;
    const uint64_t *ohc = j->ohc;
#define HIST_ADD(k)                                   \
    do {                                              \
        pentry *x_ = &loc[k][col##k[r]];              \
        x_->g += g;                                   \
        x_->hc += hc;                                 \
    } while (0)
#define HIST_LOOP_GATHERED(body)                      \
    for (int64_t i = b; i < e; i++) {                 \
        const int32_t r = rows[i];                    \
        const int64_t g = og[i];                      \
        const uint64_t hc = ohc[i];                   \
        body;                                         \
    }
#define HIST_LOOP_DIRECT(body)                        \
    for (int64_t i = b; i < e; i++) {                 \
        const int32_t r = rows[i];                    \
        const int64_t g = gq[r];                      \
        const uint64_t hc = (uint64_t)(int64_t)hq[r] + ((uint64_t)1 << HC_SHIFT); \
        body;                                         \
    }
#define HIST_LOOP(body)                               \
    do {                                              \
        if (j->direct) HIST_LOOP_DIRECT(body)         \
        else HIST_LOOP_GATHERED(body)                 \
    } while (0)
    const uint8_t *col0 = col[0], *col1 = col[1], *col2 = col[2], *col3 = col[3];
    const uint8_t *col4 = col[4], *col5 = col[5], *col6 = col[6], *col7 = col[7];
    switch (nfs) {
    case 1: HIST_LOOP(HIST_ADD(0)); break;
    case 2: HIST_LOOP(HIST_ADD(0); HIST_ADD(1)); break;
    case 3: HIST_LOOP(HIST_ADD(0); HIST_ADD(1); HIST_ADD(2)); break;
    case 4: HIST_LOOP(HIST_ADD(0); HIST_ADD(1); HIST_ADD(2); HIST_ADD(3)); break;
    case 5: HIST_LOOP(HIST_ADD(0); HIST_ADD(1); HIST_ADD(2); HIST_ADD(3); HIST_ADD(4)); break;
    case 6: HIST_LOOP(HIST_ADD(0); HIST_ADD(1); HIST_ADD(2); HIST_ADD(3); HIST_ADD(4); HIST_ADD(5)); break;
    case 7: HIST_LOOP(HIST_ADD(0); HIST_ADD(1); HIST_ADD(2); HIST_ADD(3); HIST_ADD(4); HIST_ADD(5); HIST_ADD(6)); break;
    default:
        HIST_LOOP(HIST_ADD(0); HIST_ADD(1); HIST_ADD(2); HIST_ADD(3); HIST_ADD(4); HIST_ADD(5); HIST_ADD(6);
                  HIST_ADD(7));
        break;
    }
#undef HIST_LOOP
#undef HIST_LOOP_DIRECT
#undef HIST_LOOP_GATHERED
#undef HIST_ADD
    for (int k = 0; k < nfs; k++) {
        hentry *hf = out + c->hoff[fs[k]];
        for (int32_t t = 0; t < nb[k]; t++) {
            uint64_t low = loc[k][t].hc & (((uint64_t)1 << HC_SHIFT) - 1);
            int64_t h = low >= ((uint64_t)1 << (HC_SHIFT - 1)) ? (int64_t)low - ((int64_t)1 << HC_SHIFT) : (int64_t)low;
            hf[t].g += loc[k][t].g;
            hf[t].h += h;
            hf[t].c += (int64_t)((loc[k][t].hc - (uint64_t)h) >> HC_SHIFT);
        }
    }
}

/* Every usable feature of node rows [b, e), HIST_GROUP at a time. */
static void hist_block_all(const hist_job *j, int64_t b, int64_t e, hentry *out) {
    const grow_ctx *c = j->c;
    for (int32_t k = 0; k < c->nactive; k += HIST_GROUP)
        hist_block(j, b, e, c->act + k, c->nactive - k < HIST_GROUP ? c->nactive - k : HIST_GROUP, out);
}

/* Node rows [b, e) into out from the row-major bins: each row's bins (one or
 * two cache lines) and its gradients are read once, and every usable
 * feature's entry is updated from them. Rows ahead are prefetched: a deep
 * node's rows are scattered over the whole matrix. A block of at least
 * HIST_RW_PACK_ROWS rows (at most HIST_BLOCK, so the packed word is exact, see
 * pentry) whose histogram fits HIST_RW_LOCAL entries sums into a local packed
 * copy first: two adds an update instead of three, 16 bytes an entry instead
 * of 24, and the output touched once per block. */
#define HIST_RW_AHEAD 16
#define HIST_RW_LOCAL 8192     /* 128 KiB of packed entries on the stack */
#define HIST_RW_PACK_ROWS 1024 /* below it, flushing the local copy costs more than it saves */
#define RW_ROWS(UPDATE)                                                                                        \
    for (int64_t i = b; i < e; i++) {                                                                          \
        if (i + HIST_RW_AHEAD < e) {                                                                           \
            const int32_t ra = rows[i + HIST_RW_AHEAD];                                                        \
            SB_PREFETCH(rm + (int64_t)ra * nf);                                                                \
            if (ghq) SB_PREFETCH(ghq + ra);                                                                    \
            else { SB_PREFETCH(gq + ra); SB_PREFETCH(hq + ra); }                                               \
        }                                                                                                      \
        const int32_t r = rows[i];                                                                             \
        const int64_t g = ghq ? sb_grow_unpack_g(ghq[r]) : gq[r], h = ghq ? sb_grow_unpack_h(ghq[r]) : hq[r]; \
        const uint64_t hc = (uint64_t)h + ((uint64_t)1 << HC_SHIFT);                                           \
        (void)hc;                                                                                              \
        const uint8_t *br = rm + (int64_t)r * nf;                                                              \
        if (na == nf) {                                                                                        \
            int32_t k = 0;                                                                                     \
            for (; k + 4 <= nf; k += 4) {                                                                      \
                UPDATE(k); UPDATE(k + 1); UPDATE(k + 2); UPDATE(k + 3);                                        \
            }                                                                                                  \
            for (; k < nf; k++) UPDATE(k);                                                                     \
        } else {                                                                                               \
            for (int32_t q = 0; q < na; q++) UPDATE(act[q]);                                                   \
        }                                                                                                      \
    }
#if defined(__GNUC__)
#define SB_PREFETCH(p) __builtin_prefetch(p)
#else
#define SB_PREFETCH(p) ((void)0)
#endif
static void hist_block_rw(const hist_job *j, int64_t b, int64_t e, hentry *out) {
    const grow_ctx *c = j->c;
    const int32_t nf = c->d->nf, na = c->nactive;
    const uint8_t *rm = c->d->binned_rows;
    const int32_t *gq = c->d->gq, *hq = c->d->hq, *rows = j->rows, *hoff = c->hoff, *act = c->act;
    const int64_t *ghq = c->d->ghq;
    if (c->total <= HIST_RW_LOCAL && e - b >= HIST_RW_PACK_ROWS && e - b <= HIST_BLOCK) {
        pentry loc[HIST_RW_LOCAL];
        memset(loc, 0, sizeof(pentry) * (size_t)c->total);
#define RW_PACKED(f)                                \
        do {                                        \
            pentry *x_ = loc + hoff[f] + br[f];     \
            x_->g += g;                             \
            x_->hc += hc;                           \
        } while (0)
        RW_ROWS(RW_PACKED)
#undef RW_PACKED
        for (int32_t t = 0; t < c->total; t++) {
            const uint64_t low = loc[t].hc & (((uint64_t)1 << HC_SHIFT) - 1);
            const int64_t hv = low >= ((uint64_t)1 << (HC_SHIFT - 1)) ? (int64_t)low - ((int64_t)1 << HC_SHIFT)
                                                                       : (int64_t)low;
            out[t].g += loc[t].g;
            out[t].h += hv;
            out[t].c += (int64_t)((loc[t].hc - (uint64_t)hv) >> HC_SHIFT);
        }
        return;
    }
#define RW_DIRECT(f)                                \
    do {                                            \
        hentry *x_ = out + hoff[f] + br[f];         \
        x_->g += g;                                 \
        x_->h += h;                                 \
        x_->c += 1;                                 \
    } while (0)
    RW_ROWS(RW_DIRECT)
#undef RW_DIRECT
}
#undef RW_ROWS

/* One row block, gathered here so its gradients are still in cache for the
 * histogram passes; into the output (one task at a time, or the calling
 * thread's blocks) or the worker's partial, zeroed at its first block (a
 * worker that takes no block of this node costs nothing: no clearing, no
 * adding up). */
static void hist_rows_task(void *ctx, int64_t task) {
    hist_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n, j->blk, task, &b, &e);
    if (!j->rowwise) gather_rows(j, b, e);
    hentry *dst = j->out;
    const int32_t w = sb_worker_index();
#ifndef SB_SABOTAGE_FLOAT_HIST
    if (!dst && w == 0) dst = j->used ? j->final : NULL; /* the calling thread adds into the output itself */
#endif
    if (!dst) {
        dst = j->c->scratch + (int64_t)w * j->c->total;
        if (!j->used[w]) {
            memset(dst, 0, sizeof(hentry) * (size_t)j->c->total);
            j->used[w] = 1;
        }
    }
    if (j->rowwise) hist_block_rw(j, b, e, dst);
    else hist_block_all(j, b, e, dst);
}

#ifndef SB_SABOTAGE_FLOAT_HIST
/* Entries per task when the workers' partials are added into the output. */
#define HIST_REDUCE_GRAIN 1024

typedef struct reduce_job {
    const grow_ctx *c;
    hentry *out;
    const uint8_t *used;
} reduce_job;

/* out[k] += every used partial's entry k, for one range of k: integer sums, so
 * the order of the partials (and which worker summed which rows) is free. */
static void hist_reduce_task(void *ctx, int64_t task) {
    const reduce_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->c->total, HIST_REDUCE_GRAIN, task, &b, &e);
    for (int32_t w = 0; w < j->c->width; w++) {
        if (!j->used[w]) continue;
        const hentry *s = j->c->scratch + (int64_t)w * j->c->total;
        for (int64_t k = b; k < e; k++) {
            j->out[k].g += s[k].g;
            j->out[k].h += s[k].h;
            j->out[k].c += s[k].c;
        }
    }
}
#endif

#ifndef SB_SABOTAGE_FLOAT_HIST
/* One group of features over all the node's rows (gradients gathered). */
static void hist_group_task(void *ctx, int64_t grp) {
    hist_job *j = ctx;
    const int32_t k = (int32_t)grp * HIST_GROUP;
    const int nfs = j->c->nactive - k < HIST_GROUP ? j->c->nactive - k : HIST_GROUP;
    for (int64_t b = 0; b < j->n; b += HIST_BLOCK)
        hist_block(j, b, b + HIST_BLOCK < j->n ? b + HIST_BLOCK : j->n, j->c->act + k, nfs, j->out);
}
#endif

/* out = exact histogram of rows[0..n), a range of c->rows. serial: one task,
 * on the calling thread (what a node expanded inside a pool task needs: the
 * per-worker partials are the pool's, not the task's). */
static void build_hist(grow_ctx *c, const int32_t *rows, int64_t n, hentry *out, int serial) {
    memset(out, 0, sizeof(hentry) * (size_t)c->total);
    int32_t *og = c->og + (rows - c->rows);
    uint64_t *ohc = c->ohc + (rows - c->rows);
    /* Gathering a node's gradients into row order pays when several passes
     * read them; with every feature in one pass the pass reads them itself. */
    const int direct = c->nactive <= HIST_GROUP;
    /* a node of at most half the rows has them scattered: the row-major bins */
    const int rowwise = c->d->binned_rows != NULL && 2 * n <= c->d->n;
#ifdef SB_SABOTAGE_FLOAT_HIST
    (void)serial; /* the arm's expansions come one leaf at a time (expand_next) */
#else
    if (serial || c->width == 1 || n * c->nactive < HIST_SERIAL_WORK) { /* one task: straight into the output */
        hist_job j = {c, rows, n, HIST_BLOCK, out, og, ohc, direct, rowwise, NULL, NULL};
        sb_parallel_for_width(sb_chunk_count(n, HIST_BLOCK), 1, hist_rows_task, &j);
        return;
    }
#endif
    /* the block size from the node's shape: small nodes in smaller blocks */
    const int64_t blk = n < 2 * HIST_BLOCK ? HIST_SMALL_BLOCK : HIST_BLOCK;
    const int64_t blocks = sb_chunk_count(n, blk);
#ifndef SB_SABOTAGE_FLOAT_HIST
    const int64_t groups = (c->nactive + HIST_GROUP - 1) / HIST_GROUP;
    if (blocks < 2 || groups >= 2 * c->width) { /* feature groups, each its own slice */
        hist_job j = {c, rows, n, blk, out, og, ohc, direct, rowwise, NULL, NULL};
        sb_parallel_for_width(blocks, c->width, gather_task, &j);
        sb_parallel_for_width(groups, c->width, hist_group_task, &j);
        return;
    }
#endif
    uint8_t used[SB_MAX_THREADS];
    memset(used, 0, (size_t)c->width);
    hist_job j = {c, rows, n, blk, NULL, og, ohc, direct, rowwise, used, out};
    sb_parallel_for_width(blocks, c->width, hist_rows_task, &j);
#ifdef SB_SABOTAGE_FLOAT_HIST
    /* Separating arm for rule 4: per-thread partial sums combined in float, the
     * usual float histogram; which rows each thread summed now shows. */
    for (int32_t k = 0; k < c->total; k++) {
        float g = 0.0f, h = 0.0f;
        for (int32_t w = 0; w < c->width; w++) {
            if (!used[w]) continue;
            const hentry *s = c->scratch + (int64_t)w * c->total;
            g += (float)s[k].g;
            h += (float)s[k].h;
            out[k].c += s[k].c;
        }
        out[k].g = (int64_t)g;
        out[k].h = (int64_t)h;
    }
#else
    reduce_job rj = {c, out, used};
    sb_parallel_for_width(sb_chunk_count(c->total, HIST_REDUCE_GRAIN), c->width, hist_reduce_task, &rj);
#endif
}

/* ---- split search ---- */

/* The best split of a leaf over the usable features, by the kernel's scan and
 * total order (src/kernels/tree.h); under per-node rules, by sb_cons_best.
 * Returns 0 when out of memory (no message: it runs in pool tasks). */
static int find_best(const grow_ctx *c, leaf *L) {
    const sb_grow_params *p = c->p;
    memset(&L->best, 0, sizeof L->best);
    if (!sb_k_node_may_split(L->depth, L->C, p->max_depth, p->min_samples_leaf)) return 1;
    const sb_k_split_rules r = {p->min_samples_leaf, p->min_child_weight, p->min_split_gain, p->reg_lambda,
                                c->d->g_scale, c->d->h_scale, p->reg_alpha};
    if (c->cons_on)
        return sb_cons_best(p->cons, &L->nc, L->hist, c->hoff, c->d->bins->nbins, c->d->nf, c->d->feature_mask,
                            c->d->catf, c->d->cat, L->G, L->H, L->C, &r, &L->best, L->catbits);
    sb_grow_best_plain(c->d->bins, c->hoff, L->hist, c->d->nf, c->d->feature_mask, c->d->catf, c->d->cat, L->G, L->H,
                       L->C, &r, &L->best, L->catbits);
    return 1;
}

void sb_grow_best_plain(const sb_bins *bins, const int32_t *hoff, const sb_k_hbin *hist, int32_t nf,
                        const uint8_t *mask, const uint8_t *catf, const sb_k_cat_rules *cat, int64_t G, int64_t H,
                        int64_t C, const sb_k_split_rules *r, sb_k_split *best, uint32_t *catbits) {
    const float parent_score = sb_k_node_score(G, H, r);
    const sb_k_mono none = {0, 0, 0.0f, 0.0f};
    memset(best, 0, sizeof *best);
    for (int32_t f = 0; f < nf; f++) {
        if (mask && !mask[f]) continue;
        if (catf && catf[f])
            sb_k_cat_scan(hist + hoff[f], bins->nbins[f], f, G, H, C, parent_score, r, cat, &none, best, catbits);
        else
            sb_k_split_scan(hist + hoff[f], bins->nbins[f], f, G, H, C, parent_score, r, best);
    }
}

/* ---- the tree ---- */

sb_status sb_node_list_add(sb_node_list *l, int64_t G, int64_t H, int64_t C, int32_t *id) {
    if (l->n == l->cap) {
        const int32_t cap = l->cap ? l->cap * 2 : 64;
        /* every per-node array, grown together (the bounds and the
         * categorical bins only when kept) */
        struct { void **p; size_t size; int kept; } arr[] = {
            {(void **)&l->nodes, sizeof(sb_tree_node), 1}, {(void **)&l->split_bin, sizeof(int32_t), 1},
            {(void **)&l->node_g, sizeof(int64_t), 1},     {(void **)&l->node_h, sizeof(int64_t), 1},
            {(void **)&l->lo, sizeof(float), l->bounded},  {(void **)&l->hi, sizeof(float), l->bounded},
            {(void **)&l->cat_bits, 8 * sizeof(uint32_t), l->categorical},
            {(void **)&l->cat_reg, 1, l->categorical},
        };
        for (size_t a = 0; a < sizeof arr / sizeof arr[0]; a++) {
            if (!arr[a].kept) continue;
            void *q = sb_realloc(*arr[a].p, arr[a].size * (size_t)cap);
            if (!q) return sb_fail(SB_ERR_OUT_OF_MEMORY, "tree: out of memory");
            *arr[a].p = q;
        }
        l->cap = cap;
    }
    int32_t k = l->n++;
    sb_tree_node *n = &l->nodes[k];
    memset(n, 0, sizeof *n);
    n->feature = -1;
    n->left = n->right = -1;
    n->count = C;
    l->split_bin[k] = -1;
    l->node_g[k] = G;
    l->node_h[k] = H;
    if (l->bounded) {
        l->lo[k] = -INFINITY;
        l->hi[k] = INFINITY;
    }
    if (l->categorical) {
        memset(l->cat_bits + 8 * (size_t)k, 0, 8 * sizeof(uint32_t));
        l->cat_reg[k] = 0;
    }
    *id = k;
    return SB_OK;
}

void sb_node_list_finish(sb_node_list *l, float g_scale, float h_scale, float reg_lambda, float reg_alpha,
                         float learning_rate, sb_grown *out) {
    for (int32_t k = 0; k < l->n; k++) {
        if (l->nodes[k].feature >= 0) continue;
        const float g = sb_k_dequant(l->node_g[k], g_scale), h = sb_k_dequant(l->node_h[k], h_scale);
        const float lambda = l->cat_reg && l->cat_reg[k] ? reg_lambda + l->cat_l2 : reg_lambda;
        l->nodes[k].value = l->bounded ? sb_cons_leaf_value(g, h, lambda, reg_alpha, learning_rate, l->lo[k], l->hi[k])
                                       : sb_k_leaf_value(g, h, lambda, reg_alpha, learning_rate);
    }
    out->tree.nnodes = l->n;
    out->tree.nodes = l->nodes;
    out->split_bin = l->split_bin;
    out->cat_bits = l->cat_bits;
    l->nodes = NULL;
    l->split_bin = NULL;
    l->cat_bits = NULL;
}

sb_status sb_grown_cat_sets(sb_grown *g, const sb_bins *bins) {
    sb_tree *t = &g->tree;
    if (!g->cat_bits) return SB_OK;
    int32_t ns = 0, nc = 0;
    for (int32_t k = 0; k < t->nnodes; k++) {
        if (t->nodes[k].feature < 0 || !t->nodes[k].categorical) continue;
        ns++;
        for (int32_t b = 1; b < 256; b++) nc += (int32_t)((g->cat_bits[8 * k + (b >> 5)] >> (b & 31)) & 1u);
    }
    if (ns == 0) return SB_OK;
    t->cat_start = sb_malloc(sizeof(int32_t) * (size_t)(ns + 1));
    t->cat_codes = sb_malloc(sizeof(float) * (size_t)(nc > 0 ? nc : 1));
    if (!t->cat_start || !t->cat_codes) {
        sb_free(t->cat_start);
        sb_free(t->cat_codes);
        t->cat_start = NULL;
        t->cat_codes = NULL;
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "tree: out of memory");
    }
    int32_t s = 0, at = 0;
    for (int32_t k = 0; k < t->nnodes; k++) {
        sb_tree_node *n = &t->nodes[k];
        if (n->feature < 0 || !n->categorical) continue;
        const float *codes = bins->upper + bins->offset[n->feature];
        t->cat_start[s] = at;
        for (int32_t b = 1; b <= bins->nbins[n->feature]; b++) /* bins ascend by code */
            if ((g->cat_bits[8 * k + (b >> 5)] >> (b & 31)) & 1u) t->cat_codes[at++] = codes[b - 1];
        n->cat_set = s++;
    }
    t->cat_start[s] = at;
    t->ncat = ns;
    return SB_OK;
}

void sb_node_list_release(sb_node_list *l) {
    sb_free(l->nodes);
    sb_free(l->split_bin);
    sb_free(l->node_g);
    sb_free(l->node_h);
    sb_free(l->lo);
    sb_free(l->hi);
    sb_free(l->cat_bits);
    sb_free(l->cat_reg);
    memset(l, 0, sizeof *l);
}

/* Stable partition of rows[L->begin, L->end) by the leaf's best split, in
 * parallel over fixed blocks. Pass one: each block reads its rows once and
 * writes its left rows forward from the start of its own range of tmp and its
 * right rows backward from the end, counting them. Offsets follow from the
 * counts; pass two copies each block's left rows, then its right rows (read
 * backward, so in their original order), to their final places. The result
 * is the serial stable partition, whatever the thread count. */
#define PART_GRAIN 16384
/* Nodes under two PART_GRAINs are cut into blocks of PART_SMALL_GRAIN rows, so
 * the deep levels of a tree, where most nodes are that small, still share the
 * work; nodes under PART_SERIAL rows are one block (the hand-off would cost
 * more than it shares). Both by the node's shape; the partition is the stable
 * one whatever the blocks. */
#define PART_SMALL_GRAIN 4096
#define PART_SERIAL 8192

typedef struct part_job {
    grow_ctx *c;
    const leaf *L;
    int64_t *nleft;   /* per block: its left rows */
    int64_t *lstart;  /* per block: its first left slot, relative to L->begin */
    int64_t *rstart;  /* per block: its first right slot */
    int64_t grain;    /* rows per block */
    uint8_t left[256]; /* per bin: 1 when the split sends it left */
} part_job;

static void part_split(void *ctx, int64_t k) {
    part_job *j = ctx;
    const uint8_t *col = j->c->d->binned + (int64_t)j->L->best.feature * j->c->d->n;
    const uint8_t *left = j->left;
    const int32_t *rows = j->c->rows + j->L->begin;
    int32_t *tmp = j->c->tmp + j->L->begin;
    int64_t b, e;
    sb_chunk_range(j->L->end - j->L->begin, j->grain, k, &b, &e);
    /* Branch-free (the direction of a row is data, not a pattern): the row is
     * written to both open ends of [l, r), and only one end moves. */
    int64_t l = b, r = e;
    for (int64_t i = b; i < e; i++) {
#if defined(__GNUC__)
        if (i + HIST_RW_AHEAD < e) __builtin_prefetch(col + rows[i + HIST_RW_AHEAD]); /* scattered rows */
#endif
        const int32_t row = rows[i];
        const int64_t gl = left[col[row]];
        tmp[l] = row;
        tmp[r - 1] = row;
        l += gl;
        r -= 1 - gl;
    }
    j->nleft[k] = l - b;
}

static void part_place(void *ctx, int64_t k) {
    part_job *j = ctx;
    int32_t *rows = j->c->rows + j->L->begin;
    const int32_t *tmp = j->c->tmp + j->L->begin;
    int64_t b, e;
    sb_chunk_range(j->L->end - j->L->begin, j->grain, k, &b, &e);
    const int64_t nl = j->nleft[k], nr = (e - b) - nl;
    memcpy(rows + j->lstart[k], tmp + b, sizeof(int32_t) * (size_t)nl);
    int32_t *dst = rows + j->rstart[k];
    for (int64_t i = 0; i < nr; i++) dst[i] = tmp[e - 1 - i];
}

/* Returns the end of the left part, or -1 when out of memory. */
static int64_t partition(grow_ctx *c, const leaf *L) {
    const int64_t m = L->end - L->begin;
    const int64_t grain = m < PART_SERIAL ? (m > 0 ? m : 1) : m < 2 * PART_GRAIN ? PART_SMALL_GRAIN : PART_GRAIN;
    const int64_t blocks = sb_chunk_count(m, grain);
    int64_t *buf = sb_malloc(sizeof(int64_t) * 3 * (size_t)(blocks ? blocks : 1));
    if (!buf) return -1;
    part_job j = {c, L, buf, buf + blocks, buf + 2 * blocks, grain, {0}};
    const int cat = c->d->catf && c->d->catf[L->best.feature];
    for (int32_t t = 0; t < 256; t++)
        j.left[t] = (uint8_t)(cat ? sb_k_cat_has(L->catbits, (uint32_t)t)
                                  : sb_k_goes_left((uint32_t)t, L->best.bin, L->best.default_left));
    sb_parallel_for(blocks, part_split, &j);
    int64_t total_left = 0;
    for (int64_t k = 0; k < blocks; k++) total_left += buf[k];
    int64_t l = 0, r = total_left;
    for (int64_t k = 0; k < blocks; k++) {
        int64_t b, e;
        sb_chunk_range(m, grain, k, &b, &e);
        j.lstart[k] = l;
        j.rstart[k] = r;
        l += j.nleft[k];
        r += (e - b) - j.nleft[k];
    }
    sb_parallel_for(blocks, part_place, &j);
    sb_free(buf);
    return L->begin + total_left;
}

static int pick(const grow_ctx *c, leaf *open, int32_t nopen) {
    int best = -1;
    for (int32_t i = 0; i < nopen; i++) {
        if (!open[i].best.valid) continue;
        if (best < 0) {
            best = i;
        } else if (c->p->depthwise) {
            if (open[i].node < open[best].node) best = i;
        } else if (open[i].best.gain > open[best].best.gain ||
                   (open[i].best.gain == open[best].best.gain && open[i].node < open[best].node)) {
            best = i;
        }
    }
    return best;
}

/* Leaf P split by its best split into kid[0] (left) and kid[1] (right): their
 * row ranges (P's rows partitioned in place), sums, histograms (the smaller
 * child built from its rows, the larger the parent's minus it, in the
 * parent's buffer, which P gives up) and best splits. Everything here is a
 * function of P's rows alone, so a leaf may be expanded before its turn: the
 * pick order, not the expansion order, gives node ids (see the grow loop).
 * serial: run on the calling thread only (inside a pool task). Returns 0 when
 * out of memory (no message: a pool task must not set the caller's error).
 * spare: the buffer for the smaller child's histogram. */
static int expand(grow_ctx *c, leaf *P, leaf *kid, hentry *spare, int serial) {
    memset(kid, 0, 2 * sizeof *kid);
    kid[0].G = P->best.lg; kid[0].H = P->best.lh; kid[0].C = P->best.lc;
    kid[1].G = P->G - kid[0].G; kid[1].H = P->H - kid[0].H; kid[1].C = P->C - kid[0].C;
    kid[0].depth = kid[1].depth = P->depth + 1;
    const int timed = c->ws->timing && !serial; /* a batch is timed as a whole */
    double t0 = timed ? grow_clock() : 0.0;
    const int64_t mid = partition(c, P);
    if (timed) {
        const double t1 = grow_clock();
        c->ws->t_part += t1 - t0;
        t0 = t1;
    }
    if (mid < 0) {
        kid[0].hist = spare; /* so that the caller gives it back */
        return 0;
    }
    kid[0].begin = P->begin; kid[0].end = mid;
    kid[1].begin = mid; kid[1].end = P->end;
    leaf *small = kid[0].C <= kid[1].C ? &kid[0] : &kid[1], *large = kid[0].C <= kid[1].C ? &kid[1] : &kid[0];
    small->hist = spare; /* from the growing thread: see hist_get */
    large->hist = P->hist;
    P->hist = NULL;
    /* A child that may not split (the depth limit, too few rows: find_best
     * reads no histogram for it) needs none; the smaller one's is built when
     * either child may split (the larger one's is the parent's minus it).
     * The counts are every rank's (the split's sums), so ranks agree. */
    const int64_t msl = c->p->min_samples_leaf;
    const int may_small = sb_k_node_may_split(small->depth, small->C, c->p->max_depth, msl);
    const int may_large = sb_k_node_may_split(large->depth, large->C, c->p->max_depth, msl);
    if (may_small || may_large) {
        build_hist(c, c->rows + small->begin, small->end - small->begin, small->hist, serial);
        if (c->d->reduce) c->d->reduce(c->d->reduce_ctx, &small->hist[0].g, 3 * (int64_t)c->total);
    }
    if (may_large)
        for (int32_t i = 0; i < c->total; i++) {
            large->hist[i].g -= small->hist[i].g;
            large->hist[i].h -= small->hist[i].h;
            large->hist[i].c -= small->hist[i].c;
        }
    if (timed) {
        const double t1 = grow_clock();
        c->ws->t_hist += t1 - t0;
        t0 = t1;
    }
    if (c->cons_on) {
        const sb_grow_params *p = c->p;
        const sb_k_split_rules r = {p->min_samples_leaf, p->min_child_weight, p->min_split_gain, p->reg_lambda,
                                    c->d->g_scale, c->d->h_scale, p->reg_alpha};
        sb_node_cons nk[2];
        sb_node_cons_children(p->cons, &r, &P->nc, &P->best, P->G, P->H, nk);
        kid[0].nc = nk[0];
        kid[1].nc = nk[1];
    }
    const int ok = find_best(c, &kid[0]) & find_best(c, &kid[1]);
    if (timed) c->ws->t_search += grow_clock() - t0;
    return ok;
}

/* Leaves under this many rows are expanded several at a time, one leaf per
 * task: at that size a leaf's own steps (partition, histogram) are too short
 * to share well among the workers, and leaves have disjoint rows. */
#define EXPAND_BATCH_ROWS (2 * HIST_BLOCK)
#define EXPAND_BATCH_MAX 128  /* depth-wise: a level's leaves at once (a tree of depth 8 splits 128 at most) */
#define EXPAND_BATCH_BEST 16  /* best-first: leaves expanded ahead may never be picked; keep the bet small */

typedef struct expand_job {
    grow_ctx *c;
    leaf *open;
    int32_t idx[EXPAND_BATCH_MAX];
    hentry *spare[EXPAND_BATCH_MAX];
    int ok[EXPAND_BATCH_MAX];
} expand_job;

static void expand_task(void *ctx, int64_t t) {
    expand_job *j = ctx;
    leaf *L = &j->open[j->idx[t]];
    j->ok[t] = expand(j->c, L, L->kids, j->spare[t], 1);
}

/* Whether open leaf a comes before b in the pick order (see pick). */
static int picked_before(const grow_ctx *c, const leaf *a, const leaf *b) {
    if (c->p->depthwise) return a->node < b->node;
    return a->best.gain > b->best.gain || (a->best.gain == b->best.gain && a->node < b->node);
}

/* Expand open[k], the leaf picked next. A small leaf takes with it, as one
 * parallel step, the next small splittable leaves in pick order: the leaves
 * most likely to be picked soon, two per worker (leaves differ in size; the
 * larger ones are started first so that the small ones fill the gaps), and no
 * more than the splits the leaf limit still allows. One that is never picked
 * (the limit ends the tree first) costs time, never bits: its rows stay its
 * range and its children are dropped. The batch is a schedule only, so its
 * size may follow the thread count; with one thread there is no batch. */
static sb_status expand_next(grow_ctx *c, leaf *open, int32_t nopen, int k, int32_t splits_left) {
    expand_job j;
    int32_t nb = 0;
    j.c = c;
    j.open = open;
    j.idx[nb++] = k;
    int32_t want = c->width > 1 ? 2 * c->width : 1;
    if (want > EXPAND_BATCH_BEST) want = EXPAND_BATCH_BEST;
    /* Depth-wise, every splittable open leaf is split in turn, so none
     * expanded ahead is wasted: with at least as many of them as workers, a
     * leaf of at most its fair share of their rows (their rows over the
     * workers) joins a batch of all such leaves, one leaf a task, larger ones
     * first (no per-leaf hand-offs or partial histograms, and the pool evens
     * out their sizes); a leaf above its share is split alone, its own steps
     * shared among the workers, so that no one task holds up a level. */
    int32_t nsplittable = 0;
    int64_t rows_open = 0;
    for (int32_t i = 0; i < nopen && c->p->depthwise; i++)
        if (open[i].best.valid && !open[i].kids) {
            nsplittable++;
            rows_open += open[i].end - open[i].begin;
        }
    const int any_size = c->p->depthwise && c->width > 1 && nsplittable >= c->width;
    const int64_t share = any_size ? rows_open / c->width : 0;
    if (any_size) want = EXPAND_BATCH_MAX;
    if (want > splits_left) want = splits_left;
#ifdef SB_SABOTAGE_FLOAT_HIST
    want = 1; /* the arm's partial sums are per worker; one leaf at a time */
#endif
    if (c->d->reduce) want = 1; /* ranks reduce node by node, in pick order (their row counts differ) */
    const int64_t rows_k = open[k].end - open[k].begin;
    const int small = any_size ? rows_k <= share : rows_k < EXPAND_BATCH_ROWS;
    while (small && nb < want) {
        int32_t best = -1;
        for (int32_t i = 0; i < nopen; i++) {
            const leaf *L = &open[i];
            if (!L->best.valid || L->kids) continue;
            if (any_size ? L->end - L->begin > share : L->end - L->begin >= EXPAND_BATCH_ROWS) continue;
            int taken = 0;
            for (int32_t q = 0; q < nb; q++) taken |= j.idx[q] == i;
            if (!taken && (best < 0 || picked_before(c, L, &open[best]))) best = i;
        }
        if (best < 0) break;
        j.idx[nb++] = best;
    }
    for (int32_t q = 1; q < nb; q++) /* larger leaves first (tasks are taken in order) */
        for (int32_t u = q; u > 0 && open[j.idx[u]].end - open[j.idx[u]].begin >
                                         open[j.idx[u - 1]].end - open[j.idx[u - 1]].begin; u--) {
            int32_t x = j.idx[u];
            j.idx[u] = j.idx[u - 1];
            j.idx[u - 1] = x;
        }
    for (int32_t q = 0; q < nb; q++) {
        open[j.idx[q]].kids = sb_calloc(2, sizeof(leaf));
        j.spare[q] = open[j.idx[q]].kids ? hist_get(c) : NULL;
        if (!j.spare[q]) { /* out of memory: the batch's spares back, its children dropped, nothing kept */
            for (int32_t u = 0; u < q; u++) hist_put(c, j.spare[u]);
            for (int32_t u = 0; u <= q; u++) {
                sb_free(open[j.idx[u]].kids);
                open[j.idx[u]].kids = NULL;
            }
            return sb_fail(SB_ERR_OUT_OF_MEMORY, "tree: out of memory");
        }
    }
    if (nb == 1) {
        j.ok[0] = expand(c, &open[k], open[k].kids, j.spare[0], 0);
    } else {
        const double t0 = c->ws->timing ? grow_clock() : 0.0;
        sb_parallel_for(nb, expand_task, &j);
        if (c->ws->timing) c->ws->t_batch += grow_clock() - t0;
    }
    for (int32_t q = 0; q < nb; q++)
        if (!j.ok[q]) return sb_fail(SB_ERR_OUT_OF_MEMORY, "tree: out of memory");
    return SB_OK;
}

void sb_grow_scratch_release(sb_grow_scratch *ws) {
    if (!ws) return;
    sb_free(ws->tmp);
    sb_free(ws->og);
    sb_free(ws->ohc);
    for (int32_t i = 0; i < ws->nhist_free; i++) sb_free(ws->hist_free[i]);
    sb_free(ws->hist_free);
    sb_free(ws->part);
    memset(ws, 0, sizeof *ws);
}

static int scratch_reserve(sb_grow_scratch *ws, int64_t nrows) {
    if (ws->cap >= nrows && ws->tmp && ws->og && ws->ohc) return 1;
    sb_free(ws->tmp); /* the row buffers only: the kept histograms stay */
    sb_free(ws->og);
    sb_free(ws->ohc);
    const size_t m = (size_t)(nrows ? nrows : 1);
    ws->tmp = sb_malloc(sizeof(int32_t) * m);
    ws->og = sb_malloc(sizeof(int32_t) * m);
    ws->ohc = sb_malloc(sizeof(uint64_t) * m);
    ws->cap = (int64_t)m;
    return ws->tmp && ws->og && ws->ohc;
}

sb_status sb_tree_grow_i32(const sb_grow_params *p, const sb_grow_data *d, int32_t *rows, int64_t nrows,
                           sb_grow_scratch *ws, sb_grown *out) {
    sb_grow_scratch own;
    memset(&own, 0, sizeof own);
    if (!ws) ws = &own;
    memset(out, 0, sizeof *out);
    grow_ctx c;
    memset(&c, 0, sizeof c);
    c.p = p;
    c.d = d;
    c.rows = rows;
    c.total = d->bins->total;
    c.width = sb_parallel_width();
    c.cons_on = sb_grow_cons_on(p->cons);
    c.t.bounded = c.cons_on && p->cons->monotone != NULL;
    c.t.categorical = d->catf != NULL;
    c.t.cat_l2 = d->cat ? d->cat->cat_l2 : 0.0f;
    sb_status st = SB_OK;
    leaf *open = NULL;
    int32_t nopen = 0;
    int32_t max_open = p->max_leaves > 0 ? p->max_leaves : 1 << 16;
    c.hoff = sb_malloc(sizeof(int32_t) * (size_t)d->nf);
    c.ws = ws;
    const size_t part_bytes = sizeof(hentry) * (size_t)c.total * (size_t)c.width;
    if (ws->part_bytes < part_bytes) {
        sb_free(ws->part);
        ws->part = sb_malloc(part_bytes);
        ws->part_bytes = ws->part ? part_bytes : 0;
    }
    c.scratch = ws->part;
    if (scratch_reserve(ws, nrows)) {
        c.tmp = ws->tmp;
        c.og = ws->og;
        c.ohc = ws->ohc;
    }
    c.act = sb_malloc(sizeof(int32_t) * (size_t)(d->nf ? d->nf : 1));
    if (c.act)
        for (int32_t f = 0; f < d->nf; f++)
            if (!d->feature_mask || d->feature_mask[f]) c.act[c.nactive++] = f;
    open = sb_calloc((size_t)max_open, sizeof(leaf));
    out->root_hist = sb_malloc(sizeof(int64_t) * 3 * (size_t)c.total);
    if (!c.hoff || !c.scratch || !c.tmp || !c.og || !c.ohc || !c.act || !open || !out->root_hist) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "tree: out of memory");
        goto done;
    }
    for (int32_t f = 0; f < d->nf; f++) c.hoff[f] = d->bins->offset[f] + f;

    /* The root. */
    leaf root;
    memset(&root, 0, sizeof root);
    root.end = nrows;
    root.hist = hist_get(&c);
    if (!root.hist) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "tree: out of memory");
        goto done;
    }
    const double troot = ws->timing ? grow_clock() : 0.0;
    build_hist(&c, rows, nrows, root.hist, 0);
    if (ws->timing) ws->t_root += grow_clock() - troot;
    if (d->reduce) d->reduce(d->reduce_ctx, &root.hist[0].g, 3 * (int64_t)c.total);
    root.C = nrows;
    if (c.nactive > 0) { /* totals, exactly: every row sits in one bin of each usable feature */
        const hentry *hf = root.hist + c.hoff[c.act[0]];
        int64_t cnt = 0;
        for (int32_t t = 0; t <= d->bins->nbins[c.act[0]]; t++) {
            root.G += hf[t].g;
            root.H += hf[t].h;
            cnt += hf[t].c;
        }
        if (d->reduce) root.C = cnt; /* every rank's rows: the global histogram's count */
    } else {
        for (int64_t i = 0; i < nrows; i++) {
            root.G += d->gq[rows[i]];
            root.H += d->hq[rows[i]];
        }
        if (d->reduce) {
            int64_t t3[3] = {root.G, root.H, root.C};
            d->reduce(d->reduce_ctx, t3, 3);
            root.G = t3[0];
            root.H = t3[1];
            root.C = t3[2];
        }
    }
    memcpy(out->root_hist, root.hist, sizeof(hentry) * (size_t)c.total);
    if ((st = sb_node_list_add(&c.t, root.G, root.H, root.C, &root.node)) != SB_OK) {
        hist_put(&c, root.hist);
        goto done;
    }
    if (c.cons_on) sb_node_cons_root(p->cons, &root.nc);
    if (!find_best(&c, &root)) {
        hist_put(&c, root.hist);
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "tree: out of memory");
        goto done;
    }
    open[nopen++] = root;

    int32_t nleaves = 1;
    while (p->max_leaves <= 0 || nleaves < p->max_leaves) {
        int k = pick(&c, open, nopen);
        if (k < 0) break;
        const int32_t splits_left = p->max_leaves > 0 ? p->max_leaves - nleaves : EXPAND_BATCH_MAX;
        if (!open[k].kids && (st = expand_next(&c, open, nopen, k, splits_left)) != SB_OK) goto done;
        leaf P = open[k];
        leaf *kid = P.kids;
        /* Commit the split: node ids in pick order, so the tree is the one the
         * leaf-by-leaf order gives, whatever was expanded ahead. */
        if ((st = sb_node_list_add(&c.t, kid[0].G, kid[0].H, kid[0].C, &kid[0].node)) != SB_OK) goto done;
        if ((st = sb_node_list_add(&c.t, kid[1].G, kid[1].H, kid[1].C, &kid[1].node)) != SB_OK) goto done;
        if (c.t.bounded)
            for (int s = 0; s < 2; s++) {
                c.t.lo[kid[s].node] = kid[s].nc.lo;
                c.t.hi[kid[s].node] = kid[s].nc.hi;
            }
        sb_tree_node *pn = &c.t.nodes[P.node];
        pn->feature = P.best.feature;
        if (d->catf && d->catf[P.best.feature]) {
            pn->categorical = 1;
            pn->threshold = 0.0f;
            pn->default_left = 0;
            memcpy(c.t.cat_bits + 8 * (size_t)P.node, P.catbits, sizeof P.catbits);
            c.t.cat_reg[kid[0].node] = c.t.cat_reg[kid[1].node] = (uint8_t)(P.best.bin >= 256); /* sorted sets */
        } else {
            pn->threshold = d->bins->upper[d->bins->offset[P.best.feature] + P.best.bin - 1];
            pn->default_left = (uint8_t)P.best.default_left;
        }
        pn->left = kid[0].node;
        pn->right = kid[1].node;
        pn->gain = P.best.gain;
        c.t.split_bin[P.node] = P.best.bin;
        if (nopen == max_open) {
            st = sb_fail(SB_ERR_LIMIT, "tree: more than %d open leaves", max_open);
            goto done;
        }
        open[k] = kid[0]; /* the parent's slot */
        open[nopen++] = kid[1];
        sb_free(kid);
        nleaves++;
    }

    /* Each leaf's rows: a range of the final permutation. */
    out->leaf_begin = sb_malloc(sizeof(int64_t) * (size_t)c.t.n);
    out->leaf_end = sb_malloc(sizeof(int64_t) * (size_t)c.t.n);
    if (!out->leaf_begin || !out->leaf_end) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "tree: out of memory");
        goto done;
    }
    for (int32_t k = 0; k < c.t.n; k++) out->leaf_begin[k] = out->leaf_end[k] = 0;
    for (int32_t i = 0; i < nopen; i++) {
        out->leaf_begin[open[i].node] = open[i].begin;
        out->leaf_end[open[i].node] = open[i].end;
    }
    /* Leaf values from the same integer sums. */
    sb_node_list_finish(&c.t, d->g_scale, d->h_scale, p->reg_lambda, p->reg_alpha, p->learning_rate, out);
    st = sb_grown_cat_sets(out, d->bins);
done:
    if (open)
        for (int32_t i = 0; i < nopen; i++) {
            hist_put(&c, open[i].hist);
            if (open[i].kids) {
                hist_put(&c, open[i].kids[0].hist);
                hist_put(&c, open[i].kids[1].hist);
                sb_free(open[i].kids);
            }
        }
    sb_free(open);
    sb_free(c.hoff);
    sb_grow_scratch_release(&own);
    sb_free(c.act);
    sb_node_list_release(&c.t);
    if (st != SB_OK) sb_grown_release(out);
    return st;
}

/* The same with 64-bit row indices (converted; at most 2^31 - 1 rows). */
sb_status sb_tree_grow(const sb_grow_params *p, const sb_grow_data *d, int64_t *rows, int64_t nrows,
                       sb_grown *out) {
    memset(out, 0, sizeof *out);
    if (nrows > INT32_MAX || d->n > INT32_MAX)
        return sb_fail(SB_ERR_LIMIT, "tree: more than %d rows", (int)INT32_MAX);
    int32_t *r32 = sb_malloc(sizeof(int32_t) * (size_t)(nrows ? nrows : 1));
    if (!r32) return sb_fail(SB_ERR_OUT_OF_MEMORY, "tree: out of memory");
    for (int64_t i = 0; i < nrows; i++) r32[i] = (int32_t)rows[i];
    sb_status st = sb_tree_grow_i32(p, d, r32, nrows, NULL, out);
    for (int64_t i = 0; i < nrows; i++) rows[i] = r32[i];
    sb_free(r32);
    return st;
}

void sb_grown_release(sb_grown *g) {
    if (!g) return;
    sb_free(g->leaf_begin);
    sb_free(g->leaf_end);
    sb_tree_release(&g->tree);
    sb_free(g->split_bin);
    sb_free(g->cat_bits);
    sb_free(g->root_hist);
    memset(g, 0, sizeof *g);
}
