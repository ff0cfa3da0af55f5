/*
 * dev_cuda.cu: the CUDA backend of the device layer (src/device/device.h):
 * the runtime glue for the entry kernels of src/kernels/entry/, which
 * entry_tree.cu, entry_forest.cu and entry_core.cu compile from the same source OpenCL
 * builds. Buffers are device pointers; launches go through cudaLaunchKernel
 * with the arguments the families give, in the default stream, so every
 * operation runs in call order; copies from and to the host block. Built with
 * `make CUDA=1` under the profile's flags (tools/cuda-compile-check.sh
 * --print-flags profile); dev_cuda_none.c stands in otherwise.
 */
extern "C" {
#include "core/internal.h"
#include "device/device.h"
}
#include "backends/cuda/cuda_wg.h"
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SB_CUDA_FLAGS
#define SB_CUDA_FLAGS "?"
#endif

extern "C" const void *const sb_cuda_tree_kernels[];
extern "C" const void *const sb_cuda_forest_kernels[];
extern "C" const void *const sb_cuda_core_kernels[];
extern "C" const void *const sb_cuda_linalg_kernels[];
extern "C" const void *const sb_cuda_ts_kernels[];
extern "C" const void *const sb_cuda_gp_kernels[];

namespace {

struct cuda_impl {
    const void *const *k;
    int32_t nk;
    size_t *static_local; /* per kernel: its own shared memory */
    cublasHandle_t blas;  /* made at the first integer product */
    cublasHandle_t sblas; /* made at the first float32 screen product, in pedantic math mode */
    /* SAMEBITS_CUDA_TIMING=1: each launch timed by events (synchronously), by kernel */
    double *ms;
    int64_t *calls;
    double blas_ms;
    int64_t blas_calls;
    double sblas_ms;
    int64_t sblas_calls;
};

/* Event-timed f() when timing; the elapsed milliseconds into *acc. */
template <typename F> cudaError_t timed(sb_device *d, double *acc, int64_t *calls, F f) {
    if (!d->timing) return f();
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaEventRecord(a, 0);
    cudaError_t e = f();
    cudaEventRecord(b, 0);
    cudaEventSynchronize(b);
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, a, b);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    *acc += ms;
    ++*calls;
    return e;
}

/* cuBLAS, opened at the first integer product (dlopen: a CUDA build runs, on
 * the portable integer kernel, where the library is absent, and processes
 * that never multiply matrices never load it). */
struct blas_lib {
    int tried, ok;
    char why[160];
    decltype(&cublasCreate_v2) create;
    decltype(&cublasDestroy_v2) destroy;
    cublasStatus_t (*gemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void *,
                           const void *, cudaDataType, int, const void *, cudaDataType, int, const void *, void *,
                           cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
    decltype(&cublasSetMathMode) math_mode;
};
blas_lib g_blas;

int blas_open(void) {
    if (g_blas.tried) return g_blas.ok;
    g_blas.tried = 1;
#ifndef SB_CUDA_LIBDIR
#define SB_CUDA_LIBDIR "/usr/local/cuda/lib64"
#endif
    /* the toolkit this build was compiled with first, then the loader's search */
    const char *names[] = {SB_CUDA_LIBDIR "/libcublas.so.13", "libcublas.so.13", "libcublas.so.12", "libcublas.so"};
    void *h = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !h; i++) h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(g_blas.why, sizeof g_blas.why, "cuBLAS not found (%s)", dlerror());
        return 0;
    }
    g_blas.create = (decltype(g_blas.create))dlsym(h, "cublasCreate_v2");
    g_blas.destroy = (decltype(g_blas.destroy))dlsym(h, "cublasDestroy_v2");
    g_blas.gemm = (decltype(g_blas.gemm))dlsym(h, "cublasGemmEx");
    g_blas.math_mode = (decltype(g_blas.math_mode))dlsym(h, "cublasSetMathMode");
    g_blas.ok = g_blas.create && g_blas.destroy && g_blas.gemm;
    if (!g_blas.ok) snprintf(g_blas.why, sizeof g_blas.why, "cuBLAS lacks cublasCreate_v2, cublasDestroy_v2 or cublasGemmEx");
    return g_blas.ok;
}

