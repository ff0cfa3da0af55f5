/*
 * test_device_ops.c: backend parity per operation (issue 16, DESIGN.md
 * section 6), in the manner of ggml's test-backend-ops. Every operation of
 * the tree device (tdev.h), of the forest device (fdev.h) and tree prediction
 * on a device runs on the reference ("cpu-batched", the host's own
 * implementation; for prediction the host path of predict.c) and, in
 * lockstep on the same inputs, on every other backend this build has and
 * this machine offers (cuda, opencl); each output is compared byte for byte
 * with the reference's. End-to-end model digests show that some bit moved;
 * this shows which operation moved it.
 *
 *   sb_unit device_ops
 *
 * prints one line per operation, configuration and backend ("identical", or
 * the first differing element with both values), then a summary per
 * backend, and fails on any difference or error. A backend that is not built
 * or has no usable device is "skipped (why)", never a pass; naming it in
 * SAMEBITS_PARITY_REQUIRE (comma-separated kinds, e.g. "cuda,opencl") makes
 * its absence a failure. SAMEBITS_PARITY_ONLY (comma-separated substrings of
 * "family/config", e.g. "tree/,forest/squared") runs a subset.
 * SAMEBITS_OPENCL_DEVICE, SAMEBITS_OPENCL_HIST, SAMEBITS_OPENCL_ARM and their
 * CUDA counterparts are read by the devices themselves.
 *
 * Inputs are pure functions of their indices (the counter generator of
 * core/rng.h and integer formulas; no libm, clock or rand), chosen to be
 * hostile: ties, missing bins, an all-missing and a constant feature, 255
 * bins, empty segments and nodes, one-row nodes, splits that send every row
 * one way, row subsets, masks, several histogram slots and subtraction,
 * multiclass K up to 30, weighted forests, balanced_subsample, Extra Trees,
 * the isolation forest, and sizes at which the GPU schedule changes shape
 * (many partition and histogram tiles, more than 256 features and several
 * feature groups, nodes above and below the forest's small-node size).
 *
 * Reading back what the interfaces keep on the device: neither device
 * returns its row array, so the test reads it through the operations
 * themselves. Tree device: gradients set to the row number (set_gradients,
 * quantize at scale 1) and a one-row histogram job per position give the row
 * at each position; tdev's partition is stable, so rows compare exactly.
 * Forest device: a one-position node's sums give its (value, count, weight),
 * the value carrying the row number in regression setups; fdev's partition
 * is unstable within a side, so each side compares as a sorted multiset, with
 * nleft. Where that would take too many launches (the largest
 * configurations), a sample of positions is read instead, and the sides'
 * exact sums (the children's sums) fingerprint the sets.
 */
#include "sb_test.h"
#include "core/internal.h"
#include "core/rng.h"
#include "device/device.h"
#include "kernels/quantize.h"
#include "kernels/tree.h"
#include "kernels/forest.h"
#include "models/trees/tdev.h"
#include "models/forest/fdev.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- backends ---- */

/* Backend slots: 0 is the reference, the others run in lockstep with it. */
#define NB 3
typedef struct pbackend {
    const char *name;
    sb_device_kind kind;
    int state;      /* 0: not tried yet; 1: in use; -1: skipped (why) */
    char why[320];
    int identical, differ, errors;
} pbackend;

static pbackend g_be[NB] = {
    {"cpu-batched", SB_DEVICE_CPU_BATCHED, 1, "", 0, 0, 0},
    {"cuda", SB_DEVICE_CUDA, 0, "", 0, 0, 0},
    {"opencl", SB_DEVICE_OPENCL, 0, "", 0, 0, 0},
};

/* Whether backend b may be opened now: not yet skipped, and built. */
static int be_wanted(int b) {
    if (g_be[b].state < 0) return 0;
    if (b > 0 && !sb_device_built(g_be[b].kind)) {
        g_be[b].state = -1;
        snprintf(g_be[b].why, sizeof g_be[b].why, "not built in this build%s",
                 g_be[b].kind == SB_DEVICE_CUDA ? " (make CUDA=1)" : " (OPENCL=0)");
        return 0;
    }
    return 1;
}

/* An open of backend b returned st: SB_OK marks it in use; unavailable
 * (no loader, driver or device, or one the profile refuses) skips it for
 * the rest of the run, with the device layer's words; any other status is a
 * failure of the open, counted as an error. Returns 1 when it is open. */
static int be_opened(int b, sb_status st, const char *what) {
    if (st == SB_OK) {
        g_be[b].state = 1;
        return 1;
    }
    if (st == SB_ERR_BACKEND_UNAVAILABLE && g_be[b].state == 0) {
        g_be[b].state = -1;
        snprintf(g_be[b].why, sizeof g_be[b].why, "%s", sb_last_error());
        return 0;
    }
    g_be[b].errors++;
    printf("  %s: opening %s failed: %s: %s\n", what, g_be[b].name, sb_status_name(st), sb_last_error());
    SB_CHECK(!"a device open failed");
    return 0;
}

/* ---- results: one line per (op, config, backend) ---- */

typedef struct pres {
    char op[24], cfg[40];
    int b, calls, bad;
    long seq;        /* when its first difference was seen */
    char first[360];
} pres;

#define MAX_RES 1400
static pres g_res[MAX_RES];
static int g_nres;
static long g_seq;

/* The outcome of one call of op in cfg on backend b against the reference:
 * same, or the first difference (diff), kept from the first call that had
 * one. */
static void report(const char *op, const char *cfg, int b, int same, const char *diff) {
    pres *r = NULL;
    for (int i = 0; i < g_nres && !r; i++)
        if (g_res[i].b == b && !strcmp(g_res[i].op, op) && !strcmp(g_res[i].cfg, cfg)) r = &g_res[i];
    if (!r) {
        if (g_nres == MAX_RES) {
            SB_CHECK(!"too many results (raise MAX_RES)");
            return;
        }
        r = &g_res[g_nres++];
        memset(r, 0, sizeof *r);
        snprintf(r->op, sizeof r->op, "%s", op);
        snprintf(r->cfg, sizeof r->cfg, "%s", cfg);
        r->b = b;
    }
    r->calls++;
    if (!same && !r->bad) {
        r->bad = 1;
        r->seq = ++g_seq;
        snprintf(r->first, sizeof r->first, "check %d: %s", r->calls, diff);
    }
}

/* ---- element formatting and comparison ---- */

enum { T_U8, T_I32, T_I64, T_F32, T_HBIN, T_SPLIT, T_FSPLIT };
static const size_t k_tsize[] = {1, 4, 8, 4, sizeof(sb_k_hbin), sizeof(sb_k_split), sizeof(sb_k_fsplit)};

static void fmt_elem(int t, const void *base, int64_t i, char *buf, size_t cap) {
    const char *p = (const char *)base + (size_t)i * k_tsize[t];
    switch (t) {
    case T_U8: snprintf(buf, cap, "%u", (unsigned)*(const uint8_t *)p); break;
    case T_I32: {
        int32_t v;
        memcpy(&v, p, 4);
        snprintf(buf, cap, "%d", (int)v);
        break;
    }
    case T_I64: {
        int64_t v;
        memcpy(&v, p, 8);
        snprintf(buf, cap, "%lld", (long long)v);
        break;
    }
    case T_F32: {
        float v;
        memcpy(&v, p, 4);
        snprintf(buf, cap, "%.9g (0x%08x)", (double)v, (unsigned)sb_f2u(v));
        break;
    }
    case T_HBIN: {
        sb_k_hbin v;
        memcpy(&v, p, sizeof v);
        snprintf(buf, cap, "{g %lld, h %lld, c %lld}", (long long)v.g, (long long)v.h, (long long)v.c);
        break;
    }
    case T_SPLIT: {
        sb_k_split v;
        memcpy(&v, p, sizeof v);
        snprintf(buf, cap, "{valid %d, gain %.9g (0x%08x), feature %d, bin %d, dl %d, lg %lld, lh %lld, lc %lld}",
                 (int)v.valid, (double)v.gain, (unsigned)sb_f2u(v.gain), (int)v.feature, (int)v.bin,
                 (int)v.default_left, (long long)v.lg, (long long)v.lh, (long long)v.lc);
        break;
    }
    default: {
        sb_k_fsplit v;
        memcpy(&v, p, sizeof v);
        snprintf(buf, cap, "{valid %d, score %.9g (0x%08x), feature %d, bin %d, dl %d, wl %lld}", (int)v.valid,
                 (double)v.score, (unsigned)sb_f2u(v.score), (int)v.feature, (int)v.bin, (int)v.dl,
                 (long long)v.wl);
        break;
    }
    }
}

/* Whether element i of a and b are the same. Splits compare field by field
 * (their pad_ is not part of the result); everything else by its bytes, so
 * floats compare as bit patterns (-0 is not +0). */
static int elem_same(int t, const void *a, const void *b, int64_t i) {
    const char *p = (const char *)a + (size_t)i * k_tsize[t], *q = (const char *)b + (size_t)i * k_tsize[t];
    if (t == T_SPLIT) {
        sb_k_split x, y;
        memcpy(&x, p, sizeof x);
        memcpy(&y, q, sizeof y);
        return x.valid == y.valid && sb_f2u(x.gain) == sb_f2u(y.gain) && x.feature == y.feature && x.bin == y.bin &&
               x.default_left == y.default_left && x.lg == y.lg && x.lh == y.lh && x.lc == y.lc;
    }
    if (t == T_FSPLIT) {
        sb_k_fsplit x, y;
        memcpy(&x, p, sizeof x);
        memcpy(&y, q, sizeof y);
        return x.valid == y.valid && sb_f2u(x.score) == sb_f2u(y.score) && x.feature == y.feature && x.bin == y.bin &&
               x.dl == y.dl && x.wl == y.wl;
    }
    return memcmp(p, q, k_tsize[t]) == 0;
}

/* Compares n elements of type t, got (backend b) against ref, and reports
 * the outcome; the first difference is named "<what> <index>" (ctx, when
 * given, adds a word about the index). Returns 1 when identical. */
typedef void (*ctx_fn)(const void *arg, int64_t i, char *buf, size_t cap);
static int compare(const char *op, const char *cfg, int b, const char *what, int t, const void *ref, const void *got,
                   int64_t n, ctx_fn ctx, const void *arg) {
    for (int64_t i = 0; i < n; i++)
        if (!elem_same(t, ref, got, i)) {
            char r[200], g[200], c[96] = "", msg[600];
            fmt_elem(t, ref, i, r, sizeof r);
            fmt_elem(t, got, i, g, sizeof g);
            if (ctx) ctx(arg, i, c, sizeof c);
            snprintf(msg, sizeof msg, "%s %lld%s: reference %s, %s %s", what, (long long)i, c, r, g_be[b].name, g);
            report(op, cfg, b, 0, msg);
            return 0;
        }
    report(op, cfg, b, 1, "");
    return 1;
}

