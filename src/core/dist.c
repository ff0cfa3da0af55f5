/*
 * dist.c: the communicator behind distributed=mpi (dist.h). The MPI shim is
 * opened with dlopen, so libsamebits.so links no MPI and runs where none is
 * installed; only a fit that asks for distributed=mpi needs one.
 */
#define _GNU_SOURCE /* dladdr */
#include "dist.h"
#include "dist_shim.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef SB_NO_MPI
#include <dlfcn.h>
#include <unistd.h>
#endif

#ifndef SB_NO_MPI
static sb_dist g_dist;
static int g_open;

/* The folder of the object this function lives in (the shared library, or
 * the executable that links the archive), with a trailing '/'; "" if unknown. */
static void own_folder(char *buf, size_t cap) {
    buf[0] = 0;
    Dl_info info;
    const char *path = NULL;
    char exe[4096];
    if (dladdr((void *)&own_folder, &info) && info.dli_fname && strchr(info.dli_fname, '/')) path = info.dli_fname;
    if (!path) {
        ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (k > 0) {
            exe[k] = 0;
            path = exe;
        }
    }
    if (!path) return;
    const char *slash = strrchr(path, '/');
    size_t len = (size_t)(slash - path) + 1;
    if (len >= cap) return;
    memcpy(buf, path, len);
    buf[len] = 0;
}
#endif

sb_status sb_dist_open(const char *engine, sb_dist **out) {
    *out = NULL;
    if (!engine || strcmp(engine, "mpi") != 0)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "distributed='%s': the engine is mpi (distributed=mpi)",
                       engine ? engine : "");
#ifdef SB_NO_MPI
    return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "distributed=mpi is not built into this library (a static or "
                   "cross build); build it natively with mpicc present (docs/distributed.md)");
#else
    if (g_open) {
        *out = &g_dist;
        return SB_OK;
    }
    char path[4200], dir[4096];
    const char *env = getenv("SAMEBITS_MPI_SHIM");
    if (env && env[0]) {
        snprintf(path, sizeof path, "%s", env);
    } else {
        own_folder(dir, sizeof dir);
        snprintf(path, sizeof path, "%slibsamebits_mpi.so", dir);
    }
    /* RTLD_GLOBAL: Open MPI's own components are dlopen()ed by it and need
     * libmpi's symbols visible */
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h && !(env && env[0])) { /* an installed CLI (PREFIX/bin): the shim in PREFIX/lib */
        char alt[4200];
        snprintf(alt, sizeof alt, "%s../lib/libsamebits_mpi.so", dir);
        h = dlopen(alt, RTLD_NOW | RTLD_GLOBAL);
        if (!h) h = dlopen(path, RTLD_NOW | RTLD_GLOBAL); /* the first path's error for the message */
    }
    if (!h)
        return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "distributed=mpi: the MPI shim %s could not be opened (%s); "
                       "install Open MPI (Debian: openmpi-bin libopenmpi-dev) and run `make mpi` to build "
                       "libsamebits_mpi.so beside the library, or set SAMEBITS_MPI_SHIM to its path "
                       "(docs/distributed.md)", path, dlerror());
    sb_mpi_shim_fn fn = (sb_mpi_shim_fn)dlsym(h, SB_MPI_SHIM_SYMBOL);
    const sb_mpi_shim *ops = fn ? fn() : NULL;
    if (!ops || ops->abi != SB_MPI_SHIM_ABI)
        return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "distributed=mpi: %s is not a samebits MPI shim of ABI %d "
                       "(rebuild it with `make mpi`)", path, SB_MPI_SHIM_ABI);
    char msg[256] = "";
    if (ops->init(msg, (int)sizeof msg) != 0)
        return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "distributed=mpi: MPI_Init failed: %s", msg);
    g_dist.ops = ops;
    g_dist.rank = ops->rank();
    g_dist.size = ops->size();
    g_open = 1;
    *out = &g_dist;
    return SB_OK;
#endif
}