sb_status fail(cudaError_t e, const char *what) {
    return sb_fail(e == cudaErrorMemoryAllocation ? SB_ERR_OUT_OF_MEMORY : SB_ERR_INTERNAL, "cuda: %s: %s", what,
                   cudaGetErrorString(e));
}

int cu_present(void) {
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

/* The timing report of one device: every kernel launched, its launches and
 * event-timed milliseconds (no CUDA call: the times are already summed). */
static void timing_report(const sb_device *d, const cuda_impl *c) {
    for (int32_t i = 0; i < c->nk; i++)
        if (c->calls[i])
            fprintf(stderr, "cuda timing: %-22s %8lld launches %10.3f ms\n", sb_device_kernel_name(d->prog, i),
                    (long long)c->calls[i], c->ms[i]);
    if (c->blas_calls)
        fprintf(stderr, "cuda timing: %-22s %8lld calls    %10.3f ms\n", "cublasGemmEx (int8)",
                (long long)c->blas_calls, c->blas_ms);
    if (c->sblas_calls)
        fprintf(stderr, "cuda timing: %-22s %8lld calls    %10.3f ms\n", "cublasGemmEx (float32)",
                (long long)c->sblas_calls, c->sblas_ms);
}

/* Devices a process keeps open to its end (the linear-algebra program's)
 * are never closed: their report is printed at exit instead. */
#define TIMED_MAX 16
static const sb_device *g_timed[TIMED_MAX];
static pthread_mutex_t g_timed_lock = PTHREAD_MUTEX_INITIALIZER;
static void timing_at_exit(void) {
    pthread_mutex_lock(&g_timed_lock);
    for (int i = 0; i < TIMED_MAX; i++)
        if (g_timed[i] && g_timed[i]->impl) timing_report(g_timed[i], (const cuda_impl *)g_timed[i]->impl);
    pthread_mutex_unlock(&g_timed_lock);
}
static void timing_track(const sb_device *d, int add) {
    static int registered;
    pthread_mutex_lock(&g_timed_lock);
    if (add && !registered) registered = atexit(timing_at_exit) == 0;
    for (int i = 0; i < TIMED_MAX; i++)
        if (add ? !g_timed[i] : g_timed[i] == d) {
            g_timed[i] = add ? d : NULL;
            break;
        }
    pthread_mutex_unlock(&g_timed_lock);
}

void cu_close(sb_device *d) {
    cuda_impl *c = (cuda_impl *)d->impl;
    if (!c) return;
    cudaDeviceSynchronize();
    if (d->timing && c->ms) {
        timing_track(d, 0);
        timing_report(d, c);
    }
    sb_free(c->ms);
    sb_free(c->calls);
    if (c->blas) g_blas.destroy(c->blas);
    if (c->sblas) g_blas.destroy(c->sblas);
    sb_free(c->static_local);
    sb_free(c);
    d->impl = NULL;
}

sb_status cu_open(sb_device *d) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0)
        return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "device 'cuda': no usable GPU (%s)",
                       e != cudaSuccess ? cudaGetErrorString(e) : "no device");
    cuda_impl *c = (cuda_impl *)sb_calloc(1, sizeof *c);
    if (!c) return sb_fail(SB_ERR_OUT_OF_MEMORY, "cuda: out of memory");
    d->impl = c;
    c->k = d->prog == SB_PROG_TREE     ? sb_cuda_tree_kernels
           : d->prog == SB_PROG_FOREST ? sb_cuda_forest_kernels
           : d->prog == SB_PROG_CORE   ? sb_cuda_core_kernels
           : d->prog == SB_PROG_TS     ? sb_cuda_ts_kernels
           : d->prog == SB_PROG_GP     ? sb_cuda_gp_kernels
                                       : sb_cuda_linalg_kernels;
    c->nk = (int32_t)sb_program_kernels(d->prog);
    c->ms = (double *)sb_calloc((size_t)c->nk, sizeof(double));
    c->calls = (int64_t *)sb_calloc((size_t)c->nk, sizeof(int64_t));
    if (!c->ms || !c->calls) return sb_fail(SB_ERR_OUT_OF_MEMORY, "cuda: out of memory");
    if (!(c->static_local = (size_t *)sb_calloc((size_t)c->nk, sizeof(size_t))))
        return sb_fail(SB_ERR_OUT_OF_MEMORY, "cuda: out of memory");
    int dev = 0;
    cudaDeviceProp p;
    if ((e = cudaGetDevice(&dev)) != cudaSuccess || (e = cudaGetDeviceProperties(&p, dev)) != cudaSuccess)
        return fail(e, "cudaGetDeviceProperties");
    /* nvcc 13 builds nothing older than compute capability 7.5 (Turing): such
     * a GPU would fail at the first launch with "no kernel image"; refuse it
     * here by name instead (tools/cuda-compile-check.sh lists what is built). */
    if (p.major * 10 + p.minor < 75)
        return sb_fail(SB_ERR_BACKEND_UNAVAILABLE,
                       "device 'cuda': %.150s has compute capability %d.%d; samebits' CUDA build serves 7.5 "
                       "(Turing) and newer",
                       p.name, p.major, p.minor);
    if (d->timing) timing_track(d, 1);
    /* the time-series program: one work-item a series of a register-heavy fit
     * (255 registers at sm_90), so blocks of 64 spread a batch over every SM
     * (its kernel reads no SB_WG: a schedule input only) */
    d->wg = d->prog == SB_PROG_TS ? 64 : SB_WG;
    d->cus = p.multiProcessorCount;
    d->local_mem = (int64_t)p.sharedMemPerBlockOptin;
    d->max_alloc = (int64_t)p.totalGlobalMem;
    snprintf(d->name, sizeof d->name, "cuda: %.150s", p.name);
    /* Dynamic shared memory past 48 KiB is opt-in per kernel: allow each up to
     * what the block may have beside its own arrays. */
    for (int32_t i = 0; i < c->nk; i++) {
        cudaFuncAttributes a;
        if ((e = cudaFuncGetAttributes(&a, c->k[i])) != cudaSuccess)
            return fail(e, sb_device_kernel_name(d->prog, i));
        c->static_local[i] = a.sharedSizeBytes;
        int dyn = (int)(p.sharedMemPerBlockOptin - a.sharedSizeBytes);
        if ((e = cudaFuncSetAttribute(c->k[i], cudaFuncAttributeMaxDynamicSharedMemorySize, dyn)) != cudaSuccess)
            return fail(e, sb_device_kernel_name(d->prog, i));
    }
    return SB_OK;
}

