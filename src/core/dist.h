/*
 * dist.h: the library's side of data-parallel training (issue 26): one
 * communicator per process, opened on demand through a dlopen()ed MPI shim
 * (dist_shim.h), with the few exact collectives the fit needs. Every call is
 * collective: each rank of the job makes the same calls in the same order.
 */
#ifndef SB_CORE_DIST_H
#define SB_CORE_DIST_H
#include "internal.h"

typedef struct sb_dist {
    int32_t rank, size;
    const struct sb_mpi_shim *ops;
    /* distributed=nccl: the NCCL communicator of the current fit (an
     * ncclComm_t), or NULL; MPI (ops) carries every other collective */
    void *nccl_comm;
} sb_dist;

/* The process's communicator for engine ("mpi" is the only one), opened on
 * the first call (the shim loaded and MPI initialized; MPI is finalized at
 * exit) and the same pointer after. The shim is SAMEBITS_MPI_SHIM when set,
 * else libsamebits_mpi.so beside the library (or beside the executable that
 * links it statically, or in ../lib from it: an installed samebits).
 * Absent or unusable: SB_ERR_BACKEND_UNAVAILABLE saying how to build it;
 * another engine: SB_ERR_INVALID_ARGUMENT. */
sb_status sb_dist_open(const char *engine, sb_dist **out);

/* v[i] := the sum over ranks (exact int64, so order-free). */
void sb_dist_sum_i64(const sb_dist *d, int64_t *v, int64_t n);
/* The split statistics' all-reduce (gradient boosting's histograms, a
 * forest's node sums): v[i] := the sum over ranks, exact int64 as
 * sb_dist_sum_i64. The one place the separating arm SABOTAGE=float-allreduce
 * breaks (sums as floats in rank order), so it breaks every model family's
 * split sums alike. */
void sb_dist_sum_hist(const sb_dist *d, int64_t *v, int64_t n);
/* The last collective of a distributed fit: SB_OK when every rank's model
 * digest (64 hex characters) is hex, compared as the largest of each word
 * and its complement over the ranks; else SB_ERR_INTERNAL, named, on every
 * rank (a defect). */
sb_status sb_dist_agree(const sb_dist *d, const char *hex);
/* v[i] := the largest over ranks, as unsigned keys (order-free). */
void sb_dist_max_u32(const sb_dist *d, uint32_t *v, int64_t n);
/* Every rank's nbytes of mine, concatenated in rank order, into *all
 * (sb_malloc'ed here, the caller frees; *total its length). Out of memory is
 * a local failure: it ends the job (sb_dist_fail). */
void sb_dist_gather(const sb_dist *d, const void *mine, int64_t nbytes, void **all, int64_t *total);
/* The sum over ranks of x, and the sum over ranks before this one. */
void sb_dist_prefix(const sb_dist *d, int64_t x, int64_t *before, int64_t *total);
/* A failure on this rank that the others cannot know of (they would wait in
 * the next collective forever): its message is printed, named, with the rank,
 * and the whole job is ended (MPI_Abort). Does not return. */
void sb_dist_fail(const sb_dist *d, sb_status st, const char *msg);
/* Bytes and collective calls this rank has sent so far (the shim's count). */
void sb_dist_stats(const sb_dist *d, int64_t *bytes, int64_t *calls);

/* ---- distributed=nccl (issue 31; docs/distributed.md, "NCCL") ----
 * The histograms' all-reduce on CUDA device buffers through NCCL, loaded at
 * run time (dlopen("libnccl.so.2"): the library links no NCCL); the job, its
 * ranks and every other collective are MPI's (the shim above). */

/* NCCL's library and the entry points used, loaded once: absent or
 * incomplete is SB_ERR_BACKEND_UNAVAILABLE, named. Call before MPI starts. */
sb_status sb_dist_nccl_load(void);
/* The communicator of d's ranks (collective): rank 0's unique id broadcast
 * through MPI, NCCL_NVLS_ENABLE=0 set first (NVLink multicast stays off; no
 * multicast object is created), ncclCommInitRank on the CUDA device current
 * on this thread (the fit's, opened before). Its failure is
 * SB_ERR_BACKEND_UNAVAILABLE with NCCL's message; it may differ by rank,
 * so the caller ends the job on it (sb_dist_fail). */
sb_status sb_dist_nccl_open(sb_dist *d);
/* d's communicator destroyed (none: a no-op). */
void sb_dist_nccl_close(sb_dist *d);
/* v[0..n) (CUDA device memory) := the sum over ranks, in place: ncclAllReduce
 * of ncclInt64 with ncclSum on the legacy default stream (so the device
 * layer's next copy waits for it); exact, so order-free. A failure ends the
 * job by name. */
void sb_dist_sum_hist_device(const sb_dist *d, void *v, int64_t n);
/* 1 when histograms may be summed on the device (sb_dist_sum_hist_device);
 * 0 in the float-allreduce arm's build, whose fits sum them on the host
 * through sb_dist_sum_hist, the reduce that arm breaks. */
int sb_dist_device_sums(const sb_dist *d);

#endif
