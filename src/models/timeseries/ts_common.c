/*
 * ts_common.c: the batch plumbing the time series families share
 * (ts_common.h): the checks every batch gets, the fits a task a series, a
 * card stage under the family's prefix.
 */
#include "ts_common.h"
#include "../../device/device.h"
#include <stdio.h>

sb_status ts_device_chunk(const sb_device *d, int64_t *max_series) {
    return sb_device_env_count(d, "TS_CHUNK", "series a launch", max_series);
}

sb_status ts_check_offsets(const char *family, const int64_t *offsets, int64_t nseries) {
    if (nseries < 1) return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: no series (nseries %lld)", family, (long long)nseries);
    if (offsets[0] != 0)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: offsets[0] must be 0 (it is %lld)", family, (long long)offsets[0]);
    return SB_OK;
}

sb_status ts_check_series(const char *family, const double *y, const int64_t *offsets, int64_t i) {
    const int64_t a = offsets[i], b = offsets[i + 1], n = b - a;
    if (b < a) return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s: offsets decrease at series %lld", family, (long long)i);
    if (n > INT32_MAX) return sb_fail(SB_ERR_LIMIT, "series %lld: %lld values, above 2^31 - 1", (long long)i, (long long)n);
    int64_t missing = 0, first = -1;
    for (int64_t t = 0; t < n; t++)
        if (!ts_finite(y[a + t])) {
            missing++;
            if (first < 0) first = t;
        }
    if (n > 0 && missing == n)
        return sb_fail(SB_ERR_INVALID_INPUT, "series %lld: every value is missing (NaN or infinite)", (long long)i);
    if (missing)
        return sb_fail(SB_ERR_INVALID_INPUT, "series %lld: value %lld is %s; missing values are refused (docs/timeseries.md)",
                       (long long)i, (long long)first, y[a + first] != y[a + first] ? "NaN" : "infinite");
    return SB_OK;
}

typedef struct ts_job {
    ts_fit_one_fn fit_one;
    const void *spec;
    const double *y;
    const int64_t *offsets;
    char *fits;
    size_t fit_size;
    sb_status *st;
} ts_job;

static void ts_task(void *ctx, int64_t i) {
    ts_job *j = ctx;
    j->st[i] = j->fit_one(j->spec, j->y + j->offsets[i], j->offsets[i + 1] - j->offsets[i],
                          j->fits + (size_t)i * j->fit_size);
}

void ts_fit_all(ts_fit_one_fn fit_one, const void *spec, const double *y, const int64_t *offsets, int64_t nseries,
                void *fits, size_t fit_size, sb_status *sts) {
    ts_job job = {fit_one, spec, y, offsets, fits, fit_size, sts};
    sb_parallel_for(nseries, ts_task, &job);
}

sb_status ts_record_stage(sb_status st, sb_card *card, const char *prefix, const char *stage, sb_dtype dtype,
                          const void *values, int64_t c) {
    if (st != SB_OK) return st;
    char tag[64];
    snprintf(tag, sizeof tag, "%s.%s", prefix, stage);
    return sb_card_record(card, tag, dtype, values, (uint64_t)c);
}
