/*
 * igemm_bench.c: speed of sb_cpu_igemm_s8 (src/backends/cpu/igemm.h), per path
 * and thread count, beside this machine's int8 peak.
 *
 *   make igemm-bench                       # builds build/igemm_bench and runs it
 *   build/igemm_bench [--sizes 1024,4096] [--threads 1,2] [--paths amx,avx512vnni,avx2,scalar]
 *                     [--repeat R] [--scalar-max N]
 *
 * GOPS = 2 m n K / seconds (a multiply and an add per product), best of R runs
 * after one warm-up. The peak is measured here, not quoted: a loop of 12
 * independent VPDPBUSD zmm chains (64 products an instruction) on every thread
 * at once, for AVX2 8 chains of the kernel's own pair VPMADDWD + VPADDD ymm
 * (16 products), and for AMX the kernel's own 2 x 2 pattern of TDPBSSD on tiles
 * of 16 x 64 bytes (16 x 16 x 64 products each) into 4 accumulator tiles;
 * the clock comes from a chain of dependent integer adds (one a cycle). Every
 * run's C is compared with the first run of the same size: the products are
 * exact, so every path and thread count must give the same bytes.
 *
 * Not part of `make test`: speed is claimed from here, never from timed tests.
 * Run it on an otherwise idle machine: a process on another core shows up as a
 * low peak or a slow 2-thread run (the peak is the best of three measurements,
 * each product the best of --repeat).
 */
#include "backends/cpu/igemm.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- the machine's peak ------------------------------------------------------ */

#define PEAK_ITERS 50000000L

__attribute__((noinline)) static long add_chain(long iters) {
    long x = 0;
    for (long i = 0; i < iters; i++) {
#if defined(__x86_64__)
        __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(x));
#else
        x += 4;
        __asm__ volatile("" : "+r"(x));
#endif
    }
    return x;
}

#if defined(__x86_64__)
#define CH12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
__attribute__((target("avx512f,avx512bw,avx512vnni"), noinline)) static int
peak_vnni(long iters) {
    __m512i a = _mm512_set1_epi32(0x01010101), b = _mm512_set1_epi32(0x01020304);
#define PV_DECL(i) __m512i c##i = _mm512_setzero_si512();
    CH12(PV_DECL)
    for (long it = 0; it < iters; it++) {
#define PV_STEP(i) c##i = _mm512_dpbusd_epi32(c##i, a, b);
        CH12(PV_STEP)
        __asm__ volatile("" : "+v"(c0), "+v"(c1), "+v"(c2), "+v"(c3), "+v"(c4), "+v"(c5),
                         "+v"(c6), "+v"(c7), "+v"(c8), "+v"(c9), "+v"(c10), "+v"(c11));
    }
#define PV_SUM(i) s = _mm512_add_epi32(s, c##i);
    __m512i s = _mm512_setzero_si512();
    CH12(PV_SUM)
    return _mm512_reduce_add_epi32(s);
}
/* 8 chains of VPADDD(acc, VPMADDWD(a, b)), in assembly: written in C, the
 * compiler computes the identical products once. */
__attribute__((target("avx2"), noinline)) static int peak_avx2(long iters) {
    int out;
    __asm__ volatile(
        "vpcmpeqd %%ymm0, %%ymm0, %%ymm0\n\t"
        "vpabsw %%ymm0, %%ymm1\n\t"
        "vpxor %%ymm2, %%ymm2, %%ymm2\n\t"
        "vmovdqa %%ymm2, %%ymm3\n\tvmovdqa %%ymm2, %%ymm4\n\tvmovdqa %%ymm2, %%ymm5\n\t"
        "vmovdqa %%ymm2, %%ymm6\n\tvmovdqa %%ymm2, %%ymm7\n\tvmovdqa %%ymm2, %%ymm8\n\t"
        "vmovdqa %%ymm2, %%ymm9\n\t"
        "1:\n\t"
        "vpmaddwd %%ymm0, %%ymm1, %%ymm10\n\tvpaddd %%ymm10, %%ymm2, %%ymm2\n\t"
        "vpmaddwd %%ymm0, %%ymm1, %%ymm11\n\tvpaddd %%ymm11, %%ymm3, %%ymm3\n\t"
        "vpmaddwd %%ymm0, %%ymm1, %%ymm12\n\tvpaddd %%ymm12, %%ymm4, %%ymm4\n\t"
        "vpmaddwd %%ymm0, %%ymm1, %%ymm13\n\tvpaddd %%ymm13, %%ymm5, %%ymm5\n\t"
        "vpmaddwd %%ymm0, %%ymm1, %%ymm10\n\tvpaddd %%ymm10, %%ymm6, %%ymm6\n\t"
        "vpmaddwd %%ymm0, %%ymm1, %%ymm11\n\tvpaddd %%ymm11, %%ymm7, %%ymm7\n\t"
        "vpmaddwd %%ymm0, %%ymm1, %%ymm12\n\tvpaddd %%ymm12, %%ymm8, %%ymm8\n\t"
        "vpmaddwd %%ymm0, %%ymm1, %%ymm13\n\tvpaddd %%ymm13, %%ymm9, %%ymm9\n\t"
        "dec %1\n\t"
        "jnz 1b\n\t"
        "vpaddd %%ymm2, %%ymm9, %%ymm9\n\t"
        "vmovd %%xmm9, %0\n\t"
        "vzeroupper"
        : "=r"(out), "+r"(iters)
        :
        : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
          "xmm10", "xmm11", "xmm12", "xmm13", "cc");
    return out;
}

