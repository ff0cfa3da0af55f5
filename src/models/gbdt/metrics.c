/*
 * metrics.c: l2 (mean squared error), rmse, mae, logloss, error, auc, mlogloss,
 * merror, huber, quantile, poisson, gamma and tweedie. Each row's
 * term is one fixed sequence of profile operations; the terms and the weights
 * are summed exactly and divided once, so no thread count or order can show.
 */
#include "metrics.h"
#include "gbdt_params.h"
#include "../model.h"
#include "../../kernels/gbdt.h"
#include <string.h>

#define LOG_EPS 1e-15f

static float clamp_p(float p) {
    if (p < LOG_EPS) return LOG_EPS;
    if (p > 1.0f - LOG_EPS) return 1.0f - LOG_EPS;
    return p;
}

/* A row's term of metric on its K margins m and label y. pred is the row's
 * prediction (exp(m[0]) under a log link, else m[0]), which the regression
 * metrics compare with y; a is alpha (huber's delta, quantile's level), rho
 * the Tweedie variance power. The formulas of LightGBM's metric list:
 * huber r = pred - y: r^2 / 2 when |r| <= a, else a (|r| - a / 2); quantile
 * r = y - pred: a r when r >= 0, else (a - 1) r; poisson mu - y log(mu);
 * gamma (dispersion 1) y / mu + log(mu); tweedie
 * -y mu^(1 - rho) / (1 - rho) + mu^(2 - rho) / (2 - rho), with mu = exp(m)
 * clamped below at 1e-10 (LightGBM's guard) and mu^k spelled exp(k log mu).
 * 1 - 1e-15 rounds to 1 in float: clamp(1 - p) separately where needed. */
static float row_term(int32_t metric, const float *m, float pred, int32_t k, float y, float a, float rho,
                      float *p_scratch) {
    switch (metric) {
    case SB_METRIC_RMSE:
    case SB_METRIC_L2: {
        float d = pred - y;
        return d * d;
    }
    case SB_METRIC_MAE: {
        float d = pred - y;
        return d < 0.0f ? -d : d;
    }
    case SB_METRIC_HUBER: {
        const float r = pred - y, ar = r < 0.0f ? -r : r;
        return ar <= a ? 0.5f * (r * r) : a * (ar - 0.5f * a);
    }
    case SB_METRIC_QUANTILE: {
        const float r = y - pred;
        return r >= 0.0f ? a * r : (a - 1.0f) * r;
    }
    case SB_METRIC_POISSON:
    case SB_METRIC_GAMMA:
    case SB_METRIC_TWEEDIE: {
        const float mu = pred < 1e-10f ? 1e-10f : pred, lmu = sb_logf(mu);
        if (metric == SB_METRIC_POISSON) return mu - y * lmu;
        if (metric == SB_METRIC_GAMMA) return y / mu + lmu;
        const float e1 = sb_expf((1.0f - rho) * lmu), e2 = sb_expf((2.0f - rho) * lmu);
        return -(y * e1) / (1.0f - rho) + e2 / (2.0f - rho);
    }
    case SB_METRIC_LOGLOSS: {
        float p = sb_sigmoidf(m[0]), q = sb_sigmoidf(-m[0]);
        return y > 0.5f ? -sb_logf(clamp_p(p)) : -sb_logf(clamp_p(q));
    }
    case SB_METRIC_ERROR:
        return (m[0] > 0.0f) != (y > 0.5f) ? 1.0f : 0.0f;
    case SB_METRIC_MLOGLOSS: {
        sb_k_softmax(m, k, p_scratch);
        return -sb_logf(clamp_p(p_scratch[(int32_t)y]));
    }
    case SB_METRIC_MERROR: {
        int32_t best = 0;
        for (int32_t c = 1; c < k; c++)
            if (m[c] > m[best]) best = c;
        return best != (int32_t)y ? 1.0f : 0.0f;
    }
    }
    return 0.0f;
}

