/*
 * model.h: the in-memory model shared by the tree families (gradient boosting,
 * random forests, Extra Trees, isolation forests), its life cycle (model.c) and
 * its file format (model_format.c, docs/model-format.md).
 * A model owns every array it points to; nothing points into caller memory.
 */
#ifndef SB_MODELS_MODEL_H
#define SB_MODELS_MODEL_H
#include "../core/internal.h"

enum sb_objective {
    SB_OBJ_REGRESSION = 0, /* squared error */
    SB_OBJ_BINARY = 1,     /* logistic loss, labels 0/1 */
    SB_OBJ_MULTICLASS = 2, /* softmax, labels 0..num_class-1 */
    SB_OBJ_LAMBDARANK = 3, /* LambdaRank (NDCG), relevance labels, query groups (gbdt/rank.c) */
    SB_OBJ_RANK_PAIRWISE = 4, /* RankNet pairwise logistic, query groups (gbdt/rank.c) */
    SB_OBJ_HUBER = 5,      /* Huber loss (delta: alpha) */
    SB_OBJ_QUANTILE = 6,   /* quantile (pinball) loss at level alpha */
    SB_OBJ_POISSON = 7,    /* Poisson, log link: the value is exp(margin) */
    SB_OBJ_GAMMA = 8,      /* gamma, log link */
    SB_OBJ_TWEEDIE = 9,    /* Tweedie, log link (tweedie_variance_power) */
    SB_OBJ_FOREST_CLASSES = 10, /* forests: margins are the averaged class frequencies (num_class >= 2) */
    SB_OBJ_ISOLATION = 11       /* isolation forest: the margin is E[h] / c(psi); the value is 2^-margin */
};

/* One node. Internal nodes: go left when x[feature] <= threshold, NaN goes to
 * the left child if default_left, else to the right. Leaves: feature = -1,
 * value is what the tree adds to the margin (learning rate included). */
typedef struct sb_tree_node {
    int32_t feature;
    float threshold;
    int32_t left, right;
    float value;
    float gain;      /* split gain (internal nodes), 0 for leaves */
    int64_t count;   /* training rows that reached the node */
    uint8_t default_left;
    uint8_t categorical; /* 1: a categorical split (gradient boosting): the row goes left when
                            x[feature] is one of the codes of the tree's set cat_set; threshold 0 */
    int32_t cat_set;
} sb_tree_node;

/* A tree; a gradient boosting tree with categorical splits also holds their
 * category sets: set s's codes are cat_codes[cat_start[s] .. cat_start[s + 1]),
 * ascending integral floats in [0, 2^31) (docs/gbdt.md, "Categorical
 * features"). Without categorical splits ncat is 0 and both arrays NULL. */
typedef struct sb_tree {
    int32_t nnodes;  /* nodes[0] is the root */
    sb_tree_node *nodes;
    int32_t ncat;
    int32_t *cat_start; /* ncat + 1 */
    float *cat_codes;
} sb_tree;

/* Frees the tree's arrays and zeroes it (a zeroed tree: no-op). */
void sb_tree_release(sb_tree *t);
/* *dst := a deep copy of src (dst's old arrays are not freed); OUT_OF_MEMORY by name. */
sb_status sb_tree_copy(const sb_tree *src, sb_tree *dst);

/* Whether value v goes left at internal node n of tree t: the set's codes
 * for a categorical split (NaN, negative and unknown values go right), else
 * v <= threshold with NaN to default_left. */
static inline int sb_tree_goes_left(const sb_tree *t, const sb_tree_node *n, float v) {
    if (!n->categorical) return v != v ? n->default_left : v <= n->threshold;
    const int32_t first = t->cat_start[n->cat_set];
    return sb_code_pos(t->cat_codes + first, t->cat_start[n->cat_set + 1] - first, v) != 0;
}

/* The linear family's fitted state (src/models/linear/, docs/linear.md): a
 * model of family SB_FAMILY_LINEAR holds one and no trees. coef is nout rows of
 * num_features values: the coefficients of each target or class (kinds up to
 * logistic), or the components (PCA, TruncatedSVD). */
