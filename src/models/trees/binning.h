/*
 * binning.h: per-feature bin edges and the binned matrix (one byte per value).
 *
 * Bin 0 of every feature is "missing" (NaN). Value bins 1..nbins[f] cover the
 * real line in order: value v falls in the first bin b whose inclusive upper
 * edge upper(f, b) >= v; the last upper edge is +inf. A split "bin <= b" is
 * therefore exactly "x <= upper(f, b)" on raw floats, which is how a model
 * routes rows at prediction time.
 */
#ifndef SB_TREES_BINNING_H
#define SB_TREES_BINNING_H
#include "../../core/internal.h"

#define SB_MAX_BIN 255 /* value bins per feature; bin 0 is missing, so a bin fits a byte */

typedef struct sb_bins {
    int32_t nfeatures;
    int32_t *nbins;   /* value bins of feature f, 1..SB_MAX_BIN */
    int32_t *offset;  /* feature f's edges start at upper[offset[f]] */
    float *upper;     /* upper[offset[f] + b - 1]: inclusive upper edge of value bin b */
    int32_t total;    /* sum over features of nbins[f] + 1 (histogram length) */
    uint8_t *cat;     /* per feature: 1 = categorical, or NULL: none (see sb_bins_build_cat) */
} sb_bins;

/* Edges from x (row-major n x nf): the distinct non-NaN values of each feature
 * (-0 and +0 are one value) in IEEE total order; when there are more than
 * max_bin, equal-frequency cuts by exact integer arithmetic on their counts.
 * Edges sit halfway between neighbouring distinct values. When n exceeds
 * sample_rows, rows are drawn by the counter rng keyed by (seed, row), so the
 * sample is a function of the data and the seed only. */
sb_status sb_bins_build(const float *x, int64_t n, int32_t nf, int32_t max_bin, uint64_t seed,
                        int64_t sample_rows, sb_bins *out);

/* sb_bins_build with categorical features (cat[f] = 1; NULL: none): such a
 * feature's values are category codes (integral floats >= 0, checked by the
 * caller; NaN and negative values are missing). Its value bins are its
 * max_bin most frequent codes of the sample (ties by the smaller code), in
 * ascending code order, upper[] holding each bin's code; every other value
 * falls in bin 0 with the missing ones. A feature with no code has one value
 * bin of code -1, which no value reaches. */
sb_status sb_bins_build_cat(const float *x, int64_t n, int32_t nf, int32_t max_bin, uint64_t seed,
                            int64_t sample_rows, const uint8_t *cat, sb_bins *out);

void sb_bins_release(sb_bins *b);

/* The bin of code v among a categorical feature's nb codes up[0..nb)
 * (ascending): its position + 1, or 0 when v is missing, negative or not one
 * of them. Comparisons only. */
static inline uint8_t sb_cat_bin_of(const float *up, int32_t nb, float v) {
    return (uint8_t)sb_code_pos(up, nb, v); /* codes are >= 0: a negative value is in none */
}

/* The bin of value v of feature f. */
static inline uint8_t sb_bin_of(const sb_bins *b, int32_t f, float v) {
    if (b->cat && b->cat[f]) return sb_cat_bin_of(b->upper + b->offset[f], b->nbins[f], v);
    if (v != v) return 0;
    const float *up = b->upper + b->offset[f];
    int32_t lo = 0, hi = b->nbins[f] - 1; /* the last edge is +inf: always found */
    while (lo < hi) {
        int32_t mid = (lo + hi) >> 1;
        if (v <= up[mid]) hi = mid;
        else lo = mid + 1;
    }
    return (uint8_t)(lo + 1);
}

/* Bin a row-major matrix into out, feature-major: feature f's n bytes start at
 * out + f * n, so a histogram pass over one feature reads contiguous bytes. */
void sb_bins_apply(const sb_bins *b, const float *x, int64_t n, int32_t nf, uint8_t *out);

/* Whether row r of n is in the sample binning draws (sb_bins_build_cat):
 * every row when sample_rows is 0 or n <= sample_rows, else the rows whose
 * draw keyed by (seed, r) is below sample_rows / n. A pure function of the
 * global row index, so ranks that each hold a block of rows draw, together,
 * the one sample a single process draws (gbdt.c, distributed=mpi). */
int sb_bins_in_sample(uint64_t seed, int64_t n, int64_t sample_rows, int64_t r);

#endif
