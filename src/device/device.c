/*
 * device.c: the device layer's registry (names to kinds, kinds to backends),
 * its one set of refusals, and the checks every backend call shares.
 */
#include "device.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const k_names[] = {"cpu", "cpu-batched", "cuda", "opencl"};

const char *sb_device_kind_name(sb_device_kind k) {
    return (unsigned)k < sizeof k_names / sizeof k_names[0] ? k_names[k] : "?";
}

static const sb_device_backend *backend_of(sb_device_kind k) {
    if (k == SB_DEVICE_CUDA) return sb_backend_cuda();
    if (k == SB_DEVICE_OPENCL) return sb_backend_opencl();
    return NULL;
}

int sb_device_built(sb_device_kind k) {
    return k == SB_DEVICE_CPU || k == SB_DEVICE_CPU_BATCHED || backend_of(k) != NULL;
}

/* The refusal of a kind this build lacks: one wording for every family. */
static sb_status not_built(const char *name, sb_device_kind k) {
    if (k == SB_DEVICE_CUDA)
        return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "device '%s': this build has no CUDA backend (build with make CUDA=1)",
                       name);
    return sb_fail(SB_ERR_BACKEND_UNAVAILABLE, "device '%s': this build has no OpenCL backend", name);
}

sb_status sb_device_parse(const char *name, sb_device_kind *out) {
    *out = SB_DEVICE_CPU;
    if (!name || !*name) return SB_OK;
    for (int k = 0; k < 4; k++)
        if (!strcmp(name, k_names[k])) {
#ifdef SB_SABOTAGE_REFUSAL_DOWNGRADE
            /* Separating arm for rule 10 (make SABOTAGE=refusal-downgrade): a
             * backend this build lacks quietly becomes the CPU, so a run that
             * must be refused reports the CPU's answer under the GPU's name. */
            if (!sb_device_built((sb_device_kind)k)) return SB_OK;
#else
            if (!sb_device_built((sb_device_kind)k)) return not_built(name, (sb_device_kind)k);
#endif
            *out = (sb_device_kind)k;
            return SB_OK;
        }
    if (!strcmp(name, "gpu")) {
        /* the best GPU present: CUDA's own runtime first, then OpenCL's GPUs */
        const sb_device_backend *c = sb_backend_cuda(), *o = sb_backend_opencl();
        if (c && c->present()) {
            *out = SB_DEVICE_CUDA;
            return SB_OK;
        }
        if (o && o->present()) {
            *out = SB_DEVICE_OPENCL;
            return SB_OK;
        }
        sb_clear_error();
        return sb_fail(SB_ERR_BACKEND_UNAVAILABLE,
                       "device 'gpu': no usable GPU (CUDA %s; OpenCL %s; samebits doctor lists the devices)",
                       c ? "built, no GPU seen" : "not built", o ? "built, no GPU the profile can use" : "not built");
    }
    /* an unknown name is a bad argument (every family, prediction too); a known
     * backend this build lacks or a device that is absent is unavailable */
    return sb_fail(SB_ERR_INVALID_ARGUMENT, "unknown device '%s'; devices: cpu, cpu-batched, cuda, opencl, gpu", name);
}

const char *sb_device_kernel_name(sb_program_id prog, int32_t k) {
#define SB_NAME_OF(n) #n,
    static const char *const tree[] = {SB_TREE_KERNELS(SB_NAME_OF)};
    static const char *const forest[] = {SB_FOREST_KERNELS(SB_NAME_OF)};
    static const char *const core[] = {SB_CORE_KERNELS(SB_NAME_OF)};
    static const char *const linalg[] = {SB_LINALG_KERNELS(SB_NAME_OF)};
    static const char *const ts[] = {SB_TS_KERNELS(SB_NAME_OF)};
    static const char *const gp[] = {SB_GP_KERNELS(SB_NAME_OF)};
#undef SB_NAME_OF
    if (k < 0 || k >= sb_program_kernels(prog)) return "?";
    if (prog == SB_PROG_TREE) return tree[k];
    if (prog == SB_PROG_FOREST) return forest[k];
    if (prog == SB_PROG_CORE) return core[k];
    if (prog == SB_PROG_LINALG) return linalg[k];
    if (prog == SB_PROG_TS) return ts[k];
    if (prog == SB_PROG_GP) return gp[k];
    return "?";
}

