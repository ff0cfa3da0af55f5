/*
 * binning.c: exact, deterministic bin edges (see binning.h). Sorting is an LSD
 * radix sort on the IEEE total-order key of each float, so equal inputs give
 * equal edges on every machine and no comparison function can disagree.
 */
#include "binning.h"
#include "../../core/rng.h"
#include <stdlib.h>
#include <string.h>

#define SB_PURPOSE_BIN_SAMPLE 0x42494E31u
#define APPLY_GRAIN 8192

/* Monotone map from float bits to unsigned keys: negative values reversed. */
static uint32_t order_key(float v) {
#ifdef SB_SABOTAGE_BIN_KEY
    /* Separating arm for rule 7 (make SABOTAGE=bin-key): the raw bits keyed,
     * so -0 sorts before +0 as a value of its own and gets an edge. */
    uint32_t u = sb_f2u(v);
#else
    uint32_t u = sb_f2u(v == 0.0f ? 0.0f : v); /* -0 and +0 are one value */
#endif
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

static float key_value(uint32_t k) {
    return sb_u2f((k & 0x80000000u) ? (k & 0x7FFFFFFFu) : ~k);
}

/* Sort keys[0..n) ascending with tmp as scratch (4 passes of 8 bits). */
static void radix_sort(uint32_t *keys, uint32_t *tmp, int64_t n) {
    for (int shift = 0; shift < 32; shift += 8) {
        int64_t count[257];
        memset(count, 0, sizeof count);
        for (int64_t i = 0; i < n; i++) count[((keys[i] >> shift) & 255u) + 1]++;
        if (n == 0 || count[((keys[0] >> shift) & 255u) + 1] == n) continue; /* one byte value: no-op pass */
        for (int d = 0; d < 256; d++) count[d + 1] += count[d];
        for (int64_t i = 0; i < n; i++) tmp[count[(keys[i] >> shift) & 255u]++] = keys[i];
        memcpy(keys, tmp, sizeof(uint32_t) * (size_t)n);
    }
}

/* The edge between neighbouring distinct values a < b: their midpoint when it
 * lies in [a, b), else a (adjacent floats, or an infinite neighbour). Each half
 * is rounded on its own (sb_round_f32): a * 0.5f is inexact for a denormal a, so
 * a contracting compiler's fma(a, 0.5f, b * 0.5f) would move an edge; binning
 * runs on the host for every device and must not depend on the flags. */
static float edge_between(float a, float b) {
    float mid = sb_round_f32(a * 0.5f) + sb_round_f32(b * 0.5f);
    return (mid >= a && mid < b) ? mid : a;
}

typedef struct bin_job {
    const float *x;
    int64_t n;
    int32_t nf, max_bin;
    const int64_t *rows; /* sampled rows, or NULL for all */
    int64_t nrows;
    float *edges;        /* nf x max_bin scratch */
    int32_t *nbins;
    uint32_t *keys, *tmp; /* per worker scratch: width x nrows each */
    int failed;
    const uint8_t *cat;   /* per feature: categorical, or NULL */
} bin_job;

/* A categorical feature's code and its count, ordered by count (larger
 * first), then code: a total order, since codes are distinct. */
typedef struct code_count {
    uint32_t key, count;
} code_count;

static int by_count(const void *a, const void *b) {
    const code_count *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return (x->key > y->key) - (x->key < y->key);
}

static int by_key(const void *a, const void *b) {
    const code_count *x = a, *y = b;
    return (x->key > y->key) - (x->key < y->key);
}

static void bin_feature(void *ctx, int64_t f) {
    bin_job *j = ctx;
    int64_t w = sb_worker_index();
    uint32_t *keys = j->keys + w * j->nrows, *tmp = j->tmp + w * j->nrows;
    int64_t m = 0;
    for (int64_t i = 0; i < j->nrows; i++) {
        int64_t r = j->rows ? j->rows[i] : i;
        float v = j->x[r * j->nf + f];
        if (v == v) keys[m++] = order_key(v);
    }
    radix_sort(keys, tmp, m);
    float *edges = j->edges + f * j->max_bin;
    if (j->cat && j->cat[f]) {
        /* codes: the non-negative values (negative ones are missing) */
        int64_t first = 0;
        while (first < m && key_value(keys[first]) < 0.0f) first++;
        /* distinct codes (keys) and their counts (tmp), compacted in place */
        int64_t nd = 0;
        for (int64_t i = first; i < m;) {
            int64_t k = i;
            while (k < m && keys[k] == keys[i]) k++;
            keys[nd] = keys[i];
            tmp[nd] = (uint32_t)(k - i);
            nd++;
            i = k;
        }
        code_count *cc = sb_malloc(sizeof(code_count) * (size_t)(nd ? nd : 1));
        if (!cc) {
            __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
            j->nbins[f] = 1;
            edges[0] = -1.0f;
            return;
        }
        for (int64_t i = 0; i < nd; i++) {
            cc[i].key = keys[i];
            cc[i].count = tmp[i];
        }
        qsort(cc, (size_t)nd, sizeof *cc, by_count);
        const int64_t kept = nd < j->max_bin ? nd : j->max_bin;
        qsort(cc, (size_t)kept, sizeof *cc, by_key);
        for (int64_t i = 0; i < kept; i++) edges[i] = key_value(cc[i].key);
        if (kept == 0) edges[0] = -1.0f;
        sb_free(cc);
        j->nbins[f] = kept > 0 ? (int32_t)kept : 1;
        return;
    }
    if (m == 0) { /* all missing: one value bin that nothing reaches */
        j->nbins[f] = 1;
        edges[0] = sb_u2f(0x7F800000u);
        return;
    }
    /* Distinct values and their counts, compacted in place: keys[d], counts in tmp. */
    int64_t d = 0;
    for (int64_t i = 0; i < m;) {
        int64_t k = i;
        while (k < m && keys[k] == keys[i]) k++;
        keys[d] = keys[i];
        tmp[d] = (uint32_t)(k - i);
        d++;
        i = k;
    }
    int32_t nb = 0;
    if (d <= j->max_bin) {
        for (int64_t i = 0; i + 1 < d; i++) edges[nb++] = edge_between(key_value(keys[i]), key_value(keys[i + 1]));
    } else {
        /* Equal frequency with heavy values set apart (in the manner of
         * LightGBM's bin finder): a value holding at least m / max_bin rows
         * gets a bin of its own; the other values share the remaining bins,
         * the current bin closing once it holds its share of the light rows
         * still to place, or when every light value left can have its own bin.
         * Integer comparisons only, so the edges are the same everywhere. */
        int64_t heavy_left = 0, light_rows = m, light_vals = 0;
        for (int64_t i = 0; i < d; i++) {
            if ((int64_t)tmp[i] * j->max_bin >= m) {
                heavy_left++;
                light_rows -= tmp[i];
            } else {
                light_vals++;
            }
        }
        int64_t cur = 0;
        for (int64_t i = 0; i + 1 < d && nb < j->max_bin - 1; i++) {
            const int heavy = (int64_t)tmp[i] * j->max_bin >= m;
            const int next_heavy = (int64_t)tmp[i + 1] * j->max_bin >= m;
            if (heavy) {
                heavy_left--;
            } else {
                cur += tmp[i];
                light_vals--;
            }
            const int64_t light_bins = (j->max_bin - nb) - heavy_left; /* incl. the current one */
            int cut = heavy || next_heavy;
            if (!heavy && !cut)
                cut = light_bins > 1 && (cur * light_bins >= light_rows || light_vals <= light_bins - 1);
            if (cut) {
                edges[nb++] = edge_between(key_value(keys[i]), key_value(keys[i + 1]));
                if (!heavy) {
                    light_rows -= cur;
                    cur = 0;
                }
            }
        }
    }
    edges[nb++] = sb_u2f(0x7F800000u); /* +inf closes the last bin */
    j->nbins[f] = nb;
}

int sb_bins_in_sample(uint64_t seed, int64_t n, int64_t sample_rows, int64_t r) {
    if (!(sample_rows > 0 && n > sample_rows)) return 1;
    const float p = (float)sample_rows / (float)n;
    return sb_rng_unit_f32(seed, SB_PURPOSE_BIN_SAMPLE, (uint64_t)r) < p;
}

sb_status sb_bins_build(const float *x, int64_t n, int32_t nf, int32_t max_bin, uint64_t seed,
                        int64_t sample_rows, sb_bins *out) {
    return sb_bins_build_cat(x, n, nf, max_bin, seed, sample_rows, NULL, out);
}

sb_status sb_bins_build_cat(const float *x, int64_t n, int32_t nf, int32_t max_bin, uint64_t seed,
                            int64_t sample_rows, const uint8_t *cat, sb_bins *out) {
    memset(out, 0, sizeof *out);
    if (max_bin < 2 || max_bin > SB_MAX_BIN)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "max_bin must be in 2..%d, got %d", SB_MAX_BIN, (int)max_bin);
    bin_job j = {x, n, nf, max_bin, NULL, n, NULL, NULL, NULL, NULL, 0, cat};
    int64_t *rows = NULL;
    if (sample_rows > 0 && n > sample_rows) {
        rows = sb_malloc(sizeof(int64_t) * (size_t)n);
        if (!rows) return sb_fail(SB_ERR_OUT_OF_MEMORY, "binning: out of memory");
        int64_t k = 0;
        for (int64_t r = 0; r < n; r++)
            if (sb_bins_in_sample(seed, n, sample_rows, r)) rows[k++] = r;
        j.rows = rows;
        j.nrows = k;
    }
    j.edges = sb_malloc(sizeof(float) * (size_t)nf * (size_t)max_bin);
    j.nbins = sb_calloc((size_t)nf, sizeof(int32_t));
    const size_t width = (size_t)sb_parallel_width();
    j.keys = sb_malloc(sizeof(uint32_t) * width * (size_t)(j.nrows ? j.nrows : 1));
    j.tmp = sb_malloc(sizeof(uint32_t) * width * (size_t)(j.nrows ? j.nrows : 1));
    out->offset = sb_malloc(sizeof(int32_t) * (size_t)(nf + 1));
    sb_status st = SB_OK;
    if (!j.edges || !j.nbins || !j.keys || !j.tmp || !out->offset) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "binning: out of memory");
        goto done;
    }
    sb_parallel_for_width(nf, (int32_t)width, bin_feature, &j);
    if (j.failed) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "binning: out of memory");
        goto done;
    }
    int32_t total_edges = 0;
    for (int32_t f = 0; f < nf; f++) {
        out->offset[f] = total_edges;
        total_edges += j.nbins[f];
    }
    out->offset[nf] = total_edges;
    out->upper = sb_malloc(sizeof(float) * (size_t)(total_edges ? total_edges : 1));
    if (!out->upper) {
        st = sb_fail(SB_ERR_OUT_OF_MEMORY, "binning: out of memory");
        goto done;
    }
    for (int32_t f = 0; f < nf; f++)
        memcpy(out->upper + out->offset[f], j.edges + (int64_t)f * max_bin, sizeof(float) * (size_t)j.nbins[f]);
    out->nfeatures = nf;
    out->nbins = j.nbins;
    j.nbins = NULL;
    out->total = total_edges + nf;
    if (cat) {
        if (!(out->cat = sb_malloc((size_t)(nf ? nf : 1)))) {
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "binning: out of memory");
            goto done;
        }
        memcpy(out->cat, cat, (size_t)nf);
    }
