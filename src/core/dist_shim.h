/*
 * dist_shim.h: the one function table an MPI shim exports (issue 26).
 *
 * The library never links an MPI: a shim built by mpicc
 * (src/backends/mpi/mpi_shim.c -> build/libsamebits_mpi.so) is opened with
 * dlopen only when distributed=mpi is asked for, and hands back this table
 * through its single exported symbol, sb_mpi_shim_v1. Plain C types only, so
 * the library compiles without any MPI header. Every collective is over the
 * whole job (MPI_COMM_WORLD) and is called by every rank in the same order.
 * Errors: the shim keeps MPI's default handler (MPI_ERRORS_ARE_FATAL), so a
 * failed collective ends the job; the int returns are 0 on success for the
 * cases MPI does report (init).
 */
#ifndef SB_CORE_DIST_SHIM_H
#define SB_CORE_DIST_SHIM_H
#include <stdint.h>

#define SB_MPI_SHIM_ABI 1

typedef struct sb_mpi_shim {
    int abi;                   /* SB_MPI_SHIM_ABI */
    /* MPI_Init (once per process; a second call is a no-op) and the job's
     * shape; the shim finalizes at exit. 0 on success, else MPI's error
     * string in msg (msg_len bytes at most). */
    int (*init)(char *msg, int msg_len);
    int (*rank)(void);
    int (*size)(void);
    /* In place: v[i] := the sum over ranks of v[i] (exact int64). */
    void (*sum_i64)(int64_t *v, int64_t n);
    /* In place: v[i] := the largest over ranks of v[i] (as unsigned). */
    void (*max_u32)(uint32_t *v, int64_t n);
    /* In place: rank root's n bytes to every rank. */
    void (*bcast)(void *buf, int64_t n, int root);
    /* Rank r's counts[r] bytes of send land at recv + displs[r] on every rank
     * (rank order); counts and displs hold one entry per rank. */
    void (*allgatherv)(const void *send, int64_t nsend, void *recv, const int64_t *counts, const int64_t *displs);
    void (*barrier)(void);
    /* MPI_Abort of the whole job with code (does not return). */
    void (*abort_job)(int code);
    /* Bytes this rank has contributed to collectives so far, and their count
     * (the cost bench/distributed_bench.py records). */
    void (*stats)(int64_t *bytes, int64_t *calls);
} sb_mpi_shim;

typedef const sb_mpi_shim *(*sb_mpi_shim_fn)(void);
#define SB_MPI_SHIM_SYMBOL "sb_mpi_shim_v1"

#endif
