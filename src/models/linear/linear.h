/*
 * linear.h: the linear family's internal interface (src/models/linear/,
 * docs/linear.md): least squares (LinearRegression, Ridge), coordinate descent
 * (Lasso, ElasticNet), logistic regression (L-BFGS) and the decompositions
 * (PCA, TruncatedSVD).
 *
 * Every fit is host code of fixed float sequences around the linear-algebra
 * core's operations (sb_gemm, sb_linalg_cholesky, sb_linalg_eigh...), which are
 * identical on every device; so a fit on "cuda" or "opencl" gives the bytes of
 * the fit on "cpu", whatever the thread count. The data never holds a NaN or an
 * infinity (refused by name before any work).
 */
#ifndef SB_MODELS_LINEAR_LINEAR_H
#define SB_MODELS_LINEAR_LINEAR_H
#include "../model.h"
#include "../../io/dataset.h"
#include "../../linalg/linalg.h"

/* The parsed parameters of one fit (linear_params.c). */
typedef struct lin_params {
    int32_t kind;           /* sb_linear_kind */
    int32_t fit_intercept;  /* 1 (default) */
    float alpha;            /* Ridge, Lasso, ElasticNet: 1.0 */
    float l1_ratio;         /* ElasticNet: 0.5 (Lasso: 1) */
    float tol;              /* Lasso, ElasticNet: 1e-4; logistic: 1e-4 */
    int32_t max_iter;       /* Lasso, ElasticNet: 1000; logistic: 100 */
    float C;                /* logistic: 1.0 */
    int32_t penalty_l2;     /* logistic: 1 = l2 (default), 0 = none */
    int32_t class_weight;   /* logistic: 0 none, 1 balanced, 2 listed */
    float cw[1024];         /* listed class weights (1 where not listed) */
    int32_t cw_max;         /* the largest listed class, -1 for none */
    int32_t n_components;   /* decompositions: a count, 0 = all (min(n, p)) */
    float variance_kept;    /* PCA: a fraction in (0, 1) instead of a count; 0 = none */
    int32_t whiten;         /* PCA */
    int32_t svd_solver;     /* decompositions: 0 auto (scikit-learn's policy), 1 full (covariance eigh), 2 randomized,
                             * 3 arpack (the exact eigensolver of the Gram matrix, the leading components kept) */
    int32_t n_iter;         /* randomized: power iterations; -1 = auto (PCA: 7 or 4; TruncatedSVD: 5) */
    int32_t n_oversamples;  /* randomized: 10 */
    uint64_t seed;          /* randomized: the projection's Philox seed (random_state; 0 by default) */
    char device[32];        /* "cpu", "cuda", "opencl", "gpu", "cpu-batched" */
    char cw_text[256];      /* class_weight as given (the model's params) */
    int32_t numeric_mode;
} lin_params;

/* params -> p, refusing unknown keys, values out of their domain and options
 * this library does not build, each by name. */
sb_status sb_lin_params_parse(const sb_params *params, lin_params *p);
/* The canonical text of the parameters that shape the model (after the fit's
 * "auto" choices are resolved), for the model file; *out gets sb_free's. */
sb_status sb_lin_params_text(const lin_params *p, char **out);

/* The training table checked for the linear family: nrows >= 1 (>= 2 for
 * PCA), every feature and label finite, labels of a classifier whole numbers
 * in 0..1023 (*nclass := the largest + 1, at least 2), weights if any with a
 * positive sum. Every refusal names the row and column. */
sb_status sb_lin_check_data(const sb_table *t, const lin_params *p, int32_t *nclass);

/* The row-major index of the first NaN or infinity of the n x p x, or -1
 * (rows scanned in parallel chunks; the first in order whatever the threads). */
int64_t sb_lin_first_nonfinite(const float *x, int64_t n, int64_t p);

/* The fits: each fills the model's linear state (m->linear allocated by the
 * caller's sb_linear_fit) and records its stages on card (may be NULL). */
