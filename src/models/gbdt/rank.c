/*
 * rank.c: learning to rank. LambdaRank gradients optimizing NDCG and the
 * pairwise (RankNet) objective, after Burges, "From RankNet to LambdaRank to
 * LambdaMART: An Overview", Microsoft Research Technical Report MSR-TR-2010-82
 * (2010): for a pair (i, j) of one query where i is more relevant, the RankNet
 * gradient is lambda_ij = -sigma / (1 + exp(sigma (s_i - s_j))); LambdaRank
 * scales it by |delta NDCG_ij|, the change of the query's NDCG if i and j
 * swapped places; LambdaMART fits trees to the summed lambdas with the
 * second-order terms sigma^2 |dNDCG| rho (1 - rho) as hessians.
 *
 * The parameter names and the defaults follow LightGBM's lambdarank
 * (lambdarank_truncation_level = 30, lambdarank_norm = true, sigmoid = 1,
 * label_gain 2^i - 1): only pairs whose better-ranked document sits in the
 * first truncation_level places count; with norm, a pair's |dNDCG| is divided
 * by 0.01 + |s_i - s_j| and a query's lambdas are scaled by
 * log2(1 + S) / S where S is the sum of their magnitudes.
 *
 * Identity. Within a query the documents are ordered by a total order: margin
 * descending (-0 = +0), then row index ascending; never by a sort's stability.
 * Pairs are visited in one order fixed by that ranking (i over positions, then
 * j > i), and each row's gradient and hessian are float sums of its pair terms
 * in that order: a fixed shape that depends on the data alone. Queries are
 * independent, so spreading them over threads changes nothing. Every function
 * is the profile's (sb_sigmoidf, sb_logf, sb_log1pf; no libm).
 */
#include "rank.h"
#include "../model.h"
#include "../../math/sb_elem.h"
#include "../../math/sb_reduce.h"
#include "../../kernels/quantize.h"
#include <stdlib.h>
#include <string.h>

#define LN2F 0.693147182f /* ln 2 rounded to float */
#define QUERY_GRAIN 64     /* queries per task */

static int i32_cmp(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

sb_status sb_rank_groups_build(const sb_table *t, const char *which, sb_rank_groups *out) {
    memset(out, 0, sizeof *out);
    if (!t->qid)
        return sb_fail(SB_ERR_INVALID_INPUT,
                       "%s data has no query groups; ranking needs qid: in the file, a .query file, or a group column",
                       which);
    int64_t nq = 0;
    for (int64_t r = 0; r < t->nrows; r++)
        if (r == 0 || t->qid[r] != t->qid[r - 1]) nq++;
    out->start = sb_malloc(sizeof(int64_t) * (size_t)(nq + 1));
    if (!out->start) return sb_fail(SB_ERR_OUT_OF_MEMORY, "ranking: out of memory");
    int64_t k = 0;
    for (int64_t r = 0; r < t->nrows; r++)
        if (r == 0 || t->qid[r] != t->qid[r - 1]) out->start[k++] = r;
    out->start[nq] = t->nrows;
    out->nq = nq;
    for (int64_t q = 0; q < nq; q++)
        if (out->start[q + 1] - out->start[q] > out->maxq) out->maxq = out->start[q + 1] - out->start[q];
    /* A query's rows must be contiguous: no qid may start two runs. */
    int32_t *ids = sb_malloc(sizeof(int32_t) * (size_t)(nq ? nq : 1));
    if (!ids) {
        sb_rank_groups_release(out);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "ranking: out of memory");
    }
    for (int64_t q = 0; q < nq; q++) ids[q] = t->qid[out->start[q]];
    qsort(ids, (size_t)nq, sizeof(int32_t), i32_cmp);
    for (int64_t q = 1; q < nq; q++)
        if (ids[q] == ids[q - 1]) {
            int32_t dup = ids[q];
            sb_free(ids);
            sb_rank_groups_release(out);
            return sb_fail(SB_ERR_INVALID_INPUT,
                           "%s data: the rows of query %d are not contiguous; sort the rows by query", which, (int)dup);
        }
    sb_free(ids);
    return SB_OK;
}

void sb_rank_groups_release(sb_rank_groups *g) {
    sb_free(g->start);
    memset(g, 0, sizeof *g);
}

sb_status sb_rank_check_labels(const sb_rank_cfg *c, const sb_table *t, const char *which) {
    for (int64_t r = 0; r < t->nrows; r++) {
        float y = t->label[r];
        if (!(y >= 0.0f && y < (float)c->ngain && y == (float)(int32_t)y))
            return sb_fail(SB_ERR_INVALID_INPUT,
                           "%s label of row %lld is %g; ranking needs integer relevance labels 0..%d (one per label_gain entry)",
                           which, (long long)r, (double)y, (int)c->ngain - 1);
    }
    return SB_OK;
}

/* A document of a query under the total order: key descending, row ascending. */
typedef struct doc {
    uint32_t key; /* monotone in the margin: larger margin, larger key */
    int32_t row;  /* offset within the query */
} doc;

