/*
 * device.h: the one device layer every family stands on.
 *
 * Names. One parser for every device name a user can give, for training and
 * prediction, from C, the CLI and Python: "cpu" (the host's own path),
 * "cpu-batched" (the host reference of the batched device operations: what CI
 * runs where no GPU is), "cuda", "opencl", and "gpu" (the best GPU present:
 * CUDA when this build has it and sees a GPU, else an OpenCL GPU the profile
 * can use). Refusals are worded here once (sb_device_parse).
 *
 * Devices. A GPU device (CUDA or OpenCL) is opened with one program (the
 * entry kernels of src/kernels/entry/, listed in programs.h) and offers
 * buffers, copies, launches over a grid of work-groups of the program's one
 * work-group size (wg), local memory sized at launch, and a finish. Buffers
 * are opaque handles (a cl_mem, a CUDA device pointer) passed to kernels as
 * SB_ARG(buf.h). Operations run in call order; writes and reads block, so a
 * host array may be reused as soon as the call returns.
 *
 * Nothing here decides a bit: every kernel is exact integer work or a kernel
 * body, so wg, the compute units and local memory are schedule inputs only.
 */
#ifndef SB_DEVICE_DEVICE_H
#define SB_DEVICE_DEVICE_H
#include "../core/internal.h"
#include "programs.h"
#include <pthread.h>

typedef enum sb_device_kind {
    SB_DEVICE_CPU = 0,
    SB_DEVICE_CPU_BATCHED = 1,
    SB_DEVICE_CUDA = 2,
    SB_DEVICE_OPENCL = 3,
} sb_device_kind;

/* *out := the kind name names ("gpu" resolved to the GPU present); NULL or ""
 * is "cpu". An unknown name is SB_ERR_INVALID_ARGUMENT listing the names; a
 * backend this build lacks and "gpu" with no usable GPU are
 * SB_ERR_BACKEND_UNAVAILABLE; each worded here once. */
sb_status sb_device_parse(const char *name, sb_device_kind *out);
/* A public call's device and threads: name parsed into *out (the refusals
 * above), then the thread count's check (an invalid SAMEBITS_NUM_THREADS is
 * SB_ERR_INVALID_ARGUMENT, its message sb_threads_ready's). */
sb_status sb_device_parse_ready(const char *name, sb_device_kind *out);
/* "cpu", "cpu-batched", "cuda", "opencl". */
const char *sb_device_kind_name(sb_device_kind k);
/* 1 when this build has the backend of kind k (a device may still be absent). */
int sb_device_built(sb_device_kind k);

/* A device buffer: the backend's handle and its size in bytes. */
typedef struct sb_dbuf {
    void *h;
    size_t bytes;
} sb_dbuf;

/* One kernel argument: its bytes, as the kernel's parameter takes them. */
typedef struct sb_darg {
    size_t size;
    const void *p;
} sb_darg;
#define SB_ARG(v) ((sb_darg){sizeof(v), (const void *)&(v)})

typedef struct sb_device sb_device;
typedef struct sb_device_backend sb_device_backend;

struct sb_device {
    sb_device_kind kind;
    sb_program_id prog;
    int32_t wg;          /* the work-group size every kernel of the program is built for */
    int32_t cus;         /* compute units */
    int64_t local_mem;   /* bytes of local memory a work-group may have, static and dynamic */
    int64_t max_alloc;   /* bytes one buffer may have */
    int timing;          /* SAMEBITS_<BACKEND>_TIMING=1 */
    char name[192];      /* the device, for messages and the doctor */
    const sb_device_backend *be;
    void *impl;          /* the backend's */
};

/* Open kind's device (SAMEBITS_OPENCL_DEVICE picks among OpenCL devices) with
 * program prog built; an absent loader, driver or device, or one that cannot
 * meet the profile, is SB_ERR_BACKEND_UNAVAILABLE, named. */
sb_status sb_device_open(sb_device_kind kind, sb_program_id prog, sb_device **out);
void sb_device_close(sb_device *d); /* NULL is a no-op */

