/*
 * test_arima.c: ARIMA's C API (docs/timeseries.md). A series' result is its
 * own whatever the batch, its position or the thread count; the likelihood
 * at given parameters is AR(1)'s closed form; forecasts and their standard
 * errors are the closed forms of AR(1) and the random walk; hostile batches,
 * explosive and non-invertible given polynomials and bad calls are refused by
 * name.
 */
#include "sb_test.h"
#include "samebits.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t g_s = 11;
static double rnd(void) {
    g_s = g_s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)((int32_t)(g_s >> 40) % 4096) / 256.0;
}

/* n values of an AR(1)-like series around base, integrated when integ. */
static void series(double *y, int n, double base, int integ) {
    double v = 0.0, s = 0.0;
    for (int t = 0; t < n; t++) {
        v = 0.6 * v + rnd() - 8.0;
        s = s + v;
        y[t] = base + (integ ? s : v);
    }
}

static sb_arima *fit(const char *params, const double *y, const int64_t *off, int64_t ns, sb_status *st) {
    sb_params *p = NULL;
    sb_arima *e = NULL;
    *st = sb_params_create(&p);
    if (*st == SB_OK) *st = sb_params_parse(p, params);
    if (*st == SB_OK) *st = sb_arima_fit(p, y, off, ns, NULL, &e);
    sb_params_free(p);
    return e;
}

static double get1(const sb_arima *e, const char *name) {
    double v = NAN;
    size_t need = 0;
    sb_arima_get_array(e, 0, name, &v, 1, &need);
    return v;
}

/* The four series of the batch tests (lengths 61, 150, 90, 200; every
 * other one integrated) into y, their offsets into off. */
static const int k_len4[4] = {61, 150, 90, 200};
static void four_series(double *y, int64_t *off) {
    off[0] = 0;
    for (int i = 0; i < 4; i++) {
        series(y + off[i], k_len4[i], 50.0 + 10.0 * i, i & 1);
        off[i + 1] = off[i] + k_len4[i];
    }
}

SB_TEST(test_arima_batch_position_and_threads) {
    static double y[700];
    const int *len = k_len4;
    int64_t off[5];
    four_series(y, off);
    const char *models[] = {"order=1:0:1,trend=c", "order=0:1:1", "order=1:0:0,seasonal_order=0:1:1:4"};
    for (int mi = 0; mi < 3; mi++) {
        char alone[4][65], in_batch[65];
        sb_status st;
        for (int i = 0; i < 4; i++) {
            int64_t o1[2] = {0, len[i]};
            sb_arima *e = fit(models[mi], y + off[i], o1, 1, &st);
            SB_CHECK(st == SB_OK && e);
            if (e) SB_CHECK(sb_arima_digest(e, 0, alone[i]) == SB_OK);
            sb_arima_free(e);
        }
        for (int threads = 1; threads <= 3; threads += 2) {
            SB_CHECK(sb_set_num_threads(threads) == SB_OK);
            sb_arima *e = fit(models[mi], y, off, 4, &st);
            SB_CHECK(st == SB_OK && e);
            for (int i = 0; e && i < 4; i++) {
                SB_CHECK(sb_arima_digest(e, i, in_batch) == SB_OK);
                SB_CHECK(strcmp(in_batch, alone[i]) == 0);
            }
            sb_arima_free(e);
        }
        SB_CHECK(sb_set_num_threads(0) == SB_OK);
    }
}

/* sb_arima_forecast_all: row i is sb_arima_forecast's bits for series i
 * (mean, se, both ends) at 1 and 3 threads; NULL rows are skipped; h and a
 * NULL mean refused by name. */
