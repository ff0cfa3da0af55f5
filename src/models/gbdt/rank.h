/* rank.h: learning to rank for gradient boosting (lambdarank, pairwise) and
 * its metrics (NDCG@k, MAP@k), identical on every leg. See rank.c. */
#ifndef SB_GBDT_RANK_H
#define SB_GBDT_RANK_H
#include "../../core/internal.h"
#include "../../io/reader.h"

#define SB_RANK_MAX_GAIN 64 /* label_gain entries: labels 0..63 */

/* Queries of a table: query q is rows [start[q], start[q + 1]). */
typedef struct sb_rank_groups {
    int64_t nq;
    int64_t *start; /* nq + 1 */
    int64_t maxq;   /* rows of the largest query */
} sb_rank_groups;

/* Queries from the table's qid column: each run of consecutive rows with the
 * same qid is one query (as LightGBM reads qid:); a qid that starts two runs
 * (rows not contiguous) or no qid column: a named SB_ERR_INVALID_INPUT. */
sb_status sb_rank_groups_build(const sb_table *t, const char *which, sb_rank_groups *out);
void sb_rank_groups_release(sb_rank_groups *g);

typedef struct sb_rank_cfg {
    int32_t objective;   /* SB_OBJ_LAMBDARANK or SB_OBJ_RANK_PAIRWISE */
    int32_t truncation;  /* lambdarank_truncation_level */
    int32_t norm;        /* lambdarank_norm */
    float sigma;         /* sigmoid */
    int32_t ngain;
    const float *gain;   /* label_gain[0..ngain) */
} sb_rank_cfg;

/* Gradients and hessians of every row from the margins (one per row), each
 * row's pair contributions summed in one fixed order; maxabs[0], [1]: the
 * largest |g| and h, as the maxima of their keys (kernels/quantize.h: a
 * non-finite value wins, for the caller to refuse). Labels are checked beforehand (sb_rank_check_labels). */
sb_status sb_rank_gradients(const sb_rank_cfg *c, const sb_rank_groups *q, const float *label, const float *weight,
                            const float *margin, float *g, float *h, float *maxabs);

/* Labels must be integers in 0..ngain-1. */
sb_status sb_rank_check_labels(const sb_rank_cfg *c, const sb_table *t, const char *which);

/* NDCG@k (metric 0) or MAP@k (metric 1) averaged over queries (exact sum of
 * per-query values, divided once). */
sb_status sb_rank_metric(int32_t map, int32_t k, const sb_rank_cfg *c, const sb_rank_groups *q, const float *label,
                         const float *margin, float *out);

#endif