/* An operation failed on backend b: an error, reported as its outcome. */
static void report_error(const char *op, const char *cfg, int b, sb_status st) {
    char msg[400];
    snprintf(msg, sizeof msg, "error %s: %s", sb_status_name(st), sb_last_error());
    report(op, cfg, b, 0, msg);
}

/* ---- deterministic inputs ---- */

#define P_BINS 0x42494E53u /* purposes of the test's draws */
#define P_MISS 0x4D495353u
#define P_LABEL 0x4C41424Cu
#define P_WEIGHT 0x57474854u
#define P_TREE 0x54524545u
#define P_X 0x58585858u

/* Word sub of the counter generator's block (seed 7, purpose, index). */
static uint32_t draw(uint32_t purpose, uint64_t index, uint32_t sub) {
    sb_u32 w[4];
    sb_rng_words(7u, purpose, index, sub >> 2, w);
    return w[sub & 3];
}

/* Per-feature bin counts of pattern pat: 0, the small hostile set (a
 * constant feature, two and three bins, 255 bins, ...); 1, wide data (every
 * fourth feature 255 bins, the rest 8 to 40). */
static int32_t pattern_nbins(int pat, int32_t f) {
    static const int32_t small[] = {1, 2, 3, 255, 7, 16, 255, 5, 64, 1, 31, 4};
    if (pat == 0) return small[f % 12];
    return f % 4 == 0 ? 255 : 8 + (f * 13) % 33;
}

/* Sixteenths of feature f's rows that are missing: none, few, half and all
 * (feature 2 of the small pattern: every row in bin 0). */
static uint32_t missing_16ths(int pat, int32_t f) {
    if (pat == 0) {
        static const uint32_t m[] = {0, 1, 16, 0, 3, 8, 1, 0, 2, 0, 5, 1};
        return m[f % 12];
    }
    return f % 5 == 0 ? 0 : (uint32_t)(f % 3);
}

/* binned (feature-major, n x nf) of pattern pat. Draws concentrate on few
 * bins (the smaller of two uniform draws) so that bins tie and some stay
 * empty. */
static void make_bins(int pat, int64_t n, int32_t nf, uint8_t *binned, int32_t *nbins) {
    for (int32_t f = 0; f < nf; f++) {
        nbins[f] = pattern_nbins(pat, f);
        for (int64_t r = 0; r < n; r++) {
            const uint64_t at = (uint64_t)f << 32 | (uint64_t)r;
            const uint32_t u = draw(P_BINS, at, 0), v = draw(P_BINS, at, 1);
            uint8_t b = (uint8_t)(1 + (u < v ? u : v) % (uint32_t)nbins[f]);
            if (draw(P_MISS, at, 0) % 16u < missing_16ths(pat, f)) b = 0;
            binned[(int64_t)f * n + r] = b;
        }
    }
}

static uint8_t bin_of(const uint8_t *binned, int64_t n, int32_t f, int64_t r) { return binned[(int64_t)f * n + r]; }

/* ---- the tree device ---- */

typedef struct tcfg {
    const char *name;
    int64_t n;
    int32_t nf, objective, K;
    int pat;          /* bins pattern */
    int weighted;     /* row weights (some zero) */
    int subset;       /* the tree's rows: about two thirds, ascending */
    int masked;       /* a few features unusable */
    int levels;       /* levels of partition, histograms and search */
    int exact;        /* read every position after a partition (else a sample) */
    int cls;          /* the class the levels grow */
} tcfg;

/* The lockstep set of one configuration: a device per backend in use. */
typedef struct tset {
    const tcfg *c;
    char cfg[40];
    sb_tdev *d[NB];
    const sb_tdev_ops *ops[NB];
    int64_t n;
    int32_t nf, total, K;
    const uint8_t *binned;
    const int32_t *nbins, *hoff;
    const uint8_t *mask;   /* the configuration's */
    int32_t probe_f;       /* the feature the row probe reads */
    int32_t slots;         /* slots reserved */
    int32_t probe_slot;    /* the probe's first slot */
    int32_t *gq, *hq;      /* the reference's quantized gradients */
    float gs, hs;          /* the scales the levels use */
    int64_t searched, valid, probed; /* coverage: nodes searched, valid splits, positions read */
} tset;

/* Backend b's device failed (st) at op: reported, closed, left out of the
 * rest of the configuration. */
static void t_drop(tset *s, int b, const char *op, sb_status st) {
    report_error(op, s->cfg, b, st);
    s->ops[b]->close(s->d[b]);
    s->d[b] = NULL;
}

/* For every live backend: status st = call on its device; the reference's
 * failure fails the test and the configuration (returns from the caller
 * with 0). */
#define T_EACH(s, op, call) T_EACH_DO(s, op, call, return 0)
#define T_EACH_DO(s, op, call, onfail)                                                                         \
    for (int b = 0; b < NB; b++) {                                                                             \
        if (!(s)->d[b]) continue;                                                                              \
        sb_tdev *const dv = (s)->d[b];                                                                         \
        const sb_tdev_ops *const o = (s)->ops[b];                                                              \
        sb_status st_ = call;                                                                                  \
        (void)dv, (void)o;                                                                                     \
        if (st_ != SB_OK) {                                                                                    \
            if (b == 0) {                                                                                      \
                printf("  %s %s: the reference failed: %s\n", op, (s)->cfg, sb_last_error());                \
                SB_CHECK(!"the reference device failed");                                                      \
                onfail;                                                                                        \
            }                                                                                                  \
            t_drop((s), b, op, st_);                                                                           \
        }                                                                                                      \
    }

static void ctx_entry(const void *arg, int64_t i, char *buf, size_t cap) {
    const tset *s = arg;
    int32_t f = 0;
    while (f + 1 < s->nf && s->hoff[f + 1] <= i) f++;
    snprintf(buf, cap, " (feature %d, bin %lld)", (int)f, (long long)(i - s->hoff[f]));
}

/* Margins after add_tree, compared. */
static int t_add_tree(tset *s, const sb_k_bnode *nodes, int32_t nn, int32_t cls) {
    const int64_t nm = s->n * s->K;
    float *m[NB] = {0};
    T_EACH(s, "add_tree", o->add_tree(dv, nodes, nn, cls));
    int ok = 1;
    for (int b = 0; b < NB; b++)
        if (s->d[b] && !(m[b] = sb_malloc(sizeof(float) * (size_t)(nm ? nm : 1)))) ok = 0;
    T_EACH(s, "add_tree", o->read_margins(dv, m[b]));
    for (int b = 1; b < NB && ok; b++)
        if (s->d[b] && m[b]) compare("add_tree", s->cfg, b, "margin", T_F32, m[0], m[b], nm, NULL, NULL);
    for (int b = 0; b < NB; b++) sb_free(m[b]);
    SB_CHECK(ok);
    return ok;
}

/* Gradients: every class's maxima (maxabs, the reference's, out) compared. */
static int t_gradients(tset *s, float *maxabs) {
    float mx[NB][2 * 32];
    T_EACH(s, "gradients", o->gradients(dv, mx[b]));
    for (int b = 1; b < NB; b++)
        if (s->d[b]) compare("gradients", s->cfg, b, "maxabs", T_F32, mx[0], mx[b], 2 * s->K, NULL, NULL);
    memcpy(maxabs, mx[0], sizeof(float) * 2 * (size_t)s->K);
    return 1;
}

/* Quantized gradients of class cls (the reference's kept in s->gq, s->hq). */
static int t_quantize(tset *s, const char *op, int32_t cls, float gs, float hs) {
    int32_t *q[NB][2] = {{0}};
    T_EACH(s, op, o->quantize(dv, cls, gs, hs));
    for (int b = 0; b < NB; b++)
        if (s->d[b]) {
            q[b][0] = b == 0 ? s->gq : sb_malloc(sizeof(int32_t) * (size_t)s->n);
            q[b][1] = b == 0 ? s->hq : sb_malloc(sizeof(int32_t) * (size_t)s->n);
        }
    T_EACH(s, op, o->read_quantized(dv, q[b][0], q[b][1]));
    for (int b = 1; b < NB; b++)
        if (s->d[b] && compare(op, s->cfg, b, "gq of row", T_I32, q[0][0], q[b][0], s->n, NULL, NULL))
            compare(op, s->cfg, b, "hq of row", T_I32, q[0][1], q[b][1], s->n, NULL, NULL);
    for (int b = 1; b < NB; b++) sb_free(q[b][0]), sb_free(q[b][1]);
    return 1;
}

/* Slots [0, nslots) reserved on every device (contents kept). */
static int t_reserve(tset *s, int32_t nslots) {
    if (nslots <= s->slots) return 1;
    T_EACH(s, "reserve", o->reserve(dv, nslots));
    s->slots = nslots;
    return 1;
}

/* The histograms of slots[0, ns) read back and compared under op. */
static int t_compare_slots(tset *s, const char *op, const int32_t *slots, int32_t ns) {
    const size_t per = (size_t)s->total;
    sb_k_hbin *h[NB] = {0};
    for (int b = 0; b < NB; b++)
        if (s->d[b]) h[b] = sb_malloc(sizeof(sb_k_hbin) * per);
    for (int32_t k = 0; k < ns; k++) {
        T_EACH(s, op, o->read_hist(dv, slots[k], 0, s->total, h[b]));
        char what[48];
        snprintf(what, sizeof what, "slot %d entry", (int)slots[k]);
        for (int b = 1; b < NB; b++)
            if (s->d[b]) compare(op, s->cfg, b, what, T_HBIN, h[0], h[b], s->total, ctx_entry, s);
    }
    for (int b = 0; b < NB; b++) sb_free(h[b]);
    return 1;
}

static int t_hist(tset *s, const sb_tdev_hjob *jobs, int32_t nj) {
    T_EACH(s, "hist", o->hist(dv, jobs, nj));
    int32_t *sl = sb_malloc(sizeof(int32_t) * (size_t)(nj ? nj : 1));
    for (int32_t k = 0; k < nj; k++) sl[k] = jobs[k].slot;
    const int ok = t_compare_slots(s, "hist", sl, nj);
    sb_free(sl);
    return ok;
}

static int t_subtract(tset *s, const sb_tdev_sub *subs, int32_t ns) {
    T_EACH(s, "subtract", o->subtract(dv, subs, ns));
    int32_t *sl = sb_malloc(sizeof(int32_t) * (size_t)(ns ? ns : 1));
    for (int32_t k = 0; k < ns; k++) sl[k] = subs[k].large;
    const int ok = t_compare_slots(s, "subtract", sl, ns);
    sb_free(sl);
    return ok;
}