enum sb_linear_kind {
    SB_LIN_OLS = 0,        /* LinearRegression */
    SB_LIN_RIDGE = 1,      /* Ridge */
    SB_LIN_LASSO = 2,      /* Lasso */
    SB_LIN_ENET = 3,       /* ElasticNet */
    SB_LIN_LOGISTIC = 4,   /* LogisticRegression (nout 1: binary; nout = nclass >= 3: multinomial) */
    SB_LIN_PCA = 5,        /* PCA */
    SB_LIN_TSVD = 6,       /* TruncatedSVD */
    SB_LIN_KIND_COUNT_ = 7
};
typedef struct sb_linear {
    int32_t kind;          /* sb_linear_kind */
    int32_t nout;          /* rows of coef: 1 (one target, binary), classes, or components */
    int32_t nclass;        /* logistic: classes (2..); 0 for the other kinds */
    int32_t n_iter;        /* coordinate-descent sweeps, L-BFGS iterations; 0 for direct solvers */
    int32_t converged;     /* 1, or 0 when the iterations ran out (reported, never silent) */
    int32_t whiten;        /* PCA: transform divides by sqrt(explained_variance) */
    int32_t rank;          /* least squares: the rank used; decompositions: components kept */
    float noise_variance;  /* PCA: mean of the discarded variances (0 when none is discarded) */
    float *coef;           /* nout x num_features */
    float *intercept;      /* nout (zeros without an intercept; PCA and TruncatedSVD: zeros) */
    float *mean;           /* PCA: num_features column means; NULL for the other kinds */
    float *ev, *evr, *sv;  /* decompositions: explained variance, its ratio, singular values (nout each) */
    int32_t *runs;         /* Lasso and ElasticNet with several targets: each target's sweeps, then each one's
                              converged flag (2 x nout; n_iter the largest, converged 1 only if all are); NULL
                              otherwise */
} sb_linear;

/* Whether a linear model of this kind and row count keeps per-target runs. */
#define SB_LIN_HAS_RUNS(kind, nout) (((kind) == SB_LIN_LASSO || (kind) == SB_LIN_ENET) && (nout) > 1)

/* The k-means family's fitted state (src/models/cluster/, docs/cluster.md): a
 * model of family SB_FAMILY_KMEANS holds one and no trees. */
typedef struct sb_kmeans {
    int32_t k;             /* clusters: rows of centers */
    int32_t n_iter;        /* Lloyd iterations of the kept run */
    int32_t converged;     /* 1, or 0 when max_iter ran out first (reported, never silent) */
    float inertia;         /* the kept run's weighted sum of squared distances (docs/cluster.md) */
    float *centers;        /* k x num_features */
    int32_t *labels;       /* the fit's last assignment of its n_train rows (labels_), or NULL: kept in
                              memory for the estimator, not part of the model file */
    int64_t n_train;
} sb_kmeans;

/* The nearest-neighbors family's fitted state (src/models/neighbors/,
 * docs/neighbors.md): a model of family SB_FAMILY_KNN holds one and no trees.
 * x and y are the training rows, copied (a model never points into the
 * caller's data); the screening arrays are derived from x by sb_knn_prepare
 * (fit and the file reader), never written to the file. */
enum { SB_KNN_NEIGHBORS = 0, SB_KNN_CLASSIFIER = 1, SB_KNN_REGRESSOR = 2, SB_KNN_TASK_COUNT_ = 3 };
enum { SB_KNN_EUCLIDEAN = 0, SB_KNN_COSINE = 1, SB_KNN_MANHATTAN = 2, SB_KNN_METRIC_COUNT_ = 3 };
typedef struct sb_knn {
    int32_t task;          /* SB_KNN_NEIGHBORS | _CLASSIFIER | _REGRESSOR */
    int32_t n_neighbors;   /* k of kneighbors and of prediction */
    int32_t metric;        /* SB_KNN_EUCLIDEAN | SB_KNN_COSINE | SB_KNN_MANHATTAN */
    int32_t weights;       /* 0 uniform, 1 distance (prediction's votes and means) */
    int32_t nclass;        /* classifier: classes (labels 0..nclass-1); 0 otherwise */
    int64_t n;             /* training rows */
    float radius;          /* radius_neighbors' default radius */
    float *x;              /* n x num_features training rows */
    float *y;              /* n targets (classifier: the class index); NULL for SB_KNN_NEIGHBORS */
    /* derived by sb_knn_prepare (not in the file) */
    float *xs;             /* the screening rows (centered or normalized), packed in panels of 16 */
    float *xsn;            /* their float32 squared norms, n */
    float *mu;             /* euclidean: the centering means (num_features); NULL for cosine */
    double *xnorm;         /* cosine: each row's norm sqrt(sum x^2) in double; NULL for euclidean */
} sb_knn;

