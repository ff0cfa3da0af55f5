/*
 * reduce.c: the linear-algebra core's reductions, squared distances and
 * selection (sb_linalg_row_sums ... sb_linalg_topk), on the host and on a GPU.
 * The arithmetic is kernels/linalg_reduce.h's (read its header first): sums
 * and squared norms are exact and rounded once, distances are the exact
 * ||x - y||^2 rounded once, and selection is a total order with ties to the
 * lower index, so the schedule here (tasks, parts of a line, work-items,
 * atomics) cannot reach a bit.
 *
 * Host schedule: a line pass cuts the lines into blocks of LR_LINE_GRAIN and
 * each line into parts of LR_PART elements; a task is one (block, part), a
 * function of the shape alone. Parts of one line are merged exactly (limbs
 * add, flags OR, the smaller packed key wins). Distances: each row of x and
 * y decoded once (mantissas, exponents, exact norm, flags), then tiles of
 * LR_TILE_I x LR_TILE_J pairs. Top-k: blocks of LR_TOPK_GRAIN rows, each row
 * a bounded heap in its worker's scratch.
 *
 * Costs: sums 1 superaccumulator add per element; squared norms one 24x24-bit
 * integer square and one two-limb add per element; distances O((m + n) d) to
 * decode, then per pair one integer product and one two-limb add per column
 * (about 12 integer operations) plus a fixed ~100 for the pair's normalization
 * and rounding: O(m n d), no float operation at all; top-k O(n log k) a row.
 */
#include "linalg.h"
#include "../kernels/linalg_reduce.h"
#include <string.h>

#define LR_LINE_GRAIN 64 /* lines of a host task */
#define LR_PART 65536    /* elements of one line in a host task */
#define LR_TILE_I 16     /* distance tiles: rows of x ... */
#define LR_TILE_J 64     /* ... times rows of y */
#define LR_ROW_GRAIN 64  /* rows decoded by a task */
#define LR_TOPK_GRAIN 16 /* rows of a top-k task */

/* ---- the host path: line passes ------------------------------------------ */

/* One line's partial state, for every op (only the op's part is used). */
typedef struct lstate {
    sb_sacc s;
    int64_t px[SB_PX_LIMBS];
    int64_t pending;
    uint32_t flags;
    int64_t best;
} lstate;

static void lstate_init(lstate *st) {
    sb_sacc_init(&st->s);
    sb_px_init(st->px);
    st->pending = 0;
    st->flags = 0;
    st->best = INT64_MAX;
}

/* A part done: normalized, so that merges stay in bounds. */
static void lstate_close(lstate *st, sb_lr_op op) {
    if (op == SB_LR_SUM) sb_sacc_normalize(&st->s);
    if (op == SB_LR_SQNORM) sb_px_normalize(st->px);
    st->pending = 0;
}

/* *a += *b exactly (both closed). */
static void lstate_merge(lstate *a, const lstate *b, sb_lr_op op) {
    if (op == SB_LR_SUM) sb_sacc_merge(&a->s, &b->s);
    if (op == SB_LR_SQNORM) {
        for (int i = 0; i < SB_PX_LIMBS; i++) a->px[i] += b->px[i];
        sb_px_normalize(a->px);
    }
    a->flags |= b->flags;
    if (b->best < a->best) a->best = b->best;
}

static void lstate_finish(const lstate *st, sb_lr_op op, void *out, int64_t l) {
    if (op == SB_LR_SUM) ((float *)out)[l] = sb_sacc_round_f32(&st->s);
    else if (op == SB_LR_SQNORM) ((float *)out)[l] = sb_px_sq_result(st->px, st->flags);
    else ((int32_t *)out)[l] = sb_sel_index(st->best);
}

/* One value into a state. */
static inline void lstate_add(lstate *st, sb_lr_op op, float v, int64_t q) {
    const uint32_t u = sb_f2u(v);
    switch (op) {
    case SB_LR_SUM:
        sb_sacc_add(&st->s, v);
        break;
    case SB_LR_SQNORM:
        st->flags |= sb_px_flag(u);
        sb_px_add_sq(st->px, u);
        if (++st->pending == SB_PX_FLUSH) {
            sb_px_normalize(st->px);
            st->pending = 0;
        }
        break;
    default: {
        const int64_t p = sb_sel_of(u, op == SB_LR_ARGMAX, q);
        if (p < st->best) st->best = p;
    }
    }
}

typedef struct lines_job {
    sb_lr_op op;
    const float *x;
    int64_t ls, qs, nlines, K, nch;
    lstate *parts; /* nlines x nch when nch > 1 */
    void *out;
} lines_job;