sb_status cu_alloc(sb_device *, void **h, size_t bytes) {
    cudaError_t e = cudaMalloc(h, bytes);
    return e == cudaSuccess ? SB_OK : fail(e, "cudaMalloc");
}

void cu_release(sb_device *, void *h) { cudaFree(h); }

/* Large uploads go through two pinned staging buffers: the pool copies one
 * chunk of the caller's (pageable) memory into one buffer while the DMA
 * engine sends the other, which is several times faster than cudaMemcpy from
 * pageable memory. Bytes only (no arithmetic); the write still returns when
 * the data is on the device. One pair of buffers for the process, under a
 * lock; if pinned memory cannot be had, the plain copy. */
#define STAGE_BYTES ((size_t)64 << 20)
#define STAGE_MIN ((size_t)32 << 20)
#define STAGE_TASKS 16
static pthread_mutex_t g_stage_lock = PTHREAD_MUTEX_INITIALIZER;
static void *g_stage[2];
static cudaEvent_t g_stage_ev[2];
static int g_stage_state; /* 0 not tried, 1 ready, -1 unavailable */

struct stage_copy {
    char *dst;
    const char *src;
    size_t n;
};

static void stage_copy_task(void *ctx, int64_t t) {
    const stage_copy *j = (const stage_copy *)ctx;
    const size_t per = (j->n + STAGE_TASKS - 1) / STAGE_TASKS, b = (size_t)t * per;
    const size_t e = b + per < j->n ? b + per : j->n;
    if (b < e) memcpy(j->dst + b, j->src + b, e - b);
}

static int stage_ready(void) {
    if (g_stage_state == 0) {
        g_stage_state = -1;
        if (cudaMallocHost(&g_stage[0], STAGE_BYTES) == cudaSuccess &&
            cudaMallocHost(&g_stage[1], STAGE_BYTES) == cudaSuccess &&
            cudaEventCreateWithFlags(&g_stage_ev[0], cudaEventDisableTiming) == cudaSuccess &&
            cudaEventCreateWithFlags(&g_stage_ev[1], cudaEventDisableTiming) == cudaSuccess)
            g_stage_state = 1;
        else
            (void)cudaGetLastError(); /* the plain copy serves */
    }
    return g_stage_state == 1;
}