#ifndef SB_NO_MPI
void sb_dist_sum_i64(const sb_dist *d, int64_t *v, int64_t n) { d->ops->sum_i64(v, n); }
void sb_dist_max_u32(const sb_dist *d, uint32_t *v, int64_t n) { d->ops->max_u32(v, n); }
void sb_dist_stats(const sb_dist *d, int64_t *bytes, int64_t *calls) { d->ops->stats(bytes, calls); }

void sb_dist_prefix(const sb_dist *d, int64_t x, int64_t *before, int64_t *total) {
    int64_t *all = sb_calloc((size_t)d->size, sizeof(int64_t));
    if (!all) sb_dist_fail(d, SB_ERR_OUT_OF_MEMORY, "distributed: out of memory");
    all[d->rank] = x;
    d->ops->sum_i64(all, d->size);
    int64_t b = 0, t = 0;
    for (int32_t r = 0; r < d->size; r++) {
        if (r < d->rank) b += all[r];
        t += all[r];
    }
    sb_free(all);
    *before = b;
    *total = t;
}

void sb_dist_gather(const sb_dist *d, const void *mine, int64_t nbytes, void **all, int64_t *total) {
    int64_t *counts = sb_calloc((size_t)d->size * 2, sizeof(int64_t));
    if (!counts) sb_dist_fail(d, SB_ERR_OUT_OF_MEMORY, "distributed: out of memory");
    int64_t *displs = counts + d->size;
    counts[d->rank] = nbytes;
    d->ops->sum_i64(counts, d->size);
    int64_t t = 0;
    for (int32_t r = 0; r < d->size; r++) {
        displs[r] = t;
        t += counts[r];
    }
    uint8_t *buf = sb_malloc((size_t)(t > 0 ? t : 1));
    if (!buf) sb_dist_fail(d, SB_ERR_OUT_OF_MEMORY, "distributed: out of memory for a gather");
    d->ops->allgatherv(mine, nbytes, buf, counts, displs);
    sb_free(counts);
    *all = buf;
    *total = t;
}

void sb_dist_sum_hist(const sb_dist *d, int64_t *v, int64_t n) {
#ifdef SB_SABOTAGE_FLOAT_ALLREDUCE
    /* Separating arm (make SABOTAGE=float-allreduce): the sums across ranks
     * as floats (MPI_SUM on MPI_FLOAT, here in rank order): each entry
     * rounded to float32 on every rank and the partial sums rounded again,
     * so the model depends on the rank count. */
    float *mine = sb_malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    if (!mine) sb_dist_fail(d, SB_ERR_OUT_OF_MEMORY, "distributed: out of memory");
    for (int64_t i = 0; i < n; i++) mine[i] = (float)v[i];
    void *all = NULL;
    int64_t bytes = 0;
    sb_dist_gather(d, mine, (int64_t)sizeof(float) * n, &all, &bytes);
    const float *a = all;
    for (int64_t i = 0; i < n; i++) {
        float acc = 0.0f;
        for (int32_t r = 0; r < d->size; r++) acc = acc + a[(int64_t)r * n + i];
        v[i] = (int64_t)acc;
    }
    sb_free(all);
    sb_free(mine);
#else
    d->ops->sum_i64(v, n);
#endif
}

sb_status sb_dist_agree(const sb_dist *d, const char *hex) {
    uint32_t w[16], g[16];
    for (int i = 0; i < 8; i++) {
        char word[9];
        memcpy(word, hex + 8 * i, 8);
        word[8] = 0;
        w[i] = (uint32_t)strtoul(word, NULL, 16);
        w[8 + i] = ~w[i];
    }
    memcpy(g, w, sizeof g);
    d->ops->max_u32(g, 16);
    if (memcmp(g, w, sizeof g) != 0)
        return sb_fail(SB_ERR_INTERNAL, "distributed=mpi: the ranks' models differ (rank %d's digest %.64s); a "
                       "defect: please report it", (int)d->rank, hex);
    return SB_OK;
}