/* Total order key of a float (NaN margins cannot occur). */
static uint32_t key_of(float v) {
    uint32_t u = sb_f2u(v == 0.0f ? 0.0f : v);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

/* ROC AUC by ranks (Mann-Whitney U), unweighted: ties share their average rank,
 * counted in half units so everything stays an exact integer. */
static sb_status auc(const float *margin, int64_t n, const float *label, float *out) {
    uint64_t *keyed = sb_malloc(sizeof(uint64_t) * (size_t)n);
    uint64_t *tmp = sb_malloc(sizeof(uint64_t) * (size_t)n);
    int64_t *count = sb_malloc(sizeof(int64_t) * 65537);
    if (!keyed || !tmp || !count) {
        sb_free(keyed);
        sb_free(tmp);
        sb_free(count);
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "auc: out of memory");
    }
    for (int64_t i = 0; i < n; i++) keyed[i] = (uint64_t)key_of(margin[i]) << 32 | (label[i] > 0.5f ? 1u : 0u);
    for (int shift = 0; shift < 64; shift += 16) { /* LSD radix sort on the whole word */
        memset(count, 0, sizeof(int64_t) * 65537);
        for (int64_t i = 0; i < n; i++) count[((keyed[i] >> shift) & 0xFFFF) + 1]++;
        for (int d = 0; d < 65536; d++) count[d + 1] += count[d];
        for (int64_t i = 0; i < n; i++) tmp[count[(keyed[i] >> shift) & 0xFFFF]++] = keyed[i];
        memcpy(keyed, tmp, sizeof(uint64_t) * (size_t)n);
    }
    int64_t npos = 0, twice_rank_sum = 0;
    for (int64_t i = 0; i < n;) {
        int64_t j = i, pos = 0;
        while (j < n && (keyed[j] >> 32) == (keyed[i] >> 32)) pos += (int64_t)(keyed[j++] & 1u);
        /* ranks i+1..j share (i+1+j)/2; twice that is i+1+j */
        twice_rank_sum += pos * (i + 1 + j);
        npos += pos;
        i = j;
    }
    sb_free(keyed);
    sb_free(tmp);
    sb_free(count);
    int64_t nneg = n - npos;
    if (npos == 0 || nneg == 0) {
        *out = 0.5f;
        return SB_OK;
    }
    /* U = rank_sum - npos(npos+1)/2; AUC = U / (npos nneg) */
    int64_t twice_u = twice_rank_sum - npos * (npos + 1);
    *out = (float)((double)twice_u / (2.0 * (double)npos * (double)nneg));
    return SB_OK;
}

sb_status sb_metric_eval(int32_t metric, int32_t objective, float alpha, float rho, const float *margin, int64_t n,
                         int32_t k, const float *label, const float *weight, float *out) {
    const int log_link = objective == SB_OBJ_POISSON || objective == SB_OBJ_GAMMA || objective == SB_OBJ_TWEEDIE;
    if (n <= 0) {
        *out = 0.0f;
        return SB_OK;
    }
    if (metric == SB_METRIC_AUC) return auc(margin, n, label, out);
    float p[16384];
    if (k > (int32_t)(sizeof p / sizeof p[0])) return sb_fail(SB_ERR_LIMIT, "metric: too many classes");
    sb_sacc num, den;
    sb_sacc_init(&num);
    sb_sacc_init(&den);
    for (int64_t r = 0; r < n; r++) {
        const float *mr = margin + r * k;
        float t = row_term(metric, mr, log_link ? sb_expf(mr[0]) : mr[0], k, label[r], alpha, rho, p);
        float w = weight ? weight[r] : 1.0f;
        sb_sacc_add(&num, weight ? t * w : t);
        sb_sacc_add(&den, w);
    }
    float v = sb_sacc_round_f32(&num) / sb_sacc_round_f32(&den);
    *out = metric == SB_METRIC_RMSE ? __builtin_sqrtf(v) : v;
    return SB_OK;
}

int sb_metric_better(int32_t metric, float a, float b) {
    return metric == SB_METRIC_AUC || metric == SB_METRIC_NDCG || metric == SB_METRIC_MAP ? a > b : a < b;
}