/* The best split of each node under rules r (the reference's into out). */
static int t_best(tset *s, const char *op, const sb_tdev_node *nodes, int32_t nn, const sb_k_split_rules *r,
                  sb_k_split *out) {
    sb_k_split *sp[NB] = {0};
    for (int b = 0; b < NB; b++)
        if (s->d[b]) sp[b] = b == 0 ? out : sb_calloc((size_t)(nn ? nn : 1), sizeof(sb_k_split));
    T_EACH(s, op, o->best(dv, nodes, nn, r, sp[b]));
    s->searched += nn;
    for (int32_t i = 0; i < nn; i++) s->valid += out[i].valid != 0;
    for (int b = 1; b < NB; b++)
        if (s->d[b]) compare(op, s->cfg, b, "node", T_SPLIT, sp[0], sp[b], nn, NULL, NULL);
    for (int b = 1; b < NB; b++) sb_free(sp[b]);
    return 1;
}

/* The rows at positions pos[0, np) of every device, read through the
 * operations (the file's head), into rows[b] (NULL: backend b is not live);
 * -1 where no row answered. Leaves class 0's gradients, the quantized
 * gradients, the mask and the probe's slots changed: the caller restores
 * what it needs (t_restore). */
static int t_probe_rows(tset *s, const int64_t *pos, int64_t np, int32_t *rows[NB]) {
    const int64_t n = s->n;
    float *g = sb_malloc(sizeof(float) * (size_t)n), *h = sb_malloc(sizeof(float) * (size_t)n);
    uint8_t *mask = sb_calloc((size_t)s->nf, 1);
    const int32_t pf = s->probe_f, width = s->nbins[pf] + 1;
    for (int64_t r = 0; r < n; r++) g[r] = (float)r, h[r] = 1.0f; /* exact: n < 2^24 */
    mask[pf] = 1;
    int32_t batch = (int32_t)((32 << 20) / ((int64_t)s->total * (int64_t)sizeof(sb_k_hbin)));
    if (batch > 1024) batch = 1024;
    if (batch < 1) batch = 1;
    sb_tdev_hjob *jobs = sb_malloc(sizeof(sb_tdev_hjob) * (size_t)batch);
    sb_k_hbin *e = sb_malloc(sizeof(sb_k_hbin) * (size_t)width);
    int ok = g && h && mask && jobs && e;
    if (ok) {
        T_EACH(s, "partition", o->set_gradients(dv, 0, g, h));
        T_EACH(s, "partition", o->quantize(dv, 0, 1.0f, 1.0f));
        T_EACH(s, "partition", o->set_mask(dv, mask));
        if (!t_reserve(s, s->probe_slot + batch)) ok = 0;
    }
    for (int64_t at = 0; ok && at < np; at += batch) {
        const int32_t m = (int32_t)(np - at < batch ? np - at : batch);
        for (int32_t k = 0; k < m; k++) {
            jobs[k].begin = pos[at + k];
            jobs[k].end = pos[at + k] + 1;
            jobs[k].slot = s->probe_slot + k;
            jobs[k].pad_ = 0;
        }
        T_EACH(s, "partition", o->hist(dv, jobs, m));
        for (int b = 0; b < NB; b++) {
            if (!s->d[b]) continue;
            for (int32_t k = 0; k < m; k++) {
                sb_status st = s->ops[b]->read_hist(s->d[b], s->probe_slot + k, s->hoff[pf], width, e);
                if (st != SB_OK) {
                    if (b == 0) {
                        SB_CHECK(!"the reference device failed");
                        ok = 0;
                        break;
                    }
                    t_drop(s, b, "partition", st);
                    break;
                }
                int32_t row = -1;
                for (int32_t j = 0; j < width; j++)
                    if (e[j].c == 1) row = (int32_t)e[j].g;
                rows[b][at + k] = row;
            }
        }
    }
    sb_free(g), sb_free(h), sb_free(mask), sb_free(jobs), sb_free(e);
    return ok;
}

/* After a probe: the configuration's mask, the gradients from the margins,
 * class cls quantized at the levels' scales. */
static int t_restore(tset *s) {
    float mx[2 * 32];
    T_EACH(s, "set_mask", o->set_mask(dv, s->mask));
    if (!t_gradients(s, mx)) return 0;
    return t_quantize(s, "quantize", s->c->cls, s->gs, s->hs);
}

/* The stable partition on the host: segs applied to rows (the positions'
 * rows), as tdev.h defines it. */
/* Whether a row with bin b goes left in segment g: its bin rule, or a
 * categorical segment's 256-bit set. Written here from the contract, not
 * shared with the library's. */
static int seg_left(const sb_tdev_seg *g, uint32_t b) {
    if (g->categorical) return (int)((g->cat[b / 32] >> (b % 32)) & 1u);
    return b == 0 ? g->default_left != 0 : (int32_t)b <= g->split_bin;
}

static void host_partition(const tset *s, int32_t *rows, const sb_tdev_seg *segs, int32_t nseg) {
    int32_t *tmp = sb_malloc(sizeof(int32_t) * (size_t)(s->n ? s->n : 1));
    for (int32_t k = 0; k < nseg; k++) {
        const sb_tdev_seg *g = &segs[k];
        int64_t l = 0;
        for (int pass = 1; pass >= 0; pass--)
            for (int64_t i = g->begin; i < g->end; i++)
                if (seg_left(g, bin_of(s->binned, s->n, g->feature, rows[i])) == pass)
                    tmp[l++] = rows[i];
        memcpy(rows + g->begin, tmp, sizeof(int32_t) * (size_t)(g->end - g->begin));
    }
    sb_free(tmp);
}

/* Partition, then the rows compared: every position (exact configurations)
 * or a sample (every position within 4 of a 2048-row tile boundary or of a
 * segment's split point, and one in 61); the reference's rows must also be
 * the host's stable partition (which checks the probe itself). */
static int t_partition(tset *s, int32_t *hrows, int64_t nrows, const sb_tdev_seg *segs, int32_t nseg) {
    T_EACH(s, "partition", o->partition(dv, segs, nseg));
    host_partition(s, hrows, segs, nseg);
    int64_t *pos = sb_malloc(sizeof(int64_t) * (size_t)(nrows ? nrows : 1)), np = 0;
    uint8_t *take = sb_calloc((size_t)(nrows ? nrows : 1), 1);
    for (int64_t p = 0; p < nrows; p++) take[p] = s->c->exact || p % 61 == 0 || p % 2048 < 4 || p % 2048 >= 2044;
    for (int32_t k = 0; k < nseg && !s->c->exact; k++) {
        int64_t l = 0;
        for (int64_t i = segs[k].begin; i < segs[k].end; i++)
            l += seg_left(&segs[k], bin_of(s->binned, s->n, segs[k].feature, hrows[i]));
        /* the sides' boundary (hrows is already partitioned: count its left rows) */
        for (int64_t p = segs[k].begin + l - 4; p < segs[k].begin + l + 4; p++)
            if (p >= segs[k].begin && p < segs[k].end) take[p] = 1;
    }
    for (int64_t p = 0; p < nrows; p++)
        if (take[p]) pos[np++] = p;
    int32_t *rows[NB] = {0};
    for (int b = 0; b < NB; b++)
        if (s->d[b]) rows[b] = sb_malloc(sizeof(int32_t) * (size_t)(np ? np : 1));
    int ok = t_probe_rows(s, pos, np, rows);
    s->probed += np;
    if (ok) {
        int self = 1;
        for (int64_t i = 0; i < np; i++) self &= rows[0][i] == hrows[pos[i]];
        if (!self) printf("  partition %s: the reference's rows are not the host's stable partition\n", s->cfg);
        SB_CHECK(self);
        for (int b = 1; b < NB; b++)
            if (s->d[b] && rows[b]) {
                int64_t i = 0;
                while (i < np && rows[b][i] == rows[0][i]) i++;
                if (i == np) {
                    report("partition", s->cfg, b, 1, "");
                } else {
                    char msg[200];
                    snprintf(msg, sizeof msg, "position %lld: reference row %d, %s row %d", (long long)pos[i],
                             (int)rows[0][i], g_be[b].name, (int)rows[b][i]);
                    report("partition", s->cfg, b, 0, msg);
                }
            }
    }
    for (int b = 0; b < NB; b++) sb_free(rows[b]);
    sb_free(pos), sb_free(take);
    return ok && t_restore(s);
}

/* A node's sums on the host, from the reference's quantized gradients. */
static sb_tdev_node host_node(const tset *s, const int32_t *hrows, int64_t b, int64_t e, int32_t slot) {
    sb_tdev_node q;
    memset(&q, 0, sizeof q);
    for (int64_t i = b; i < e; i++) q.G += s->gq[hrows[i]], q.H += s->hq[hrows[i]];
    q.C = e - b;
    q.slot = slot;
    return q;
}

/* A fixed tree over the bins for add_tree: depth 3, leaves with values
 * that round when added (salt varies them); for an odd salt node 1 is a
 * categorical split, its bin set in the 8 entries after the 7 nodes (15
 * entries in all). */
static void fixed_tree(const tset *s, int salt, sb_k_bnode *t) {
    const int32_t nf = s->nf;
    const int32_t f[3] = {0, salt % nf, (nf - 1 - salt) % nf};
    for (int k = 0; k < 15; k++) memset(&t[k], 0, sizeof t[k]);
    for (int k = 0; k < 3; k++) {
        t[k].feature = f[k] < 0 ? 0 : f[k];
        t[k].split_bin = 1 + (salt + k) % s->nbins[t[k].feature];
        t[k].default_left = (salt + k) & 1;
    }
    t[0].left = 1, t[0].right = 2;
    t[1].left = 3, t[1].right = 4;
    t[2].left = 5, t[2].right = 6;
    const float v[4] = {0.1f, -0.7f, 1.0e-3f, 2.5f};
    for (int k = 3; k < 7; k++) {
        t[k].feature = -1;
        t[k].value = v[k - 3] * (float)(1 + salt % 3) + (salt & 4 ? 0.33f : -0.0f);
    }
    for (int k = 7; k < 15; k++) {
        t[k].feature = -1;
        t[k].split_bin = (int32_t)(0x9E3779B9u * (uint32_t)(k + salt) ^ 0xA5A5A5A5u);
    }
    if (salt & 1) t[1].default_left = -7;
}

/* A power-of-two scale putting maxabs at 2^30 (gbdt.c's rule); 1 when zero. */
static float qscale(float maxabs) {
    return maxabs > 0.0f ? sb_pow2f(sb_quantize_exponent(maxabs, 1073741824.0f)) : 1.0f;
}