/* Task t: lines [b*G, ..) and elements [c*LR_PART, ..) of the block b, part c. */
static void lines_task(void *ctx, int64_t t) {
    const lines_job *j = ctx;
    const int64_t b = t / j->nch, c = t % j->nch;
    int64_t l0, l1, q0, q1;
    sb_chunk_range(j->nlines, LR_LINE_GRAIN, b, &l0, &l1);
    sb_chunk_range(j->K, LR_PART, c, &q0, &q1);
    lstate st[LR_LINE_GRAIN];
    for (int64_t l = l0; l < l1; l++) lstate_init(&st[l - l0]);
    if (j->qs == 1) { /* rows: each line contiguous */
        for (int64_t l = l0; l < l1; l++) {
            const float *x = j->x + l * j->ls;
            lstate *s = &st[l - l0];
            for (int64_t q = q0; q < q1; q++) lstate_add(s, j->op, x[q], q);
        }
    } else { /* columns: neighbouring lines are neighbours in memory */
        for (int64_t q = q0; q < q1; q++) {
            const float *x = j->x + q * j->qs;
            for (int64_t l = l0; l < l1; l++) lstate_add(&st[l - l0], j->op, x[l * j->ls], q);
        }
    }
    for (int64_t l = l0; l < l1; l++) {
        lstate *s = &st[l - l0];
        lstate_close(s, j->op);
        if (j->nch == 1) lstate_finish(s, j->op, j->out, l);
        else j->parts[l * j->nch + c] = *s;
    }
}

/* Lines with several parts: the parts merged in part order (exact, so any order). */
static void merge_task(void *ctx, int64_t t) {
    const lines_job *j = ctx;
    int64_t l0, l1;
    sb_chunk_range(j->nlines, LR_LINE_GRAIN, t, &l0, &l1);
    for (int64_t l = l0; l < l1; l++) {
        lstate acc = j->parts[l * j->nch];
        for (int64_t c = 1; c < j->nch; c++) lstate_merge(&acc, &j->parts[l * j->nch + c], j->op);
        lstate_finish(&acc, j->op, j->out, l);
    }
}

#ifdef SB_SABOTAGE_REDUCE_ORDER
/* Separating arm: sums and squared norms in float, each line cut into one
 * chunk per thread of the pool, the chunks' float sums added in float: the
 * rounding follows the thread count. */
static void sabotage_float_lines(sb_lr_op op, int64_t nlines, int64_t K, const float *x, int64_t ls, int64_t qs,
                                 float *out) {
    const int64_t width = sb_parallel_width(), chunk = (K + width - 1) / (width > 0 ? width : 1);
    for (int64_t l = 0; l < nlines; l++) {
        float acc = 0.0f;
        for (int64_t q0 = 0; q0 < K; q0 += chunk) {
            float part = 0.0f;
            for (int64_t q = q0; q < q0 + chunk && q < K; q++) {
                const float v = x[l * ls + q * qs];
                part = part + (op == SB_LR_SUM ? v : v * v);
            }
            acc = acc + part;
        }
        out[l] = acc;
    }
}
#endif

sb_status sb_lr_lines_host(sb_lr_op op, int32_t axis, int64_t m, int64_t n, const float *x, int64_t ld, void *out) {
    lines_job j = {op, x, axis ? ld : 1, axis ? 1 : ld, axis ? m : n, axis ? n : m, 1, NULL, out};
    if (j.nlines == 0) return SB_OK;
#ifdef SB_SABOTAGE_REDUCE_ORDER
    if (op == SB_LR_SUM || op == SB_LR_SQNORM) {
        sabotage_float_lines(op, j.nlines, j.K, x, j.ls, j.qs, out);
        return SB_OK;
    }
#endif
    j.nch = j.K > LR_PART ? sb_chunk_count(j.K, LR_PART) : 1;
    if (j.nch > 1 && !(j.parts = sb_malloc(sizeof(lstate) * (size_t)(j.nlines * j.nch))))
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "linalg reduce: out of memory for %lld x %lld", (long long)m,
                       (long long)n);
    const int64_t blocks = sb_chunk_count(j.nlines, LR_LINE_GRAIN);
    sb_parallel_for(blocks * j.nch, lines_task, &j);
    if (j.nch > 1) sb_parallel_for(blocks, merge_task, &j);
    sb_free(j.parts);
    return SB_OK;
}

/* ---- the host path: distances --------------------------------------------- */