/* AMX: TDPBSSD into tmm0-3 from tmm4, 5 (A) and tmm6, 7 (B), as the kernel
 * (igemm.c) issues them, on zero tiles. The tile state is granted to the process
 * by the library's detection (run before this, through sb_cpu_igemm_path). */
#define AMX_PEAK_DIV 16 /* a TDPBSSD is 16384 products: fewer iterations */
__attribute__((target("amx-tile,amx-int8"), noinline)) static int peak_amx(long iters) {
    static const struct {
        uint8_t palette_id, start_row, reserved[14];
        uint16_t colsb[16];
        uint8_t rows[16];
    } cfg __attribute__((aligned(64))) = {
        1, 0, {0}, {64, 64, 64, 64, 64, 64, 64, 64}, {16, 16, 16, 16, 16, 16, 16, 16}};
    static const uint8_t zero[1024] __attribute__((aligned(64)));
    int32_t out[256] __attribute__((aligned(64)));
    _tile_loadconfig(&cfg);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    _tile_loadd(4, zero, 64);
    _tile_loadd(5, zero, 64);
    _tile_loadd(6, zero, 64);
    _tile_loadd(7, zero, 64);
    for (long it = 0; it < iters; it++) {
        _tile_dpbssd(0, 4, 6);
        _tile_dpbssd(1, 4, 7);
        _tile_dpbssd(2, 5, 6);
        _tile_dpbssd(3, 5, 7);
    }
    _tile_stored(0, out, 64);
    _tile_release();
    return out[0];
}
#endif

typedef struct peak_arg {
    int which; /* 0 clock, 1 vnni, 2 avx2, 3 amx */
    double seconds;
    volatile int sink;
} peak_arg;

static void *peak_thread(void *p) {
    peak_arg *a = p;
    double t = now();
    if (a->which == 0) a->sink = (int)add_chain(PEAK_ITERS * 2);
#if defined(__x86_64__)
    else if (a->which == 1) a->sink = peak_vnni(PEAK_ITERS);
    else if (a->which == 2) a->sink = peak_avx2(PEAK_ITERS);
    else a->sink = peak_amx(PEAK_ITERS / AMX_PEAK_DIV);
#endif
    a->seconds = now() - t;
    return NULL;
}

/* Products (MACs) a second on `threads` threads at once, summed; for which == 0,
 * the clock in Hz of one thread. One measurement; measure_peak keeps the best
 * of three (another process on a core only ever lowers it). */
static double measure_peak_once(int which, int threads) {
    pthread_t th[64];
    peak_arg args[64];
    for (int i = 0; i < threads; i++) {
        memset(&args[i], 0, sizeof args[i]);
        args[i].which = which;
        pthread_create(&th[i], NULL, peak_thread, &args[i]);
    }
    double total = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(th[i], NULL);
        double per = which == 0   ? 4.0 * PEAK_ITERS * 2
                     : which == 1 ? 12.0 * 64 * PEAK_ITERS
                     : which == 2 ? 8.0 * 16 * PEAK_ITERS
                                  : 4.0 * 16 * 16 * 64 * (double)(PEAK_ITERS / AMX_PEAK_DIV);
        total += per / args[i].seconds;
    }
    return which == 0 ? total / threads : total;
}

static double measure_peak(int which, int threads) {
    double best = 0;
    for (int r = 0; r < 3; r++) {
        double v = measure_peak_once(which, threads);
        if (v > best) best = v;
    }
    return best;
}

/* ---- the product ------------------------------------------------------------------ */

static int parse_list(const char *s, long *out, int cap) {
    int n = 0;
    while (*s && n < cap) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s) break;
        out[n++] = v;
        s = *end == ',' ? end + 1 : end;
    }
    return n;
}