void sb_dist_fail(const sb_dist *d, sb_status st, const char *msg) {
    fprintf(stderr, "samebits: rank %d of %d: error: %s: %s; ending the job (the other ranks cannot go on)\n",
            (int)d->rank, (int)d->size, sb_status_name(st), msg && msg[0] ? msg : "(no message)");
    fflush(stderr);
    d->ops->abort_job(3);
    abort(); /* not reached */
}
#else
void sb_dist_sum_i64(const sb_dist *d, int64_t *v, int64_t n) { (void)d; (void)v; (void)n; }
void sb_dist_max_u32(const sb_dist *d, uint32_t *v, int64_t n) { (void)d; (void)v; (void)n; }
void sb_dist_sum_hist(const sb_dist *d, int64_t *v, int64_t n) { (void)d; (void)v; (void)n; }
sb_status sb_dist_agree(const sb_dist *d, const char *hex) { (void)d; (void)hex; return SB_OK; }
void sb_dist_stats(const sb_dist *d, int64_t *bytes, int64_t *calls) { (void)d; *bytes = *calls = 0; }
void sb_dist_prefix(const sb_dist *d, int64_t x, int64_t *before, int64_t *total) { (void)d; *before = 0; *total = x; }
void sb_dist_gather(const sb_dist *d, const void *mine, int64_t nbytes, void **all, int64_t *total) {
    (void)d; (void)mine; (void)nbytes; *all = NULL; *total = 0;
}
void sb_dist_fail(const sb_dist *d, sb_status st, const char *msg) { (void)d; (void)st; (void)msg; abort(); }
#endif

/* ---- NCCL (distributed=nccl) ----
 * Declared here from NCCL's documented C API (nccl.h is not needed to
 * build): ncclResult_t is an int (ncclSuccess = 0), ncclComm_t a pointer,
 * ncclUniqueId 128 opaque bytes passed by value, ncclInt64 = 4, ncclSum = 0,
 * and a cudaStream_t NULL is the legacy default stream. */
#define SB_NCCL_ID_BYTES 128
#define SB_NCCL_INT64 4
#define SB_NCCL_SUM 0
typedef struct {
    char internal[SB_NCCL_ID_BYTES];
} sb_nccl_id;
typedef struct {
    int (*get_unique_id)(sb_nccl_id *id);
    int (*comm_init_rank)(void **comm, int nranks, sb_nccl_id id, int rank);
    int (*all_reduce)(const void *send, void *recv, size_t count, int dtype, int op, void *comm, void *stream);
    int (*comm_destroy)(void *comm);
    const char *(*error_string)(int result);
} sb_nccl_api;

#ifndef SB_NO_MPI
static sb_nccl_api g_nccl;
static int g_nccl_loaded;

sb_status sb_dist_nccl_load(void) {
    if (g_nccl_loaded) return SB_OK;
    /* SAMEBITS_NCCL_LIB: NCCL at another path (and the tests' way to show
     * its absence on a machine that has it) */
    const char *env = getenv("SAMEBITS_NCCL_LIB");
    const char *path = env && env[0] ? env : "libnccl.so.2";
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "distributed=nccl: NCCL's library %s could not be opened (%s); "
                       "install NCCL 2 (NVIDIA's libnccl2) on every host (or set SAMEBITS_NCCL_LIB to it), or "
                       "train with distributed=mpi (docs/distributed.md)", path, dlerror());
    static const char *const names[5] = {"ncclGetUniqueId", "ncclCommInitRank", "ncclAllReduce", "ncclCommDestroy",
                                         "ncclGetErrorString"};
    void *fn[5];
    for (int i = 0; i < 5; i++)
        if (!(fn[i] = dlsym(h, names[i]))) {
            dlclose(h);
            return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "distributed=nccl: %s has no %s (NCCL 2 is needed)", path,
                           names[i]);
        }
    /* dlsym's object pointers to function pointers: POSIX guarantees they convert */
    memcpy(&g_nccl.get_unique_id, &fn[0], sizeof fn[0]);
    memcpy(&g_nccl.comm_init_rank, &fn[1], sizeof fn[1]);
    memcpy(&g_nccl.all_reduce, &fn[2], sizeof fn[2]);
    memcpy(&g_nccl.comm_destroy, &fn[3], sizeof fn[3]);
    memcpy(&g_nccl.error_string, &fn[4], sizeof fn[4]);
    g_nccl_loaded = 1;
    return SB_OK;
}

static const char *nccl_msg(int r) {
    const char *m = g_nccl.error_string ? g_nccl.error_string(r) : NULL;
    return m ? m : "(no message)";
}