typedef struct rows_job {
    const float *x;
    int64_t ld, rows, d;
    int32_t *mo;
    uint8_t *eo;
    int64_t *nrm;
    uint32_t *fl;
} rows_job;

static void rows_task(void *ctx, int64_t t) {
    const rows_job *j = ctx;
    int64_t r0, r1;
    sb_chunk_range(j->rows, LR_ROW_GRAIN, t, &r0, &r1);
    for (int64_t r = r0; r < r1; r++)
        j->fl[r] = sb_px_decode_row(j->x + r * j->ld, j->d, j->mo + r * j->d, j->eo + r * j->d,
                                    j->nrm + r * SB_PX_LIMBS);
}

typedef struct pairs_job {
    rows_job a, b;
    float *out;
    int64_t ldo, tiles_j;
} pairs_job;

static void pairs_task(void *ctx, int64_t t) {
    const pairs_job *j = ctx;
    const rows_job *a = &j->a, *b = &j->b;
    int64_t i0, i1, j0, j1;
    sb_chunk_range(a->rows, LR_TILE_I, t / j->tiles_j, &i0, &i1);
    sb_chunk_range(b->rows, LR_TILE_J, t % j->tiles_j, &j0, &j1);
    const int64_t d = a->d;
    for (int64_t i = i0; i < i1; i++)
        for (int64_t q = j0; q < j1; q++)
            j->out[i * j->ldo + q] =
                sb_u2f(sb_px_sqdist(a->x + i * a->ld, b->x + q * b->ld, a->mo + i * d, a->eo + i * d, b->mo + q * d,
                                    b->eo + q * d, a->nrm + i * SB_PX_LIMBS, b->nrm + q * SB_PX_LIMBS, a->fl[i],
                                    b->fl[q], d));
}

#ifdef SB_SABOTAGE_REDUCE_ORDER
static void sabotage_float_sqdist(int64_t m, int64_t n, int64_t d, const float *x, int64_t ldx, const float *y,
                                  int64_t ldy, float *out, int64_t ldo) {
    const int64_t width = sb_parallel_width(), chunk = (d + width - 1) / (width > 0 ? width : 1);
    for (int64_t i = 0; i < m; i++)
        for (int64_t q = 0; q < n; q++) {
            float acc = 0.0f;
            for (int64_t k0 = 0; k0 < d; k0 += chunk) {
                float part = 0.0f;
                for (int64_t k = k0; k < k0 + chunk && k < d; k++) {
                    const float e = x[i * ldx + k] - y[q * ldy + k];
                    part = part + e * e;
                }
                acc = acc + part;
            }
            out[i * ldo + q] = acc;
        }
}
#endif

sb_status sb_lr_sqdist_host(int64_t m, int64_t n, int64_t d, const float *x, int64_t ldx, const float *y, int64_t ldy,
                            float *out, int64_t ldo) {
    if (m == 0 || n == 0) return SB_OK;
#ifdef SB_SABOTAGE_REDUCE_ORDER
    sabotage_float_sqdist(m, n, d, x, ldx, y, ldy, out, ldo);
    return SB_OK;
#endif
    pairs_job j;
    memset(&j, 0, sizeof j);
    rows_job *ab[2] = {&j.a, &j.b};
    const float *src[2] = {x, y};
    const int64_t ld[2] = {ldx, ldy}, rows[2] = {m, n};
    sb_status st = SB_OK;
    for (int s = 0; s < 2; s++) {
        rows_job *r = ab[s];
        r->x = src[s];
        r->ld = ld[s];
        r->rows = rows[s];
        r->d = d;
        r->mo = sb_malloc(sizeof(int32_t) * (size_t)(rows[s] * d) + 4);
        r->eo = sb_malloc((size_t)(rows[s] * d) + 4);
        r->nrm = sb_malloc(sizeof(int64_t) * SB_PX_LIMBS * (size_t)rows[s]);
        r->fl = sb_malloc(sizeof(uint32_t) * (size_t)rows[s]);
        if (!r->mo || !r->eo || !r->nrm || !r->fl) {
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_linalg_sqdist: out of memory for %lld x %lld rows of %lld",
                         (long long)m, (long long)n, (long long)d);
            goto done;
        }
        sb_parallel_for(sb_chunk_count(rows[s], LR_ROW_GRAIN), rows_task, r);
    }
    j.out = out;
    j.ldo = ldo;
    j.tiles_j = sb_chunk_count(n, LR_TILE_J);
    sb_parallel_for(sb_chunk_count(m, LR_TILE_I) * j.tiles_j, pairs_task, &j);
