/*
 * threads.c: the CPU worker pool behind sb_parallel_for.
 *
 * The pool hands out task indices through one atomic counter, so which thread
 * runs which task is left to the scheduler. That is safe only because callers
 * define tasks by the data shape alone (fixed chunks) and combine their results
 * in task order or exactly (docs/numeric-profile.md, rule 8); the thread count
 * decides speed, never bits. A parallel_for called from inside a task runs
 * serially on the calling thread.
 */
#include "internal.h"
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t g_done = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t g_call_lock = PTHREAD_MUTEX_INITIALIZER; /* one job at a time */

static int32_t g_requested;      /* 0: default */
static int32_t g_pool_size;      /* worker threads started (excluding the caller) */
static pthread_t *g_workers;
static uint64_t g_generation;    /* bumped for each job */
static int g_shutdown;

static sb_task_fn g_body;
static void *g_ctx;
static int64_t g_ntasks;
static int64_t g_next;           /* next task index (atomic) */
static int32_t g_active;         /* workers still inside the current job */
static int32_t g_job_width;      /* workers with an index below this run tasks */

static _Thread_local int t_in_task;
static _Thread_local int32_t t_worker; /* 0: the calling thread; 1..: pool workers */

/* The one rule for a thread count written as text, wherever it comes from
 * (SAMEBITS_NUM_THREADS, the CLI's --threads, a binding): a decimal integer in
 * 1..SB_MAX_THREADS and nothing else, or SB_ERR_INVALID_ARGUMENT naming the
 * source and the text. Nothing is clamped or defaulted: a count the user did
 * not mean is refused, never run on one thread. */