sb_status sb_dist_nccl_open(sb_dist *d) {
    if (!g_nccl_loaded) return sb_fail(SB_ERR_INTERNAL, "distributed=nccl: NCCL is not loaded (a defect)");
    if (d->nccl_comm) return SB_OK;
    /* NVLink multicast (NVLS) off before NCCL reads its settings: the lent
     * multi-GPU machines require it, and no path here asks for multicast */
    setenv("NCCL_NVLS_ENABLE", "0", 1);
    sb_nccl_id id;
    memset(&id, 0, sizeof id);
    int r = 0;
    int32_t bad = 0;
    if (d->rank == 0) {
        r = g_nccl.get_unique_id(&id);
        bad = r != 0;
    }
    uint32_t flag = (uint32_t)bad;
    d->ops->max_u32(&flag, 1); /* every rank learns whether rank 0 has an id */
    if (flag)
        return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "distributed=nccl: ncclGetUniqueId failed on rank 0%s%s",
                       d->rank == 0 ? ": " : "", d->rank == 0 ? nccl_msg(r) : "");
    d->ops->bcast(&id, (int64_t)sizeof id, 0);
    void *comm = NULL;
    r = g_nccl.comm_init_rank(&comm, (int)d->size, id, (int)d->rank);
    if (r != 0)
        return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "distributed=nccl: ncclCommInitRank (rank %d of %d) failed: %s "
                       "(each rank needs its own GPU: one rank per GPU)", (int)d->rank, (int)d->size, nccl_msg(r));
    d->nccl_comm = comm;
    return SB_OK;
}

void sb_dist_nccl_close(sb_dist *d) {
    if (!d || !d->nccl_comm) return;
    g_nccl.comm_destroy(d->nccl_comm);
    d->nccl_comm = NULL;
}

void sb_dist_sum_hist_device(const sb_dist *d, void *v, int64_t n) {
    const int r = g_nccl.all_reduce(v, v, (size_t)n, SB_NCCL_INT64, SB_NCCL_SUM, d->nccl_comm, NULL);
    if (r != 0) {
        char msg[300];
        snprintf(msg, sizeof msg, "distributed=nccl: ncclAllReduce of %lld int64 failed: %s", (long long)n,
                 nccl_msg(r));
        sb_dist_fail(d, SB_ERR_BACKEND_UNAVAILABLE, msg);
    }
}

int sb_dist_device_sums(const sb_dist *d) {
#ifdef SB_SABOTAGE_FLOAT_ALLREDUCE
    (void)d;
    return 0;
#else
    return d && d->nccl_comm != NULL;
#endif
}
#else
sb_status sb_dist_nccl_load(void) {
    return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "distributed=nccl is not built into this library (a static or "
                   "cross build); build it natively (docs/distributed.md)");
}
sb_status sb_dist_nccl_open(sb_dist *d) { (void)d; return sb_dist_nccl_load(); }
void sb_dist_nccl_close(sb_dist *d) { (void)d; }
void sb_dist_sum_hist_device(const sb_dist *d, void *v, int64_t n) { (void)d; (void)v; (void)n; abort(); }
int sb_dist_device_sums(const sb_dist *d) { (void)d; return 0; }
#endif

sb_status sb_distributed_info(const char *engine, int32_t *rank, int32_t *size) {
    sb_clear_error();
    if (!rank || !size) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_distributed_info: NULL argument");
    sb_dist *d = NULL;
    sb_status st = SB_OK;
    if (engine && !strcmp(engine, "nccl")) { /* NCCL's library first (absent: refused before MPI starts); MPI runs the job */
        if ((st = sb_dist_nccl_load()) != SB_OK) return st;
        engine = "mpi";
    }
    st = sb_dist_open(engine, &d);
    if (st != SB_OK) return st;
    *rank = d->rank;
    *size = d->size;
    return SB_OK;
}

void sb_distributed_abort(int code) {
#ifndef SB_NO_MPI
    if (!g_open) return;
    fflush(stdout);
    fflush(stderr);
    g_dist.ops->abort_job(code ? code : 1);
#else
    (void)code;
#endif
}