done:
    for (int s = 0; s < 2; s++) {
        sb_free(ab[s]->mo);
        sb_free(ab[s]->eo);
        sb_free(ab[s]->nrm);
        sb_free(ab[s]->fl);
    }
    return st;
}

/* ---- the host path: top-k -------------------------------------------------- */

typedef struct topk_job {
    const float *x;
    int64_t ld, m, n, k;
    int32_t largest;
    float *vals;
    int32_t *idx;
    int64_t *heaps; /* k per worker */
} topk_job;

static void topk_task(void *ctx, int64_t t) {
    const topk_job *j = ctx;
    int64_t r0, r1;
    sb_chunk_range(j->m, LR_TOPK_GRAIN, t, &r0, &r1);
    int64_t *h = j->heaps + (int64_t)sb_worker_index() * j->k;
    for (int64_t r = r0; r < r1; r++) {
        const float *x = j->x + r * j->ld;
        sb_sel_topk(x, 1, j->n, j->k, j->largest, h);
        for (int64_t q = 0; q < j->k; q++) {
            const int32_t i = sb_sel_index(h[q]);
            j->idx[r * j->k + q] = i;
            j->vals[r * j->k + q] = x[i];
        }
    }
}

sb_status sb_lr_topk_host(int32_t largest, int64_t m, int64_t n, const float *x, int64_t ld, int64_t k, float *vals,
                          int32_t *idx) {
    if (m == 0) return SB_OK;
    const int32_t width = sb_parallel_width();
    int64_t *heaps = sb_malloc(sizeof(int64_t) * (size_t)k * (size_t)width);
    if (!heaps) return sb_fail(SB_ERR_OUT_OF_MEMORY, "sb_linalg_topk: out of memory for k = %lld", (long long)k);
    topk_job j = {x, ld, m, n, k, largest, vals, idx, heaps};
    sb_parallel_for_width(sb_chunk_count(m, LR_TOPK_GRAIN), width, topk_task, &j);
    sb_free(heaps);
    return SB_OK;
}

/* ---- the device path -------------------------------------------------------- */

void sb_lr_ws_release(sb_device *d, sb_lr_ws *ws) {
    sb_dbuf *all[] = {&ws->acc, &ws->mx, &ws->ex, &ws->my, &ws->ey, &ws->nx, &ws->ny, &ws->fx, &ws->fy, &ws->heap};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) sb_device_release(d, all[i]);
}

static int64_t groups_of(const sb_device *d, int64_t items) { return (items + d->wg - 1) / d->wg; }

static sb_status fill64(sb_device *d, sb_dbuf *b, int64_t n, int64_t v) {
    return SB_LAUNCH(d, SB_KL_kr_fill64, groups_of(d, n), 1, 0, SB_ARG(b->h), SB_ARG(n), SB_ARG(v));
}

sb_status sb_lr_lines_on(sb_device *d, sb_lr_ws *ws, sb_lr_op op, int32_t axis, int64_t m, int64_t n,
                         const sb_dbuf *x, int64_t ld, sb_dbuf *out) {
    const int64_t nlines = axis ? m : n, K = axis ? n : m, ls = axis ? ld : 1, qs = axis ? 1 : ld;
    const int32_t lfast = axis ? 0 : 1;
    if (nlines == 0) return SB_OK;
    const int64_t nch = sb_chunk_count(K, SB_LR_CHUNK), items = nlines * nch;
    const int64_t words = op == SB_LR_SUM ? SB_LR_SUM_WORDS : op == SB_LR_SQNORM ? SB_LR_SQ_WORDS : 1;
    sb_status st = sb_device_ensure(d, &ws->acc, sizeof(int64_t) * (size_t)(nlines * words), "linalg reduce");
    if (st != SB_OK) return st;
    if ((st = fill64(d, &ws->acc, nlines * words, op >= SB_LR_ARGMIN ? INT64_MAX : 0)) != SB_OK) return st;
    if (op == SB_LR_SUM) {
        const uint32_t zero = 0u; /* the result too (the float-atomic arm adds into it) */
        if ((st = SB_LAUNCH(d, SB_KL_kr_fill32, groups_of(d, nlines), 1, 0, SB_ARG(out->h), SB_ARG(nlines),
                            SB_ARG(zero))) != SB_OK ||
            (items > 0 && (st = SB_LAUNCH(d, SB_KL_kr_line_sum, groups_of(d, items), 1, 0, SB_ARG(x->h), SB_ARG(ls),
                                          SB_ARG(qs), SB_ARG(nlines), SB_ARG(K), SB_ARG(nch), SB_ARG(lfast),
                                          SB_ARG(ws->acc.h), SB_ARG(out->h))) != SB_OK))
            return st;
        return SB_LAUNCH(d, SB_KL_kr_line_sum_final, groups_of(d, nlines), 1, 0, SB_ARG(ws->acc.h), SB_ARG(nlines),
                         SB_ARG(out->h));
    }
    if (op == SB_LR_SQNORM) {
        if (items > 0 &&
            (st = SB_LAUNCH(d, SB_KL_kr_line_sqnorm, groups_of(d, items), 1, 0, SB_ARG(x->h), SB_ARG(ls), SB_ARG(qs),
                            SB_ARG(nlines), SB_ARG(K), SB_ARG(nch), SB_ARG(lfast), SB_ARG(ws->acc.h))) != SB_OK)
            return st;
        return SB_LAUNCH(d, SB_KL_kr_line_sqnorm_final, groups_of(d, nlines), 1, 0, SB_ARG(ws->acc.h), SB_ARG(nlines),
                         SB_ARG(out->h));
    }
    const int32_t largest = op == SB_LR_ARGMAX;
    if ((st = SB_LAUNCH(d, SB_KL_kr_line_select, groups_of(d, items), 1, 0, SB_ARG(x->h), SB_ARG(ls), SB_ARG(qs),
                        SB_ARG(nlines), SB_ARG(K), SB_ARG(nch), SB_ARG(lfast), SB_ARG(largest), SB_ARG(ws->acc.h))) !=
        SB_OK)
        return st;
    return SB_LAUNCH(d, SB_KL_kr_line_select_final, groups_of(d, nlines), 1, 0, SB_ARG(ws->acc.h), SB_ARG(nlines),
                     SB_ARG(out->h));
}