/* One configuration of the tree device: margins, gradients, quantization of
 * every class (at most 8 of K = 30), host gradients, then `levels` levels of
 * partition, histograms (the smaller child built, the larger by
 * subtraction, some both), and split search under two sets of rules. */
/* Whether some backend other than the reference may still run. */
static int any_other(void) {
    int any = 0;
    for (int b = 1; b < NB; b++) any |= be_wanted(b);
    return any;
}

static void tree_config(const tcfg *c) {
    if (!any_other()) return;
    tset s;
    memset(&s, 0, sizeof s);
    s.c = c;
    snprintf(s.cfg, sizeof s.cfg, "%s", c->name);
    const int64_t n = c->n;
    const int32_t nf = c->nf, K = c->K;
    SB_CHECK(K <= 32 && n < (1 << 24)); /* the maxima's arrays; the probe's row numbers as exact floats */
    uint8_t *binned = sb_malloc((size_t)n * (size_t)nf), *mask = sb_malloc((size_t)nf);
    int32_t *nbins = sb_malloc(sizeof(int32_t) * (size_t)nf), *hoff = sb_malloc(sizeof(int32_t) * (size_t)nf);
    float *label = sb_malloc(sizeof(float) * (size_t)n), *weight = sb_malloc(sizeof(float) * (size_t)n);
    int32_t *hrows = sb_malloc(sizeof(int32_t) * (size_t)n), *subset = sb_malloc(sizeof(int32_t) * (size_t)n);
    s.gq = sb_malloc(sizeof(int32_t) * (size_t)n);
    s.hq = sb_malloc(sizeof(int32_t) * (size_t)n);
    float *hg = sb_malloc(sizeof(float) * (size_t)n), *hh = sb_malloc(sizeof(float) * (size_t)n);
    if (!binned || !mask || !nbins || !hoff || !label || !weight || !hrows || !subset || !s.gq || !s.hq || !hg || !hh) {
        SB_CHECK(!"out of memory");
        goto done;
    }
    make_bins(c->pat, n, nf, binned, nbins);
    int32_t total = 0;
    for (int32_t f = 0; f < nf; f++) hoff[f] = total, total += nbins[f] + 1;
    for (int64_t r = 0; r < n; r++) {
        const uint32_t u = draw(P_LABEL, (uint64_t)r, 0);
        const int32_t b0 = bin_of(binned, n, 0, r), b1 = bin_of(binned, n, 1 % nf, r), b3 = bin_of(binned, n, 3 % nf, r);
        if (c->objective == SB_K_OBJ_REGRESSION || c->objective == SB_K_OBJ_HUBER || c->objective == SB_K_OBJ_QUANTILE)
            label[r] = (float)(b0 * 3 - b1 + b3 % 5 + (int32_t)(u % 8)) * 0.125f;
        else if (sb_k_obj_log_link(c->objective)) /* counts, positive for gamma */
            label[r] = (float)((b0 + b3 + (int32_t)(u % 5)) % 7 + (c->objective == SB_K_OBJ_GAMMA)) * 0.5f;
        else if (c->objective == SB_K_OBJ_BINARY)
            label[r] = (float)((b0 + b3 + (int32_t)(u % 3)) % 2);
        else
            label[r] = (float)((b0 + 2 * b1 + b3 + (int32_t)(u % 2)) % K);
        const uint32_t w = draw(P_WEIGHT, (uint64_t)r, 0);
        weight[r] = w % 8 == 0 ? 0.0f : (float)(1 + w % 4) * 0.25f;
    }
    for (int32_t f = 0; f < nf; f++) mask[f] = !c->masked || f % 5 != 1;
    int64_t nrows = 0;
    for (int64_t r = 0; r < n; r++)
        if (!c->subset || draw(P_WEIGHT, (uint64_t)r, 1) % 3 != 0) subset[nrows++] = (int32_t)r;
    s.n = n, s.nf = nf, s.total = total, s.K = K;
    s.binned = binned, s.nbins = nbins, s.hoff = hoff, s.mask = mask;
    s.probe_f = 0;
    for (int32_t f = 0; f < nf; f++)
        if (nbins[f] < nbins[s.probe_f]) s.probe_f = f;

    /* open: the reference, then each other backend in use */
    /* a starting margin per class (as multiclass' log priors), so the copy
     * of per-class margins is compared as well as the one-value fill */
    float base[SB_TDEV_MAX_CLASS];
    for (int32_t k = 0; k < SB_TDEV_MAX_CLASS; k++) base[k] = 0.25f - 0.375f * (float)k;
    const sb_tdev_setup setup0 = {binned, n, nf, nbins, hoff, total, label, c->weighted ? weight : NULL,
                                  c->objective, K, base, SB_DEVICE_CPU_BATCHED,
                                  c->objective == SB_K_OBJ_TWEEDIE ? 1.375f : c->objective == SB_K_OBJ_POISSON ? 0.7f : 0.9f};
    int live = 0;
    for (int b = 0; b < NB; b++) {
        if (!be_wanted(b)) continue;
        sb_tdev_setup su = setup0;
        su.device = g_be[b].kind;
        sb_status st = sb_tdev_find(g_be[b].kind, &s.ops[b]);
        if (st == SB_OK) st = s.ops[b]->open(&su, &s.d[b]);
        if (b == 0) {
            SB_CHECK(st == SB_OK);
            if (st != SB_OK) goto done;
        } else if (be_opened(b, st, s.cfg)) {
            live++;
        }
    }
    if (!live) goto done; /* nothing to compare with */

    /* margins, gradients, quantization */
    sb_k_bnode tr[15];
    float mx[2 * 32];
    for (int32_t k = 0; k < (K < 4 ? K : 4); k++) {
        fixed_tree(&s, 3 * k + 1, tr);
        if (!t_add_tree(&s, tr, 15, k == 3 ? K - 1 : k)) goto done;
    }
    if (!t_gradients(&s, mx)) goto done;
    for (int32_t k = 0; k < K; k++) {
        if (K > 8 && k % 5 != 0 && k != K - 1 && k != c->cls) continue;
        if (!t_quantize(&s, "quantize", k, qscale(mx[2 * k]), qscale(mx[2 * k + 1]))) goto done;
    }
    /* host gradients (the ranking objectives'): signed zeros, ties, tiny and large values */
    for (int64_t r = 0; r < n; r++) {
        const uint32_t u = draw(P_LABEL, (uint64_t)r, 1);
        hg[r] = (u & 1 ? -1.0f : 1.0f) * (float)(u % 97) * (u & 2 ? 0.0078125f : 3.0f);
        hh[r] = (float)(u % 5) * 0.375f;
    }
    for (int b = 0; b < NB; b++)
        if (s.d[b]) {
            sb_status st = s.ops[b]->set_gradients(s.d[b], K - 1, hg, hh);
            if (st != SB_OK) {
                if (b == 0) {
                    SB_CHECK(st == SB_OK);
                    goto done;
                }
                t_drop(&s, b, "set_gradients", st);
            }
        }
    if (!t_quantize(&s, "set_gradients", K - 1, 2097152.0f, 1048576.0f)) goto done;

    /* the levels' class: gradients from the margins again */
    if (!t_gradients(&s, mx)) goto done;
    s.gs = qscale(mx[2 * c->cls]);
    s.hs = qscale(mx[2 * c->cls + 1]);
    if (!t_quantize(&s, "quantize", c->cls, s.gs, s.hs)) goto done;
    T_EACH_DO(&s, "set_rows", o->set_rows(dv, c->subset ? subset : NULL, nrows), goto done);
    T_EACH_DO(&s, "set_mask", o->set_mask(dv, mask), goto done);
    for (int64_t i = 0; i < nrows; i++) hrows[i] = subset[i];

    /* slots: a level holds at most 32 nodes, each with its slot and a fresh
     * one for its smaller child; 1 and 2 take the hostile jobs */
    const int32_t tslots = 3 + (c->levels < 5 ? 1 << (c->levels + 1) : 64);
    s.probe_slot = tslots;
    if (!t_reserve(&s, 2)) goto done;
    /* the root, and reserve keeping it while growing */
    sb_tdev_hjob root = {0, nrows, 0, 0};
    if (!t_hist(&s, &root, 1)) goto done;
    if (!t_reserve(&s, tslots)) goto done;
    {
        const int32_t zero = 0;
        if (!t_compare_slots(&s, "reserve", &zero, 1)) goto done;
    }
    /* hostile jobs: an empty one and a one-row one, in slots 1 and 2 */
    {
        sb_tdev_hjob hj[2] = {{nrows / 2, nrows / 2, 1, 0}, {nrows / 3, nrows / 3 + 1, 2, 0}};
        if (!t_hist(&s, hj, 2)) goto done;
        sb_tdev_node one[2] = {host_node(&s, hrows, nrows / 2, nrows / 2, 1),
                               host_node(&s, hrows, nrows / 3, nrows / 3 + 1, 2)};
        const sb_k_split_rules r1 = {1, 1e-3f, 0.0f, 1.0f, s.gs, s.hs, 0};
        sb_k_split sp[2];
        if (!t_best(&s, "best", one, 2, &r1, sp)) goto done;
    }

    /* the levels */
    int32_t nn = 1;
    uint8_t used[67] = {1}; /* slot 0: the root's */
    sb_tdev_node *nodes = sb_malloc(sizeof(sb_tdev_node) * 64), *kids = sb_malloc(sizeof(sb_tdev_node) * 128);
    int64_t *nb_ = sb_malloc(sizeof(int64_t) * 64 * 2), *kb = sb_malloc(sizeof(int64_t) * 128 * 2);
    sb_tdev_seg *segs = sb_malloc(sizeof(sb_tdev_seg) * 65);
    sb_tdev_hjob *jobs = sb_malloc(sizeof(sb_tdev_hjob) * 128);
    sb_tdev_sub *subs = sb_malloc(sizeof(sb_tdev_sub) * 64);
    sb_k_split *sp = sb_malloc(sizeof(sb_k_split) * 128);
    int ok = nodes && kids && nb_ && kb && segs && jobs && subs && sp;
    SB_CHECK(ok);
    if (ok) {
        nodes[0] = host_node(&s, hrows, 0, nrows, 0);
        nb_[0] = 0, nb_[1] = nrows;
    }
    for (int L = 0; ok && L < c->levels && nn > 0; L++) {
        const sb_k_split_rules r1 = {1, 1e-3f, 0.0f, 1.0f, s.gs, s.hs, 0};
        const sb_k_split_rules r2 = {20, 0.5f, 0.25f, 0.0625f, s.gs, s.hs, 0.75f}; /* with L1 */
        if (!(ok = t_best(&s, "best", nodes, nn, &r2, sp))) break;
        if (!(ok = t_best(&s, "best", nodes, nn, &r1, sp))) break;
        /* segments: the reference's split, or a hostile one (every value bin
         * left with missing left: all rows one side; a formula split) */
        int32_t ns = 0;
        for (int32_t i = 0; i < nn; i++) {
            sb_tdev_seg g;
            memset(&g, 0, sizeof g);
            g.begin = nb_[2 * i], g.end = nb_[2 * i + 1];
            if (sp[i].valid && i % 4 != 3) {
                g.feature = sp[i].feature, g.split_bin = sp[i].bin, g.default_left = sp[i].default_left;
            } else {
                g.feature = (i * 7 + L) % nf;
                g.split_bin = i % 3 == 0 ? nbins[g.feature] : 1 + i % nbins[g.feature];
                g.default_left = i % 3 == 0 ? 1 : i & 1;
                if ((i / 4 + L) % 2 == 1) { /* every other hostile one: a categorical split */
                    g.categorical = 1;
                    for (int32_t w = 0; w < 8; w++) g.cat[w] = 0x9E3779B9u * (uint32_t)(i + 3 * w + L) ^ 0x5A5A5A5Au;
                }
            }
            segs[ns++] = g;
        }
        segs[ns].begin = segs[ns].end = nb_[0]; /* an empty segment */
        memset(&segs[ns], 0, sizeof segs[ns]);
        segs[ns].begin = segs[ns].end = nb_[0];
        segs[ns].feature = 0, segs[ns].split_bin = 1, segs[ns].default_left = 0;
        ns++;
        if (!(ok = t_partition(&s, hrows, nrows, segs, ns))) break;
        /* children: the smaller built into a new slot, the larger by
         * subtraction from the parent's; every fifth pair both built */
        int32_t nj = 0, nsub = 0, nk = 0;
        for (int32_t i = 0; i < nn && nk + 2 <= 64; i++) {
            const int64_t b0 = nb_[2 * i], e0 = nb_[2 * i + 1];
            int64_t l = 0;
            for (int64_t p = b0; p < e0; p++)
                l += seg_left(&segs[i], bin_of(binned, n, segs[i].feature, hrows[p]));
            const int left_small = l <= (e0 - b0) - l;
            int32_t fresh = 3;
            while (fresh < tslots && used[fresh]) fresh++;
            SB_CHECK(fresh < tslots);
            if (fresh >= tslots) break;
            used[fresh] = 1;
            const int32_t ps = nodes[i].slot;
            int32_t ls = left_small ? fresh : ps, rs = left_small ? ps : fresh;
            if (i % 5 == 4) {
                jobs[nj++] = (sb_tdev_hjob){b0, b0 + l, ls, 0};
                jobs[nj++] = (sb_tdev_hjob){b0 + l, e0, rs, 0};
            } else {
                jobs[nj++] = left_small ? (sb_tdev_hjob){b0, b0 + l, fresh, 0} : (sb_tdev_hjob){b0 + l, e0, fresh, 0};
                subs[nsub++] = (sb_tdev_sub){ps, fresh};
            }
            kb[2 * nk] = b0, kb[2 * nk + 1] = b0 + l;
            kids[nk++] = host_node(&s, hrows, b0, b0 + l, ls);
            kb[2 * nk] = b0 + l, kb[2 * nk + 1] = e0;
            kids[nk++] = host_node(&s, hrows, b0 + l, e0, rs);
        }
        if (!(ok = t_hist(&s, jobs, nj))) break;
        if (!(ok = t_subtract(&s, subs, nsub))) break;
        if (!(ok = t_best(&s, "best", kids, nk, &r1, sp))) break;
        /* the next level: at most 32 children, the non-empty ones (one-row
         * nodes included) */
        nn = 0;
        memset(used, 0, sizeof used);
        for (int32_t k = 0; k < nk && nn < 32; k++)
            if (kids[k].C > 0) {
                nodes[nn] = kids[k];
                nb_[2 * nn] = kb[2 * k], nb_[2 * nn + 1] = kb[2 * k + 1];
                used[kids[k].slot] = 1;
                nn++;
            }
    }
    sb_free(nodes), sb_free(kids), sb_free(nb_), sb_free(kb), sb_free(segs), sb_free(jobs), sb_free(subs), sb_free(sp);
    /* a last tree onto the margins, and their gradients */
    if (ok) {
        fixed_tree(&s, 5, tr);
        if (t_add_tree(&s, tr, 15, c->cls)) t_gradients(&s, mx);
    }
    printf("  coverage tree/%s: %lld rows (%lld in the tree) x %d features, %d histogram entries, K %d; %lld nodes "
           "searched, %lld valid splits; %lld positions read back (%s)\n",
           c->name, (long long)n, (long long)nrows, (int)nf, (int)total, (int)K, (long long)s.searched,
           (long long)s.valid, (long long)s.probed, c->exact ? "every one" : "a sample");
done:
    for (int b = 0; b < NB; b++)
        if (s.d[b]) s.ops[b]->close(s.d[b]);
    sb_free(binned), sb_free(mask), sb_free(nbins), sb_free(hoff), sb_free(label), sb_free(weight);
    sb_free(hrows), sb_free(subset), sb_free(s.gq), sb_free(s.hq), sb_free(hg), sb_free(hh);
}