/* DBSCAN's fitted state (src/models/cluster/dbscan.c, docs/cluster.md): a
 * model of family SB_FAMILY_DBSCAN holds one and no trees. */
typedef struct sb_dbscan {
    int64_t n;             /* training rows */
    int64_t ncore;         /* core rows */
    float eps;
    int32_t min_samples;
    int32_t metric;        /* SB_KNN_EUCLIDEAN | SB_KNN_COSINE | SB_KNN_MANHATTAN */
    int32_t n_clusters;
    int32_t *labels;       /* n: cluster numbers by smallest row index, -1 noise */
    int64_t *core;         /* ncore: the core rows' indices, ascending */
    float *components;     /* ncore x num_features: the core rows */
} sb_dbscan;

/* Agglomerative clustering's fitted state (src/models/cluster/agglomerative.c,
 * docs/cluster.md): a model of family SB_FAMILY_AGGLOMERATIVE holds one. */
typedef struct sb_agglo {
    int64_t n;             /* training rows (the tree's leaves) */
    int32_t linkage;       /* 0 ward, 1 complete, 2 average, 3 single */
    int32_t n_clusters;    /* clusters after the cut */
    int32_t *labels;       /* n: clusters numbered by smallest row */
    int64_t *children;     /* (n - 1) x 2: merge s joined these nodes (rows < n, merges n + s) */
    double *distances;     /* n - 1: each merge's linkage distance */
} sb_agglo;

/* Spectral clustering's fitted state (src/models/cluster/spectral.c,
 * docs/cluster.md): a model of family SB_FAMILY_SPECTRAL holds one. */
typedef struct sb_spectral {
    int64_t n;             /* training rows */
    int32_t affinity;      /* 0 rbf, 1 nearest_neighbors, 2 precomputed */
    int32_t n_clusters;
    int32_t *labels;       /* n: the k-means labels of the embedding */
} sb_spectral;

/* Kernel density's fitted state (src/models/neighbors/kde.c, docs/density.md):
 * a model of family SB_FAMILY_KDE holds one and no trees. x and w are copies
 * of the training rows and weights (the density is a sum over them); the
 * bandwidth is the resolved one (a value, or Scott's or Silverman's rule of
 * the rows' shape), so a model read from its file scores without refitting. */
enum { SB_KDE_GAUSSIAN = 0, SB_KDE_TOPHAT = 1, SB_KDE_EPANECHNIKOV = 2, SB_KDE_EXPONENTIAL = 3, SB_KDE_LINEAR = 4,
       SB_KDE_COSINE = 5, SB_KDE_KERNEL_COUNT_ = 6 };
enum { SB_KDE_BW_VALUE = 0, SB_KDE_BW_SCOTT = 1, SB_KDE_BW_SILVERMAN = 2 };
typedef struct sb_kde {
    int32_t kernel;        /* SB_KDE_GAUSSIAN .. SB_KDE_COSINE */
    int32_t bw_rule;       /* SB_KDE_BW_VALUE | _SCOTT | _SILVERMAN: where bandwidth came from */
    int64_t n;             /* training rows */
    float bandwidth;       /* bandwidth_, > 0 and finite */
    float *x;              /* n x num_features training rows */
    float *w;              /* n sample weights (finite, >= 0, positive sum), or NULL: every row weighs 1 */
} sb_kde;

/* Support vector machines' fitted state (src/models/svm/svm.c, docs/svm.md): a
 * model of family SB_FAMILY_SVM holds one and no trees. The layout is
 * libsvm's as scikit-learn exposes it: the support vectors grouped by class
 * (svc) in training index order; coef row r of a support vector of class c
 * belongs to the pair of c with class r (r < c) or r + 1 (r >= c); rho of each
 * pair (0,1), (0,2), ..., the decision being sum coef K - rho, positive for the
 * pair's first class. */
