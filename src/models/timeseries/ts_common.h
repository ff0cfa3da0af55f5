/*
 * ts_common.h: pieces the time series families share (exponential smoothing,
 * ARIMA): a double's canonical bits, a finiteness test, and the batch
 * plumbing (the series checks, the fits a task a series, the card stages,
 * the digests' little-endian bytes).
 * Host C only, IEEE binary64, no contraction (the build's -ffp-contract=off).
 */
#ifndef SB_MODELS_TS_COMMON_H
#define SB_MODELS_TS_COMMON_H
#include "../../core/internal.h"
#include "../../math/sb_math.h"
#include <math.h> /* INFINITY and NAN only */
#include <string.h>

static inline int ts_finite(double v) { return v - v == 0.0; }

/* A double's bits for cards and digests; every NaN is one quiet NaN (x86 and
 * ARM produce NaNs of different signs). */
static inline uint64_t ts_canon(double v) {
    uint64_t u;
    if (v != v) return 0x7FF8000000000000ull;
    memcpy(&u, &v, 8);
    return u;
}

/* Little-endian bytes for the digests, *p advanced past them. */
static inline void ts_put32(uint8_t **p, uint32_t v) {
    for (int i = 0; i < 4; i++) *(*p)++ = (uint8_t)(v >> (8 * i));
}
static inline void ts_put64(uint8_t **p, uint64_t v) {
    for (int i = 0; i < 8; i++) *(*p)++ = (uint8_t)(v >> (8 * i));
}

/* A double's canonical bits (ts_canon), little-endian, into a digest. */
static inline void ts_digest_f64(sb_sha256_ctx *c, double v) {
    uint8_t b[8], *p = b;
    ts_put64(&p, ts_canon(v));
    sb_sha256_update(c, b, 8);
}

/* The most series a device launch of the time series families takes:
 * SAMEBITS_<BACKEND>_TS_CHUNK (CUDA or OPENCL, sb_device_env), a positive
 * integer, or 0 (unset: the memory budget alone). A schedule input only (a
 * chunk's bounds decide no bit); it exists to measure how a launch's size
 * trades its parallelism against its scratch's footprint in the caches. A
 * value that is not a positive integer is refused by name. */
struct sb_device;
sb_status ts_device_chunk(const struct sb_device *d, int64_t *max_series);

/* A batch's offsets: at least one series and offsets[0] == 0; family names
 * the family in the refusal ("arima", "exponential smoothing"). */
sb_status ts_check_offsets(const char *family, const int64_t *offsets, int64_t nseries);

/* Series i of a batch: offsets that do not decrease, at most 2^31 - 1
 * values, no missing (NaN or infinite) value; every refusal names the
 * series. The family's own checks (its length, its data) follow. */
sb_status ts_check_series(const char *family, const double *y, const int64_t *offsets, int64_t i);

/* Fit one series (y, n values) under spec into fit (the family's fit
 * record); a status per series. */
typedef sb_status (*ts_fit_one_fn)(const void *spec, const double *y, int64_t n, void *fit);

/* Every series of a batch, a task a series over the pool: series i into
 * (char *)fits + i * fit_size, its status in sts[i]. A series' result is a
 * function of that series alone, whichever thread runs it. */
void ts_fit_all(ts_fit_one_fn fit_one, const void *spec, const double *y, const int64_t *offsets, int64_t nseries,
                void *fits, size_t fit_size, sb_status *sts);

/* Record one card stage "<prefix>.<stage>" of c values (dtype's), unless
 * st already failed; returns the status carried on. */
sb_status ts_record_stage(sb_status st, sb_card *card, const char *prefix, const char *stage, sb_dtype dtype,
                          const void *values, int64_t c);

/* The most coordinates a simplex search of the family's fits moves
 * (kernels/arima.h's AK_NM_MAXD). */
#define TS_NM_MAXD 64

#endif
