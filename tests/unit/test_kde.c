/*
 * test_kde.c: kernel density (src/models/neighbors/kde.c): the normalizations
 * against their closed forms (lgamma from libm, here only as a reference); a
 * model read back from its file scoring the same bits; one thread and three
 * giving the same bits; a far query finite under the gaussian kernel and -inf
 * under a compact one; the refusals by name; the GPU's kernel body
 * (src/kernels/kde.h, integer binary64) compiled here giving the host's sums
 * bit for bit, every kernel, weighted and not.
 */
#include "sb_test.h"
#include "models/neighbors/kde.h"
#include "kernels/kde.h"
#include "device/device.h"
#include "linalg/linalg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KD_PI_T 3.14159265358979323846

static sb_status fit(const float *x, const float *w, int64_t n, int32_t d, const char *params, sb_model **m) {
    sb_dataset *ds = NULL;
    sb_params *p = NULL;
    sb_status st = sb_dataset_from_matrix(x, n, d, &ds);
    if (st == SB_OK && w) st = sb_dataset_set_weight(ds, w, n);
    if (st == SB_OK) st = sb_params_create(&p);
    if (st == SB_OK) st = sb_params_parse(p, params);
    if (st == SB_OK) st = sb_kde_fit(p, ds, NULL, m);
    sb_params_free(p);
    sb_dataset_free(ds);
    return st;
}

static float *score(const sb_model *m, const float *q, int64_t nq, int32_t d) {
    sb_dataset *ds = NULL;
    float *out = malloc(sizeof(float) * (size_t)nq);
    if (sb_dataset_from_matrix(q, nq, d, &ds) != SB_OK ||
        sb_model_score_samples(m, ds, out, (size_t)nq, NULL) != SB_OK) {
        free(out);
        out = NULL;
    }
    sb_dataset_free(ds);
    return out;
}

SB_TEST(test_kde_normalizations_match_closed_forms) {
    for (int32_t d = 1; d <= 40; d++) {
        const double h = 0.7, logv = 0.5 * d * log(KD_PI_T) - lgamma(0.5 * d + 1.0), lh = d * log(h);
        const double want[5] = {0.5 * d * log(2.0 * KD_PI_T) + lh, logv + lh, logv + log(2.0 / (d + 2)) + lh,
                                logv + lgamma(d + 1.0) + lh, logv - log(d + 1.0) + lh};
        for (int32_t k = 0; k < 5; k++) {
            const double got = sb_kde_log_norm(k, d, h);
            SB_CHECK(fabs(got - want[k]) <= 1e-6 * (1.0 + fabs(want[k])));
        }
    }
    /* cosine in 1-D: int cos(pi x / 2) over [-1, 1] = 4 / pi; in 3-D: 4 pi int_0^1 cos(pi r / 2) r^2 dr
     * = 4 pi (2 / pi - 16 / pi^3) */
    SB_CHECK(fabs(sb_kde_log_norm(SB_KDE_COSINE, 1, 1.0) - log(4.0 / KD_PI_T)) < 1e-6);
    SB_CHECK(fabs(sb_kde_log_norm(SB_KDE_COSINE, 3, 1.0) - log(4.0 * KD_PI_T * (2.0 / KD_PI_T - 16.0 / pow(KD_PI_T, 3)))) < 1e-6);
    /* no overflow at large d and tiny h: the products keep their own exponent */
    SB_CHECK(isfinite(sb_kde_log_norm(SB_KDE_EXPONENTIAL, 2000, 1e-30)));
}

SB_TEST(test_kde_file_and_threads_give_the_same_bits) {
    const int64_t n = 500, nq = 200;
    const int32_t d = 5;
    float *x = sb_test_rows(n, d, 1), *q = sb_test_rows(nq, d, 2), *w = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) w[i] = (float)(i % 7) * 0.5f; /* a seventh of them zero */
    static const char *const kernels[6] = {"gaussian", "tophat", "epanechnikov", "exponential", "linear", "cosine"};
    for (int k = 0; k < 6; k++) {
        char params[96];
        snprintf(params, sizeof params, "model=kde,kernel=%s,bandwidth=silverman", kernels[k]);
        sb_model *m = NULL, *back = NULL;
        SB_CHECK(sb_set_num_threads(1) == SB_OK);
        SB_CHECK(fit(x, w, n, d, params, &m) == SB_OK);
        float *a = score(m, q, nq, d);
        SB_CHECK(sb_set_num_threads(3) == SB_OK);
        float *b = score(m, q, nq, d);
        size_t len = 0;
        SB_CHECK(sb_model_to_bytes(m, NULL, 0, &len) == SB_OK);
        uint8_t *bytes = malloc(len);
        SB_CHECK(sb_model_to_bytes(m, bytes, len, &len) == SB_OK);
        SB_CHECK(sb_model_from_bytes(bytes, len, &back) == SB_OK);
        float *c = back ? score(back, q, nq, d) : NULL;
        SB_CHECK(a && b && c);
        if (a && b && c) {
            SB_CHECK(memcmp(a, b, sizeof(float) * (size_t)nq) == 0);
            SB_CHECK(memcmp(a, c, sizeof(float) * (size_t)nq) == 0);
        }
        free(a), free(b), free(c), free(bytes);
        sb_model_free(m);
        sb_model_free(back);
    }
    SB_CHECK(sb_set_num_threads(0) == SB_OK);
    free(x), free(q), free(w);
}