/* Rows of one operand decoded on d into (mo, eo, nrm, fl). */
static sb_status rows_on(sb_device *d, const sb_dbuf *x, int64_t ld, int64_t rows, int64_t dd, sb_dbuf *mo,
                         sb_dbuf *eo, sb_dbuf *nrm, sb_dbuf *fl) {
    sb_status st;
    if ((st = sb_device_ensure(d, mo, sizeof(int32_t) * (size_t)(rows * dd) + 16, "sqdist mantissas")) != SB_OK ||
        (st = sb_device_ensure(d, eo, (size_t)(rows * dd) + 16, "sqdist exponents")) != SB_OK ||
        (st = sb_device_ensure(d, nrm, sizeof(int64_t) * SB_PX_LIMBS * (size_t)rows, "sqdist norms")) != SB_OK ||
        (st = sb_device_ensure(d, fl, sizeof(int32_t) * (size_t)rows, "sqdist flags")) != SB_OK)
        return st;
    return SB_LAUNCH(d, SB_KL_kr_rows_decode, groups_of(d, rows), 1, 0, SB_ARG(x->h), SB_ARG(ld), SB_ARG(rows),
                     SB_ARG(dd), SB_ARG(mo->h), SB_ARG(eo->h), SB_ARG(nrm->h), SB_ARG(fl->h));
}

sb_status sb_lr_sqdist_on(sb_device *d, sb_lr_ws *ws, int64_t m, int64_t n, int64_t dd, const sb_dbuf *x, int64_t ldx,
                          const sb_dbuf *y, int64_t ldy, sb_dbuf *out) {
    if (m == 0 || n == 0) return SB_OK;
    sb_status st;
    if ((st = rows_on(d, x, ldx, m, dd, &ws->mx, &ws->ex, &ws->nx, &ws->fx)) != SB_OK ||
        (st = rows_on(d, y, ldy, n, dd, &ws->my, &ws->ey, &ws->ny, &ws->fy)) != SB_OK)
        return st;
    return SB_LAUNCH(d, SB_KL_kr_sqdist, groups_of(d, m * n), 1, 0, SB_ARG(x->h), SB_ARG(ldx), SB_ARG(y->h),
                     SB_ARG(ldy), SB_ARG(m), SB_ARG(n), SB_ARG(dd), SB_ARG(ws->mx.h), SB_ARG(ws->ex.h),
                     SB_ARG(ws->my.h), SB_ARG(ws->ey.h), SB_ARG(ws->nx.h), SB_ARG(ws->ny.h), SB_ARG(ws->fx.h),
                     SB_ARG(ws->fy.h), SB_ARG(out->h));
}

