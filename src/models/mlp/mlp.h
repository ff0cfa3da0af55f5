/*
 * mlp.h: multi-layer perceptrons (docs/mlp.md), scikit-learn's MLPClassifier
 * and MLPRegressor trained by minibatch Adam or SGD (Rumelhart, Hinton and
 * Williams, "Learning representations by back-propagating errors", Nature
 * 1986; Glorot and Bengio, AISTATS 2010, for the initialization; Kingma and
 * Ba, ICLR 2015, for Adam), the host path, float32 parameters, on the
 * building blocks of src/models/nn/ (every product the identical GEMM, every
 * other sum exact and rounded once). No bit depends on the thread count.
 */
#ifndef SB_MODELS_MLP_H
#define SB_MODELS_MLP_H
#include "../../core/internal.h"
#include "../nn/nn.h"

#define MLP_MAX_HIDDEN 16        /* hidden layers */
#define MLP_MAX_WIDTH 65536      /* units of one layer, features and outputs included */
#define MLP_MAX_ITER 1000000

enum { MLP_ADAM = 0, MLP_SGD = 1 };
enum { MLP_LR_CONSTANT = 0, MLP_LR_INVSCALING = 1, MLP_LR_ADAPTIVE = 2 };
enum { MLP_OUT_IDENTITY = 0, MLP_OUT_LOGISTIC = 1, MLP_OUT_SOFTMAX = 2 };

/* The options, scikit-learn's names (docs/mlp.md's table). */
typedef struct mlp_opts {
    int32_t classifier;               /* 1: MLPClassifier, 0: MLPRegressor */
    int32_t nhidden;
    int64_t hidden[MLP_MAX_HIDDEN];
    int32_t activation, solver, learning_rate;
    double alpha, learning_rate_init, power_t, tol, validation_fraction, momentum, beta_1, beta_2, epsilon;
    int64_t batch_size;               /* 0: 'auto' (min(200, n)) */
    int32_t max_iter, shuffle, early_stopping, nesterovs_momentum, n_iter_no_change;
    uint64_t seed;                    /* random_state */
    int32_t device;                   /* sb_device_kind: cpu, cuda or opencl (not in the model file) */
} mlp_opts;

/* A fitted network (the opaque sb_mlp of samebits.h). Layer l maps
 * size[l] units to size[l + 1]; W[l] is size[l] x size[l + 1] (coefs_),
 * b[l] has size[l + 1] values (intercepts_). */
struct sb_mlp {
    mlp_opts o;
    int32_t nlayers;                  /* weight layers: nhidden + 1 */
    int64_t size[MLP_MAX_HIDDEN + 2];
    int32_t out_act;                  /* MLP_OUT_* (out_activation_) */
    int32_t multilabel;
    int64_t nclasses;                 /* classifier: classes (multilabel: labels); regressor: 0 */
    float *W[MLP_MAX_HIDDEN + 1], *b[MLP_MAX_HIDDEN + 1];
    int32_t n_iter;                   /* n_iter_ */
    int64_t t;                        /* t_: training samples seen */
    double loss, best_loss;           /* loss_, best_loss_ (NaN with early stopping) */
    double *curve;                    /* loss_curve_, n_iter values */
    double *val_scores;               /* validation_scores_, n_iter values with early stopping, else NULL */
    double best_val;                  /* best_validation_score_ (NaN without early stopping) */
};

/* Parse the options of params (every key known and used; a key that would do
 * nothing, lbfgs, a lower tier, a device other than the cpu refused by name). */
sb_status sb_mlp_parse_opts(const sb_params *params, mlp_opts *o);
/* Fit on X (n x d) and y (classifier: n class codes 0..K-1, or an n x ny
 * 0/1 indicator for multilabel; regressor: n x ny targets); card stages
 * under prefix. */
sb_status sb_mlp_fit_opts(const mlp_opts *o, const float *X, int64_t n, int64_t d, const float *y, int64_t ny,
                          sb_card *card, const char *prefix, sb_mlp **out);
/* The output layer's values (probabilities or predictions) for m rows: m x
 * size[nlayers]. */
sb_status sb_mlp_forward(const sb_mlp *net, const float *X, int64_t m, float *out);
/* NULL when the network's shapes and options are ones a fit can make, else
 * what is wrong (the model file's check). */
const char *sb_mlp_check(const sb_mlp *net);
/* Allocate W and b for the shapes in size[] (zeroed). */
sb_status sb_mlp_alloc(sb_mlp *net);
void sb_mlp_release(sb_mlp *net);

/* The training on a GPU (mlp_dev.c, docs/mlp.md "Devices"): the same steps
 * and bits as the host's, everything resident on the device. Open uploads
 * the rows X (n x size[0]), the targets Yall (n x nout), the initialized
 * parameters and the validation rows Xv (nval, 0 without early stopping),
 * for batches of at most bs rows out of ntr training rows. */
typedef struct mlp_dev mlp_dev;
sb_status sb_mlp_dev_open(int32_t kind, const sb_mlp *net, const float *X, int64_t n, const float *Yall, int64_t bs,
                          int64_t ntr, const float *Xv, int64_t nval, mlp_dev **out);
void sb_mlp_dev_close(mlp_dev *v); /* NULL is a no-op */
/* One epoch over the ntr rows in the order perm (row indices of X): its
 * batches and optimizer steps (Adam's scalars from adam, SGD's rate lr);
 * *acc := the sum of each batch's loss times its rows in float64, batch
 * order; *bad_b0 := the first row position of the first batch whose loss is
 * not finite, else -1. */
sb_status sb_mlp_dev_epoch(mlp_dev *v, const int64_t *perm, int64_t ntr, nn_adam *adam, float lr, double *acc,
                           int64_t *bad_b0);
/* The parameters into net (and the last layer's weight gradient of the last
 * batch into gW_last unless NULL). */
sb_status sb_mlp_dev_pull(mlp_dev *v, sb_mlp *net, float *gW_last);
/* The optimizer's state per layer (Adam's moments, SGD's velocities in mW
 * and mb; vW and vb unused by SGD). */
sb_status sb_mlp_dev_state(mlp_dev *v, float *const *mW, float *const *mb, float *const *vW, float *const *vb);
/* The outputs of the validation rows (nval x nout). */
sb_status sb_mlp_dev_val_outputs(mlp_dev *v, float *out);
/* keep = 1: the parameters kept as the best so far; 0: the best put back. */
sb_status sb_mlp_dev_best(mlp_dev *v, int keep);

#endif