/* A family's devices, one of each kind, opened on first use (the program
 * built once) and kept for the process, and used under the slot's lock: a
 * device's queue and buffers serve one caller at a time. A file-scope
 * `static sb_device_slot s = SB_DEVICE_SLOT_INIT;`. */
typedef struct sb_device_slot {
    pthread_mutex_t lock;
    sb_device *dev[SB_DEVICE_OPENCL + 1];
} sb_device_slot;
#define SB_DEVICE_SLOT_INIT {PTHREAD_MUTEX_INITIALIZER, {NULL}}

/* Takes s's lock and opens its device of kind with program prog if it is
 * not open yet: SB_OK with *d that device and the lock held (give it back
 * with sb_device_slot_unlock), or the open's refusal with the lock given
 * back and *d NULL (the next call tries again). */
sb_status sb_device_slot_lock(sb_device_slot *s, sb_device_kind kind, sb_program_id prog, sb_device **d);
void sb_device_slot_unlock(sb_device_slot *s);

/* b := bytes of device memory (contents undefined; 0 bytes still gives a handle). */
sb_status sb_device_alloc(sb_device *d, sb_dbuf *b, size_t bytes, const char *what);
void sb_device_release(sb_device *d, sb_dbuf *b); /* an empty buffer is a no-op */
/* b holds at least bytes; when it grows its contents are not kept. */
sb_status sb_device_ensure(sb_device *d, sb_dbuf *b, size_t bytes, const char *what);
sb_status sb_device_write(sb_device *d, sb_dbuf *b, size_t off, const void *src, size_t bytes, const char *what);
sb_status sb_device_read(sb_device *d, const sb_dbuf *b, size_t off, void *dst, size_t bytes, const char *what);
sb_status sb_device_copy(sb_device *d, sb_dbuf *dst, size_t doff, const sb_dbuf *src, size_t soff, size_t bytes,
                         const char *what);
/* Kernel k of the program over groups0 x groups1 work-groups of wg x 1
 * work-items, with nargs arguments and dyn_local bytes of local memory for
 * the kernel's SB_DYN_LOCAL (0: none). No work-group: nothing runs. */
sb_status sb_device_launch(sb_device *d, int32_t k, int64_t groups0, int64_t groups1, size_t dyn_local,
                           const sb_darg *args, int32_t nargs);
#define SB_LAUNCH(d, k, g0, g1, dyn, ...)                                                                     \
    sb_device_launch((d), (k), (g0), (g1), (dyn), (const sb_darg[]){__VA_ARGS__},                             \
                     (int32_t)(sizeof((const sb_darg[]){__VA_ARGS__}) / sizeof(sb_darg)))
/* Every queued operation done. */
sb_status sb_device_finish(sb_device *d);
/* Bytes of local memory kernel k declares itself (its SB_SHARED arrays). */
size_t sb_device_kernel_local(sb_device *d, int32_t k);
/* The kernel's name (programs.h), for messages. */
const char *sb_device_kernel_name(sb_program_id prog, int32_t k);
/* getenv("SAMEBITS_<BACKEND>_<what>") for d's backend (CUDA or OPENCL): the
 * knobs each backend has always read, now read once for both. */
const char *sb_device_env(const sb_device *d, const char *what);
/* SAMEBITS_<BACKEND>_<what> as a count (a schedule input: how many of
 * something a launch takes): *n 0 when it is unset or empty, its value when
 * a positive integer; any other value refused by name
 * (SB_ERR_INVALID_ARGUMENT, the message naming the variable, its value and
 * unit, what it counts), so that a mistyped knob is never silently the
 * default. */
sb_status sb_device_env_count(const sb_device *d, const char *what, const char *unit, int64_t *n);