enum { SB_SVM_SVC = 0, SB_SVM_SVR = 1 };
enum { SB_SVM_LINEAR = 0, SB_SVM_POLY = 1, SB_SVM_RBF = 2, SB_SVM_SIGMOID = 3, SB_SVM_KERNEL_COUNT_ = 4 };
typedef struct sb_svm {
    int32_t kind;          /* SB_SVM_SVC | SB_SVM_SVR */
    int32_t kernel;        /* SB_SVM_LINEAR .. SB_SVM_SIGMOID */
    int32_t degree;        /* poly's degree (>= 0) */
    int32_t nclass;        /* svc: classes (>= 2); svr: 1 */
    int32_t converged;     /* 1 when every pair met tol; 0 when one stopped at max_iter */
    double gamma, coef0;   /* the resolved gamma (scale, auto or a value) and coef0 */
    int64_t n_fit;         /* training rows */
    int64_t nsv;           /* support vectors */
    int32_t *n_support;    /* nclass (svc) or 1 (svr) counts */
    int64_t *support;      /* nsv training row indices */
    float *sv;             /* nsv x num_features */
    double *coef;          /* ncoef x nsv (ncoef: nclass - 1, or 1 for svr) */
    double *rho;           /* npairs (1 for svr) */
    int64_t *n_iter;       /* npairs: SMO iterations of each */
    double *probA, *probB; /* npairs each: Platt's sigmoid of each pair (probability=true), or NULL */
} sb_svm;

/* Pairs and coefficient rows of an svm model. */
static inline int64_t sb_svm_npairs(const sb_svm *s) {
    return s->kind == SB_SVM_SVR ? 1 : (int64_t)s->nclass * (s->nclass - 1) / 2;
}
static inline int64_t sb_svm_ncoef(const sb_svm *s) { return s->kind == SB_SVM_SVR ? 1 : s->nclass - 1; }

/* UMAP's frozen fit (src/models/manifold/umap.c, docs/umap.md): a model of
 * family SB_FAMILY_UMAP holds one and no trees. What transform needs: the
 * parameters as parsed (n_epochs 0 is umap-learn's None, resolved by the row
 * count where used), a and b of the curve, a copy of the training rows (each
 * query's exact neighbors among them) and their embedding. */
typedef struct sb_umap {
    int32_t n_neighbors, ncomp, metric, n_epochs, neg_rate, init; /* metric: 0 euclidean, 1 cosine, 2 manhattan (SB_KNN_*); init: 0
                                                                      spectral, 1 random, 2 array */
    float min_dist, spread, lr, mix, local_conn, gamma, a, b;
    uint64_t seed;
    int64_t n;             /* training rows */
    float *x;              /* n x num_features training rows */
    float *emb;            /* n x ncomp: embedding_ */
} sb_umap;
/* A zeroed sb_umap with x and emb for n rows of nfeat and ncomp; NULL when
 * out of memory. sb_umap_free releases it (NULL: no-op). */
sb_umap *sb_umap_alloc(int64_t n, int32_t nfeat, int32_t ncomp);
void sb_umap_free(sb_umap *u);

/* The validation metrics of a gradient boosting fit, every iteration that ran:
 * values[(it * nsets + s) * nm + j] is metric j (names[j]; the first decides
 * early stopping) of validation set s (sets[s], in the fit's order) after
 * iteration it + 1; best is the 1-based iteration early stopping kept (0:
 * none ran). Fit-only: a loaded model has none. */
#define SB_EVALS_MAX_METRICS 16
#define SB_EVALS_SET_NAME 128 /* a set's name: at most 127 bytes and the NUL */
typedef struct sb_evals {
    int32_t niter, nm, best, nsets;
    char names[SB_EVALS_MAX_METRICS][48];
    char (*sets)[SB_EVALS_SET_NAME];
    float *values;
} sb_evals;
void sb_evals_free(sb_evals *e);