SB_TEST(test_arima_forecast_all_rows_are_each_series) {
    static double y[700];
    int64_t off[5];
    four_series(y, off);
    enum { H = 9 };
    sb_status st;
    sb_arima *e = fit("order=1:1:1", y, off, 4, &st);
    SB_CHECK(st == SB_OK && e);
    if (!e) return;
    for (int threads = 1; threads <= 3; threads += 2) {
        SB_CHECK(sb_set_num_threads(threads) == SB_OK);
        double m[4 * H], se[4 * H], lo[4 * H], hi[4 * H], m2[4 * H];
        SB_CHECK(sb_arima_forecast_all(e, H, 0.2, m, se, lo, hi) == SB_OK);
        SB_CHECK(sb_arima_forecast_all(e, H, 0.2, m2, NULL, NULL, NULL) == SB_OK);
        for (int i = 0; i < 4; i++) {
            double a[H], b[H], c[H], d[H];
            SB_CHECK(sb_arima_forecast(e, i, H, 0.2, a, b, c, d) == SB_OK);
            SB_CHECK(memcmp(a, m + i * H, sizeof a) == 0 && memcmp(b, se + i * H, sizeof b) == 0);
            SB_CHECK(memcmp(c, lo + i * H, sizeof c) == 0 && memcmp(d, hi + i * H, sizeof d) == 0);
            SB_CHECK(memcmp(a, m2 + i * H, sizeof a) == 0);
        }
    }
    SB_CHECK(sb_set_num_threads(0) == SB_OK);
    double m[4];
    SB_CHECK(sb_arima_forecast_all(e, 0, 0.05, m, NULL, NULL, NULL) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(strstr(sb_last_error(), "h=0") != NULL);
    SB_CHECK(sb_arima_forecast_all(e, 1, 0.05, NULL, NULL, NULL, NULL) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_arima_forecast_all(NULL, 1, 0.05, m, NULL, NULL, NULL) == SB_ERR_INVALID_ARGUMENT);
    sb_arima_free(e);
}

/* AR(1) with given mu, phi, sigma2: the exact likelihood's closed form. */
SB_TEST(test_arima_ar1_likelihood_closed_form) {
    double y[80];
    series(y, 80, 20.0, 0);
    int64_t off[2] = {0, 80};
    const double mu = 19.5, phi = 0.55, s2 = 20.0;
    sb_status st;
    sb_arima *e = fit("order=1:0:0,trend=c,params=19.5:0.55:20", y, off, 1, &st);
    SB_CHECK(st == SB_OK && e);
    double q = (1.0 - phi * phi) * (y[0] - mu) * (y[0] - mu);
    for (int t = 1; t < 80; t++) {
        const double r = (y[t] - mu) - phi * (y[t - 1] - mu);
        q += r * r;
    }
    const double llf = -40.0 * log(2.0 * 3.14159265358979323846 * s2) + 0.5 * log(1.0 - phi * phi) - q / (2.0 * s2);
    SB_CHECK(fabs(get1(e, "llf") - llf) < 1e-9 * fabs(llf));
    /* forecasts: mu + phi^h (y_n - mu), se^2 = s2 (1 + phi^2 + ... + phi^(2(h-1))) */
    double m[5], se[5], lo[5], hi[5];
    SB_CHECK(sb_arima_forecast(e, 0, 5, 0.05, m, se, lo, hi) == SB_OK);
    double pw = 1.0, acc = 0.0;
    for (int h = 0; h < 5; h++) {
        acc += pw * pw;
        pw *= phi;
        SB_CHECK(fabs(m[h] - (mu + pw * (y[79] - mu))) < 1e-10);
        SB_CHECK(fabs(se[h] - sqrt(s2 * acc)) < 1e-10);
        SB_CHECK(fabs((hi[h] - m[h]) / se[h] - 1.959963984540054) < 1e-12);
        SB_CHECK(fabs((m[h] - lo[h]) / se[h] - 1.959963984540054) < 1e-12);
    }
    sb_arima_free(e);
}

/* ARIMA(0,1,0) with sigma2 given: forecasts are the last value, se^2 = h s2. */
SB_TEST(test_arima_random_walk_forecast) {
    double y[50];
    series(y, 50, 5.0, 1);
    int64_t off[2] = {0, 50};
    sb_status st;
    sb_arima *e = fit("order=0:1:0,params=3", y, off, 1, &st);
    SB_CHECK(st == SB_OK && e);
    double m[6], se[6];
    SB_CHECK(sb_arima_forecast(e, 0, 6, 0.1, m, se, NULL, NULL) == SB_OK);
    for (int h = 0; h < 6; h++) {
        SB_CHECK(m[h] == y[49]);
        SB_CHECK(fabs(se[h] - sqrt(3.0 * (h + 1))) < 1e-12);
    }
    double r[50];
    size_t need = 0;
    SB_CHECK(sb_arima_get_array(e, 0, "resid", r, 50, &need) == SB_OK && need == 50);
    SB_CHECK(r[0] != r[0] && r[1] == y[1] - y[0]); /* the first value has no prediction */
    sb_arima_free(e);
}

/* AR(1) with given parameters and missing values: across a gap of g values
 * the exact likelihood's term is y_t | y_{t-g-1}, mean mu + phi^(g+1) (y - mu)
 * and variance s2 (1 + phi^2 + ... + phi^(2g)); the resid is NaN there and the
 * fitted value the prediction; the likelihood counts the observed values. */
SB_TEST(test_arima_ar1_missing_closed_form) {
    double y[80];
    series(y, 80, 20.0, 0);
    y[10] = NAN, y[30] = NAN, y[31] = NAN, y[79] = NAN;
    int64_t off[2] = {0, 80};
    const double mu = 19.5, phi = 0.55, s2 = 20.0;
    sb_status st;
    sb_arima *e = fit("order=1:0:0,trend=c,params=19.5:0.55:20", y, off, 1, &st);
    SB_CHECK(st == SB_OK && e);
    double llf = -0.5 * log(2.0 * 3.14159265358979323846 * s2 / (1.0 - phi * phi)) -
                 (1.0 - phi * phi) * (y[0] - mu) * (y[0] - mu) / (2.0 * s2);
    int last = 0;
    for (int t = 1; t < 80; t++) {
        if (y[t] != y[t]) continue;
        const int g = t - last - 1;
        double pw = phi, var = 1.0, p2 = 1.0;
        for (int k = 0; k < g; k++) pw *= phi, p2 *= phi * phi, var += p2;
        const double r = (y[t] - mu) - pw * (y[last] - mu);
        llf += -0.5 * log(2.0 * 3.14159265358979323846 * s2 * var) - r * r / (2.0 * s2 * var);
        last = t;
    }
    SB_CHECK(fabs(get1(e, "llf") - llf) < 1e-9 * fabs(llf));
    double r[80], f[80];
    size_t need = 0;
    SB_CHECK(sb_arima_get_array(e, 0, "resid", r, 80, &need) == SB_OK);
    SB_CHECK(sb_arima_get_array(e, 0, "fittedvalues", f, 80, &need) == SB_OK);
    SB_CHECK(r[10] != r[10] && r[31] != r[31] && r[79] != r[79] && r[11] == r[11]);
    SB_CHECK(fabs(f[10] - (mu + phi * (y[9] - mu))) < 1e-10);
    SB_CHECK(fabs(f[31] - (mu + phi * phi * (y[29] - mu))) < 1e-10);
    /* the forecast after a missing last value: two steps on from y[78] */
    double m[2], se[2];
    SB_CHECK(sb_arima_forecast(e, 0, 2, 0.05, m, se, NULL, NULL) == SB_OK);
    SB_CHECK(fabs(m[0] - (mu + phi * phi * (y[78] - mu))) < 1e-10);
    SB_CHECK(fabs(se[0] - sqrt(s2 * (1.0 + phi * phi))) < 1e-10);
    sb_arima_free(e);
    /* with differencing a missing last value leaves the forecast nothing to integrate: refused by name */
    e = fit("order=0:1:1,params=0.3:2", y, off, 1, &st);
    SB_CHECK(st == SB_OK && e);
    SB_CHECK(sb_arima_forecast(e, 0, 2, 0.05, m, se, NULL, NULL) == SB_ERR_INVALID_INPUT);
    SB_CHECK(strstr(sb_last_error(), "from its end is missing") != NULL);
    sb_arima_free(e);
}

/* An ARMA(1,1) generated with phi 0.7, theta -0.4 (600 values, the generator
 * reseeded so the series is the same alone or after other cases): the fit from
 * the Hannan-Rissanen start recovers both within sampling error, and with
 * every 23rd value missing the estimates stay within 0.05 of the complete
 * series' ones. */
SB_TEST(test_arima_arma11_estimate_with_gaps) {
    static double y[600];
    double e1 = 0.0, v = 0.0;
    g_s = 11; /* its own draws, whichever cases ran before it in this process */
    for (int t = 0; t < 600; t++) {
        const double e = rnd() - 8.0;
        v = 0.7 * v + e - 0.4 * e1;
        e1 = e;
        y[t] = 3.0 + v;
    }
    int64_t off[2] = {0, 600};
    sb_status st;
    sb_arima *a = fit("order=1:0:1,trend=c", y, off, 1, &st);
    SB_CHECK(st == SB_OK && a);
    double pa[4], pb[4];
    size_t need = 0;
    SB_CHECK(sb_arima_get_array(a, 0, "params", pa, 4, &need) == SB_OK && need == 4);
    SB_CHECK(fabs(pa[1] - 0.7) < 0.1 && fabs(pa[2] + 0.4) < 0.12);
    for (int t = 5; t < 600; t += 23) y[t] = NAN;
    sb_arima *b = fit("order=1:0:1,trend=c", y, off, 1, &st);
    SB_CHECK(st == SB_OK && b);
    SB_CHECK(sb_arima_get_array(b, 0, "params", pb, 4, &need) == SB_OK);
    SB_CHECK(fabs(pb[1] - pa[1]) < 0.05 && fabs(pb[2] - pa[2]) < 0.05);
    sb_arima_free(a), sb_arima_free(b);
}

SB_TEST(test_arima_refusals_by_name) {
    double y[40];
    series(y, 40, 10.0, 0);
    int64_t off[2] = {0, 40}, one[2] = {0, 1};
    sb_status st;
    SB_CHECK(!fit("order=1:0:0", y, one, 1, &st) && st == SB_ERR_INVALID_INPUT);
    SB_CHECK(strstr(sb_last_error(), "needs at least") != NULL);
    SB_CHECK(!fit("order=1:0:1,params=1.2:0.3:1", y, off, 1, &st) && st == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(strstr(sb_last_error(), "explosive") != NULL);
    SB_CHECK(!fit("order=1:0:0,params=-1:1", y, off, 1, &st) && st == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(!fit("order=0:0:2,params=0.5:1.5:1", y, off, 1, &st) && st == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(strstr(sb_last_error(), "not invertible") != NULL);
    SB_CHECK(!fit("order=0:0:1,params=0.5:0", y, off, 1, &st) && st == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(strstr(sb_last_error(), "sigma2") != NULL);
    SB_CHECK(!fit("order=1:1:0,trend=c", y, off, 1, &st) && st == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(!fit("order=1:0:0,trend=t", y, off, 1, &st) && st == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(!fit("order=1:0:0,seasonal_order=0:0:0:12", y, off, 1, &st) && st == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(!fit("order=1:0:0,seasonal_order=1:0:0:1", y, off, 1, &st) && st == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(!fit("order=21:0:0", y, off, 1, &st) && st == SB_ERR_LIMIT);
    SB_CHECK(!fit("order=1:0", y, off, 1, &st) && st == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(!fit("colour=blue", y, off, 1, &st) && st == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(!fit("numeric_mode=fast", y, off, 1, &st) && st == SB_ERR_MODE_UNSUPPORTED);
    SB_CHECK(!fit("device=cuda", y, off, 1, &st) && st == SB_ERR_BACKEND_UNAVAILABLE);
    y[7] = INFINITY;
    SB_CHECK(!fit("order=1:0:0", y, off, 1, &st) && st == SB_ERR_INVALID_INPUT);
    SB_CHECK(strstr(sb_last_error(), "value 7 is infinite") != NULL);
    for (int t = 0; t < 40; t++) y[t] = (t & 1) ? NAN : (double)t; /* every first difference touches a NaN */
    SB_CHECK(!fit("order=0:1:1", y, off, 1, &st) && st == SB_ERR_INVALID_INPUT);
    SB_CHECK(strstr(sb_last_error(), "every differenced value is missing") != NULL);
    for (int t = 0; t < 40; t++) y[t] = t < 37 ? NAN : (double)(t * t % 7); /* 3 observed: too few for 3 parameters */
    SB_CHECK(!fit("order=1:0:0,trend=c", y, off, 1, &st) && st == SB_ERR_INVALID_INPUT);
    SB_CHECK(strstr(sb_last_error(), "observed differenced values") != NULL);
    for (int t = 0; t < 40; t++) y[t] = NAN;
    SB_CHECK(!fit("order=1:0:0", y, off, 1, &st) && st == SB_ERR_INVALID_INPUT);
    SB_CHECK(strstr(sb_last_error(), "every value is missing") != NULL);
    for (int t = 0; t < 40; t++) y[t] = 3.25;
    SB_CHECK(!fit("order=1:0:0,trend=c", y, off, 1, &st) && st == SB_ERR_INVALID_INPUT);
    SB_CHECK(strstr(sb_last_error(), "constant") != NULL);
    for (int t = 0; t < 40; t++) y[t] = 3.25 + 0.5 * t; /* constant after differencing */
    SB_CHECK(!fit("order=0:1:1", y, off, 1, &st) && st == SB_ERR_INVALID_INPUT);
    int64_t bad[3] = {0, 20, 10};
    series(y, 40, 10.0, 0);
    SB_CHECK(!fit("order=1:0:0", y, bad, 2, &st) && st == SB_ERR_INVALID_ARGUMENT);
}

SB_TEST(test_arima_accessors) {
    double y[60];
    series(y, 60, 10.0, 0);
    int64_t off[2] = {0, 60};
    sb_status st;
    sb_arima *e = fit("order=1:0:1,seasonal_order=1:0:0:4,trend=c", y, off, 1, &st);
    SB_CHECK(st == SB_OK && e);
    if (!e) return;
    const char *want[] = {"const", "ar.L1", "ma.L1", "ar.S.L4", "sigma2"};
    int64_t k = 0;
    SB_CHECK(sb_arima_get_int(e, 0, "k", &k) == SB_OK && k == 5);
    for (int i = 0; i < 5; i++) {
        char name[32];
        SB_CHECK(sb_arima_param_name(e, i, name, sizeof name, NULL) == SB_OK && !strcmp(name, want[i]));
    }
    char name[32];
    SB_CHECK(sb_arima_param_name(e, 5, name, sizeof name, NULL) == SB_ERR_INVALID_ARGUMENT);
    double buf[60];
    size_t need = 0;
    SB_CHECK(sb_arima_get_array(e, 0, "nothing", buf, 60, &need) == SB_ERR_NOT_FOUND);
    SB_CHECK(sb_arima_get_array(e, 0, "fittedvalues", buf, 10, &need) == SB_ERR_LIMIT && need == 60);
    SB_CHECK(sb_arima_get_array(e, 1, "llf", buf, 1, &need) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_arima_forecast(e, 0, 0, 0.05, buf, NULL, NULL, NULL) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_arima_forecast(e, 0, 3, 1.5, buf, NULL, buf + 3, NULL) == SB_ERR_INVALID_ARGUMENT);
    double aic = get1(e, "aic"), llf = get1(e, "llf"), bic = get1(e, "bic");
    SB_CHECK(fabs(aic - (-2.0 * llf + 10.0)) < 1e-9);
    SB_CHECK(fabs(bic - (-2.0 * llf + 5.0 * log(60.0))) < 1e-9);
    int64_t conv = -1;
    SB_CHECK(sb_arima_get_int(e, 0, "converged", &conv) == SB_OK && conv == 1);
    sb_arima_free(e);
}

/* method=css: AR(1) with a const by conditional sum of squares is least
 * squares of y_t on (1, y_{t-1}) (closed form); llf is the exact likelihood
 * at those coefficients (the same as given parameters'); a series' result is
 * its own at any position and thread count; refusals by name. */
SB_TEST(test_arima_css) {
    static double y[400];
    const int len[3] = {120, 80, 200};
    int64_t off[4] = {0};
    for (int i = 0; i < 3; i++) {
        series(y + off[i], len[i], 30.0 + 5.0 * i, 0);
        off[i + 1] = off[i] + len[i];
    }
    sb_status st;
    int64_t o1[2] = {0, len[0]};
    sb_arima *e = fit("order=1:0:0,trend=c,method=css", y, o1, 1, &st);
    SB_CHECK(st == SB_OK && e);
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    const int n = len[0] - 1;
    for (int t = 1; t < len[0]; t++) sx += y[t - 1], sy += y[t], sxx += y[t - 1] * y[t - 1], sxy += y[t - 1] * y[t];
    const double phi = (n * sxy - sx * sy) / (n * sxx - sx * sx), c = (sy - phi * sx) / n, mu = c / (1.0 - phi);
    double par[3];
    size_t need = 0;
    if (e) {
        SB_CHECK(sb_arima_get_array(e, 0, "params", par, 3, &need) == SB_OK);
        SB_CHECK(fabs(par[1] - phi) < 1e-6 && fabs(par[0] - mu) < 1e-6 * fabs(mu));
        /* llf: the exact likelihood at the CSS coefficients and their concentrated sigma2 */
        char given[200];
        snprintf(given, sizeof given, "order=1:0:0,trend=c,params=%.17g:%.17g:%.17g", par[0], par[1], par[2]);
        sb_arima *g = fit(given, y, o1, 1, &st);
        SB_CHECK(st == SB_OK && g);
        if (g) SB_CHECK(fabs(get1(g, "llf") - get1(e, "llf")) <= 1e-12 * fabs(get1(e, "llf")));
        sb_arima_free(g);
        uint8_t buf[16];
        SB_CHECK(sb_arima_to_bytes(e, buf, sizeof buf, &need) == SB_ERR_INVALID_ARGUMENT);
        SB_CHECK(strstr(sb_last_error(), "method=css") != NULL);
    }
    sb_arima_free(e);
    const char *models[] = {"order=1:0:1,trend=c,method=css", "order=1:1:1,seasonal_order=1:0:1:4,method=css"};
    for (int mi = 0; mi < 2; mi++) {
        char alone[3][65], in_batch[65];
        for (int i = 0; i < 3; i++) {
            int64_t oi[2] = {0, len[i]};
            e = fit(models[mi], y + off[i], oi, 1, &st);
            SB_CHECK(st == SB_OK && e);
            if (e) SB_CHECK(sb_arima_digest(e, 0, alone[i]) == SB_OK);
            sb_arima_free(e);
        }
        for (int threads = 1; threads <= 7; threads += 6) {
            SB_CHECK(sb_set_num_threads(threads) == SB_OK);
            e = fit(models[mi], y, off, 3, &st);
            SB_CHECK(st == SB_OK && e);
            for (int i = 0; e && i < 3; i++) {
                SB_CHECK(sb_arima_digest(e, i, in_batch) == SB_OK);
                SB_CHECK(strcmp(in_batch, alone[i]) == 0);
            }
            sb_arima_free(e);
        }
        SB_CHECK(sb_set_num_threads(0) == SB_OK);
    }
    e = fit("order=1:0:0,trend=c,method=css,params=1:0.5:1", y, o1, 1, &st);
    SB_CHECK(st == SB_ERR_INVALID_ARGUMENT && !e && strstr(sb_last_error(), "would do nothing"));
    e = fit("order=1:0:0,method=lbfgs", y, o1, 1, &st);
    SB_CHECK(st == SB_ERR_INVALID_ARGUMENT && !e && strstr(sb_last_error(), "method='lbfgs'"));
}

/* ---- the golden v6 file (docs/numeric-profile.md, v7) ---- */

#define GOLDEN_V6_ARIMA_NAME "models/v6-arima.sbm"

/* What the library that wrote tests/data/models/v6-arima.sbm (profile
 * sb-identical-v6, commit 5de6cf4: the Nelder-Mead search) fitted and
 * forecast: ARIMA(1,1,1) on v6_series() below, its params (ar.L1, ma.L1,
 * sigma2) and 6 steps of mean, lower and upper at alpha 0.05, each printed
 * with %.17g (which reads back as the same double). */
static const char *const k_v6_params[3] = {"0.35465745966959822", "0.23055067511775582", "19.561434982508366"};
static const char *const k_v6_forecast[6 * 3] = {
    "167.84503601356687", "159.17644633825111", "176.51362568888263", "169.09584460808128", "152.84857444273456",
    "185.343114773428",   "169.53945320674467", "147.05643195584813", "192.02247445764121", "169.69678230543423",
    "141.99771519301586", "197.39584941785259", "169.75258024390757", "137.55997029568434", "201.94519019213081",
    "169.77236939902133", "133.60429357835349", "205.94044521968917"};

/* The 120 values the golden file was fitted on: an integrated AR(1)-like
 * walk from a 64-bit LCG, exact in any order of evaluation. */
static void v6_series(double *y) {
    uint64_t s = 11;
    double v = 0.0, acc = 0.0;
    for (int t = 0; t < 120; t++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        v = 0.6 * v + (double)((int32_t)(s >> 40) % 4096) / 256.0 - 8.0;
        acc = acc + v;
        y[t] = 50.0 + acc;
    }
}

/* A golden ARIMA(1,1,1) file written by an earlier profile: it loads, its
 * params (ar.L1, ma.L1, sigma2) and 6 steps of mean, lower and upper at
 * alpha 0.05 are the written bits (kpar, kfc: %.17g or repr text), and the
 * n values of series() fitted here give other coefficients. With same_llf,
 * that refit's llf must also be within 1e-9 relative of the file's (the
 * same optimum, so the series is the file's: else the refit moving proves
 * nothing). */
static void golden_arima_file(const char *name, const char *const *kpar, const char *const *kfc,
                              void (*series)(double *), int n, int same_llf) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", sb_test_data_dir(), name);
    sb_arima *g = NULL;
    SB_CHECK(sb_arima_load(path, &g) == SB_OK && g != NULL);
    if (!g) return;
    double par[3], mean[6], lo[6], up[6], llf_file = 0.0;
    size_t need = 0;
    SB_CHECK(sb_arima_get_array(g, 0, "params", par, 3, &need) == SB_OK && need == 3);
    for (int i = 0; i < 3; i++) SB_CHECK(par[i] == strtod(kpar[i], NULL));
    SB_CHECK(sb_arima_forecast(g, 0, 6, 0.05, mean, NULL, lo, up) == SB_OK);
    for (int i = 0; i < 6; i++) {
        SB_CHECK(mean[i] == strtod(kfc[3 * i], NULL));
        SB_CHECK(lo[i] == strtod(kfc[3 * i + 1], NULL));
        SB_CHECK(up[i] == strtod(kfc[3 * i + 2], NULL));
    }
    SB_CHECK(sb_arima_get_array(g, 0, "llf", &llf_file, 1, &need) == SB_OK && need == 1);
    sb_arima_free(g);
    double *y = malloc(sizeof(double) * (size_t)n);
    SB_CHECK(y != NULL);
    if (!y) return;
    series(y);
    int64_t off[2] = {0, n};
    sb_status st = SB_OK;
    sb_arima *e = fit("order=1,1,1", y, off, 1, &st);
    free(y);
    SB_CHECK(st == SB_OK && e != NULL);
    if (!e) return;
    double now[3], llf_now = 0.0;
    SB_CHECK(sb_arima_get_array(e, 0, "params", now, 3, &need) == SB_OK && need == 3);
    SB_CHECK(now[0] != par[0] && now[1] != par[1]);
    SB_CHECK(sb_arima_get_array(e, 0, "llf", &llf_now, 1, &need) == SB_OK && need == 1);
    if (same_llf) SB_CHECK(fabs(llf_now - llf_file) <= 1e-9 * fabs(llf_file));
    sb_arima_free(e);
}

/* The v7 bump changed ARIMA's training only: a v6 file loads and forecasts
 * the bits of the library that wrote it, while the same series fitted under
 * this library's BFGS gives other coefficients. Fails if a prediction rule
 * moved with the optimizer, or if the optimizer did not move at all. */
SB_TEST(test_arima_v6_file_forecasts_its_bits) {
    golden_arima_file(GOLDEN_V6_ARIMA_NAME, k_v6_params, k_v6_forecast, v6_series, 120, 0);
}

/* ---- the golden v8 file (docs/numeric-profile.md, v9) ---- */

#define GOLDEN_V8_ARIMA_NAME "models/v8-arima.sbm"

/* What the library that wrote tests/data/models/v8-arima.sbm (profile
 * sb-identical-v8, commit 2bb1984: the BFGS reset to the identity every
 * 2 nx gradients) fitted and forecast: ARIMA(1,1,1) on v8_series() below,
 * its params (ar.L1, ma.L1, sigma2) and 6 steps of mean, lower and upper at
 * alpha 0.05, each printed as Python's repr (which reads back as the same
 * double). */
static const char *const k_v8_params[3] = {"-0.17482092677381128", "-0.3858514674975137", "7.052744808648741"};
static const char *const k_v8_forecast[6 * 3] = {
    "201.6836998504995",  "196.4786226411501",  "206.88877705984888", "201.59814879769925", "195.91290635466714",
    "207.28339124073136", "201.61310491203628", "195.27711629042057", "207.949093533652",   "201.61049027026695",
    "194.7201670434282",  "208.5008134971057",  "201.61094736436425", "194.20196360250895", "209.01993112621955",
    "201.61086745475055", "193.71816911937722", "209.50356579012387"};

/* The 200 values the golden file was fitted on: an integrated MA(1)-like
 * walk from a 64-bit LCG, every value a multiple of 1/4096 well inside
 * binary64's exact range, so exact in any order of evaluation. */
static void v8_series(double *y) {
    uint64_t s = 23;
    double prev = 0.0, acc = 100.0;
    for (int t = 0; t < 200; t++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        const double e = (double)((int32_t)(s >> 40) % 4096) / 512.0;
        acc = acc + e - 0.875 * prev;
        prev = e;
        y[t] = acc;
    }
}

/* The v9 bump changed ARIMA's training only (the BFGS no longer resets its
 * approximation every 2 nx gradients): a v8 file loads and forecasts the
 * bits of the library that wrote it, while the same series fitted here
 * gives other coefficients. Fails if a prediction rule moved with the
 * optimizer, or if the optimizer did not move at all. */
SB_TEST(test_arima_v8_file_forecasts_its_bits) {
    golden_arima_file(GOLDEN_V8_ARIMA_NAME, k_v8_params, k_v8_forecast, v8_series, 200, 1);
}