sb_status sb_parse_num_threads(const char *text, const char *source, int32_t *out) {
    if (!source) source = "thread count";
    if (!text || !out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_parse_num_threads: NULL argument");
    char *end;
    errno = 0;
    long n = strtol(text, &end, 10);
    if (!*text || *end != '\0' || errno || text[0] == ' ' || text[0] == '+' || n < 1 || n > SB_MAX_THREADS)
        return sb_fail(SB_ERR_INVALID_ARGUMENT, "%s='%s' is not a thread count in 1..%d", source, text,
                       SB_MAX_THREADS);
    *out = (int32_t)n;
    return SB_OK;
}

static sb_status default_threads(int32_t *out) {
    const char *v = getenv("SAMEBITS_NUM_THREADS");
    if (v && *v) /* set and empty reads as unset, as doctor reports it */
        return sb_parse_num_threads(v, "SAMEBITS_NUM_THREADS", out);
    /* the online cores, read once (sysconf reads a file each time: every
     * parallel step asks for the count) */
    static int32_t cores_once;
    int32_t c = __atomic_load_n(&cores_once, __ATOMIC_ACQUIRE);
    if (c == 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        c = cores < 1 ? 1 : cores > SB_MAX_THREADS ? SB_MAX_THREADS : (int32_t)cores;
        __atomic_store_n(&cores_once, c, __ATOMIC_RELEASE);
    }
    *out = c;
    return SB_OK;
}

/* What every entry point that does parallel work calls first (the fits, the
 * predictions, the fixtures): the thread count in force, or the refusal that
 * sb_get_num_threads would give, so that an invalid SAMEBITS_NUM_THREADS stops
 * the call by name instead of the pool quietly running one thread. Keeps the
 * caller's message state (it does not clear it) unless it fails. */
sb_status sb_threads_ready(void) {
    int32_t n;
    if (__atomic_load_n(&g_requested, __ATOMIC_ACQUIRE) > 0) return SB_OK;
    return default_threads(&n);
}

sb_status sb_get_num_threads(int32_t *out) {
    sb_clear_error();
    if (!out) return sb_fail(SB_ERR_INVALID_ARGUMENT, "sb_get_num_threads: out is NULL");
    int32_t req = __atomic_load_n(&g_requested, __ATOMIC_ACQUIRE);
    if (req > 0) {
        *out = req;
        return SB_OK;
    }
    return default_threads(out);
}

sb_status sb_set_num_threads(int32_t n) {
    sb_clear_error();
    if (n < 0 || n > SB_MAX_THREADS)
        return sb_fail(SB_ERR_INVALID_ARGUMENT,
                       "sb_set_num_threads: %d is not in 0..%d (0 = default)", (int)n,
                       SB_MAX_THREADS);
    __atomic_store_n(&g_requested, n, __ATOMIC_RELEASE);
    return SB_OK;
}

static void run_tasks(void) {
    for (;;) {
        int64_t t = __atomic_fetch_add(&g_next, 1, __ATOMIC_ACQ_REL);
        if (t >= g_ntasks) break;
        g_body(g_ctx, t);
    }
}

/* How long a thread polls before it blocks: a worker waiting for the next
 * job, the caller waiting for the workers to leave one. A step of a fit
 * (one Householder reflector, one level of a tree) is often shorter than a
 * wake-up through the condition variable (tens of microseconds on a virtual
 * machine), which the step would otherwise pay twice. */
#define SB_POOL_SPINS 4000
/* A polling worker yields its CPU every so many polls: where the scheduler
 * has put it on the caller's CPU (after an idle spell, a virtual machine's
 * scheduler often does), a worker that only pauses would hold the CPU the
 * caller needs for its own share of the job, and every step would wait for
 * the worker's time slice to end. Yielding costs a system call where the
 * worker has a CPU to itself, nothing the step notices. */
#define SB_POOL_YIELD_EVERY 16

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static void *worker_main(void *arg) {
    uint64_t seen = 0;
    t_in_task = 1;
    t_worker = (int32_t)(intptr_t)arg;
    pthread_mutex_lock(&g_lock);
    for (;;) {
        if (!g_shutdown && g_generation == seen) {
            /* poll a while for the next job before sleeping */
            pthread_mutex_unlock(&g_lock);
            for (int32_t i = 0; i < SB_POOL_SPINS; i++) {
                if (__atomic_load_n(&g_generation, __ATOMIC_ACQUIRE) != seen ||
                    __atomic_load_n(&g_shutdown, __ATOMIC_ACQUIRE))
                    break;
                if (i % SB_POOL_YIELD_EVERY == SB_POOL_YIELD_EVERY - 1) sched_yield();
                else cpu_relax();
            }
            pthread_mutex_lock(&g_lock);
        }
        while (!g_shutdown && g_generation == seen) pthread_cond_wait(&g_wake, &g_lock);
        if (g_shutdown) break;
        seen = g_generation;
        int32_t width = g_job_width;
        pthread_mutex_unlock(&g_lock);
        if (t_worker < width) run_tasks();
        pthread_mutex_lock(&g_lock);
        if (__atomic_sub_fetch(&g_active, 1, __ATOMIC_ACQ_REL) == 0) pthread_cond_signal(&g_done);
    }
    pthread_mutex_unlock(&g_lock);
    return NULL;
}

static void stop_pool(void) {
    pthread_mutex_lock(&g_lock);
    __atomic_store_n(&g_shutdown, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&g_wake);
    pthread_mutex_unlock(&g_lock);
    for (int32_t i = 0; i < g_pool_size; i++) pthread_join(g_workers[i], NULL);
    free(g_workers);
    g_workers = NULL;
    g_pool_size = 0;
    g_shutdown = 0;
}

/* Make the pool hold want-1 workers (the caller is the last thread). Returns the
 * number of threads available; on failure to start threads, fewer (down to 1),
 * which changes speed only. */
static int32_t ensure_pool(int32_t want) {
    if (g_pool_size == want - 1) return want;
    if (g_pool_size > 0) stop_pool();
    if (want <= 1) return 1;
    g_workers = malloc(sizeof(pthread_t) * (size_t)(want - 1));
    if (!g_workers) return 1;
    int32_t started = 0;
    for (; started < want - 1; started++)
        if (pthread_create(&g_workers[started], NULL, worker_main, (void *)(intptr_t)(started + 1)) != 0)
            break;
    g_pool_size = started;
    return started + 1;
}

int32_t sb_worker_index(void) { return t_worker; }

int32_t sb_parallel_width(void) {
    if (t_in_task) return 1;
    int32_t n = 1;
    if (sb_get_num_threads(&n) != SB_OK) n = 1;
    return n;
}

void sb_parallel_for(int64_t ntasks, sb_task_fn body, void *ctx) {
    sb_parallel_for_width(ntasks, SB_MAX_THREADS, body, ctx);
}

void sb_parallel_for_width(int64_t ntasks, int32_t max_workers, sb_task_fn body, void *ctx) {
    if (ntasks <= 0) return;
    int32_t want = 1;
    if (!t_in_task && ntasks > 1 && sb_get_num_threads(&want) != SB_OK) want = 1;
    if (want > ntasks) want = (int32_t)ntasks;
    if (want > max_workers) want = max_workers;
    if (want <= 1 || t_in_task) {
        int saved = t_in_task;
        int32_t saved_worker = t_worker;
        t_in_task = 1;
        t_worker = 0; /* a nested job sees one worker, index 0 */
        for (int64_t t = 0; t < ntasks; t++) body(ctx, t);
        t_in_task = saved;
        t_worker = saved_worker;
        return;
    }
    pthread_mutex_lock(&g_call_lock);
    /* Keep a pool sized for the configured count, not for this job's task count,
     * so that small jobs do not tear the pool down. */
    int32_t configured = want;
    sb_get_num_threads(&configured);
    ensure_pool(configured);
    pthread_mutex_lock(&g_lock);
    g_body = body;
    g_ctx = ctx;
    g_ntasks = ntasks;
    g_next = 0;
    g_active = g_pool_size;
    g_job_width = want;
    __atomic_store_n(&g_generation, g_generation + 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&g_wake);
    pthread_mutex_unlock(&g_lock);
    t_in_task = 1;
    run_tasks();
    t_in_task = 0;
    for (int32_t i = 0; i < SB_POOL_SPINS && __atomic_load_n(&g_active, __ATOMIC_ACQUIRE) > 0; i++) {
        if (i % SB_POOL_YIELD_EVERY == SB_POOL_YIELD_EVERY - 1) sched_yield();
        else cpu_relax();
    }
    pthread_mutex_lock(&g_lock);
    while (g_active > 0) pthread_cond_wait(&g_done, &g_lock);
    pthread_mutex_unlock(&g_lock);
    pthread_mutex_unlock(&g_call_lock);
}