/* ---- the forest device ---- */

typedef struct fcfg {
    const char *name;
    int64_t n;
    int32_t nf;
    int pat;
    int32_t criterion, K; /* K: classes (gini, entropy) */
    int extra, bootstrap;
    int weighted;         /* 1: a fixed-point weight a row; 2: balanced_subsample with sample weights */
    int32_t mtry, ntrees, levels;
    float min_wf;         /* min_weight_fraction_leaf: each tree's min_w from its root */
    int64_t min_leaf;
    int32_t psi;          /* > 0: the isolation forest's operations */
    int exact;            /* read back every position (else the sides' sums stand for their sets) */
} fcfg;

/* Bits of a regression value below its signal: the row, so that a position's
 * sums name its row. */
#define TAG_BITS 15

typedef struct fset {
    const fcfg *c;
    char cfg[40];
    sb_fdev *d[NB];
    const sb_fdev_ops *ops[NB];
    int32_t nv, K;
    int squared, weighted;
    int64_t n;
    int64_t small, large, valid, read; /* coverage: nodes searched on rows and on histograms, valid splits, positions read */
} fset;

static void f_drop(fset *s, int b, const char *op, sb_status st) {
    report_error(op, s->cfg, b, st);
    s->ops[b]->close(s->d[b]);
    s->d[b] = NULL;
}

#define F_EACH(s, op, call)                                                                                    \
    for (int b = 0; b < NB; b++) {                                                                             \
        if (!(s)->d[b]) continue;                                                                              \
        sb_fdev *const dv = (s)->d[b];                                                                         \
        const sb_fdev_ops *const o = (s)->ops[b];                                                              \
        sb_status st_ = call;                                                                                  \
        if (st_ != SB_OK) {                                                                                    \
            if (b == 0) {                                                                                      \
                printf("  %s %s: the reference failed: %s\n", op, (s)->cfg, sb_last_error());                \
                SB_CHECK(!"the reference device failed");                                                      \
                return 0;                                                                                      \
            }                                                                                                  \
            f_drop((s), b, op, st_);                                                                           \
        }                                                                                                      \
    }

/* A position as its sums show it: (value, count, fixed-point weight); the
 * value is the row's class, or its regression value (which holds the row). */
typedef struct ftuple {
    int64_t v, cnt, wq;
} ftuple;

static int cmp_tuple(const void *a, const void *b) {
    const ftuple *x = a, *y = b;
    if (x->v != y->v) return x->v < y->v ? -1 : 1;
    if (x->cnt != y->cnt) return x->cnt < y->cnt ? -1 : 1;
    return (x->wq > y->wq) - (x->wq < y->wq);
}

static ftuple decode(const fset *s, const int64_t *v) {
    ftuple t = {-2, 0, 1};
    if (s->squared) {
        const int64_t w = v[0], cnt = s->weighted ? v[2] : v[0];
        if (w > 0 && cnt > 0) t.v = v[1] / w, t.cnt = cnt, t.wq = w / cnt;
        return t;
    }
    int found = 0;
    for (int32_t k = 0; k < s->K; k++)
        if (v[k]) {
            found++;
            const int64_t cnt = s->weighted ? v[s->K] : v[k];
            t.v = k, t.cnt = cnt, t.wq = cnt ? v[k] / cnt : 0;
        }
    if (found != 1) t.v = -2;
    return t;
}

/* Ranges [rb[2i], rb[2i+1]) of positions (nr of them) read back on every
 * device, each compared as a sorted multiset of its positions' tuples
 * under op. */
static int f_readback(fset *s, const char *op, const int64_t *rb, int32_t nr) {
    int64_t np = 0;
    for (int32_t i = 0; i < nr; i++) np += rb[2 * i + 1] - rb[2 * i];
    if (np == 0) return 1;
    sb_fdev_node *q = sb_calloc((size_t)np, sizeof(sb_fdev_node));
    int64_t *v[NB] = {0};
    ftuple *t[NB] = {0};
    int ok = q != NULL;
    for (int32_t i = 0, at = 0; ok && i < nr; i++)
        for (int64_t p = rb[2 * i]; p < rb[2 * i + 1]; p++, at++) q[at].begin = p, q[at].end = p + 1;
    for (int b = 0; b < NB && ok; b++)
        if (s->d[b]) {
            v[b] = sb_malloc(sizeof(int64_t) * (size_t)np * (size_t)s->nv);
            t[b] = sb_malloc(sizeof(ftuple) * (size_t)np);
            ok = v[b] && t[b];
        }
    SB_CHECK(ok);
    if (ok) {
        F_EACH(s, op, o->sums(dv, q, (int32_t)np, v[b]));
        s->read += np;
    }
    for (int b = 1; b < NB && ok; b++) {
        if (!s->d[b]) continue;
        int same = 1;
        char msg[300] = "";
        for (int32_t i = 0, at = 0; i < nr && same; i++) {
            const int64_t len = rb[2 * i + 1] - rb[2 * i];
            for (int bb = 0; bb < 2; bb++) {
                const int w = bb ? b : 0;
                for (int64_t k = 0; k < len; k++) t[w][at + k] = decode(s, v[w] + (at + k) * s->nv);
                qsort(t[w] + at, (size_t)len, sizeof(ftuple), cmp_tuple);
            }
            for (int64_t k = 0; k < len && same; k++)
                if (cmp_tuple(&t[0][at + k], &t[b][at + k]) != 0) {
                    same = 0;
                    snprintf(msg, sizeof msg,
                             "range %d [%lld, %lld), sorted element %lld: reference (value %lld, count %lld, weight "
                             "%lld), %s (value %lld, count %lld, weight %lld)",
                             (int)i, (long long)rb[2 * i], (long long)rb[2 * i + 1], (long long)k,
                             (long long)t[0][at + k].v, (long long)t[0][at + k].cnt, (long long)t[0][at + k].wq,
                             g_be[b].name, (long long)t[b][at + k].v, (long long)t[b][at + k].cnt,
                             (long long)t[b][at + k].wq);
                }
            at += (int32_t)len;
        }
        report(op, s->cfg, b, same, msg);
    }
    sb_free(q);
    for (int b = 0; b < NB; b++) sb_free(v[b]), sb_free(t[b]);
    return ok;
}