static uint32_t key_of(float v) {
    uint32_t u = sb_f2u(v == 0.0f ? 0.0f : v); /* -0 = +0 */
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

static int doc_cmp(const void *pa, const void *pb) {
    const doc *a = pa, *b = pb;
    if (a->key != b->key) return a->key > b->key ? -1 : 1;
#ifdef SB_SABOTAGE_RANK_TIES
    /* Separating arm for rule 7 (make SABOTAGE=rank-ties): documents with equal
     * margins ranked by another rule than the total order's. */
    return a->row > b->row ? -1 : a->row < b->row;
#else
    return a->row < b->row ? -1 : a->row > b->row; /* a total order: the result is unique */
#endif
}

/* Rank the n documents with margins m: d[0] is ranked first. */
static void rank_docs(const float *m, int64_t n, doc *d) {
    for (int64_t i = 0; i < n; i++) {
        d[i].key = key_of(m[i]);
        d[i].row = (int32_t)i;
    }
    qsort(d, (size_t)n, sizeof(doc), doc_cmp);
}

/* Position discount 1 / log2(2 + i). */
static float discount(int64_t i) { return LN2F / sb_logf((float)(i + 2)); }

/* The ideal DCG of the query's labels over its first k places: labels sorted
 * descending (a multiset: the order of equal labels cannot change a sum),
 * summed in place order. counts is ngain ints of scratch. */
static float max_dcg(const sb_rank_cfg *c, const float *y, int64_t n, int64_t k, int64_t *counts) {
    for (int32_t l = 0; l < c->ngain; l++) counts[l] = 0;
    for (int64_t i = 0; i < n; i++) counts[(int32_t)y[i]]++;
    float s = 0.0f;
    int64_t pos = 0;
    for (int32_t l = c->ngain - 1; l >= 0 && pos < k; l--)
        for (int64_t j = 0; j < counts[l] && pos < k; j++, pos++) s = s + c->gain[l] * discount(pos);
    return s;
}

typedef struct grad_job {
    const sb_rank_cfg *c;
    const sb_rank_groups *q;
    const float *label, *weight, *margin;
    float *g, *h;
    float *maxabs; /* 2 per task: the maxima of the keys of g and h */
    unsigned char *oom; /* 1 per task: its scratch could not be allocated */
} grad_job;

static void one_query(const sb_rank_cfg *c, const float *y, const float *s, const float *w, int64_t n, float *g,
                      float *h, doc *d, int64_t *counts) {
    for (int64_t i = 0; i < n; i++) g[i] = h[i] = 0.0f;
    if (n < 2) return;
    rank_docs(s, n, d);
    const int lambdarank = c->objective == SB_OBJ_LAMBDARANK;
    const float sigma = c->sigma;
    float inv_max = 1.0f;
    int64_t top = n - 1; /* positions i that start pairs */
    if (lambdarank) {
        float md = max_dcg(c, y, n, c->truncation, counts);
        inv_max = md > 0.0f ? 1.0f / md : 0.0f;
        if (top > c->truncation) top = c->truncation;
    }
    const float best = s[d[0].row], worst = s[d[n - 1].row];
    float sum_lambda = 0.0f;
    for (int64_t i = 0; i < top; i++) {
        const int32_t ri = d[i].row;
        for (int64_t j = i + 1; j < n; j++) {
            const int32_t rj = d[j].row;
            if (y[ri] == y[rj]) continue;
            int32_t hi, lo;
            int64_t hi_pos, lo_pos;
            if (y[ri] > y[rj]) {
                hi = ri, lo = rj, hi_pos = i, lo_pos = j;
            } else {
                hi = rj, lo = ri, hi_pos = j, lo_pos = i;
            }
            const float delta = s[hi] - s[lo];
            float weight = 1.0f; /* |dNDCG| of the pair, or 1 for pairwise */
            if (lambdarank) {
                float gap = c->gain[(int32_t)y[hi]] - c->gain[(int32_t)y[lo]];
                float dd = discount(hi_pos) - discount(lo_pos);
                if (dd < 0.0f) dd = -dd;
                weight = gap * dd * inv_max;
                if (c->norm && best != worst) weight = weight / (0.01f + (delta < 0.0f ? -delta : delta));
            }
            /* rho = 1 / (1 + exp(sigma * delta)) */
            const float rho = sb_sigmoidf(-(sigma * delta));
            const float lambda = rho * (-(sigma * weight));
            const float hess = rho * (1.0f - rho) * ((sigma * sigma) * weight);
            g[hi] = g[hi] + lambda;
            h[hi] = h[hi] + hess;
            g[lo] = g[lo] - lambda;
            h[lo] = h[lo] + hess;
            sum_lambda = sum_lambda - 2.0f * lambda;
        }
    }
    if (lambdarank && c->norm && sum_lambda > 0.0f) {
        const float f = (sb_log1pf(sum_lambda) / LN2F) / sum_lambda;
        for (int64_t i = 0; i < n; i++) {
            g[i] = g[i] * f;
            h[i] = h[i] * f;
        }
    }
    if (w)
        for (int64_t i = 0; i < n; i++) {
            g[i] = g[i] * w[i];
            h[i] = h[i] * w[i];
        }
}

static void grad_task(void *ctx, int64_t task) {
    grad_job *j = ctx;
    const sb_rank_groups *q = j->q;
    int64_t b, e;
    sb_chunk_range(q->nq, QUERY_GRAIN, task, &b, &e);
    doc *d = sb_malloc(sizeof(doc) * (size_t)(q->maxq ? q->maxq : 1));
    int64_t *counts = sb_malloc(sizeof(int64_t) * SB_RANK_MAX_GAIN);
    sb_u32 mg = 0u, mh = 0u;
    j->oom[task] = !d || !counts; /* reported by the caller */
    if (!d || !counts) {
        sb_free(d);
        sb_free(counts);
        return;
    }
    for (int64_t k = b; k < e; k++) {
        const int64_t r0 = q->start[k], n = q->start[k + 1] - r0;
        one_query(j->c, j->label + r0, j->margin + r0, j->weight ? j->weight + r0 : NULL, n, j->g + r0, j->h + r0, d,
                  counts);
        /* the maxima of the keys (kernels/quantize.h), as gbdt.c takes them:
         * a non-finite value wins, and gbdt.c refuses it by name */
        for (int64_t r = r0; r < r0 + n; r++) {
            sb_u32 a = sb_k_maxkey_abs(j->g[r]), bb = sb_k_maxkey_pos(j->h[r]);
            mg = a > mg ? a : mg;
            mh = bb > mh ? bb : mh;
        }
    }
    j->maxabs[2 * task] = sb_u2f(mg);
    j->maxabs[2 * task + 1] = sb_u2f(mh);
    sb_free(d);
    sb_free(counts);
}

sb_status sb_rank_gradients(const sb_rank_cfg *c, const sb_rank_groups *q, const float *label, const float *weight,
                            const float *margin, float *g, float *h, float *maxabs) {
    const int64_t ntasks = sb_chunk_count(q->nq, QUERY_GRAIN);
    float *mx = sb_malloc(sizeof(float) * 2 * (size_t)(ntasks ? ntasks : 1));
    unsigned char *oom = sb_malloc((size_t)(ntasks ? ntasks : 1));
    if (!mx || !oom) {
        sb_free(mx);
        sb_free(oom);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "ranking: out of memory");
    }
    grad_job j = {c, q, label, weight, margin, g, h, mx, oom};
    sb_parallel_for(ntasks, grad_task, &j);
    sb_u32 mg = 0u, mh = 0u;
    int failed = 0;
    for (int64_t t = 0; t < ntasks; t++) {
        failed |= oom[t];
        mg = sb_f2u(mx[2 * t]) > mg ? sb_f2u(mx[2 * t]) : mg;
        mh = sb_f2u(mx[2 * t + 1]) > mh ? sb_f2u(mx[2 * t + 1]) : mh;
    }
    sb_free(mx);
    sb_free(oom);
    if (failed) return sb_fail(SB_ERR_OUT_OF_MEMORY, "ranking: out of memory");
    maxabs[0] = sb_u2f(mg);
    maxabs[1] = sb_u2f(mh);
    return SB_OK;
}

