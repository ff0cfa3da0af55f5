/* metrics.h: evaluation metrics of gradient boosting, identical on every leg. */
#ifndef SB_GBDT_METRICS_H
#define SB_GBDT_METRICS_H
#include "../../core/internal.h"

/* The metric of margins (n x k, row-major) against labels and optional weights.
 * Per-row terms use the profile's functions; their sums are exact
 * (superaccumulator), so the value is a function of the inputs alone. Under
 * a log link (poisson, gamma, tweedie objectives) the regression metrics read
 * exp(margin); alpha and rho parametrize huber/quantile and tweedie. */
sb_status sb_metric_eval(int32_t metric, int32_t objective, float alpha, float rho, const float *margin, int64_t n,
                         int32_t k, const float *label, const float *weight, float *out);

/* 1 if metric value a is better than b (higher for auc, lower otherwise). */
int sb_metric_better(int32_t metric, float a, float b);

#endif
