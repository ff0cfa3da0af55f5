/*
 * linear.c: the linear family's entry (sb_linear_fit), its data checks and the
 * numerics its fits share: exact dot products and means, and the product on
 * the chosen device. docs/linear.md states each fixed order.
 */
#include "linear.h"
#include "../../math/sb_reduce.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#ifdef SB_SABOTAGE_LIN_DOT
/* Separating arm of the linear family (make SABOTAGE=lin-dot): the dot
 * products as plain float sums, one partial per worker thread added in
 * thread order, the reduction DESIGN.md rule 4 forbids (its bits depend on
 * the order and on the thread count). */
static float lin_dot_sabotaged(const float *a, int64_t sa, const float *b, int64_t sb, int64_t n) {
    int32_t nt = 1;
    if (sb_get_num_threads(&nt) != SB_OK || nt < 1) nt = 1;
    float total = 0.0f;
    for (int32_t t = 0; t < nt; t++) {
        float part = 0.0f;
        for (int64_t i = n * t / nt; i < n * (t + 1) / nt; i++) part = part + (b ? a[i * sa] * b[i * sb] : a[i * sa]);
        total = total + part;
    }
    return total;
}
#endif

float sb_lin_dot(const float *a, int64_t sa, const float *b, int64_t sb, int64_t n) {
#ifdef SB_SABOTAGE_LIN_DOT
    return lin_dot_sabotaged(a, sa, b, sb, n);
#endif
    sb_sacc acc;
    sb_sacc_init(&acc);
    for (int64_t i = 0; i < n; i++) {
        float t = b ? a[i * sa] * b[i * sb] : a[i * sa];
        sb_sacc_add(&acc, t);
    }
    return sb_sacc_round_f32(&acc);
}

/* hi + lo == a * b exactly (Dekker's product with Veltkamp's split, plain
 * float operations: no fma), when |a|, |b| < 2^100 and the product's low part
 * does not underflow; otherwise lo = 0 and hi the rounded product. */
static void two_product(float a, float b, float *hi, float *lo) {
    const float p = a * b;
    const float aa = fabsf(a), ab = fabsf(b);
    if (!(aa < 0x1p100f && ab < 0x1p100f && fabsf(p) > 0x1p-90f)) {
        *hi = p;
        *lo = 0.0f;
        return;
    }
    const float ca = 4097.0f * a, cb = 4097.0f * b;
    const float ah = ca - (ca - a), al = a - ah, bh = cb - (cb - b), bl = b - bh;
    *hi = p;
    *lo = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
}

void sb_lin_sacc_add_product(struct sb_sacc *acc, float a, float b) {
    float hi, lo;
    two_product(a, b, &hi, &lo);
    sb_sacc_add(acc, hi);
    if (lo != 0.0f) sb_sacc_add(acc, lo);
}

float sb_lin_dot_exact(const float *a, int64_t sa, const float *b, int64_t sb, int64_t n) {
#ifdef SB_SABOTAGE_LIN_DOT
    return lin_dot_sabotaged(a, sa, b, sb, n);
#endif
    sb_sacc acc;
    sb_sacc_init(&acc);
    for (int64_t i = 0; i < n; i++) sb_lin_sacc_add_product(&acc, a[i * sa], b[i * sb]);
    return sb_sacc_round_f32(&acc);
}

sb_status sb_lin_col_means(const float *x, int64_t n, int32_t p, const float *w, float *mean) {
    sb_sacc *acc = sb_malloc(sizeof(sb_sacc) * (size_t)p), den;
    if (!acc) return sb_fail(SB_ERR_OUT_OF_MEMORY, "linear: out of memory");
    for (int32_t j = 0; j < p; j++) sb_sacc_init(&acc[j]);
    sb_sacc_init(&den);
    for (int64_t i = 0; i < n; i++) {
        const float *r = x + i * p;
        const float wi = w ? w[i] : 1.0f;
        sb_sacc_add(&den, wi);
        for (int32_t j = 0; j < p; j++) sb_sacc_add(&acc[j], w ? wi * r[j] : r[j]);
    }
    const float d = sb_sacc_round_f32(&den);
    for (int32_t j = 0; j < p; j++) mean[j] = sb_sacc_round_f32(&acc[j]) / d;
    sb_free(acc);
    return SB_OK;
}