static int f_sums(fset *s, const sb_fdev_node *nodes, int32_t nn, int64_t *ref) {
    int64_t *v[NB] = {0};
    for (int b = 0; b < NB; b++)
        if (s->d[b]) v[b] = b == 0 ? ref : sb_malloc(sizeof(int64_t) * (size_t)(nn ? nn : 1) * (size_t)s->nv);
    F_EACH(s, "sums", o->sums(dv, nodes, nn, v[b]));
    for (int b = 1; b < NB; b++)
        if (s->d[b]) compare("sums", s->cfg, b, "value (node x nv)", T_I64, ref, v[b], (int64_t)nn * s->nv, NULL, NULL);
    for (int b = 1; b < NB; b++) sb_free(v[b]);
    return 1;
}

/* split: the splits compared, and the left sums of the nodes the reference
 * splits (only those are defined). */
static int f_split(fset *s, const sb_fdev_node *nodes, int32_t nn, const int64_t *tot, sb_k_fsplit *ref,
                   int64_t *lref) {
    sb_k_fsplit *sp[NB] = {0};
    int64_t *ls[NB] = {0};
    for (int b = 0; b < NB; b++)
        if (s->d[b]) {
            sp[b] = b == 0 ? ref : sb_calloc((size_t)(nn ? nn : 1), sizeof(sb_k_fsplit));
            ls[b] = b == 0 ? lref : sb_calloc((size_t)(nn ? nn : 1) * (size_t)s->nv, sizeof(int64_t));
        }
    F_EACH(s, "split", o->split(dv, nodes, nn, tot, sp[b], ls[b]));
    for (int32_t i = 0; i < nn; i++) {
        const int small = nodes[i].end - nodes[i].begin <= SB_K_FOREST_SMALL_ROWS && s->nv <= SB_K_FOREST_SMALL_NV;
        s->small += small, s->large += !small, s->valid += ref[i].valid != 0;
    }
    for (int b = 1; b < NB; b++) {
        if (!s->d[b]) continue;
        if (!compare("split", s->cfg, b, "node", T_FSPLIT, ref, sp[b], nn, NULL, NULL)) continue;
        int same = 1;
        char msg[200] = "";
        for (int32_t i = 0; i < nn && same; i++)
            for (int32_t k = 0; k < s->nv && same && ref[i].valid; k++)
                if (lref[(int64_t)i * s->nv + k] != ls[b][(int64_t)i * s->nv + k]) {
                    same = 0;
                    snprintf(msg, sizeof msg, "lsum of node %d value %d: reference %lld, %s %lld", (int)i, (int)k,
                             (long long)lref[(int64_t)i * s->nv + k], g_be[b].name,
                             (long long)ls[b][(int64_t)i * s->nv + k]);
                }
        report("split.lsum", s->cfg, b, same, msg);
    }
    for (int b = 1; b < NB; b++) sb_free(sp[b]), sb_free(ls[b]);
    return 1;
}

static int f_iso_split(fset *s, const sb_fdev_node *nodes, int32_t nn, sb_k_fsplit *ref) {
    sb_k_fsplit *sp[NB] = {0};
    for (int b = 0; b < NB; b++)
        if (s->d[b]) sp[b] = b == 0 ? ref : sb_calloc((size_t)(nn ? nn : 1), sizeof(sb_k_fsplit));
    F_EACH(s, "iso_split", o->iso_split(dv, nodes, nn, sp[b]));
    s->large += nn;
    for (int32_t i = 0; i < nn; i++) s->valid += ref[i].valid != 0;
    for (int b = 1; b < NB; b++)
        if (s->d[b]) compare("iso_split", s->cfg, b, "node", T_FSPLIT, ref, sp[b], nn, NULL, NULL);
    for (int b = 1; b < NB; b++) sb_free(sp[b]);
    return 1;
}

/* partition: nleft compared, then (exact configurations) each side's rows as
 * sets. */
static int f_partition(fset *s, const sb_fdev_node *nodes, int32_t nn, int64_t *ref) {
    int64_t *nl[NB] = {0};
    for (int b = 0; b < NB; b++)
        if (s->d[b]) nl[b] = b == 0 ? ref : sb_calloc((size_t)(nn ? nn : 1), sizeof(int64_t));
    F_EACH(s, "partition", o->partition(dv, nodes, nn, nl[b]));
    for (int b = 1; b < NB; b++)
        if (s->d[b]) compare("partition", s->cfg, b, "nleft of node", T_I64, ref, nl[b], nn, NULL, NULL);
    for (int b = 1; b < NB; b++) sb_free(nl[b]);
    if (!s->c->exact) return 1;
    int64_t *rb = sb_malloc(sizeof(int64_t) * 4 * (size_t)(nn ? nn : 1));
    if (!rb) return 0;
    for (int32_t i = 0; i < nn; i++) {
        rb[4 * i] = nodes[i].begin, rb[4 * i + 1] = nodes[i].begin + ref[i];
        rb[4 * i + 2] = nodes[i].begin + ref[i], rb[4 * i + 3] = nodes[i].end;
    }
    const int ok = f_readback(s, "partition.sides", rb, 2 * nn);
    sb_free(rb);
    return ok;
}

/* One level-wise pass of the forest operations (random forests, Extra Trees,
 * weighted, balanced_subsample): begin, the roots' sums, then per level
 * split, partition (with a node split so that every row goes left, and an
 * empty node) and the children's sums. */
static int forest_levels(fset *s, const fcfg *c, const int32_t *nbins) {
    const int32_t nt = c->ntrees, nv = s->nv, t0 = 2;
    int64_t count[NB][16];
    int32_t wexp[NB][16];
    F_EACH(s, "begin", o->begin(dv, t0, nt, count[b], wexp[b]));
    for (int b = 1; b < NB; b++)
        if (s->d[b] && compare("begin", s->cfg, b, "count of tree", T_I64, count[0], count[b], nt, NULL, NULL))
            compare("begin", s->cfg, b, "wexp of tree", T_I32, wexp[0], wexp[b], nt, NULL, NULL);
    const int32_t cap = 4096;
    sb_fdev_node *nodes = sb_calloc(cap, sizeof(sb_fdev_node)), *pn = sb_calloc(cap, sizeof(sb_fdev_node));
    sb_fdev_node *kids = sb_calloc(2 * cap, sizeof(sb_fdev_node));
    int64_t *tot = sb_calloc((size_t)cap * (size_t)nv, sizeof(int64_t)), *ls = sb_calloc((size_t)cap * (size_t)nv, 8);
    int64_t *kt = sb_calloc(2 * (size_t)cap * (size_t)nv, sizeof(int64_t)), *nl = sb_calloc(cap, sizeof(int64_t));
    sb_k_fsplit *sp = sb_calloc(cap, sizeof(sb_k_fsplit));
    int64_t *rb = sb_calloc(2 * (size_t)nt, sizeof(int64_t));
    int ok = nodes && pn && kids && tot && ls && kt && nl && sp && rb;
    SB_CHECK(ok);
    int32_t nn = 0;
    for (int32_t i = 0, at = 0; ok && i < nt; i++) {
        nodes[nn].begin = at, nodes[nn].end = at + count[0][i];
        nodes[nn].key = sb_k_forest_root_key(t0 + i);
        rb[2 * i] = at, rb[2 * i + 1] = at + count[0][i];
        at += (int32_t)count[0][i];
        nn++;
    }
    /* the roots' sums first: the readback goes through sums, so a broken
     * sums shows as its own difference before the rows' */
    if (ok) ok = f_sums(s, nodes, nn, tot);
    if (ok && c->exact) ok = f_readback(s, "begin.rows", rb, nt);
    if (ok && c->min_wf > 0.0f) {
        sb_k_forest_rules r = {c->min_leaf, c->criterion, nv, 1048576.0f, s->weighted, 0, 0.0f};
        for (int32_t i = 0; i < nn; i++) nodes[i].min_w = sb_k_forest_min_w(&r, c->min_wf, tot + (int64_t)i * nv);
    }
    for (int L = 0; ok && L < c->levels && nn > 0; L++) {
        if (!(ok = f_split(s, nodes, nn, tot, sp, ls))) break;
        int32_t np = 0, hostile = -1;
        for (int32_t i = 0; i < nn; i++) {
            if (sp[i].valid) {
                pn[np] = nodes[i];
                pn[np].feature = sp[i].feature, pn[np].bin = sp[i].bin, pn[np].dl = sp[i].dl;
                np++;
            } else if (hostile < 0 && nodes[i].end > nodes[i].begin) {
                hostile = i;
            }
        }
        const int32_t nreal = np;
        if (hostile >= 0) { /* every row left: all value bins, missing too */
            pn[np] = nodes[hostile];
            pn[np].feature = L % c->nf, pn[np].bin = nbins[L % c->nf], pn[np].dl = 1;
            np++;
        }
        pn[np] = nodes[0]; /* an empty node */
        pn[np].end = pn[np].begin;
        np++;
        if (!(ok = f_partition(s, pn, np, nl))) break;
        int32_t nk = 0;
        for (int32_t i = 0; i < np; i++) {
            kids[nk] = pn[i];
            kids[nk].end = pn[i].begin + nl[i];
            kids[nk].key = sb_k_forest_child_key(pn[i].key, 0);
            nk++;
            kids[nk] = pn[i];
            kids[nk].begin = pn[i].begin + nl[i];
            kids[nk].key = sb_k_forest_child_key(pn[i].key, 1);
            nk++;
        }
        if (!(ok = f_sums(s, kids, nk, kt))) break;
        /* the next level: the real splits' children of at least 2 rows */
        nn = 0;
        for (int32_t k = 0; k < 2 * nreal && nn < cap; k++)
            if (kids[k].end - kids[k].begin >= 2) {
                nodes[nn] = kids[k];
                memcpy(tot + (int64_t)nn * nv, kt + (int64_t)k * nv, sizeof(int64_t) * (size_t)nv);
                nn++;
            }
    }
    sb_free(nodes), sb_free(pn), sb_free(kids), sb_free(tot), sb_free(ls), sb_free(kt), sb_free(nl), sb_free(sp);
    sb_free(rb);
    return ok;
}