struct sb_model {
    int32_t family;          /* sb_family */
    int32_t objective;       /* sb_objective */
    int32_t num_class;       /* margins per row: 1, or K for multiclass */
    int32_t num_features;
    char **feature_names;    /* num_features strings */
    float *base_score;       /* num_class initial margins */
    int32_t ntrees;          /* trees in boosting order; tree t adds to class t % num_class */
    sb_tree *trees;
    int32_t numeric_mode;    /* sb_numeric_mode the model was trained in */
    char *params;            /* the training parameters, canonical "key=value\n" lines sorted by key */
    const char *profile;     /* the numeric profile it was trained under: one of sb_model_profiles (static) */
    sb_linear *linear;       /* family SB_FAMILY_LINEAR: its state (no trees); NULL otherwise */
    sb_kmeans *kmeans;       /* family SB_FAMILY_KMEANS: its state (no trees); NULL otherwise */
    sb_knn *knn;             /* family SB_FAMILY_KNN: its state (no trees); NULL otherwise */
    sb_dbscan *dbscan;       /* family SB_FAMILY_DBSCAN: its state (no trees); NULL otherwise */
    sb_agglo *agglo;         /* family SB_FAMILY_AGGLOMERATIVE: its state (no trees); NULL otherwise */
    sb_spectral *spectral;   /* family SB_FAMILY_SPECTRAL: its state (no trees); NULL otherwise */
    sb_kde *kde;             /* family SB_FAMILY_KDE: its state (no trees); NULL otherwise */
    sb_ets *ets;             /* family SB_FAMILY_ETS: the fitted batch (no trees); NULL otherwise */
    sb_arima *arima;         /* family SB_FAMILY_ARIMA: the fitted batch (no trees); NULL otherwise */
    sb_svm *svm;             /* family SB_FAMILY_SVM: its state (no trees); NULL otherwise */
    sb_gp *gp;               /* family SB_FAMILY_GP: the fitted process (no trees); NULL otherwise */
    sb_mlp *mlp;             /* family SB_FAMILY_MLP: the fitted network (no trees); NULL otherwise */
    sb_lm *lm;               /* family SB_FAMILY_LM: the byte language model and its training state; NULL otherwise */
    sb_umap *umap;           /* family SB_FAMILY_UMAP: the frozen fit (no trees); NULL otherwise */
    struct sb_labels *labels; /* the classifier's class labels (labels.c), or NULL: classes 0..K-1 */
    int32_t ncatnames;       /* categorical features with category names (labels.c), in feature order */
    struct sb_catnames *catnames;
    sb_evals *evals;         /* gradient boosting fitted with validation rows: its metric log (not in the file) */
};

/* A classifier's class labels (sb_label_kind): n values, class c standing for
 * value c; ints for SB_LABELS_INT64 and SB_LABELS_BOOL (0, 1), floats for
 * SB_LABELS_FLOAT64, strs (NUL-terminated, owned) for SB_LABELS_STRING. */
typedef struct sb_labels {
    int32_t kind;
    int32_t n;
    int64_t *ints;
    double *floats;
    char **strs;
} sb_labels;

/* A categorical feature's category names: code i is names[i], n of them,
 * strictly increasing by strcmp (sb_model_set_category_names). */
typedef struct sb_catnames {
    int32_t feature, n;
    char **names;
} sb_catnames;
/* Frees m's category names (none: no-op). */
void sb_model_catnames_free(sb_model *m);
/* Whether the category names of feature f (n of them) are valid: UTF-8
 * within the name limit, strictly increasing; otherwise bad, named by who. */
sb_status sb_catnames_check(const sb_catnames *c, int32_t nfeatures, sb_status bad, const char *who);

/* The number of class labels model m takes: 2 for gradient-boosting binary,
 * num_class for multiclass and forest classification, 0 for any other model
 * (which takes none). */
int32_t sb_model_class_count(const sb_model *m);

/* Whether l is a valid label set of n labels (docs/model-format.md, "Class
 * labels"): a known kind, n labels, strictly increasing, no NaN, bools 0 then
 * 1, strings UTF-8 without NUL within the name limit (SB_ERR_LIMIT past it).
 * Otherwise bad, with a message that starts with who. */
sb_status sb_labels_check(const sb_labels *l, int32_t n, sb_status bad, const char *who);

/* A zeroed label set of kind with its array for n labels (strings: n NULL
 * pointers), or NULL when out of memory. sb_labels_free releases it and its
 * strings (NULL: no-op). */
sb_labels *sb_labels_alloc(int32_t kind, int32_t n);
void sb_labels_free(sb_labels *l);

