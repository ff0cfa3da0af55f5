/*
 * svm_device.h: the support vector machines on a GPU (svm_device.c;
 * docs/svm.md, "Devices"): kernel rows and decision values computed by the
 * float64 program's kv_row, kv_rows and kv_dec (kernels/entry/svm_entry.h),
 * each value by kernels/svm.h's sequence, the host's. The SMO's selection,
 * steps and gradient stay on the host (svm.c), so every choice is the host's.
 */
#ifndef SB_MODELS_SVM_SVM_DEVICE_H
#define SB_MODELS_SVM_SVM_DEVICE_H
#include "../../device/device.h"

/* An open device (held under the family's lock from sv_dev_open to
 * sv_dev_close) and its buffers: the rows queries or held-out rows are read
 * from (row-major), the points of the current problem (feature-major), and
 * scratch. */
typedef struct sv_dev {
    sb_device *d;
    int32_t kernel, degree, dfeat;
    double gamma, coef0;
    int64_t np;     /* points of the current problem */
    sb_dbuf rows, pt, row, idx, K, coef, pairs, rho, dec;
} sv_dev;

/* Open device kind (cuda or opencl) for kernel (kernel, degree, gamma,
 * coef0) over d features, taking the family's device lock; a missing backend
 * or device, or one without IEEE doubles, is refused by name (the lock then
 * released). */
sb_status sv_dev_open(int32_t kind, int32_t kernel, int32_t degree, int32_t d, double gamma, double coef0, sv_dev *v);
/* Release v's buffers and the lock (a never-opened v, zeroed: a no-op). */
void sv_dev_close(sv_dev *v);
/* The row-major n x d rows that sv_dev_decide's row indices name. */
sb_status sv_dev_set_rows(sv_dev *v, const float *x, int64_t n);
/* The points of the problem: x's rows pts[0 .. np) (pts NULL: rows 0 .. np),
 * stored feature-major. */
sb_status sv_dev_set_points(sv_dev *v, const float *x, const int64_t *pts, int64_t np);
/* out[q] = K(point p, point q) for every point q. */
sb_status sv_dev_row(sv_dev *v, int64_t p, float *out);
/* The decision values of the r rows aidx of the rows (sv_dev_set_rows)
 * against the points: out[i w + j] = sb_svk_decide over pair j's six ranges
 * pairs[6 j ..] (o1, b1, e1, o2, b2, e2) of the coefficients coef (ncoef),
 * minus rho[j]; in chunks of rows that fit the device (a schedule input). */
sb_status sv_dev_decide(sv_dev *v, const int64_t *aidx, int64_t r, const double *coef, int64_t ncoef,
                        const int64_t *pairs, const double *rho, int64_t w, int32_t skip_zero, double *out);

/* Test hook: the bytes a decision chunk's kernel values may take (0: the
 * default), so that tests can force several chunks. */
void sb_svm_device_budget_for_tests(int64_t bytes);

#endif