/* The locked road (SAMEBITS_CUDA_UPLOAD=locked, uploads of REGISTER_MIN and
 * more): the caller's pages locked in place for the copy (cudaHostRegister,
 * read-only), so the DMA engine reads them directly, then unlocked before the
 * write returns. Measured on the H200 machine: for 4 GB, pageable cudaMemcpy
 * 0.63 s, lock + copy + unlock 0.28 s; for logistic regression's 1.1 GB (best
 * of 3 fits, 2026-12-02), locked 57 ms against the staged copy's ~27 ms once
 * its pinned buffers exist (they are made once a process, about 48 ms), so
 * the staged copy is the default road and locking a measured alternative. */
#define REGISTER_MIN ((size_t)256 << 20)
static int upload_registered(void *h, size_t off, const void *src, size_t bytes) {
    if (cudaHostRegister((void *)src, bytes, cudaHostRegisterReadOnly) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    const cudaError_t e = cudaMemcpy((char *)h + off, src, bytes, cudaMemcpyHostToDevice);
    cudaHostUnregister((void *)src);
    (void)cudaGetLastError();
    return e == cudaSuccess ? 1 : -1;
}

/* SAMEBITS_CUDA_UPLOAD=staged|locked|auto picks the road of a large upload
 * (for measuring them: bytes only, no bit can depend on it); auto (unset):
 * the staged copy. */
static int upload_road(void) {
    const char *v = getenv("SAMEBITS_CUDA_UPLOAD");
    if (!v || !*v || !strcmp(v, "auto")) return 0;
    return !strcmp(v, "staged") ? 1 : !strcmp(v, "locked") ? 2 : -1;
}

sb_status cu_write(sb_device *, void *h, size_t off, const void *src, size_t bytes) {
    const int road = upload_road();
    if (road < 0)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "SAMEBITS_CUDA_UPLOAD=%s: the upload roads are auto, staged and locked",
                       getenv("SAMEBITS_CUDA_UPLOAD"));
    if (bytes >= REGISTER_MIN && road == 2) {
        const int r = upload_registered(h, off, src, bytes);
        if (r > 0) return SB_OK;
        if (r < 0) return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "cudaMemcpy to the device (locked pages) failed");
    }
    if (bytes >= STAGE_MIN) {
        pthread_mutex_lock(&g_stage_lock);
        if (stage_ready()) {
            cudaError_t e = cudaSuccess;
            size_t done = 0;
            for (int i = 0; done < bytes && e == cudaSuccess; i++) {
                const size_t len = bytes - done < STAGE_BYTES ? bytes - done : STAGE_BYTES;
                const int k = i & 1;
                if ((e = cudaEventSynchronize(g_stage_ev[k])) != cudaSuccess) break;
                stage_copy j = {(char *)g_stage[k], (const char *)src + done, len};
                sb_parallel_for(STAGE_TASKS, stage_copy_task, &j);
                if ((e = cudaMemcpyAsync((char *)h + off + done, g_stage[k], len, cudaMemcpyHostToDevice, 0)) !=
                    cudaSuccess)
                    break;
                e = cudaEventRecord(g_stage_ev[k], 0);
                done += len;
            }
            if (e == cudaSuccess) e = cudaEventSynchronize(g_stage_ev[0]);
            if (e == cudaSuccess) e = cudaEventSynchronize(g_stage_ev[1]);
            pthread_mutex_unlock(&g_stage_lock);
            return e == cudaSuccess ? SB_OK : fail(e, "cudaMemcpyAsync to the device (staged)");
        }
        pthread_mutex_unlock(&g_stage_lock);
    }
    cudaError_t e = cudaMemcpy((char *)h + off, src, bytes, cudaMemcpyHostToDevice);
    return e == cudaSuccess ? SB_OK : fail(e, "cudaMemcpy to the device");
}

sb_status cu_read(sb_device *, void *h, size_t off, void *dst, size_t bytes) {
    cudaError_t e = cudaMemcpy(dst, (const char *)h + off, bytes, cudaMemcpyDeviceToHost);
    return e == cudaSuccess ? SB_OK : fail(e, "cudaMemcpy from the device");
}

