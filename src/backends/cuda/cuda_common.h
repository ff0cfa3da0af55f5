/*
 * cuda_common.h: the host-side helpers both CUDA devices share (the gradient
 * boosting device tdev_cuda.cu and the forest device fdev_cuda.cu): CUDA
 * errors as named statuses, the check for a usable GPU, and device scratch
 * grown on demand. Included by .cu files only, after core/internal.h.
 */
#ifndef SB_CUDA_COMMON_H
#define SB_CUDA_COMMON_H
#include <cuda_runtime.h>

/* A CUDA error as a status: out of memory when the device ran out, else an
 * internal error naming the step (what) and CUDA's message. */
static inline sb_status sb_cuda_fail(cudaError_t e, const char *what) {
    return sb_fail(e == cudaErrorMemoryAllocation ? SB_ERR_OUT_OF_MEMORY : SB_ERR_INTERNAL, "cuda: %s: %s", what,
                   cudaGetErrorString(e));
}

/* Return sb_cuda_fail from the calling function when a CUDA call (or the
 * last launch) failed. */
#define CUDA_CK(call, what)                                      \
    do {                                                         \
        cudaError_t e_ = (call);                                 \
        if (e_ != cudaSuccess) return sb_cuda_fail(e_, what);    \
    } while (0)
#define CUDA_CK_LAUNCH(what) CUDA_CK(cudaGetLastError(), what)

/* SB_OK when the process sees a GPU; else SB_ERR_BACKEND_UNAVAILABLE, named
 * (the first CUDA call: it also creates the context). */
static inline sb_status sb_cuda_require_gpu(void) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0)
        return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "device 'cuda': no usable GPU (%s)",
                       e != cudaSuccess ? cudaGetErrorString(e) : "no device");
    return SB_OK;
}

/* Device memory *p of at least bytes, *cap its size; the contents are not
 * kept when it grows. */
static inline sb_status sb_cuda_ensure(void **p, size_t *cap, size_t bytes, const char *what) {
    if (bytes <= *cap) return SB_OK;
    cudaFree(*p);
    *p = NULL;
    *cap = 0;
    CUDA_CK(cudaMalloc(p, bytes), what);
    *cap = bytes;
    return SB_OK;
}

#endif