SB_TEST(test_kde_far_queries_and_refusals) {
    const int64_t n = 50;
    const int32_t d = 2;
    float *x = sb_test_rows(n, d, 3), far[2] = {1.0e4f, -1.0e4f}, bad[2] = {0.0f, NAN};
    sb_model *m = NULL;
    SB_CHECK(fit(x, NULL, n, d, "model=kde,bandwidth=0.5", &m) == SB_OK);
    float *v = score(m, far, 1, d);
    SB_CHECK(v && isfinite(v[0]) && v[0] < -1.0e8f);
    free(v);
    sb_model_free(m);
    m = NULL;
    SB_CHECK(fit(x, NULL, n, d, "model=kde,kernel=tophat,bandwidth=0.5", &m) == SB_OK);
    v = score(m, far, 1, d);
    SB_CHECK(v && v[0] == -INFINITY);
    free(v);
    sb_dataset *ds = NULL;
    float out[1];
    SB_CHECK(sb_dataset_from_matrix(bad, 1, d, &ds) == SB_OK);
    SB_CHECK(sb_model_score_samples(m, ds, out, 1, NULL) == SB_ERR_INVALID_INPUT);
    SB_CHECK(strstr(sb_last_error(), "missing (NaN)") != NULL);
    SB_CHECK(sb_model_sample(m, 2, 0, NULL, 0, NULL) == SB_OK); /* tophat samples */
    sb_dataset_free(ds);
    sb_model_free(m);
    m = NULL;
    static const char *const refused[] = {"model=kde,bandwidth=0", "model=kde,bandwidth=-1", "model=kde,bandwidth=nan",
                                          "model=kde,bandwidth=inf", "model=kde,kernel=box",
                                          "model=kde,metric=manhattan", "model=kde,atol=0.1", "model=kde,rtol=1e-8",
                                          "model=kde,device=cuda", "model=kde,leaf_size=0"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        const sb_status st = fit(x, NULL, n, d, refused[i], &m);
        SB_CHECK(st != SB_OK && m == NULL);
        SB_CHECK(sb_last_error()[0] != '\0');
    }
    SB_CHECK(fit(x, NULL, n, d, "model=kde,kernel=linear", &m) == SB_OK);
    SB_CHECK(sb_model_sample(m, 2, 0, NULL, 0, NULL) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(strstr(sb_last_error(), "kernel='linear' is not supported") != NULL);
    sb_model_free(m);
    free(x);
}

SB_TEST(test_kde_kernel_body_gives_the_host_sums) {
    /* d 1..9 (the four lanes and each tail), bandwidths from a hundredth to
     * ten (terms past the exponent cut, compact kernels reaching none, some
     * or every row), queries on rows, duplicated and far away */
    int bad = 0, runs = 0;
    const float bws[] = {0.01f, 0.3f, 1.0f, 10.0f};
    for (int32_t d = 1; d <= 9; d += (d < 5 ? 1 : 4)) {
        const int64_t n = 97, nq = 23;
        float *x = sb_test_rows(n, d, 11u + (uint64_t)d), *q = sb_test_rows(nq, d, 97u + (uint64_t)d);
        float *w = malloc(sizeof(float) * (size_t)n);
        for (int64_t i = 0; i < n; i++) w[i] = (float)(i % 5) * 0.25f; /* a fifth zero */
        memcpy(q, x + 3 * d, sizeof(float) * (size_t)d);
        memcpy(q + d, x + 3 * d, sizeof(float) * (size_t)d);
        for (int32_t f = 0; f < d; f++) q[2 * d + f] = 500.0f + (float)f;
        for (int kern = 0; kern < 6; kern++)
            for (int b = 0; b < 4; b++)
                for (int weighted = 0; weighted < 2; weighted++) {
                    static const char *const names[] = {"gaussian", "tophat", "epanechnikov",
                                                        "exponential", "linear", "cosine"};
                    char params[96];
                    snprintf(params, sizeof params, "model=kde,kernel=%s,bandwidth=%g", names[kern], (double)bws[b]);
                    sb_model *m = NULL;
                    SB_CHECK(fit(x, weighted ? w : NULL, n, d, params, &m) == SB_OK);
                    sb_dataset *qs = NULL;
                    SB_CHECK(sb_dataset_from_matrix(q, nq, d, &qs) == SB_OK);
                    double out[23], sums[23];
                    SB_CHECK(sb_kde_score_f64(m, &qs->t, 0, out, sums) == SB_OK);
                    const double h = (double)m->kde->bandwidth, h2 = h * h, invh = 1.0 / h, inv2h2 = 1.0 / (2.0 * h2),
                                 h2_hi = h2 * (1.0 + 0x1p-40);
                    sb_kd_scalars c;
                    memcpy(&c.invh, &invh, 8), memcpy(&c.inv2h2, &inv2h2, 8), memcpy(&c.h, &h, 8);
                    memcpy(&c.h2, &h2, 8), memcpy(&c.h2_hi, &h2_hi, 8);
                    for (int64_t i = 0; i < nq; i++) {
                        sb_u64 got[2], want;
                        sb_kd_sum(q + i * d, x, n, d, w, weighted, kern, c, got);
                        memcpy(&want, &sums[i], 8);
                        bad += got[0] != want;
                    }
                    runs++;
                    sb_dataset_free(qs);
                    sb_model_free(m);
                }
        free(x), free(q), free(w);
    }
    SB_CHECK(runs == 6 * 6 * 4 * 2);
    SB_CHECK(bad == 0);
}

SB_TEST(test_kde_device_sums_agree) {
    /* kd_sums on each GPU backend this build has and this machine offers
     * (opencl, cuda), against the host's kd_one: the kernel sums and log
     * densities bit for bit, every kernel, weighted and not, d on and off the
     * four lanes, 1,000 queries (several work-groups, one a partial). No
     * backend here: nothing compared, said on the output (the integration test
     * on PoCL requires the opencl line). */
    const char *devs[] = {"opencl", "cuda"};
    int ran = 0;
    for (int di = 0; di < 2; di++) {
        sb_device_kind kind;
        sb_device *dv = NULL;
        if (sb_device_parse(devs[di], &kind) != SB_OK || sb_linalg_device_lock(kind, &dv) != SB_OK) {
            sb_clear_error();
            continue;
        }
        sb_linalg_device_unlock();
        int bad = 0, runs = 0;
        for (int32_t d = 3; d <= 8; d += 5) {
            const int64_t n = 301, nq = 1000;
            float *x = sb_test_rows(n, d, 5u + (uint64_t)d), *q = sb_test_rows(nq, d, 71u + (uint64_t)d);
            float *w = malloc(sizeof(float) * (size_t)n);
            for (int64_t i = 0; i < n; i++) w[i] = (float)((i * 7) % 6) * 0.5f; /* a sixth zero */
            memcpy(q, x, sizeof(float) * (size_t)d);
            for (int32_t f = 0; f < d; f++) q[d + f] = 300.0f - (float)f;
            double *a = malloc(sizeof(double) * 4 * (size_t)nq);
            for (int kern = 0; kern < 6; kern++)
                for (int weighted = 0; weighted < 2; weighted++) {
                    static const char *const names[] = {"gaussian", "tophat", "epanechnikov",
                                                        "exponential", "linear", "cosine"};
                    char params[96];
                    snprintf(params, sizeof params, "model=kde,kernel=%s,bandwidth=0.4,device=%s", names[kern], devs[di]);
                    sb_model *m = NULL;
                    SB_CHECK(fit(x, weighted ? w : NULL, n, d, params, &m) == SB_OK);
                    sb_dataset *qs = NULL;
                    SB_CHECK(sb_dataset_from_matrix(q, nq, d, &qs) == SB_OK);
                    SB_CHECK(sb_kde_score_f64(m, &qs->t, SB_DEVICE_CPU, a, a + nq) == SB_OK);
                    SB_CHECK(sb_kde_score_f64(m, &qs->t, kind, a + 2 * nq, a + 3 * nq) == SB_OK);
                    const int diff = memcmp(a, a + 2 * nq, 16 * (size_t)nq) != 0;
                    if (diff) printf("  kde %s d=%d %s%s: DIFFERS\n", devs[di], (int)d, names[kern], weighted ? " weighted" : "");
                    bad += diff;
                    runs++;
                    sb_dataset_free(qs);
                    sb_model_free(m);
                }
            free(a), free(x), free(q), free(w);
        }
        printf("  test_kde_device_sums_agree: %s: %d runs, %d differ\n", devs[di], runs, bad);
        SB_CHECK(bad == 0);
        ran++;
    }
    printf("  test_kde_device_sums_agree: %d backends compared (0: no GPU backend opened)\n", ran);
}