sb_status sb_lr_topk_on(sb_device *d, sb_lr_ws *ws, int32_t largest, int64_t m, int64_t n, const sb_dbuf *x,
                        int64_t ld, int64_t k, sb_dbuf *vals, sb_dbuf *idx) {
    if (m == 0) return SB_OK;
    sb_status st = sb_device_ensure(d, &ws->heap, sizeof(int64_t) * (size_t)(m * k), "topk heaps");
    if (st != SB_OK) return st;
    return SB_LAUNCH(d, SB_KL_kr_topk, groups_of(d, m), 1, 0, SB_ARG(x->h), SB_ARG(ld), SB_ARG(m), SB_ARG(n),
                     SB_ARG(k), SB_ARG(largest), SB_ARG(ws->heap.h), SB_ARG(vals->h), SB_ARG(idx->h));
}

/* ---- the public entries ------------------------------------------------------ */

static sb_lr_ws g_ws[4]; /* per device kind; used under sb_linalg_device_lock */

static int overlaps(const void *p, int64_t pn, const void *q, int64_t qn) {
    if (pn <= 0 || qn <= 0) return 0;
    const char *a = p, *b = q;
    return a < b + 4 * qn && b < a + 4 * pn;
}

#define LR_SPAN_LIMIT (INT64_MAX / 16) /* elements a matrix may span (2^59) */

/* Checks an r x c matrix named what with leading dimension ld and sets *span
 * (elements from its first to its last, 0 when empty). */
static sb_status check_matrix(const char *fn, const char *what, int64_t r, int64_t c, int64_t ld, const float *p,
                              int64_t *span) {
    if (ld < (c > 1 ? c : 1))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: ld%s %lld is below the %lld columns of %s", fn, what,
                       (long long)ld, (long long)c, what);
    if (r > 0 && ld > LR_SPAN_LIMIT / r)
        return sb_fail(SB_ERR_LIMIT, "%s: %s spans more than 2^59 elements", fn, what);
    *span = sb_gemm_span(r, c, ld);
    if (*span > 0 && !p) return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, what);
    return SB_OK;
}

static sb_status check_sizes(const char *fn, int64_t m, int64_t n) {
    if (m < 0 || n < 0)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: m and n must be >= 0 (given %lld, %lld)", fn, (long long)m,
                       (long long)n);
    if (m > INT32_MAX || n > INT32_MAX)
        return sb_fail(SB_ERR_LIMIT, "%s: m and n are at most 2^31 - 1 (given %lld, %lld)", fn, (long long)m,
                       (long long)n);
    return SB_OK;
}

/* An output of count 4-byte elements: present and clear of the inputs. */
static sb_status check_out(const char *fn, const char *what, const void *out, int64_t count, const float *x,
                           int64_t xspan, const float *y, int64_t yspan) {
    if (count > 0 && !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, what);
    if (overlaps(out, count, x, xspan) || overlaps(out, count, y, yspan))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: %s overlaps an input", fn, what);
    return SB_OK;
}

static sb_status lines_public(const char *fn, sb_lr_op op, const char *device, int32_t axis, int64_t m, int64_t n,
                              const float *x, int64_t ldx, void *out) {
    sb_clear_error();
    sb_status st = check_sizes(fn, m, n);
    if (st != SB_OK) return st;
    if (axis != 0 && axis != 1)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: axis is 0 (each column) or 1 (each row) (given %d)", fn,
                       (int)axis);
    int64_t span;
    if ((st = check_matrix(fn, "x", m, n, ldx, x, &span)) != SB_OK) return st;
    const int64_t nlines = axis ? m : n, K = axis ? n : m;
    if (op >= SB_LR_ARGMIN && nlines > 0 && K == 0)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: the %s are empty (%s = 0): no element to select", fn,
                       axis ? "rows" : "columns", axis ? "n" : "m");
    if ((st = check_out(fn, "out", out, nlines, x, span, NULL, 0)) != SB_OK) return st;
    sb_device_kind kind;
    if ((st = sb_device_parse(device, &kind)) != SB_OK) return st;
    if ((st = sb_threads_ready()) != SB_OK) return st; /* an invalid SAMEBITS_NUM_THREADS, by name */
    if (nlines == 0) return SB_OK;
    if (kind == SB_DEVICE_CPU || kind == SB_DEVICE_CPU_BATCHED) return sb_lr_lines_host(op, axis, m, n, x, ldx, out);
    sb_device *d;
    if ((st = sb_linalg_device_lock(kind, &d)) != SB_OK) return st;
    sb_dbuf dx = {0}, dout = {0};
    st = sb_device_alloc(d, &dx, 4 * (size_t)(span > 0 ? span : 1), "linalg x");
    if (st == SB_OK) st = sb_device_alloc(d, &dout, 4 * (size_t)nlines, "linalg out");
    if (st == SB_OK && span > 0) st = sb_device_write(d, &dx, 0, x, 4 * (size_t)span, "linalg x");
    if (st == SB_OK) st = sb_lr_lines_on(d, &g_ws[kind], op, axis, m, n, &dx, ldx, &dout);
    if (st == SB_OK) st = sb_device_read(d, &dout, 0, out, 4 * (size_t)nlines, "linalg out");
    sb_device_release(d, &dx);
    sb_device_release(d, &dout);
    sb_linalg_device_unlock();
    return st;
}