/* The isolation forest: iso_begin, then per level iso_split and the
 * partition at the chosen splits. */
static int iso_levels(fset *s, const fcfg *c) {
    const int32_t nt = c->ntrees, t0 = 1;
    const int64_t psi = c->psi;
    F_EACH(s, "iso_begin", o->iso_begin(dv, t0, nt, NULL));
    const int32_t cap = 4096;
    sb_fdev_node *nodes = sb_calloc(cap, sizeof(sb_fdev_node)), *pn = sb_calloc(cap, sizeof(sb_fdev_node));
    int64_t *nl = sb_calloc(cap, sizeof(int64_t)), *rb = sb_calloc(2 * (size_t)nt, sizeof(int64_t));
    sb_k_fsplit *sp = sb_calloc(cap, sizeof(sb_k_fsplit));
    int ok = nodes && pn && nl && rb && sp;
    SB_CHECK(ok);
    int32_t nn = 0;
    for (int32_t i = 0; ok && i < nt; i++, nn++) {
        nodes[i].begin = rb[2 * i] = i * psi;
        nodes[i].end = rb[2 * i + 1] = (i + 1) * psi;
        nodes[i].key = sb_k_forest_root_key(t0 + i);
    }
    if (ok) ok = f_readback(s, "iso_begin", rb, nt);
    for (int L = 0; ok && L < c->levels && nn > 0; L++) {
        if (!(ok = f_iso_split(s, nodes, nn, sp))) break;
        int32_t np = 0;
        for (int32_t i = 0; i < nn; i++)
            if (sp[i].valid) {
                pn[np] = nodes[i];
                pn[np].feature = sp[i].feature, pn[np].bin = sp[i].bin, pn[np].dl = sp[i].dl;
                np++;
            }
        if (!(ok = f_partition(s, pn, np, nl))) break;
        nn = 0;
        for (int32_t i = 0; i < np && nn + 2 <= cap; i++)
            for (int side = 0; side < 2; side++) {
                sb_fdev_node k = pn[i];
                if (side == 0) k.end = pn[i].begin + nl[i];
                else k.begin = pn[i].begin + nl[i];
                k.key = sb_k_forest_child_key(pn[i].key, side);
                if (k.end - k.begin >= 2) nodes[nn++] = k;
            }
    }
    sb_free(nodes), sb_free(pn), sb_free(nl), sb_free(rb), sb_free(sp);
    return ok;
}

static void forest_config(const fcfg *c) {
    if (!any_other()) return;
    fset s;
    memset(&s, 0, sizeof s);
    s.c = c;
    snprintf(s.cfg, sizeof s.cfg, "%s", c->name);
    const int64_t n = c->n;
    const int32_t nf = c->nf;
    const int iso = c->psi > 0;
    s.n = n;
    s.K = c->K;
    s.squared = iso || c->criterion == SB_K_CRIT_SQUARED;
    s.weighted = c->weighted != 0;
    s.nv = (s.squared ? 2 : c->K) + s.weighted;
    uint8_t *binned = sb_malloc((size_t)n * (size_t)nf);
    int32_t *nbins = sb_malloc(sizeof(int32_t) * (size_t)nf), *value = sb_malloc(sizeof(int32_t) * (size_t)n);
    int32_t *wq = sb_malloc(sizeof(int32_t) * (size_t)n);
    float *sw = sb_malloc(sizeof(float) * (size_t)n);
    if (!binned || !nbins || !value || !wq || !sw) {
        SB_CHECK(!"out of memory");
        goto done;
    }
    make_bins(c->pat, n, nf, binned, nbins);
    SB_CHECK(n < (1 << TAG_BITS));
    const int32_t wexp = 18; /* weights below 4: at most 2^20 in fixed point */
    for (int64_t r = 0; r < n; r++) {
        const uint32_t u = draw(P_LABEL, (uint64_t)r, 2), w = draw(P_WEIGHT, (uint64_t)r, 2);
        const int32_t b0 = bin_of(binned, n, 0, r), b1 = bin_of(binned, n, 1 % nf, r), b3 = bin_of(binned, n, 3 % nf, r);
        if (s.squared) /* the signal, and the row below it */
            value[r] = (int32_t)((uint32_t)((b0 * 5 + b3 * 3 + (int32_t)(u % 4)) % 1024) << TAG_BITS | (uint32_t)r);
        else
            value[r] = (b0 + 2 * b1 + b3 + (int32_t)(u % 2)) % c->K;
        const float wf = w % 9 == 0 ? 0.0f : (float)(1 + w % 7) * 0.3f; /* 0.3 rounds at the fixed point */
        wq[r] = sb_k_forest_weight_fixed(wf, wexp);
        sw[r] = w % 11 == 0 ? 0.0f : (float)(1 + w % 5) * 0.5f;
    }
    sb_fdev_setup su;
    memset(&su, 0, sizeof su);
    su.binned = binned, su.n = n, su.nf = nf, su.nbins = nbins, su.value = value;
    su.rules.min_samples_leaf = c->min_leaf;
    su.rules.criterion = iso ? SB_K_CRIT_SQUARED : c->criterion;
    su.rules.nv = s.nv;
    su.rules.yscale = 1048576.0f;
    su.rules.weighted = s.weighted;
    su.rules.wexp = c->weighted == 1 ? wexp : 0;
    su.seed = 0x5EED0000u + (uint64_t)c->n;
    su.mtry = c->mtry, su.extra = c->extra, su.bootstrap = c->bootstrap, su.max_depth = -1;
    su.ndraw = n, su.min_samples_split = 2;
    su.wq = c->weighted == 1 ? wq : NULL;
    su.sw = c->weighted == 2 ? sw : NULL;
    su.subsample = c->weighted == 2;
    su.psi = c->psi;
    int live = 0;
    for (int b = 0; b < NB; b++) {
        if (!be_wanted(b)) continue;
        sb_fdev_setup sb = su;
        sb.device = g_be[b].kind;
        sb_status st = sb_fdev_find(g_be[b].kind, &s.ops[b]);
        if (st == SB_OK) st = s.ops[b]->open(&sb, &s.d[b]);
        if (b == 0) {
            SB_CHECK(st == SB_OK);
            if (st != SB_OK) goto done;
        } else if (be_opened(b, st, s.cfg)) {
            live++;
        }
    }
    if (live) {
        if (iso) iso_levels(&s, c);
        else forest_levels(&s, c, nbins);
        if (iso)
            printf("  coverage forest/%s: %lld rows x %d features, psi %d, %d trees; %lld nodes split by iso_split, "
                   "%lld valid; %lld positions read back\n",
                   c->name, (long long)n, (int)nf, (int)c->psi, (int)c->ntrees, (long long)s.large,
                   (long long)s.valid, (long long)s.read);
        else
            printf("  coverage forest/%s: %lld rows x %d features, nv %d; %lld nodes searched on their rows, %lld on "
                   "histograms, %lld valid splits; %lld positions read back%s\n",
                   c->name, (long long)n, (int)nf, (int)s.nv, (long long)s.small, (long long)s.large,
                   (long long)s.valid, (long long)s.read, c->exact ? "" : " (the sides' sums stand for their sets)");
    }
done:
    for (int b = 0; b < NB; b++)
        if (s.d[b]) s.ops[b]->close(s.d[b]);
    sb_free(binned), sb_free(nbins), sb_free(value), sb_free(wq), sb_free(sw);
}

/* ---- tree prediction ---- */

typedef struct pcfg {
    const char *name;
    int32_t objective, K, kind, ntrees, depth, ncols;
    int64_t n;
    int32_t cat; /* 1: features are category codes and a node in five is a categorical split */
} pcfg;

/* Prediction of c's trees on a device (sb_tree_predict_device) against the
 * host path of predict.c (sb_k_margins, then sb_k_finish_row, per row).
 * Features tie the thresholds (both on a grid of quarters), hold NaN (the
 * missing direction) and -0. */