/* The vendor library's exact int8 product, where the backend has one and
 * SAMEBITS_<BACKEND>_IGEMM is not "portable": c[coff/4 + i*ldc + j] =
 * sum_{q<K} a[aoff + i*lda + q] * b[boff + j*ldb + q] over int8 bytes, in
 * int32, exact (the caller keeps K * 2^14 < 2^31), for i < m, j < n. Integer
 * sums have one value in any order, so a vendor's blocking cannot reach a bit.
 * SB_ERR_NOT_FOUND (no message) when there is none: the caller launches its
 * portable kernel instead. */
sb_status sb_device_igemm_s8(sb_device *d, int64_t m, int64_t n, int64_t K, const sb_dbuf *a, size_t aoff,
                             int64_t lda, const sb_dbuf *b, size_t boff, int64_t ldb, sb_dbuf *c, size_t coff,
                             int64_t ldc);
/* The name of the path sb_device_igemm_s8 takes on d ("portable" when none). */
const char *sb_device_igemm_path(const sb_device *d);

/* A vendor library's float32 product for a screen whose bits reach no result
 * (the nearest-neighbors screen: its bound holds for any order of the sums,
 * fused or not, but not for reduced-precision inputs, so the library is held
 * to float32 arithmetic): c[coff/4 + i*ldc + j] = sum_{q<K} a[aoff/4 + i*lda + q]
 * * b[boff/4 + j*ldb + q], for i < m, j < n. SB_ERR_NOT_FOUND (no message)
 * when there is none or SAMEBITS_<BACKEND>_SGEMM is "portable" (CUDA also takes
 * "pedantic": cuBLAS's pedantic float32 mode): the caller
 * launches its portable kernel instead. */
sb_status sb_device_sgemm_screen(sb_device *d, int64_t m, int64_t n, int64_t K, const sb_dbuf *a, size_t aoff,
                                 int64_t lda, const sb_dbuf *b, size_t boff, int64_t ldb, sb_dbuf *c, size_t coff,
                                 int64_t ldc);

/* One line for `samebits doctor`: the backend's build and devices. */
void sb_device_describe(sb_device_kind kind, char *buf, size_t cap);

/* ---- what a backend implements (backends/cuda, backends/opencl) ---- */
struct sb_device_backend {
    const char *name;
    /* 1 when a device of the backend that the profile can use is present */
    int (*present)(void);
    /* fills d->wg, cus, local_mem, name and impl, builds prog */
    sb_status (*open)(sb_device *d);
    void (*close)(sb_device *d);
    sb_status (*alloc)(sb_device *d, void **h, size_t bytes);
    void (*release)(sb_device *d, void *h);
    sb_status (*write)(sb_device *d, void *h, size_t off, const void *src, size_t bytes);
    sb_status (*read)(sb_device *d, void *h, size_t off, void *dst, size_t bytes);
    sb_status (*copy)(sb_device *d, void *dst, size_t doff, void *src, size_t soff, size_t bytes);
    sb_status (*launch)(sb_device *d, int32_t k, int64_t g0, int64_t g1, size_t dyn_local, const sb_darg *args,
                        int32_t nargs);
    sb_status (*finish)(sb_device *d);
    size_t (*kernel_local)(sb_device *d, int32_t k);
    void (*describe)(char *buf, size_t cap);
    /* Optional (NULL: none): a vendor library's exact int8 product, the
     * contract of sb_device_igemm_s8 */
    sb_status (*igemm_s8)(sb_device *d, int64_t m, int64_t n, int64_t K, void *a, size_t aoff, int64_t lda, void *b,
                          size_t boff, int64_t ldb, void *c, size_t coff, int64_t ldc);
    /* Optional (NULL: none): a vendor library's float32 product for a screen,
     * the contract of sb_device_sgemm_screen */
    sb_status (*sgemm_screen)(sb_device *d, int64_t m, int64_t n, int64_t K, void *a, size_t aoff, int64_t lda,
                              void *b, size_t boff, int64_t ldb, void *c, size_t coff, int64_t ldc);
};
/* NULL when this build has no such backend. */
const sb_device_backend *sb_backend_cuda(void);
const sb_device_backend *sb_backend_opencl(void);

#endif
