/*
 * mpi_shim.c: the only file that includes mpi.h (issue 26). Built by mpicc
 * into libsamebits_mpi.so (`make mpi`); the library opens it with dlopen when
 * a fit asks for distributed=mpi and reads the one table it exports
 * (src/core/dist_shim.h). Every reduction here is on integers (sums of int64,
 * maxima of uint32), so its result does not depend on the order MPI combines
 * the ranks in, nor on the algorithm it picks.
 *
 * Rank failure: MPI's default error handler ends the job on a failed
 * collective, and when a rank dies mpirun ends the others with SIGTERM; the
 * handler installed here turns that into a named error line
 * (SB_ERR_BACKEND_UNAVAILABLE, "lost a rank") and exit status 75 instead of a silent death, so the
 * user sees why every rank stopped. Nothing is written by a rank that stops:
 * the model is written by rank 0 after the last collective.
 *
 * Test hook (tests/integration/test_distributed.py): SAMEBITS_MPI_TEST_KILL=
 * "R:C" makes rank R send itself SIGKILL when it enters its C-th collective,
 * a rank dying in the middle of training. Cost (bench/distributed_bench.py):
 * with SAMEBITS_MPI_STATS set, each rank prints at exit the bytes it gave to
 * collectives (its send buffers' sizes: an all-reduce of n int64 counts 8n)
 * and how many collectives it made.
 */
#include "../../core/dist_shim.h"
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SHIM_EXPORT __attribute__((visibility("default")))

static int s_rank, s_size, s_ready;
static int64_t s_bytes, s_calls, s_kill_rank = -1, s_kill_at = -1;

static void count(int64_t bytes) {
    s_bytes += bytes;
    s_calls++;
    if (s_rank == s_kill_rank && s_calls == s_kill_at) raise(SIGKILL);
}

static void on_term(int sig) {
    char line[200];
    int n = snprintf(line, sizeof line,
                     "samebits: rank %d of %d: error: SB_ERR_BACKEND_UNAVAILABLE: distributed=mpi lost a rank: the job was ended (signal %d) because "
                     "another rank failed or was killed; no model was written\n",
                     s_rank, s_size, sig);
    if (n > 0) {
        ssize_t w = write(2, line, (size_t)n);
        (void)w;
    }
    _exit(75);
}

static void finish(void) {
    if (getenv("SAMEBITS_MPI_STATS")) /* bench/distributed_bench.py reads this line */
        fprintf(stderr, "samebits-mpi-stats: rank=%d size=%d bytes=%lld calls=%lld\n", s_rank, s_size,
                (long long)s_bytes, (long long)s_calls);
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin) MPI_Finalize();
}

static int shim_init(char *msg, int msg_len) {
    if (s_ready) return 0;
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        int rc = MPI_Init(NULL, NULL);
        if (rc != MPI_SUCCESS) {
            int len = 0;
            char err[MPI_MAX_ERROR_STRING];
            MPI_Error_string(rc, err, &len);
            snprintf(msg, (size_t)msg_len, "%s", err);
            return 1;
        }
        atexit(finish);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &s_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &s_size);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    const char *k = getenv("SAMEBITS_MPI_TEST_KILL");
    if (k && strchr(k, ':')) {
        s_kill_rank = strtoll(k, NULL, 10);
        s_kill_at = strtoll(strchr(k, ':') + 1, NULL, 10);
    }
    s_ready = 1;
    return 0;
}

static int shim_rank(void) { return s_rank; }
static int shim_size(void) { return s_size; }

/* MPI counts are int: long arrays go in pieces of at most 2^28 elements. */
#define PIECE ((int64_t)1 << 28)

static void shim_sum_i64(int64_t *v, int64_t n) {
    count(n * 8);
    for (int64_t at = 0; at < n; at += PIECE) {
        int64_t m = n - at < PIECE ? n - at : PIECE;
        MPI_Allreduce(MPI_IN_PLACE, v + at, (int)m, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    }
}

static void shim_max_u32(uint32_t *v, int64_t n) {
    count(n * 4);
    for (int64_t at = 0; at < n; at += PIECE) {
        int64_t m = n - at < PIECE ? n - at : PIECE;
        MPI_Allreduce(MPI_IN_PLACE, v + at, (int)m, MPI_UINT32_T, MPI_MAX, MPI_COMM_WORLD);
    }
}

static void shim_bcast(void *buf, int64_t n, int root) {
    count(s_rank == root ? n : 0);
    for (int64_t at = 0; at < n; at += PIECE) {
        int64_t m = n - at < PIECE ? n - at : PIECE;
        MPI_Bcast((char *)buf + at, (int)m, MPI_BYTE, root, MPI_COMM_WORLD);
    }
}

/* Bytes beyond int's range are refused by ending the job: the library bounds
 * what it gathers (a binning sample, labels and margins) well below that. */
static void shim_allgatherv(const void *send, int64_t nsend, void *recv, const int64_t *counts,
                            const int64_t *displs) {
    count(nsend);
    int *c = malloc(sizeof(int) * (size_t)s_size * 2);
    int ok = c != NULL;
    for (int r = 0; ok && r < s_size; r++) ok = counts[r] <= 0x7FFFFFFF && displs[r] <= 0x7FFFFFFF;
    if (!ok) {
        fprintf(stderr, "samebits: rank %d: error: SB_ERR_LIMIT: a gather of more than 2^31 bytes (or out of "
                "memory); ending the job\n", s_rank);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    for (int r = 0; r < s_size; r++) {
        c[r] = (int)counts[r];
        c[s_size + r] = (int)displs[r];
    }
    MPI_Allgatherv(send, (int)nsend, MPI_BYTE, recv, c, c + s_size, MPI_BYTE, MPI_COMM_WORLD);
    free(c);
}

static void shim_barrier(void) {
    count(0);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void shim_abort(int code) {
    MPI_Abort(MPI_COMM_WORLD, code);
    _exit(code);
}

static void shim_stats(int64_t *bytes, int64_t *calls) {
    *bytes = s_bytes;
    *calls = s_calls;
}

static const sb_mpi_shim k_shim = {SB_MPI_SHIM_ABI, shim_init, shim_rank, shim_size, shim_sum_i64, shim_max_u32,
                                   shim_bcast, shim_allgatherv, shim_barrier, shim_abort, shim_stats};

SHIM_EXPORT const sb_mpi_shim *sb_mpi_shim_v1(void);
const sb_mpi_shim *sb_mpi_shim_v1(void) { return &k_shim; }
