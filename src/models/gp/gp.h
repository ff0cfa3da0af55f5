/*
 * gp.h: Gaussian process regression (docs/gaussian-process.md), the host
 * path, in IEEE binary64: + - * / and sqrt only, the profile's own double exp
 * and log (src/math/sb_elem_host.h), no contraction, every sum in one stated
 * order that no thread count changes. Rasmussen and Williams, "Gaussian
 * Processes for Machine Learning" (MIT Press 2006): algorithm 2.1 for the
 * fit and prediction, eq. 5.8 and 5.9 for the log marginal likelihood and its
 * gradient; scikit-learn's GaussianProcessRegressor names and semantics.
 */
#ifndef SB_MODELS_GP_H
#define SB_MODELS_GP_H
#include "../../core/internal.h"

#define GP_MAX_NODES 32     /* kernels and operators in one expression */
#define GP_MAX_PARAMS 256   /* hyperparameters of one expression (a length scale per feature counts each) */
#define GP_MAX_TRACE 4096   /* optimizer iterations kept for the card and trace, all starts together */

enum { GK_CONST, GK_WHITE, GK_RBF, GK_MATERN, GK_RQ, GK_SUM, GK_PROD };

/* One node of the kernel expression. Hyperparameters are numbered in
 * scikit-learn's theta order (a sum's or product's left operand first; a
 * rational quadratic's alpha before its length scale), so a subtree's
 * parameters are the contiguous range [p0, p1). */
typedef struct gp_node {
    int32_t kind;
    int32_t a, b;    /* operands of GK_SUM and GK_PROD */
    int32_t p0, p1;  /* the subtree's parameters */
    int32_t nls;     /* length scales: 1 (isotropic) or the feature count */
    int32_t nu2;     /* Matern: 2 nu (1, 3 or 5) */
} gp_node;

/* A kernel expression with its hyperparameters. */
typedef struct gp_kernel {
    int32_t nnodes, root, npar;
    gp_node node[GP_MAX_NODES];
    double logv[GP_MAX_PARAMS];  /* the log of each hyperparameter */
    double lo[GP_MAX_PARAMS], hi[GP_MAX_PARAMS]; /* log bounds */
    int32_t fixed[GP_MAX_PARAMS];
    int32_t owner[GP_MAX_PARAMS]; /* the node of each parameter */
} gp_kernel;

/* gp_device.c: the device path (device=cuda|opencl|gpu), the host's bits. */
typedef struct gp_dev gp_dev;
sb_status sb_gp_dev_begin(int32_t kind, const double *X, int64_t n, int64_t d, int need, gp_dev **out);
void sb_gp_dev_end(gp_dev *g);
sb_status sb_gp_dev_factor(gp_dev *g, const gp_kernel *k, const double *ev, double alpha, double *L, int64_t *bad);
sb_status sb_gp_dev_grad(gp_dev *g, const gp_kernel *k, const double *ev, const double *a, int64_t t, double *part);
sb_status sb_gp_dev_cross(gp_dev *g, const gp_kernel *k, const double *ev, const double *Xs, int64_t m, double *K);

/* A fitted model (the opaque sb_gp of samebits.h). */
struct sb_gp {
    gp_kernel k;           /* the fitted kernel (kernel_) */
    int64_t n, d, t;       /* training rows, features, targets */
    double alpha;          /* added to the diagonal */
    int32_t normalize_y, optimize, restarts;
    uint64_t seed;
    double *X;             /* n x d */
    double *y;             /* n x t, normalized when normalize_y */
    double *ymean, *ystd;  /* t each (0 and 1 without normalize_y) */
    double *L;             /* n x n lower Cholesky factor (+0 above) */
    double *a;             /* n x t: alpha_ */
    double lml;            /* log_marginal_likelihood_value_ */
    int32_t nit, nfev;     /* optimizer iterations and evaluations, every start */
    int32_t ntrace;
    double *trace;         /* ntrace x (1 + nfree): the objective and the free theta after each iteration */
    int32_t device;        /* sb_device_kind of the fit, predictions and likelihoods (not in the model file: a read model is cpu's) */
};

/* Parse a kernel specification (docs/gaussian-process.md) for d features. */
sb_status sb_gp_kernel_parse(const char *spec, int64_t d, gp_kernel *k);
/* NULL when k is a kernel the parser could make for d features, else what is wrong. */
const char *sb_gp_kernel_check(const gp_kernel *k, int64_t d);
/* Write a kernel back as a specification that parses to the same bits. */
size_t sb_gp_kernel_format(const gp_kernel *k, char *buf, size_t cap);
/* Free parameters (theta's length). */
int32_t sb_gp_nfree(const gp_kernel *k);

/* Fit: the parameters are read by sb_gp_fit (gp_api.c). */
sb_status sb_gp_fit_spec(const gp_kernel *k, double alpha, int32_t normalize_y, int32_t optimize, int32_t restarts,
                         uint64_t seed, int32_t device, const double *X, int64_t n, int64_t d, const double *y,
                         int64_t t, sb_card *card, const char *prefix, sb_gp **out);
/* sb_gp_fit with the card's stages named prefix.* (the fixture's cases). */
sb_status sb_gp_fit_named(const char *kernel, const sb_params *params, const double *X, int64_t n, int64_t d,
                          const double *y, int64_t ntargets, sb_card *card, const char *prefix, sb_gp **out);
/* Recompute L and alpha_ from the kernel, X and y (after a model file is read). */
sb_status sb_gp_refactor(sb_gp *g);
void sb_gp_release(sb_gp *g);

/* gp_linalg.c: the blocked float64 linear algebra in its one order. */
/* In place: A's lower triangle (the upper +0) becomes its Cholesky factor;
 * the first column whose pivot is not > 0, -1 when none, -2 out of memory. */
int64_t sb_gp_cholesky(double *A, int64_t n);
/* Z := L^-1 and N's lower triangle := -(L L^T)^-1 (upper +0); N may be L. */
sb_status sb_gp_neg_inverse(const double *L, double *Z, double *N, int64_t n);

#endif