static void predict_config(const pcfg *c) {
    if (!any_other()) return;
    const char *cfg = c->name;
    const int32_t K = c->K, T = c->ntrees, ncols = c->ncols;
    const int32_t per_tree = (1 << (c->depth + 1)) - 1;
    /* a tree's entries: its nodes, then room for a categorical set of up to 4 codes per node */
    const int32_t stride = c->cat ? per_tree * 6 : per_tree, nn = T * stride;
    const int per_row = c->kind == SB_K_PREDICT_RAW ||
                                (c->kind == SB_K_PREDICT_PROBA &&
                                 (c->objective == SB_K_OBJ_MULTICLASS || c->objective == SB_K_OBJ_FOREST_CLASSES ||
                                  c->objective == SB_K_OBJ_FOREST_PROBA))
                            ? K
                            : 1;
    const int64_t n = c->n, nout = n * per_row;
    sb_k_pnode *nodes = sb_calloc((size_t)nn, sizeof(sb_k_pnode));
    int32_t *start = sb_malloc(sizeof(int32_t) * (size_t)T);
    float *x = sb_malloc(sizeof(float) * (size_t)n * (size_t)ncols), base[32], margin[32];
    float *out[NB] = {0};
    if (!nodes || !start || !x) {
        SB_CHECK(!"out of memory");
        goto done;
    }
    for (int32_t t = 0; t < T; t++) {
        start[t] = t * stride;
        for (int32_t k = 0; k < per_tree; k++) {
            sb_k_pnode *p = &nodes[t * stride + k];
            const uint32_t u = draw(P_TREE, (uint64_t)t << 20 | (uint64_t)k, 0);
            const uint32_t v = draw(P_TREE, (uint64_t)t << 20 | (uint64_t)k, 1);
            const int leaf = k >= per_tree / 2 || (k > 0 && u % 7 == 0);
            if (leaf) {
                p->feature = -1;
                if (c->objective == SB_K_OBJ_ISOLATION || c->objective == SB_K_OBJ_FOREST_CLASSES ||
                    c->objective == SB_K_OBJ_FOREST_PROBA)
                    p->value = (float)(1 + v % 1000) * 0.000731f;
                else
                    p->value = ((float)(int32_t)(v % 2001) - 1000.0f) * 0.00137f;
            } else {
                p->feature = (int32_t)(u % (uint32_t)ncols);
                p->threshold = ((float)(int32_t)(v % 13) - 6.0f) * 0.25f;
                p->left = 2 * k + 1, p->right = 2 * k + 2;
                p->default_left = (int32_t)(v >> 31);
                if (c->cat && u % 5 < 2) { /* a categorical split: 1 to 4 codes of 0..10, ascending */
                    const int32_t h = per_tree + 5 * k, cnt = 1 + (int32_t)(v % 4);
                    sb_k_pnode *set = &nodes[t * stride + h];
                    set[0].feature = cnt;
                    for (int32_t i = 0; i < cnt; i++) set[1 + i].threshold = (float)(3 * i + (int32_t)((v >> 8) % 3));
                    p->default_left = -h;
                    p->threshold = 0.0f;
                }
            }
        }
    }
    for (int64_t i = 0; i < n * ncols; i++) {
        const uint32_t u = draw(P_X, (uint64_t)i, 0);
        x[i] = u % 16 == 0 ? sb_u2f(0x7FC00000u) : u % 16 == 1 ? -0.0f : ((float)(int32_t)(u % 13 >> 0) - 6.0f) * 0.25f;
        if (u % 16 == 2) x[i] = (float)(int32_t)(u >> 8) * 1.0e-7f; /* off the grid */
        if (c->cat && u % 16 > 2) x[i] = (float)((int32_t)((u >> 4) % 13) - 1); /* codes -1..11 */
    }
    for (int32_t k = 0; k < K; k++) base[k] = (float)k * 0.1f - 0.5f;
    for (int b = 0; b < NB; b++)
        if (b == 0 || be_wanted(b)) out[b] = sb_malloc(sizeof(float) * (size_t)nout);
    for (int64_t r = 0; r < n; r++) {
        sb_k_margins(nodes, start, T, K, base, x + r * ncols, margin);
        sb_k_finish_row(c->objective, c->kind, K, margin, out[0] + r * per_row);
    }
    for (int b = 1; b < NB; b++) {
        if (!out[b]) continue;
        sb_status st = sb_tree_predict_device(g_be[b].kind, nodes, nn, start, T, K, c->objective, base, x, n, ncols,
                                              c->kind, per_row, out[b]);
        if (st != SB_OK && (g_be[b].state == 0 && st == SB_ERR_BACKEND_UNAVAILABLE)) {
            be_opened(b, st, cfg);
            continue;
        }
        g_be[b].state = g_be[b].state == 0 ? 1 : g_be[b].state;
        if (st != SB_OK) report_error("predict", cfg, b, st);
        else compare("predict", cfg, b, "output (row x per_row)", T_F32, out[0], out[b], nout, NULL, NULL);
    }
done:
    sb_free(nodes), sb_free(start), sb_free(x);
    for (int b = 0; b < NB; b++) sb_free(out[b]);
}

/* ---- the case ---- */

/* Whether "family/name" is selected by SAMEBITS_PARITY_ONLY (unset: all). */
static int selected(const char *family, const char *name) {
    const char *only = getenv("SAMEBITS_PARITY_ONLY");
    if (!only || !*only) return 1;
    char full[96], list[512];
    snprintf(full, sizeof full, "%s/%s", family, name);
    snprintf(list, sizeof list, "%s", only);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ","))
        if (*tok && strstr(full, tok)) return 1;
    return 0;
}

static const tcfg k_tree[] = {
    /* name          n      nf  objective                K   pat w  sub mask lv exact cls */
    {"reg-small", 777, 12, SB_K_OBJ_REGRESSION, 1, 0, 1, 0, 0, 4, 1, 0},
    {"binary-subset", 3000, 12, SB_K_OBJ_BINARY, 1, 0, 0, 1, 1, 3, 1, 0},
    {"multiclass-k3", 2000, 7, SB_K_OBJ_MULTICLASS, 3, 0, 1, 0, 0, 3, 1, 1},
    {"multiclass-k30", 5000, 5, SB_K_OBJ_MULTICLASS, 30, 0, 0, 1, 0, 2, 0, 29},
    {"wide-300f", 40000, 300, SB_K_OBJ_REGRESSION, 1, 1, 1, 0, 1, 2, 0, 0},
    {"huber", 1500, 8, SB_K_OBJ_HUBER, 1, 0, 1, 0, 0, 3, 1, 0},
    {"quantile", 1500, 8, SB_K_OBJ_QUANTILE, 1, 0, 0, 1, 0, 3, 1, 0},
    {"poisson", 1500, 8, SB_K_OBJ_POISSON, 1, 0, 1, 0, 0, 3, 1, 0},
    {"gamma", 1500, 8, SB_K_OBJ_GAMMA, 1, 0, 0, 0, 0, 3, 1, 0},
    {"tweedie", 1500, 8, SB_K_OBJ_TWEEDIE, 1, 0, 1, 1, 0, 3, 1, 0},
};

static const fcfg k_forest[] = {
    /* name               n      nf pat crit               K  extra boot w  mtry trees lv min_wf  leaf psi exact */
    {"gini-boot", 3000, 10, 0, SB_K_CRIT_GINI, 3, 0, 1, 0, 3, 3, 5, 0.0f, 1, 0, 1},
    {"entropy-extra-40f", 6000, 40, 1, SB_K_CRIT_ENTROPY, 4, 1, 0, 0, 40, 2, 3, 0.0f, 3, 0, 0},
    {"squared-boot", 30000, 12, 0, SB_K_CRIT_SQUARED, 0, 0, 1, 0, 4, 2, 4, 0.0f, 1, 0, 0},
    {"squared-small", 1500, 9, 0, SB_K_CRIT_SQUARED, 0, 0, 1, 0, 4, 3, 6, 0.0f, 1, 0, 1},
    {"weighted-squared-extra", 2500, 10, 0, SB_K_CRIT_SQUARED, 0, 1, 1, 1, 5, 3, 5, 0.01f, 2, 0, 1},
    {"weighted-gini", 4000, 12, 1, SB_K_CRIT_GINI, 3, 0, 1, 1, 6, 2, 4, 0.02f, 1, 0, 0},
    {"balanced-subsample", 2500, 10, 0, SB_K_CRIT_GINI, 4, 0, 1, 2, 4, 3, 5, 0.0f, 1, 0, 1},
    {"isolation", 5000, 9, 0, 0, 0, 0, 0, 0, 1, 8, 9, 0.0f, 1, 256, 1},
};

static const pcfg k_predict[] = {
    {"regression-raw", SB_K_OBJ_REGRESSION, 1, SB_K_PREDICT_RAW, 60, 6, 12, 4000, 0},
    {"poisson-value", SB_K_OBJ_POISSON, 1, SB_K_PREDICT_VALUE, 30, 4, 8, 2000, 0},
    {"binary-proba", SB_K_OBJ_BINARY, 1, SB_K_PREDICT_PROBA, 40, 5, 12, 4000, 0},
    {"multiclass-k5-proba", SB_K_OBJ_MULTICLASS, 5, SB_K_PREDICT_PROBA, 50, 4, 8, 3000, 0},
    {"multiclass-k30-value", SB_K_OBJ_MULTICLASS, 30, SB_K_PREDICT_VALUE, 90, 3, 8, 2000, 0},
    {"forest-k3-proba", SB_K_OBJ_FOREST_CLASSES, 3, SB_K_PREDICT_PROBA, 30, 7, 10, 2000, 0},
    /* profile v5's forest probabilities: the class-order sum and one division per class */
    {"forest-norm-k7-proba", SB_K_OBJ_FOREST_PROBA, 7, SB_K_PREDICT_PROBA, 70, 6, 10, 3000, 0},
    {"forest-norm-k7-value", SB_K_OBJ_FOREST_PROBA, 7, SB_K_PREDICT_VALUE, 70, 6, 10, 3000, 0},
    {"isolation-value", SB_K_OBJ_ISOLATION, 1, SB_K_PREDICT_VALUE, 50, 6, 9, 3000, 0},
    {"categorical-raw", SB_K_OBJ_REGRESSION, 1, SB_K_PREDICT_RAW, 40, 5, 6, 3000, 1},
    {"categorical-k4-proba", SB_K_OBJ_MULTICLASS, 4, SB_K_PREDICT_PROBA, 40, 4, 6, 2000, 1},
};

SB_TEST(device_ops) {
    printf("device_ops: every device operation on every backend, against the reference (cpu-batched; prediction: "
           "the host path)\n");
    for (size_t i = 0; i < sizeof k_tree / sizeof k_tree[0]; i++)
        if (selected("tree", k_tree[i].name)) tree_config(&k_tree[i]);
    for (size_t i = 0; i < sizeof k_forest / sizeof k_forest[0]; i++)
        if (selected("forest", k_forest[i].name)) forest_config(&k_forest[i]);
    for (size_t i = 0; i < sizeof k_predict / sizeof k_predict[0]; i++)
        if (selected("predict", k_predict[i].name)) predict_config(&k_predict[i]);
    for (int i = 0; i < g_nres; i++) {
        const pres *r = &g_res[i];
        pbackend *be = &g_be[r->b];
        if (r->bad) {
            /* the configuration's first difference on this backend: later
             * ones may only inherit its device state */
            const pres *root = r;
            for (int j = 0; j < g_nres; j++)
                if (g_res[j].bad && g_res[j].b == r->b && !strcmp(g_res[j].cfg, r->cfg) && g_res[j].seq < root->seq)
                    root = &g_res[j];
            char after[64] = "";
            if (root != r) snprintf(after, sizeof after, " [after %s's difference]", root->op);
            be->differ++;
            printf("  %-16s %-24s %-7s: DIFFERS (%d checks)%s; first: %s\n", r->op, r->cfg, be->name, r->calls, after,
                   r->first);
        } else {
            be->identical++;
            printf("  %-16s %-24s %-7s: identical (%d checks)\n", r->op, r->cfg, be->name, r->calls);
        }
    }
    printf("device_ops summary:\n");
    const char *req = getenv("SAMEBITS_PARITY_REQUIRE");
    for (int b = 1; b < NB; b++) {
        pbackend *be = &g_be[b];
        const int required = req && strstr(req, be->name) != NULL;
        if (be->state < 0) {
            printf("  %-7s skipped (%s)%s\n", be->name, be->why, required ? ": REQUIRED (SAMEBITS_PARITY_REQUIRE)" : "");
            SB_CHECK(!required);
        } else if (be->state == 0) {
            printf("  %-7s not run (no configuration selected)\n", be->name);
            SB_CHECK(!required);
        } else {
            printf("  %-7s %d op configs identical, %d differ%s\n", be->name, be->identical, be->differ,
                   be->differ ? " (FAIL)" : "");
            SB_CHECK(be->differ == 0);
        }
    }
    fflush(stdout);
}