sb_status sb_lin_gemm(const lin_params *p, int32_t ta, int32_t tb, int64_t m, int64_t n, int64_t k, const float *a,
                      int64_t lda, const float *b, int64_t ldb, float *c, int64_t ldc) {
    return sb_gemm(p->device, ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
}

sb_status sb_lin_record(sb_card *card, const char *stage, const float *v, uint64_t n) {
    return card ? sb_card_record(card, stage, SB_DTYPE_F32, v, n) : SB_OK;
}

sb_status sb_lin_check_data(const sb_table *t, const lin_params *p, int32_t *nclass) {
    const char *kind = sb_linear_kind_name(p->kind);
    const int unsupervised = p->kind >= SB_LIN_PCA;
    if (t->nrows < (p->kind == SB_LIN_PCA ? 2 : 1))
        return sb_fail(SB_ERR_INVALID_INPUT, "%s needs at least %d rows, the data has %lld", kind,
                       p->kind == SB_LIN_PCA ? 2 : 1, (long long)t->nrows);
    if (t->ncols < 1) return sb_fail(SB_ERR_INVALID_INPUT, "%s needs at least one feature", kind);
    if (!unsupervised && !t->label) return sb_fail(SB_ERR_INVALID_INPUT, "%s needs labels", kind);
    for (int64_t i = 0; i < t->nrows; i++) {
        const float *r = t->x + i * t->ncols;
        for (int32_t j = 0; j < t->ncols; j++)
            if (!isfinite(r[j]))
                return sb_fail(SB_ERR_INVALID_INPUT,
                               "row %lld, feature %d is %s: %s takes no missing or infinite values (impute them "
                               "first)", (long long)i, (int)j, isnan(r[j]) ? "missing (NaN)" : "infinite", kind);
    }
    int32_t most = -1;
    if (!unsupervised)
        for (int64_t i = 0; i < t->nrows; i++) {
            const float y = t->label[i];
            if (!isfinite(y)) return sb_fail(SB_ERR_INVALID_INPUT, "label of row %lld is not finite", (long long)i);
            if (p->kind == SB_LIN_LOGISTIC) {
                if (!(y >= 0.0f && y <= 1023.0f) || y != (float)(int32_t)y)
                    return sb_fail(SB_ERR_INVALID_INPUT,
                                   "label of row %lld is %g: logistic regression takes class indices 0..1023", (long long)i,
                                   (double)y);
                if ((int32_t)y > most) most = (int32_t)y;
            }
        }
    if (t->weight) {
        sb_sacc acc;
        sb_sacc_init(&acc);
        for (int64_t i = 0; i < t->nrows; i++) sb_sacc_add(&acc, t->weight[i]);
        const float sw = sb_sacc_round_f32(&acc);
        if (!(sw > 0.0f) || !isfinite(sw))
            return sb_fail(SB_ERR_INVALID_INPUT, "the sample weights sum to %g: they must have a finite positive sum",
                           (double)sw);
    }
    if (nclass) *nclass = most + 1 < 2 ? 2 : most + 1;
    return SB_OK;
}

/* Train a linear model (docs/linear.md). */
sb_status sb_linear_fit(const sb_params *params, const sb_dataset *train, sb_card *card, sb_model **out) {
    sb_clear_error();
    if (out) *out = NULL;
    if (!train || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_linear_fit: NULL argument");
    if (sb_threads_ready() != SB_OK) return SB_ERR_INVALID_ARGUMENT;
    lin_params p;
    char *text = NULL;
    sb_status st = sb_lin_params_parse(params, &p);
    int32_t nclass = 0;
    if (st == SB_OK) st = sb_lin_check_data(&train->t, &p, &nclass);
    if (st == SB_OK && p.kind >= SB_LIN_PCA) st = sb_lin_resolve_solver(&train->t, &p);
    if (st == SB_OK) st = sb_lin_params_text(&p, &text);
    if (st == SB_OK && p.kind == SB_LIN_LOGISTIC && p.cw_max >= nclass)
        st = sb_fail(SB_ERR_INVALID_ARGUMENT, "class_weight names class %d, but the labels have %d classes",
                     (int)p.cw_max, (int)nclass);
    const sb_table *t = &train->t;
    int32_t nout = 1;
    if (p.kind == SB_LIN_LOGISTIC) nout = nclass == 2 ? 1 : nclass;
    if (p.kind >= SB_LIN_PCA) {
        const int64_t most = t->nrows < t->ncols ? t->nrows : t->ncols;
        if (st == SB_OK && p.n_components > most)
            st = sb_fail(SB_ERR_INVALID_ARGUMENT, "n_components=%d is more than min(rows, features) = %lld",
                         (int)p.n_components, (long long)most);
        nout = p.n_components > 0 ? p.n_components : (int32_t)most; /* the fit trims a fraction's count */
    }
    sb_model *m = NULL;
    if (st == SB_OK) st = sb_model_alloc(&m);
    if (st == SB_OK) {
        m->family = SB_FAMILY_LINEAR;
        m->objective = SB_OBJ_REGRESSION;
        m->num_features = t->ncols;
        m->numeric_mode = p.numeric_mode;
        m->params = text;
        text = NULL;
        m->num_class = nout;
        if (!(m->linear = sb_linear_alloc(p.kind, nout, t->ncols)))
            st = sb_fail(SB_ERR_OUT_OF_MEMORY, "linear: out of memory");
    }
    if (st == SB_OK && t->names) {
        m->feature_names = sb_calloc((size_t)t->ncols, sizeof(char *));
        if (!m->feature_names) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "linear: out of memory");
        for (int32_t j = 0; st == SB_OK && j < t->ncols; j++)
            if (!(m->feature_names[j] = sb_strdup(t->names[j]))) st = sb_fail(SB_ERR_OUT_OF_MEMORY, "linear: out of memory");
    }
    if (st == SB_OK && card) {
        char dims[64];
        snprintf(dims, sizeof dims, "%lld x %d", (long long)t->nrows, (int)t->ncols);
        st = sb_card_set_meta(card, "linear.data", dims);
    }
    if (st == SB_OK) {
        if (p.kind <= SB_LIN_ENET) st = sb_lin_fit_least_squares(t, &p, m, card);
        else if (p.kind == SB_LIN_LOGISTIC) st = sb_lin_fit_logistic(t, &p, nclass, m, card);
        else st = sb_lin_fit_decomposition(t, &p, m, card);
    }
    if (st == SB_OK && card) st = sb_model_record(card, m, train, SB_PREDICT_RAW, "linear.train_pred", "linear.model_bytes");
    sb_free(text);
    if (st != SB_OK) {
        sb_model_free(m);
        return st;
    }
    *out = m;
    return SB_OK;
}
