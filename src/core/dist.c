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

sb_status sb_distributed_info(const char *engine, int32_t *rank, int32_t *size) {
    sb_clear_error();
    if (!rank || !size) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_distributed_info: NULL argument");
    sb_dist *d = NULL;
    sb_status st = sb_dist_open(engine, &d);
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