sb_status sb_lin_fit_least_squares(const sb_table *t, const lin_params *p, sb_model *m, sb_card *card);
sb_status sb_lin_fit_logistic(const sb_table *t, const lin_params *p, int32_t nclass, sb_model *m, sb_card *card);
sb_status sb_lin_fit_decomposition(const sb_table *t, const lin_params *p, sb_model *m, sb_card *card);
/* The decompositions' "auto" choices, resolved from the data's shape as
 * scikit-learn resolves them (PCA's svd_solver, the power iterations), and the
 * randomized solver's needs checked (a whole n_components). */
sb_status sb_lin_resolve_solver(const sb_table *t, lin_params *p);

/* ---- shared numerics (linear.c) ---- */

/* The exact sum of n products a[i*sa] * b[i*sb], each product rounded once to
 * float32 first, then the exact sum rounded once (sb_sacc): one value in any
 * order, on every machine. b NULL: the plain sum of the a's. */
float sb_lin_dot(const float *a, int64_t sa, const float *b, int64_t sb, int64_t n);

/* The same sum with every product exact (Dekker's two-product into the
 * accumulator): the correctly rounded value of sum a_i b_i for the float32
 * inputs, barring products beyond 2^200 or below 2^-90 (rounded once then). */
float sb_lin_dot_exact(const float *a, int64_t sa, const float *b, int64_t sb, int64_t n);
struct sb_sacc;
void sb_lin_sacc_add_product(struct sb_sacc *acc, float a, float b);

/* Weighted column means (w NULL: plain) of the n x p row-major x: each the
 * exact sum of the rounded products w_i x_ij, rounded once, divided by the
 * exact sum of the weights rounded once (one division). */
sb_status sb_lin_col_means(const float *x, int64_t n, int32_t p, const float *w, float *mean);
/* out[c] := the exact sum over the n rows of (x_ic - mean_c)^2, each
 * difference rounded once to float and its square exact (two-product), the
 * sum rounded once: row chunks in parallel, merged exactly. */
sb_status sb_lin_col_sqdev(const float *x, int64_t n, int32_t p, const float *mean, float *out);

/* out (n rows of p + ny) := (x_ij - xm_j) * sqrt(w_i), and in columns p + t
 * (y_it - ym_t) * sqrt(w_i) for the ny columns of y (n x ny, row-major; ny 0:
 * none; w NULL: no scaling); rows in parallel, each element one fixed
 * sequence of roundings. */
void sb_lin_center(const float *x, const float *y, int32_t ny, const float *w, int64_t n, int32_t p, const float *xm,
                   const float *ym, float *out);

/* C := op(A) op(B) through the core's identical product on p->device. */
sb_status sb_lin_gemm(const lin_params *p, int32_t ta, int32_t tb, int64_t m, int64_t n, int64_t k, const float *a,
                      int64_t lda, const float *b, int64_t ldb, float *c, int64_t ldc);

/* ---- the fit's device (linear.c) ----
 * A fit's matrices live where its products run: on the host for cpu and
 * cpu-batched, else uploaded once to the linalg device (the process's one,
 * src/linalg/) and kept there across the fit's products, so an iterative fit
 * moves its data once. Every product is the core's identical one
 * (sb_gemm_host or sb_gemm_on): the bits are the same wherever it runs. The
 * device lock is held only inside each call, so the core's own entries
 * (Cholesky, eigh...) can run between them. */
typedef struct lin_dev {
    int kind;            /* sb_device_kind */
    struct sb_device *d; /* GPU kinds: the linalg device (NULL on the host) */
    sb_gemm_ws ws;       /* its product scratch */
    sb_lr_ws lr;         /* its reductions' scratch */
    sb_dbuf out;         /* the product's result */
} lin_dev;

/* A matrix of count floats: its host copy, and on a GPU its device copy. */
typedef struct lin_mat {
    const float *host;
    int64_t count;
    sb_dbuf dev;
    sb_gemm_prep prep[2]; /* host: the matrix prepared as two operands (rows, columns), when asked */
    int32_t nprep;
} lin_mat;

sb_status sb_lin_dev_open(const lin_params *p, lin_dev *dv);
void sb_lin_dev_close(lin_dev *dv);
/* m := host's count floats, uploaded on a GPU (again, when already there). */
sb_status sb_lin_mat_set(lin_dev *dv, lin_mat *m, const float *host, int64_t count);
void sb_lin_mat_release(lin_dev *dv, lin_mat *m);
/* On the host, m (rows x cols, row-major) prepared for products that read its
 * rows (as op(A) with trans_a 0) and its columns (as op(B) with trans_b 0):
 * the same bits, without its statistics and integers recomputed per product
 * (linalg.h's sb_gemm_prep). A no-op on a GPU; out of memory: left unprepared. */