sb_status cu_copy(sb_device *, void *dst, size_t doff, void *src, size_t soff, size_t bytes) {
    cudaError_t e = cudaMemcpy((char *)dst + doff, (const char *)src + soff, bytes, cudaMemcpyDeviceToDevice);
    return e == cudaSuccess ? SB_OK : fail(e, "cudaMemcpy on the device");
}

sb_status cu_launch(sb_device *d, int32_t k, int64_t g0, int64_t g1, size_t dyn_local, const sb_darg *args,
                    int32_t nargs) {
    cuda_impl *c = (cuda_impl *)d->impl;
    void *argv[40];
    if (nargs > 40) return sb_fail(SB_ERR_INTERNAL, "cuda: %d kernel arguments", (int)nargs);
    for (int32_t i = 0; i < nargs; i++) argv[i] = (void *)args[i].p;
    cudaError_t e = timed(d, &c->ms[k], &c->calls[k], [&] {
        return cudaLaunchKernel(c->k[k], dim3((unsigned)g0, (unsigned)g1), dim3((unsigned)d->wg), argv, dyn_local, 0);
    });
    return e == cudaSuccess ? SB_OK : fail(e, sb_device_kernel_name(d->prog, k));
}

sb_status cu_finish(sb_device *) {
    cudaError_t e = cudaDeviceSynchronize();
    return e == cudaSuccess ? SB_OK : fail(e, "cudaDeviceSynchronize");
}

size_t cu_kernel_local(sb_device *d, int32_t k) { return ((cuda_impl *)d->impl)->static_local[k]; }

/* *h, made at its first use; math >= 0 sets its math mode once (the screen's
 * handle). SB_ERR_NOT_FOUND (no message) where cuBLAS cannot set the mode. */
sb_status blas_handle(cublasHandle_t *h, int math) {
    if (*h) return SB_OK;
    cublasStatus_t s = g_blas.create(h);
    if (s != CUBLAS_STATUS_SUCCESS) {
        *h = NULL;
        return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "cuda: cublasCreate failed (%d)", (int)s);
    }
    if (math >= 0 && (!g_blas.math_mode || g_blas.math_mode(*h, (cublasMath_t)math) != CUBLAS_STATUS_SUCCESS)) {
        g_blas.destroy(*h);
        *h = NULL;
        return SB_ERR_NOT_FOUND;
    }
    return SB_OK;
}

/* Row-major c (m x n, ldc) = a (m x K, lda) * b (n x K, ldb)^T through
 * cublasGemmEx: column-major c^T = b^T' * a', both operands K-contiguous (the
 * "TN" form), timed into *ms and *calls; what names it in a failure. */
sb_status blas_tn(sb_device *d, cublasHandle_t h, double *ms, int64_t *calls, const char *what, cudaDataType tin,
                  cudaDataType tout, cublasComputeType_t ct, const void *one, const void *zero, int64_t m, int64_t n,
                  int64_t K, void *a, size_t aoff, int64_t lda, void *b, size_t boff, int64_t ldb, void *c, size_t coff,
                  int64_t ldc) {
    if (m == 0 || n == 0) return SB_OK;
    if (m > INT32_MAX || n > INT32_MAX || K > INT32_MAX)
        return sb_fail(SB_ERR_LIMIT, "cuda: %s product of %lld x %lld x %lld", what, (long long)m, (long long)n,
                       (long long)K);
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    timed(d, ms, calls, [&] {
        s = g_blas.gemm(h, CUBLAS_OP_T, CUBLAS_OP_N, (int)n, (int)m, (int)K, one, (const char *)b + boff, tin, (int)ldb,
                        (const char *)a + aoff, tin, (int)lda, zero, (char *)c + coff, tout, (int)ldc, ct,
                        CUBLAS_GEMM_DEFAULT);
        return cudaSuccess;
    });
    if (s != CUBLAS_STATUS_SUCCESS)
        return sb_fail(SB_ERR_INTERNAL, "cuda: cublasGemmEx (%s, %lld x %lld x %lld) failed (%d)", what, (long long)m,
                       (long long)n, (long long)K, (int)s);
    return SB_OK;
}