/* A zeroed sb_kmeans with its centers for k rows of nfeat; NULL when out of
 * memory. sb_kmeans_free releases it (NULL: no-op). */
sb_kmeans *sb_kmeans_alloc(int32_t k, int32_t nfeat);
void sb_kmeans_free(sb_kmeans *c);

/* A zeroed sb_knn with x for n rows of nfeat and, for a supervised task, y;
 * NULL when out of memory. sb_knn_free releases it and its derived arrays
 * (NULL: no-op). */
sb_knn *sb_knn_alloc(int32_t task, int64_t n, int32_t nfeat);
void sb_knn_free(sb_knn *k);

/* A zeroed sb_dbscan with its arrays for n rows, ncore core rows of nfeat;
 * NULL when out of memory. sb_dbscan_free releases it (NULL: no-op). */
sb_dbscan *sb_dbscan_alloc(int64_t n, int64_t ncore, int32_t nfeat);
void sb_dbscan_free(sb_dbscan *b);

/* A zeroed sb_agglo with its arrays for n rows; NULL when out of memory.
 * sb_agglo_free releases it (NULL: no-op). */
sb_agglo *sb_agglo_alloc(int64_t n);
void sb_agglo_free(sb_agglo *g);
/* A zeroed sb_spectral with its labels for n rows; NULL when out of memory.
 * sb_spectral_free releases it (NULL: no-op). */
sb_spectral *sb_spectral_alloc(int64_t n);
void sb_spectral_free(sb_spectral *g);
/* A zeroed sb_kde with x for n rows of nfeat and, when weighted, w; NULL when
 * out of memory. sb_kde_free releases it (NULL: no-op). */
sb_kde *sb_kde_alloc(int64_t n, int32_t nfeat, int weighted);
void sb_kde_free(sb_kde *k);

/* An sb_svm of kind with nclass classes, nsv support vectors of nfeat
 * features, its arrays allocated (zeroed); NULL when out of memory.
 * sb_svm_free releases it (NULL: no-op). */
sb_svm *sb_svm_alloc(int32_t kind, int32_t nclass, int64_t nsv, int32_t nfeat);
void sb_svm_free(sb_svm *s);

/* A zeroed sb_linear of kind with its arrays for nout rows of nfeat
 * (mean and the decomposition arrays only for PCA and TruncatedSVD); NULL when
 * out of memory. sb_linear_free releases it (NULL: no-op). */
sb_linear *sb_linear_alloc(int32_t kind, int32_t nout, int32_t nfeat);
void sb_linear_free(sb_linear *l);
const char *sb_linear_kind_name(int32_t kind);

/* The numeric profiles a model file may name, oldest first; the last is
 * SB_PROFILE_VERSION. A model predicts by the rules of its own profile (v1 to
 * v4 share them; v5 normalized forest classifiers' probabilities:
 * sb_model_kernel_objective; docs/numeric-profile.md, "Versions"). */
extern const char *const sb_model_profiles[];
extern const int32_t sb_model_nprofiles;

/* The model's profile as a number: 1 for "sb-identical-v1" ... up to
 * sb_model_nprofiles for SB_PROFILE_VERSION (a NULL profile is this
 * library's). A profile this library does not list (never one the reader
 * accepted) is 0. */
int32_t sb_model_profile_number(const sb_model *m);

/* The objective code the prediction kernels get for m (kernels/tree.h): the
 * file's objective, except SB_K_OBJ_FOREST_PROBA (12) for a forest
 * classifier of profile sb-identical-v5 or later, whose probabilities are
 * its margins normalized; earlier forest classifiers keep their rule (the
 * margins are the probabilities), so a file predicts the bits of the library
 * that wrote it (docs/numeric-profile.md, "Versions"). */
int32_t sb_model_kernel_objective(const sb_model *m);

/* *out := a copy of training table t without its rows of weight zero (x,
 * labels and weights copied; the feature names borrowed from t), *dropped :=
 * 1, when t has weights, no query ids, some of them zero and some positive,
 * and all of them finite and >= 0; otherwise *out is zeroed and *dropped 0
 * (the fit then refuses bad or all-zero weights by row, as before). A weight-0
 * row is then an absent row (weight_rows.c). SB_ERR_OUT_OF_MEMORY by name.
 * sb_table_drop_release frees what it copied (never the names). */