SB_API sb_status sb_linalg_row_sums(const char *device, int64_t m, int64_t n, const float *x, int64_t ldx,
                                    float *out) {
    return lines_public("sb_linalg_row_sums", SB_LR_SUM, device, 1, m, n, x, ldx, out);
}

SB_API sb_status sb_linalg_col_sums(const char *device, int64_t m, int64_t n, const float *x, int64_t ldx,
                                    float *out) {
    return lines_public("sb_linalg_col_sums", SB_LR_SUM, device, 0, m, n, x, ldx, out);
}

SB_API sb_status sb_linalg_row_sq_norms(const char *device, int64_t m, int64_t n, const float *x, int64_t ldx,
                                        float *out) {
    return lines_public("sb_linalg_row_sq_norms", SB_LR_SQNORM, device, 1, m, n, x, ldx, out);
}

SB_API sb_status sb_linalg_col_sq_norms(const char *device, int64_t m, int64_t n, const float *x, int64_t ldx,
                                        float *out) {
    return lines_public("sb_linalg_col_sq_norms", SB_LR_SQNORM, device, 0, m, n, x, ldx, out);
}

SB_API sb_status sb_linalg_argmin(const char *device, int32_t axis, int64_t m, int64_t n, const float *x, int64_t ldx,
                                  int32_t *out) {
    return lines_public("sb_linalg_argmin", SB_LR_ARGMIN, device, axis, m, n, x, ldx, out);
}

SB_API sb_status sb_linalg_argmax(const char *device, int32_t axis, int64_t m, int64_t n, const float *x, int64_t ldx,
                                  int32_t *out) {
    return lines_public("sb_linalg_argmax", SB_LR_ARGMAX, device, axis, m, n, x, ldx, out);
}

/* Reads an m x c dense device result into a host matrix of leading dimension ld. */
static sb_status read_rows(sb_device *d, const sb_dbuf *b, int64_t m, int64_t c, void *dst, int64_t ld,
                           const char *what) {
    if (ld == c) return sb_device_read(d, b, 0, dst, 4 * (size_t)(m * c), what);
    sb_status st = SB_OK;
    for (int64_t i = 0; i < m && st == SB_OK; i++)
        st = sb_device_read(d, b, 4 * (size_t)(i * c), (char *)dst + 4 * (size_t)(i * ld), 4 * (size_t)c, what);
    return st;
}