const char *sb_device_env(const sb_device *d, const char *what) {
    char key[96];
    snprintf(key, sizeof key, "SAMEBITS_%s_%s", d->kind == SB_DEVICE_CUDA ? "CUDA" : "OPENCL", what);
    return getenv(key);
}

sb_status sb_device_env_count(const sb_device *d, const char *what, const char *unit, int64_t *n) {
    *n = 0;
    const char *v = sb_device_env(d, what);
    if (!v || !*v) return SB_OK;
    char *end = NULL;
    errno = 0;
    const long long x = strtoll(v, &end, 10);
    if (!end || *end || errno || x < 1)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "SAMEBITS_%s_%s='%s': not a positive integer (%s)",
                       d->kind == SB_DEVICE_CUDA ? "CUDA" : "OPENCL", what, v, unit);
    *n = (int64_t)x;
    return SB_OK;
}

sb_status sb_device_parse_ready(const char *name, sb_device_kind *out) {
    const sb_status st = sb_device_parse(name, out);
    if (st != SB_OK) return st;
    return sb_threads_ready() != SB_OK ? SB_ERR_INVALID_ARGUMENT : SB_OK;
}

sb_status sb_device_open(sb_device_kind kind, sb_program_id prog, sb_device **out) {
    *out = NULL;
    const sb_device_backend *be = backend_of(kind);
    if (!be) {
        if (kind == SB_DEVICE_CUDA || kind == SB_DEVICE_OPENCL) return not_built(sb_device_kind_name(kind), kind);
        return sb_fail(SB_ERR_INTERNAL, "device '%s' has no device layer (it is the host's)", sb_device_kind_name(kind));
    }
    sb_device *d = sb_calloc(1, sizeof *d);
    if (!d) return sb_fail(SB_ERR_OUT_OF_MEMORY, "device: out of memory");
    d->kind = kind;
    d->prog = prog;
    d->be = be;
    const char *tv = sb_device_env(d, "TIMING");
    d->timing = tv && tv[0] == '1';
    sb_status st = be->open(d);
    if (st != SB_OK) {
        sb_device_close(d);
        return st;
    }
    *out = d;
    return SB_OK;
}

void sb_device_close(sb_device *d) {
    if (!d) return;
    if (d->impl) d->be->close(d);
    sb_free(d);
}

sb_status sb_device_slot_lock(sb_device_slot *s, sb_device_kind kind, sb_program_id prog, sb_device **d) {
    *d = NULL;
    pthread_mutex_lock(&s->lock);
    if (!s->dev[kind]) {
        const sb_status st = sb_device_open(kind, prog, &s->dev[kind]);
        if (st != SB_OK) {
            s->dev[kind] = NULL;
            pthread_mutex_unlock(&s->lock);
            return st;
        }
    }
    *d = s->dev[kind];
    return SB_OK;
}

void sb_device_slot_unlock(sb_device_slot *s) { pthread_mutex_unlock(&s->lock); }

/* A backend's failure with what it was for appended. */
static sb_status with_what(sb_status st, const char *what) {
    if (st == SB_OK || !what) return st;
    char msg[512];
    snprintf(msg, sizeof msg, "%s", sb_last_error());
    return sb_fail(st, "%s (%s)", msg, what);
}

sb_status sb_device_alloc(sb_device *d, sb_dbuf *b, size_t bytes, const char *what) {
    b->h = NULL;
    b->bytes = 0;
    sb_status st = d->be->alloc(d, &b->h, bytes ? bytes : 16);
    if (st == SB_OK) b->bytes = bytes;
    return with_what(st, what);
}

void sb_device_release(sb_device *d, sb_dbuf *b) {
    if (b->h) d->be->release(d, b->h);
    b->h = NULL;
    b->bytes = 0;
}

sb_status sb_device_ensure(sb_device *d, sb_dbuf *b, size_t bytes, const char *what) {
    if (b->h && bytes <= b->bytes) return SB_OK;
    sb_device_release(d, b);
    return sb_device_alloc(d, b, bytes * 2, what); /* doubled: a growing need reallocates rarely */
}

/* A copy of bytes at off must lie inside the buffer: a bound the backends
 * would not all check. */
static sb_status in_range(const sb_dbuf *b, size_t off, size_t bytes, const char *what) {
    if (!b->h || off > b->bytes || bytes > b->bytes - off)
        return sb_fail(SB_ERR_INTERNAL, "device: %zu bytes at %zu outside a buffer of %zu (%s)", bytes, off, b->bytes,
                       what ? what : "?");
    return SB_OK;
}