struct sb_table;
sb_status sb_table_drop_zero_weight(const struct sb_table *t, struct sb_table *out, int *dropped);
struct sb_dist;
/* The drop of sb_table_drop_zero_weight for a fit on rank blocks: with dist
 * NULL, that function; with dist, t is this rank's block and whether rows are
 * dropped is decided over every rank's weights (the single process's rule:
 * unless none or all weigh zero), so a block whose rows all weigh zero is
 * emptied when other blocks weigh. Collective: every rank calls it. */
sb_status sb_table_drop_zero_weight_ranks(const struct sb_dist *dist, const struct sb_table *t, struct sb_table *out,
                                          int *dropped);
/* *out := the view of t's rows [b, e): t's fields with every per-row pointer
 * advanced to row b (nothing copied; out borrows t's buffers). */
void sb_table_rows_view(const struct sb_table *t, int64_t b, int64_t e, struct sb_table *out);
void sb_table_drop_release(struct sb_table *t);

/* Classes a prediction keeps on the stack per row. */
#define SB_MODEL_MAX_CLASS_STACK 1024

/* A zeroed model of this library's profile; sb_model_free releases everything in it. */
sb_status sb_model_alloc(sb_model **out);

/* The objective's name ("regression", "binary"...; "unknown" for another value). */
const char *sb_model_objective_name(int32_t objective);

/* Model file format versions (docs/model-format.md): the writer's, and the
 * version a card's model-bytes stage records for the model's family (version 1
 * for the tree families, frozen so that reference cards stay as they are; the
 * current version for a family that version 1 cannot hold). */
#define SB_MODEL_FORMAT_VERSION 2u
uint32_t sb_model_card_version(const sb_model *m);

/* The last stages of a training card: the model's predictions of kind on its
 * training data (stage pred_tag), then its file bytes in the card's format
 * version (sb_model_card_version, stage bytes_tag). */
struct sb_card;
struct sb_dataset;
sb_status sb_model_record(struct sb_card *card, const sb_model *m, const struct sb_dataset *train, int32_t kind,
                          const char *pred_tag, const char *bytes_tag);
/* The model's file bytes in the card's format version (stage bytes_tag): the
 * last stage of every family's training card. */
sb_status sb_model_record_bytes(struct sb_card *card, const sb_model *m, const char *bytes_tag);
/* The index of the first non-finite value of x's cells (the lowest, found
 * in chunks on the worker pool), or -1: the families' input checks. */
int64_t sb_first_nonfinite(const float *x, int64_t cells);
/* sb_model_get_indices' copy of one index array named name: n values from
 * i32 (or, i32 NULL, from i64) into out as int64, *needed := n (cap 0 asks;
 * a smaller cap is SB_ERR_LIMIT). */
sb_status sb_model_indices_out(const int32_t *i32, const int64_t *i64, size_t n, const char *name, int64_t *out,
                               size_t cap, size_t *needed);
/* m->feature_names := copies of the d names (names NULL: none); who names the
 * family in the out-of-memory message. */
sb_status sb_model_copy_names(sb_model *m, char *const *names, int64_t d, const char *who);

/* The model's trees as one array of *nnodes prediction nodes (kernels/tree.h),
 * tree i starting at (*nodes)[(*start)[i]]; the caller frees both with sb_free. */
struct sb_k_pnode;
sb_status sb_model_flatten(const sb_model *m, struct sb_k_pnode **nodes, int32_t **start, int32_t *nnodes);

/* Whether every raw score the model can compute is finite, known from the
 * model alone, before any row is read: per class c, |base_score[c]| plus the
 * largest |leaf value| of each of c's trees (tree i is class i % K), summed in
 * tree order with each partial bound raised by 2^-22 (more than the rounding
 * of the float sum it bounds and of the bound itself), stays below FLT_MAX.
 * Otherwise SB_ERR_LIMIT by name: some input could make a margin overflow to
 * +-inf and then NaN, whose sign and payload differ between machines, so
 * prediction refuses rather than answer differently (docs/model-format.md).
 * Float operations only, in a fixed order: the verdict is the same everywhere. */
sb_status sb_model_check_score_range(const sb_model *m);

#endif