/* The exact int8 product through cuBLAS's integer GEMM (device.h's
 * sb_device_igemm_s8): int8 inputs, int32 sums, on the tensor cores where
 * the shapes allow. The sums are exact integers, so cuBLAS's choice of
 * kernel, tiling or split of K cannot change a bit (the parity test compares
 * it with the portable kernel). */
sb_status cu_igemm_s8(sb_device *d, int64_t m, int64_t n, int64_t K, void *a, size_t aoff, int64_t lda, void *b,
                      size_t boff, int64_t ldb, void *c, size_t coff, int64_t ldc) {
    cuda_impl *ci = (cuda_impl *)d->impl;
    if (!blas_open()) return SB_ERR_NOT_FOUND; /* the portable kernel stands in */
    sb_status st = blas_handle(&ci->blas, -1);
    if (st != SB_OK) return st;
    const int32_t one = 1, zero = 0;
    return blas_tn(d, ci->blas, &ci->blas_ms, &ci->blas_calls, "int8", CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I, &one,
                   &zero, m, n, K, a, aoff, lda, b, boff, ldb, c, coff, ldc);
}

/* The float32 product of a screen (device.h's sb_device_sgemm_screen), row-major
 * C = A * B^T as above, on a handle of its own in cuBLAS's default math mode
 * with the float32 compute type, which cuBLAS documents as keeping at least
 * float32's mantissa and exponent (TF32 only when a handle asks for it; this
 * one never does): the screen's bound covers any order of float32 sums, not
 * rounded inputs. SAMEBITS_CUDA_SGEMM=pedantic asks cuBLAS's pedantic mode and
 * compute type instead (the same promise, by its strictest name). Without
 * cublasSetMathMode the portable kernel stands in. */
sb_status cu_sgemm_screen(sb_device *d, int64_t m, int64_t n, int64_t K, void *a, size_t aoff, int64_t lda, void *b,
                          size_t boff, int64_t ldb, void *c, size_t coff, int64_t ldc) {
    cuda_impl *ci = (cuda_impl *)d->impl;
    if (!blas_open() || !g_blas.math_mode) return SB_ERR_NOT_FOUND;
    const char *mode = sb_device_env(d, "SGEMM");
    const int pedantic = mode && !strcmp(mode, "pedantic");
    /* its own handle: the integer product's keeps its default math mode */
    sb_status st = blas_handle(&ci->sblas, pedantic ? CUBLAS_PEDANTIC_MATH : CUBLAS_DEFAULT_MATH);
    if (st != SB_OK) return st;
    const float one = 1.0f, zero = 0.0f;
    return blas_tn(d, ci->sblas, &ci->sblas_ms, &ci->sblas_calls, "float32", CUDA_R_32F, CUDA_R_32F,
                   pedantic ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F, &one, &zero, m, n, K, a, aoff, lda, b,
                   boff, ldb, c, coff, ldc);
}

/* The GPU's name, compute capability, driver and runtime, or why there is none. */
void cu_describe(char *buf, size_t cap) {
    int count = 0, drv = 0, rt = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    if (e != cudaSuccess || count == 0) {
        snprintf(buf, cap, "built (runtime %d.%d, flags %s); no usable GPU: %s", rt / 1000, (rt % 1000) / 10,
                 SB_CUDA_FLAGS, e != cudaSuccess ? cudaGetErrorString(e) : "no device");
        return;
    }
    cudaDeviceProp p;
    int dev = 0;
    cudaGetDevice(&dev);
    cudaGetDeviceProperties(&p, dev);
    snprintf(buf, cap, "%s, compute capability %d.%d, %.1f GiB, %d GPU(s); driver API %d.%d, runtime %d.%d; flags %s",
             p.name, p.major, p.minor, (double)p.totalGlobalMem / 1073741824.0, count, drv / 1000, (drv % 1000) / 10,
             rt / 1000, (rt % 1000) / 10, SB_CUDA_FLAGS);
}

const sb_device_backend k_cuda = {
    "cuda",  cu_present, cu_open,   cu_close,  cu_alloc,        cu_release,  cu_write,
    cu_read, cu_copy,    cu_launch, cu_finish, cu_kernel_local, cu_describe, cu_igemm_s8, cu_sgemm_screen,
};

} // namespace

extern "C" const sb_device_backend *sb_backend_cuda(void) { return &k_cuda; }