sb_status sb_rank_metric(int32_t map, int32_t k, const sb_rank_cfg *c, const sb_rank_groups *q, const float *label,
                         const float *margin, float *out) {
    doc *d = sb_malloc(sizeof(doc) * (size_t)(q->maxq ? q->maxq : 1));
    int64_t counts[SB_RANK_MAX_GAIN];
    if (!d) return sb_fail(SB_ERR_OUT_OF_MEMORY, "ranking metric: out of memory");
    sb_sacc sum;
    sb_sacc_init(&sum);
    for (int64_t qi = 0; qi < q->nq; qi++) {
        const int64_t r0 = q->start[qi], n = q->start[qi + 1] - r0;
        const float *y = label + r0;
        rank_docs(margin + r0, n, d);
        const int64_t top = n < k ? n : k;
        float v = 1.0f; /* a query without relevant documents counts as perfect (as LightGBM) */
        if (!map) {
            float md = max_dcg(c, y, n, k, counts);
            if (md > 0.0f) {
                float dcg = 0.0f;
                for (int64_t i = 0; i < top; i++) dcg = dcg + c->gain[(int32_t)y[d[i].row]] * discount(i);
                v = dcg / md;
            }
        } else {
            int64_t rel = 0, hits = 0;
            for (int64_t i = 0; i < n; i++) rel += y[i] > 0.5f;
            if (rel > 0) {
                float ap = 0.0f;
                for (int64_t i = 0; i < top; i++)
                    if (y[d[i].row] > 0.5f) {
                        hits++;
                        ap = ap + (float)hits / (float)(i + 1);
                    }
                v = ap / (float)(rel < k ? rel : k);
            }
        }
        sb_sacc_add(&sum, v);
    }
    sb_free(d);
    *out = q->nq > 0 ? sb_sacc_round_f32(&sum) / (float)q->nq : 0.0f;
    return SB_OK;
}