sb_status sb_device_write(sb_device *d, sb_dbuf *b, size_t off, const void *src, size_t bytes, const char *what) {
    if (!bytes) return SB_OK;
    sb_status st = in_range(b, off, bytes, what);
    return st != SB_OK ? st : with_what(d->be->write(d, b->h, off, src, bytes), what);
}

sb_status sb_device_read(sb_device *d, const sb_dbuf *b, size_t off, void *dst, size_t bytes, const char *what) {
    if (!bytes) return SB_OK;
    sb_status st = in_range(b, off, bytes, what);
    return st != SB_OK ? st : with_what(d->be->read(d, b->h, off, dst, bytes), what);
}

sb_status sb_device_copy(sb_device *d, sb_dbuf *dst, size_t doff, const sb_dbuf *src, size_t soff, size_t bytes,
                         const char *what) {
    if (!bytes) return SB_OK;
    sb_status st = in_range(dst, doff, bytes, what);
    if (st == SB_OK) st = in_range(src, soff, bytes, what);
    return st != SB_OK ? st : with_what(d->be->copy(d, dst->h, doff, src->h, soff, bytes), what);
}

sb_status sb_device_launch(sb_device *d, int32_t k, int64_t groups0, int64_t groups1, size_t dyn_local,
                           const sb_darg *args, int32_t nargs) {
    if (groups0 <= 0 || groups1 <= 0) return SB_OK;
    if (groups0 > INT32_MAX || groups1 > 65535)
        return sb_fail(SB_ERR_LIMIT, "device: launch of %s over %lld x %lld work-groups exceeds the grid limit",
                       sb_device_kernel_name(d->prog, k), (long long)groups0, (long long)groups1);
    return with_what(d->be->launch(d, k, groups0, groups1, dyn_local, args, nargs), sb_device_kernel_name(d->prog, k));
}

sb_status sb_device_finish(sb_device *d) { return d->be->finish(d); }

size_t sb_device_kernel_local(sb_device *d, int32_t k) { return d->be->kernel_local(d, k); }

static int igemm_vendor(const sb_device *d) {
    const char *v = sb_device_env(d, "IGEMM");
    return d->be->igemm_s8 != NULL && !(v && strcmp(v, "portable") == 0);
}

sb_status sb_device_igemm_s8(sb_device *d, int64_t m, int64_t n, int64_t K, const sb_dbuf *a, size_t aoff,
                             int64_t lda, const sb_dbuf *b, size_t boff, int64_t ldb, sb_dbuf *c, size_t coff,
                             int64_t ldc) {
    if (!igemm_vendor(d)) return SB_ERR_NOT_FOUND;
    return d->be->igemm_s8(d, m, n, K, a->h, aoff, lda, b->h, boff, ldb, c->h, coff, ldc);
}

const char *sb_device_igemm_path(const sb_device *d) {
    /* an empty product asks the backend whether its library is there */
    if (!igemm_vendor(d)) return "portable";
    return d->be->igemm_s8((sb_device *)d, 0, 0, 0, NULL, 0, 1, NULL, 0, 1, NULL, 0, 1) == SB_OK ? "vendor" : "portable";
}

sb_status sb_device_sgemm_screen(sb_device *d, int64_t m, int64_t n, int64_t K, const sb_dbuf *a, size_t aoff,
                                 int64_t lda, const sb_dbuf *b, size_t boff, int64_t ldb, sb_dbuf *c, size_t coff,
                                 int64_t ldc) {
    const char *v = sb_device_env(d, "SGEMM");
    if (!d->be->sgemm_screen || (v && strcmp(v, "portable") == 0)) return SB_ERR_NOT_FOUND;
    return d->be->sgemm_screen(d, m, n, K, a->h, aoff, lda, b->h, boff, ldb, c->h, coff, ldc);
}

void sb_device_describe(sb_device_kind kind, char *buf, size_t cap) {
    const sb_device_backend *be = backend_of(kind);
    if (!be) {
        snprintf(buf, cap, kind == SB_DEVICE_CUDA ? "not built (make CUDA=1 builds the CUDA backend)"
                                                  : "not built (this build has no OpenCL backend)");
        return;
    }
    be->describe(buf, cap);
}