void sb_lin_mat_prepare(lin_dev *dv, lin_mat *m, int64_t rows, int64_t cols);
/* On a GPU: out := t's rows centered on the device (xm, and its ny target
 * columns centered by ym as extra columns; times sqrt(weight) when t has
 * weights), the bits sb_lin_center writes on the host; t's matrix goes up
 * once, raw. */
sb_status sb_lin_dev_center(lin_dev *dv, const sb_table *t, const lin_mat *mx, const float *xm, const float *ym,
                            int32_t ny, lin_mat *out);
/* On a GPU, the unweighted column means of mx (n x P, on the device):
 * sb_lin_col_means' bits (the exact sums rounded once, over n rounded once). */
sb_status sb_lin_dev_means(lin_dev *dv, const lin_mat *mx, int64_t n, int32_t P, float *mean);
/* On a GPU: *out (ensured) := op(A) op(B) on the device, left there. */
sb_status sb_lin_dev_gemm_to(lin_dev *dv, int32_t ta, int32_t tb, int64_t m, int64_t n, int64_t k, const lin_mat *a,
                             int64_t lda, const lin_mat *b, int64_t ldb, sb_dbuf *out);
/* On a GPU: logistic regression's rows (kernels/linear.h's sb_k_logit_row) over
 * the n x K margins z (in place) into residuals r and losses loss (ensured),
 * and sums[0] := the losses' exact sum, sums[1 + k] := residual column k's,
 * each rounded once (the host's superaccumulator values). */
sb_status sb_lin_dev_logit_rows(lin_dev *dv, sb_dbuf *z, int64_t n, int32_t K, const lin_mat *b, const lin_mat *label,
                                const lin_mat *s, sb_dbuf *r, sb_dbuf *loss, float *sums);
/* C := op(A) op(B) (c dense, ldc = n) with A and B held by a and b (lda, ldb as sb_gemm's). */
sb_status sb_lin_dev_gemm(lin_dev *dv, int32_t ta, int32_t tb, int64_t m, int64_t n, int64_t k, const lin_mat *a,
                          int64_t lda, const lin_mat *b, int64_t ldb, float *c);

/* The eigenpairs of the symmetric n x n matrix whose lower triangle is a
 * (lin_eigh.c: Householder tridiagonalization and implicit QL, host code in
 * one fixed order): w descending (ties: the lower index after QL first), v's
 * column k (n x n, row-major) the vector of w[k], its largest-magnitude
 * component positive (ties: the lowest index). */
sb_status sb_lin_eigh(int64_t n, const float *a, float *w, float *v);
/* sb_lin_eigh with its O(n^3) steps where device (a device name; NULL: cpu)
 * says: the Householder reduction, forming Q and applying the QL rotations as
 * kernels/linear.h's device kernels on cuda and opencl (their bodies on the
 * host for cpu-batched), the same bits on every device. A GPU kind holds the
 * linalg device's lock for the whole call. */
sb_status sb_lin_eigh_on(const char *device, int64_t n, const float *a, float *w, float *v);

/* SAMEBITS_LINEAR_TIMING=1: each phase's wall time on standard error
 * ("linear: PHASE S s"), to say where a fit's time goes; never a bit. */
void sb_lin_phase(const char *phase, double *t0);

/* Record a stage if card is not NULL. */
sb_status sb_lin_record(sb_card *card, const char *stage, const float *v, uint64_t n);

#endif

/* Prediction for a linear model (lin_predict.c), called by sb_model_predict_on
 * after its common checks: raw margins or values (n x nout), logistic
 * probabilities (binary: P(1), one a row; multinomial: nout a row) and classes,
 * PCA's transform. The margins are X W^T through the core's product on
 * device, plus the intercept (one addition), so every device gives the
 * training bits. */
sb_status sb_lin_predict(const sb_model *m, const sb_table *t, int32_t kind, const char *device, float *out,
                         size_t cap, size_t *needed);