SB_API sb_status sb_linalg_sqdist(const char *device, int64_t m, int64_t n, int64_t d, const float *x, int64_t ldx,
                                  const float *y, int64_t ldy, float *out, int64_t ldo) {
    static const char fn[] = "sb_linalg_sqdist";
    sb_clear_error();
    sb_status st = check_sizes(fn, m, n);
    if (st != SB_OK) return st;
    if (d < 0) return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: d must be >= 0 (given %lld)", fn, (long long)d);
    if (d > INT32_MAX) return sb_fail(SB_ERR_LIMIT, "%s: d is at most 2^31 - 1 (given %lld)", fn, (long long)d);
    int64_t sx, sy, so;
    if ((st = check_matrix(fn, "x", m, d, ldx, x, &sx)) != SB_OK || (st = check_matrix(fn, "y", n, d, ldy, y, &sy)) != SB_OK)
        return st;
    if (ldo < (n > 1 ? n : 1))
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: ldo %lld is below n %lld", fn, (long long)ldo, (long long)n);
    if (m > 0 && ldo > LR_SPAN_LIMIT / m) return sb_fail(SB_ERR_LIMIT, "%s: out spans more than 2^59 elements", fn);
    so = sb_gemm_span(m, n, ldo);
    if ((st = check_out(fn, "out", out, so, x, sx, y, sy)) != SB_OK) return st;
    sb_device_kind kind;
    if ((st = sb_device_parse(device, &kind)) != SB_OK) return st;
    if ((st = sb_threads_ready()) != SB_OK) return st; /* an invalid SAMEBITS_NUM_THREADS, by name */
    if (so == 0) return SB_OK;
    if (kind == SB_DEVICE_CPU || kind == SB_DEVICE_CPU_BATCHED)
        return sb_lr_sqdist_host(m, n, d, x, ldx, y, ldy, out, ldo);
    sb_device *dev;
    if ((st = sb_linalg_device_lock(kind, &dev)) != SB_OK) return st;
    sb_dbuf dx = {0}, dy = {0}, dout = {0};
    st = sb_device_alloc(dev, &dx, 4 * (size_t)(sx > 0 ? sx : 1), "sqdist x");
    if (st == SB_OK) st = sb_device_alloc(dev, &dy, 4 * (size_t)(sy > 0 ? sy : 1), "sqdist y");
    if (st == SB_OK) st = sb_device_alloc(dev, &dout, 4 * (size_t)(m * n), "sqdist out");
    if (st == SB_OK && sx > 0) st = sb_device_write(dev, &dx, 0, x, 4 * (size_t)sx, "sqdist x");
    if (st == SB_OK && sy > 0) st = sb_device_write(dev, &dy, 0, y, 4 * (size_t)sy, "sqdist y");
    if (st == SB_OK) st = sb_lr_sqdist_on(dev, &g_ws[kind], m, n, d, &dx, ldx, &dy, ldy, &dout);
    if (st == SB_OK) st = read_rows(dev, &dout, m, n, out, ldo, "sqdist out");
    sb_device_release(dev, &dx);
    sb_device_release(dev, &dy);
    sb_device_release(dev, &dout);
    sb_linalg_device_unlock();
    return st;
}

SB_API sb_status sb_linalg_topk(const char *device, int32_t largest, int64_t m, int64_t n, const float *x,
                                int64_t ldx, int64_t k, float *values, int32_t *indices) {
    static const char fn[] = "sb_linalg_topk";
    sb_clear_error();
    sb_status st = check_sizes(fn, m, n);
    if (st != SB_OK) return st;
    if (largest != 0 && largest != 1)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: largest is 0 (smallest first) or 1 (largest first) (given %d)",
                       fn, (int)largest);
    if (k < 1) return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: k must be >= 1 (given %lld)", fn, (long long)k);
    if (k > n)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: k = %lld exceeds the row length n = %lld (k is never clamped)",
                       fn, (long long)k, (long long)n);
    if (m > LR_SPAN_LIMIT / k) return sb_fail(SB_ERR_LIMIT, "%s: m x k is more than 2^59 elements", fn);
    int64_t span;
    if ((st = check_matrix(fn, "x", m, n, ldx, x, &span)) != SB_OK) return st;
    const int64_t count = m * k;
    if ((st = check_out(fn, "values", values, count, x, span, NULL, 0)) != SB_OK ||
        (st = check_out(fn, "indices", indices, count, x, span, values, count)) != SB_OK)
        return st;
    sb_device_kind kind;
    if ((st = sb_device_parse(device, &kind)) != SB_OK) return st;
    if ((st = sb_threads_ready()) != SB_OK) return st; /* an invalid SAMEBITS_NUM_THREADS, by name */
    if (count == 0) return SB_OK;
    if (kind == SB_DEVICE_CPU || kind == SB_DEVICE_CPU_BATCHED)
        return sb_lr_topk_host(largest, m, n, x, ldx, k, values, indices);
    sb_device *d;
    if ((st = sb_linalg_device_lock(kind, &d)) != SB_OK) return st;
    sb_dbuf dx = {0}, dv = {0}, di = {0};
    st = sb_device_alloc(d, &dx, 4 * (size_t)span, "topk x");
    if (st == SB_OK) st = sb_device_alloc(d, &dv, 4 * (size_t)count, "topk values");
    if (st == SB_OK) st = sb_device_alloc(d, &di, 4 * (size_t)count, "topk indices");
    if (st == SB_OK) st = sb_device_write(d, &dx, 0, x, 4 * (size_t)span, "topk x");
    if (st == SB_OK) st = sb_lr_topk_on(d, &g_ws[kind], largest, m, n, &dx, ldx, k, &dv, &di);
    if (st == SB_OK) st = sb_device_read(d, &dv, 0, values, 4 * (size_t)count, "topk values");
    if (st == SB_OK) st = sb_device_read(d, &di, 0, indices, 4 * (size_t)count, "topk indices");
    sb_device_release(d, &dx);
    sb_device_release(d, &dv);
    sb_device_release(d, &di);
    sb_linalg_device_unlock();
    return st;
}