int main(int argc, char **argv) {
    long sizes[8] = {1024, 4096}, threads[8] = {1, 2};
    int nsizes = 2, nthreads = 2, repeat = 3;
    long scalar_max = 1024;
    const char *paths_arg = "amx,avx512vnni,avx2,scalar";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sizes") && i + 1 < argc) nsizes = parse_list(argv[++i], sizes, 8);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            nthreads = parse_list(argv[++i], threads, 8);
        else if (!strcmp(argv[i], "--paths") && i + 1 < argc) paths_arg = argv[++i];
        else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--scalar-max") && i + 1 < argc) scalar_max = atol(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--sizes N,...] [--threads T,...] [--paths P,...] "
                            "[--repeat R] [--scalar-max N]\n", argv[0]);
            return 2;
        }
    }
    char paths_buf[128];
    snprintf(paths_buf, sizeof paths_buf, "%s", paths_arg);
    const char *paths[4];
    int npaths = 0;
    for (char *tok = strtok(paths_buf, ","); tok && npaths < 4; tok = strtok(NULL, ","))
        paths[npaths++] = tok;

    unsetenv("SAMEBITS_CPU_IGEMM");
    printf("igemm_bench: default path %s\n", sb_cpu_igemm_path());
    double hz = measure_peak(0, 1);
    printf("clock (dependent adds): %.3f GHz\n", hz / 1e9);
    double peak[4][8]; /* [path][thread index] GOPS; scalar: none */
    for (int p = 0; p < npaths; p++)
        for (int t = 0; t < nthreads; t++) {
            peak[p][t] = 0;
#if defined(__x86_64__)
            setenv("SAMEBITS_CPU_IGEMM", paths[p], 1);
            int avail = strcmp(sb_cpu_igemm_path(), paths[p]) == 0;
            if (avail && !strcmp(paths[p], "avx512vnni"))
                peak[p][t] = 2 * measure_peak(1, (int)threads[t]) / 1e9;
            if (avail && !strcmp(paths[p], "avx2"))
                peak[p][t] = 2 * measure_peak(2, (int)threads[t]) / 1e9;
            if (avail && !strcmp(paths[p], "amx"))
                peak[p][t] = 2 * measure_peak(3, (int)threads[t]) / 1e9;
#endif
            if (peak[p][t] > 0)
                printf("peak %-10s threads=%ld: %7.1f GOPS measured (%.1f ops/cycle/thread)\n",
                       paths[p], threads[t], peak[p][t], peak[p][t] * 1e9 / hz / threads[t]);
            if (peak[p][t] > 0 && !strcmp(paths[p], "avx512vnni"))
                printf("     %-10s threads=%ld: %7.1f GOPS theoretical (one 512-bit VPDPBUSD a "
                       "cycle a core = 64 products = 128 ops, at the clock above)\n",
                       paths[p], threads[t], 128.0 * hz * threads[t] / 1e9);
        }
    printf("%-10s %6s %7s %10s %9s %8s %s\n", "path", "size", "threads", "seconds", "GOPS",
           "of peak", "C vs first run");
    for (int s = 0; s < nsizes; s++) {
        int64_t N = sizes[s];
        int8_t *a = malloc((size_t)(N * N)), *b = malloc((size_t)(N * N));
        int32_t *c = malloc((size_t)(N * N) * 4), *c0 = malloc((size_t)(N * N) * 4);
        uint64_t x = 0x9E3779B97F4A7C15ull * (uint64_t)N;
        for (int64_t i = 0; i < N * N; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            a[i] = (int8_t)x;
            b[i] = (int8_t)(x >> 8);
        }
        int have_first = 0;
        for (int p = 0; p < npaths; p++) {
            setenv("SAMEBITS_CPU_IGEMM", paths[p], 1);
            if (strcmp(sb_cpu_igemm_path(), paths[p]) != 0) {
                printf("%-10s %6lld %7s skipped (this CPU lacks it)\n", paths[p], (long long)N, "-");
                continue;
            }
            if (!strcmp(paths[p], "scalar") && N > scalar_max) {
                printf("%-10s %6lld %7s skipped (--scalar-max %ld)\n", paths[p], (long long)N, "-",
                       scalar_max);
                continue;
            }
            for (int t = 0; t < nthreads; t++) {
                sb_set_num_threads((int32_t)threads[t]);
                double best = 1e30;
                /* One warm-up run, then the best of `repeat` (scalar: one run, no warm-up). */
                int scalar = !strcmp(paths[p], "scalar");
                int warm = scalar ? 0 : 1, reps = scalar ? 1 : repeat;
                for (int r = 0; r < warm + reps; r++) {
                    memset(c, 0, (size_t)(N * N) * 4);
                    double t0 = now();
                    sb_status st = sb_cpu_igemm_s8(N, N, N, a, N, b, N, c, N);
                    double dt = now() - t0;
                    if (st != SB_OK) {
                        printf("error: %s: %s\n", sb_status_name(st), sb_last_error());
                        return 1;
                    }
                    if (r >= warm && dt < best) best = dt;
                }
                const char *same = "first";
                if (!have_first) {
                    memcpy(c0, c, (size_t)(N * N) * 4);
                    have_first = 1;
                } else {
                    same = memcmp(c0, c, (size_t)(N * N) * 4) == 0 ? "identical" : "DIFFERENT";
                }
                double gops = 2.0 * (double)N * N * N / best / 1e9;
                char frac[32] = "-";
                if (peak[p][t] > 0) snprintf(frac, sizeof frac, "%.1f%%", 100.0 * gops / peak[p][t]);
                printf("%-10s %6lld %7ld %10.4f %9.1f %8s %s\n", paths[p], (long long)N, threads[t],
                       best, gops, frac, same);
                fflush(stdout);
            }
        }
        free(a);
        free(b);
        free(c);
        free(c0);
    }
    sb_set_num_threads(0);
    return 0;
}