done:
    sb_free(rows);
    sb_free(j.edges);
    sb_free(j.nbins);
    sb_free(j.keys);
    sb_free(j.tmp);
    if (st != SB_OK) sb_bins_release(out);
    return st;
}

void sb_bins_release(sb_bins *b) {
    if (!b) return;
    sb_free(b->nbins);
    sb_free(b->offset);
    sb_free(b->upper);
    sb_free(b->cat);
    memset(b, 0, sizeof *b);
}

typedef struct apply_job {
    const sb_bins *b;
    const float *x;
    int64_t n;
    int32_t nf;
    uint8_t *out;
} apply_job;

/* The bin of a non-NaN value: the first edge i with v <= up[i] (edges ascend
 * and the last is +inf), found as sb_bin_of finds it but without branches:
 * the range [base, base + len) always holds that edge, and each step keeps its
 * upper or lower part by a conditional move. The comparisons a value meets are
 * data, so the branching search mispredicted about half of them. */
static uint8_t bin_of_branchless(const float *up, int32_t nb, float v) {
    int32_t base = 0, len = nb;
    while (len > 1) {
        const int32_t half = len >> 1;
        base = up[base + half - 1] < v ? base + half : base;
        len -= half;
    }
    return (uint8_t)(base + 1);
}

static void apply_task(void *ctx, int64_t task) {
    apply_job *j = ctx;
    int64_t b, e;
    sb_chunk_range(j->n, APPLY_GRAIN, task, &b, &e);
    for (int32_t f = 0; f < j->nf; f++) { /* one feature at a time: its edges stay in L1 */
        const float *up = j->b->upper + j->b->offset[f];
        const int32_t nb = j->b->nbins[f];
        uint8_t *out = j->out + (int64_t)f * j->n;
        if (j->b->cat && j->b->cat[f]) {
            for (int64_t r = b; r < e; r++) out[r] = sb_cat_bin_of(up, nb, j->x[r * j->nf + f]);
            continue;
        }
        for (int64_t r = b; r < e; r++) {
            const float v = j->x[r * j->nf + f];
            out[r] = v != v ? 0 : bin_of_branchless(up, nb, v);
        }
    }
}

void sb_bins_apply(const sb_bins *b, const float *x, int64_t n, int32_t nf, uint8_t *out) {
    apply_job j = {b, x, n, nf, out};
    sb_parallel_for(sb_chunk_count(n, APPLY_GRAIN), apply_task, &j);
}
