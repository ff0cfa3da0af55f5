/*
 * svm.h: one kernel value of the support vector machines (docs/svm.md),
 * written once in the kernel subset for the host and the devices: the host's
 * solver and decision values (models/svm/svm.c) and the float64 program's
 * entry kernels (entry/svm_entry.h: kernel rows and decision sums on
 * cuda/opencl) call the same sb_svk_sum and sb_svk_finish, so the two cannot
 * drift.
 *
 * K(a, b) as float32 by one sequence: the sum over the features in index
 * order in double (the difference of the two float32 values widened, squared,
 * for rbf; their widened product for the others), then for rbf e^(-gamma D) by
 * the profile's sb_expf of the exponent rounded to float32, linear the sum
 * rounded, poly (gamma s + coef0)^degree by repeated multiplication in double,
 * sigmoid sb_tanhf of gamma s + coef0 rounded. IEEE binary64 + - * only, no
 * contraction (the host's -ffp-contract=off, nvcc's -fmad=false, OpenCL's
 * FP_CONTRACT OFF); doubles on a device are CUDA's or OpenCL's cl_khr_fp64
 * (a device without them is refused by name, dev_opencl.c). K(a, b) and
 * K(b, a) are the same bits: (a - b)^2 = (b - a)^2 and a b = b a exactly.
 *
 * The rows are read with a stride, so that a device can keep its points
 * feature-major (consecutive work-items read consecutive addresses) while the
 * host reads rows: a layout, never a value.
 */
#ifndef SB_KERNELS_SVM_H
#define SB_KERNELS_SVM_H
#include "compat.h"
#include "../math/sb_math.h"

#if defined(SB_COMPAT_DEVICE) && !defined(sb_d2u)
#error "the support vector kernels are float64: their backend must give them IEEE doubles (SB_OCL_F64)"
#endif

/* the kernel codes (include/samebits.h's SB_SVM_*) */
#define SB_SVK_LINEAR 0
#define SB_SVK_POLY 1
#define SB_SVK_RBF 2
#define SB_SVK_SIGMOID 3

/* The sum under K(a, b) over d features, a's feature f at a[f sa], b's at
 * b[f sb]: the squared distance (rbf) or the dot product, in index order.
 * Separating arm (SB_SABOTAGE_SVM_KERNEL_F32; CUDA_VARIANT=svm-kernel-f32,
 * SAMEBITS_OPENCL_ARM=svm-kernel-f32): the sum in float32, as a port for
 * speed would write it, which moves the kernel values and so the SMO's path.
 * (A reordered double sum would not do: rounded to float32 at the end, it
 * moves almost no value.) */
SB_FN double sb_svk_sum(sb_i32 kern, sb_i32 d, SB_GLOBAL const float *a, sb_i64 sa, SB_GLOBAL const float *b,
                        sb_i64 sb) {
#if defined(SB_SABOTAGE_SVM_KERNEL_F32)
    float s = 0.0f;
#else
    double s = 0.0;
#endif
    for (sb_i32 f = 0; f < d; f++) {
#if defined(SB_SABOTAGE_SVM_KERNEL_F32)
        const float x = a[f * sa], y = b[f * sb];
#else
        const double x = (double)a[f * sa], y = (double)b[f * sb];
#endif
        if (kern == SB_SVK_RBF) {
            const double t = x - y;
            s += t * t;
        } else {
            s += x * y;
        }
    }
    return (double)s;
}

/* The exponential of rbf: the profile's sb_expf; on a GPU under the
 * separating arm SB_ARM_VENDOR_EXP (SAMEBITS_OPENCL_ARM=vendor-exp,
 * CUDA_VARIANT=libdevice-exp) the vendor's. */
#if defined(SB_ARM_VENDOR_EXP) && defined(SB_COMPAT_DEVICE)
#define SB_SVK_EXPF(x) sb_vendor_expf(x)
#else
#define SB_SVK_EXPF(x) sb_expf(x)
#endif

/* K from its sum, as float32 (the header's contract). */
SB_FN float sb_svk_finish(sb_i32 kern, sb_i32 degree, double gamma, double coef0, double s) {
    if (kern == SB_SVK_RBF) return SB_SVK_EXPF((float)(-(gamma * s)));
    if (kern == SB_SVK_LINEAR) return (float)s;
    const double v = gamma * s + coef0;
    if (kern == SB_SVK_SIGMOID) return sb_tanhf((float)v);
    double r = 1.0;
    for (sb_i32 e = 0; e < degree; e++) r *= v;
    return (float)r;
}

/* One decision value (libsvm's sign): sum over v in [b1, e1) of
 * c[o1 + v] K[v], then over [b2, e2) of c[o2 + v] K[v], in index order in
 * double, minus rho; skip_zero leaves out the terms of a zero coefficient
 * (the cross-validation's sums over the training positions of a nonzero
 * alpha), otherwise every term is added (the model's decision values). */
SB_FN double sb_svk_decide(SB_GLOBAL const float *K, SB_GLOBAL const double *c, sb_i64 o1, sb_i64 b1, sb_i64 e1,
                           sb_i64 o2, sb_i64 b2, sb_i64 e2, double rho, sb_i32 skip_zero) {
    double sum = 0.0;
    for (sb_i64 v = b1; v < e1; v++)
        if (!skip_zero || c[o1 + v] != 0.0) sum += c[o1 + v] * (double)K[v];
    for (sb_i64 v = b2; v < e2; v++)
        if (!skip_zero || c[o2 + v] != 0.0) sum += c[o2 + v] * (double)K[v];
    return sum - rho;
}

#endif
