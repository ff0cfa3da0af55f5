/*
 * stage_check.c (built and run by tools/device-run.sh): recomputes every stage of
 * profile-core serially on the CPU through the shared device-neutral headers,
 * checks that the card of those values equals the CPU fixture's card, then
 * compares each stage element by element with a GPU run's raw dump
 * (DUMP/<tag>.bin, from profile_core_cuda --dump) and prints the first
 * differing elements. Usage: stage_check CPU_CARD DUMP_DIR [SHOW]
 * or stage_check CPU_CARD DIR --write-cpu (writes the CPU's values as a dump).
 * Exit: 0 all stages equal, 1 some differ, 2 error.
 */
#include "samebits_cert.h"
#include "core/rng.h"
#include "kernels/profile_core.h"
#include "math/sb_math.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NST 14
static const char *tags[NST] = {"rng.philox_words", "rng.unit_f32", "rng.open_unit_f32", "rng.below",
    "math.input", "math.exp", "math.expm1", "math.log", "math.log1p", "math.tanh", "math.sigmoid",
    "reduce.input", "reduce.tree_sum", "reduce.exact_sum"};
static const int is_f32[NST] = {0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};

/* The card's canonical NaN: every NaN compares as 0x7FC00000. */
static uint32_t canon(uint32_t u, int f32) {
    return f32 && (u & 0x7FFFFFFFu) > 0x7F800000u ? 0x7FC00000u : u;
}
static float bitsf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* Reads exactly n 32-bit words of dir/tag.bin into a new array; NULL if the
 * file is missing or has another size. */
static uint32_t *read_dump(const char *dir, const char *tag, size_t n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.bin", dir, tag);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint32_t *p = malloc(4 * n + 4);
    size_t got = p ? fread(p, 4, n + 1, f) : 0;
    fclose(f);
    if (got != n) { free(p); return NULL; }
    return p;
}

/* Recomputes the stages, checks the card, compares with the dump. */
int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: stage_check CPU_CARD DUMP_DIR [SHOW]\n"); return 2; }
    int show = argc > 3 ? atoi(argv[3]) : 8;
    size_t cnt[NST] = {4 * SB_CORE_N_RNG, SB_CORE_N_RNG, SB_CORE_N_RNG, SB_CORE_N_RNG, SB_CORE_N_MATH,
        SB_CORE_N_MATH, SB_CORE_N_MATH, SB_CORE_N_MATH, SB_CORE_N_MATH, SB_CORE_N_MATH, SB_CORE_N_MATH,
        SB_CORE_N_SUM, 1, 1};
    uint32_t *v[NST];
    for (int k = 0; k < NST; k++) v[k] = calloc(cnt[k], 4);
    float *x = (float *)v[4], *s = (float *)v[11];
    for (uint32_t i = 0; i < SB_CORE_N_RNG; i++) sb_rng_words(SB_CORE_SEED, SB_CORE_PURPOSE_WORDS, i, 0u, &v[0][4 * i]);
    for (uint32_t i = 0; i < SB_CORE_N_RNG; i++) {
        ((float *)v[1])[i] = sb_rng_unit_f32(SB_CORE_SEED, SB_CORE_PURPOSE_UNIT, i);
        ((float *)v[2])[i] = sb_u32_to_open_unit_f32(v[0][i]);
        v[3][i] = sb_rng_below(SB_CORE_SEED, SB_CORE_PURPOSE_BELOW, i, SB_CORE_BELOW_N);
    }
    for (uint32_t i = 0; i < SB_CORE_N_MATH; i++) {
        x[i] = sb_k_core_math_input(i);
        ((float *)v[5])[i] = sb_expf(x[i]);
        ((float *)v[6])[i] = sb_expm1f(x[i]);
        ((float *)v[7])[i] = sb_logf(x[i]);
        ((float *)v[8])[i] = sb_log1pf(x[i]);
        ((float *)v[9])[i] = sb_tanhf(x[i]);
        ((float *)v[10])[i] = sb_sigmoidf(x[i]);
    }
    for (uint32_t i = 0; i < SB_CORE_N_SUM; i++) s[i] = sb_k_core_reduce_input(i);
    float *scratch = malloc(sizeof(float) * (size_t)sb_tree_nblocks(SB_CORE_N_SUM));
    ((float *)v[12])[0] = sb_tree_sum_f32(s, SB_CORE_N_SUM, scratch);
    sb_sacc acc;
    sb_sacc_init(&acc);
    sb_sacc_add_range(&acc, s, 0, SB_CORE_N_SUM);
    ((float *)v[13])[0] = sb_sacc_round_f32(&acc);

    sb_card *mine, *cpu;
    sb_card_diff d;
    if (sb_card_create(&mine) != SB_OK || sb_card_load(argv[1], &cpu) != SB_OK) {
        fprintf(stderr, "stage_check: cannot load %s: %s\n", argv[1], sb_last_error());
        return 2;
    }
    for (int k = 0; k < NST; k++)
        sb_card_record(mine, tags[k], is_f32[k] ? SB_DTYPE_F32 : SB_DTYPE_U32, v[k], cnt[k]);
    int ok_card = sb_card_compare(mine, cpu, &d) == SB_OK;
    printf("checker: serial recomputation vs CPU card: %s\n",
           ok_card ? "identical" : "DIFFERS (checker invalid)");
    if (!ok_card) printf("checker: first difference at stage %lld %s\n", (long long)d.stage_index, d.stage_a);

    if (argc > 3 && strcmp(argv[3], "--write-cpu") == 0) {
        for (int k = 0; k < NST; k++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s.bin", argv[2], tags[k]);
            FILE *f = fopen(path, "wb");
            if (!f || fwrite(v[k], 4, cnt[k], f) != cnt[k] || fclose(f) != 0) {
                fprintf(stderr, "stage_check: cannot write %s\n", path);
                return 2;
            }
        }
        return ok_card ? 0 : 2;
    }
    uint32_t *gx = read_dump(argv[2], "math.input", SB_CORE_N_MATH);
    int any = 0;
    for (int k = 0; k < NST; k++) {
        uint32_t *g = read_dump(argv[2], tags[k], cnt[k]);
        if (!g) { printf("stage %-18s MISSING or wrong size in %s\n", tags[k], argv[2]); any = 1; continue; }
        size_t nd = 0, nd_same_in = 0;
        for (size_t i = 0; i < cnt[k]; i++) {
            if (canon(v[k][i], is_f32[k]) == canon(g[i], is_f32[k])) continue;
            nd++;
            if (k >= 5 && k <= 10 && gx && gx[i] == v[4][i]) nd_same_in++;
        }
        if (nd == 0) { printf("stage %-18s identical (%zu elements)\n", tags[k], cnt[k]); free(g); continue; }
        any = 1;
        printf("stage %-18s DIFFERS in %zu of %zu elements", tags[k], nd, cnt[k]);
        if (k >= 5 && k <= 10) printf(" (%zu of them where the GPU's input equals the CPU's)", nd_same_in);
        printf("\n");
        int shown = 0;
        for (size_t i = 0; i < cnt[k] && shown < show; i++) {
            if (canon(v[k][i], is_f32[k]) == canon(g[i], is_f32[k])) continue;
            shown++;
            if (is_f32[k]) {
                printf("  [%zu] cpu %08x (%.9g) gpu %08x (%.9g)", i, v[k][i], bitsf(v[k][i]), g[i], bitsf(g[i]));
                if (k >= 5 && k <= 10)
                    printf("  input cpu %08x (%.9g) gpu %08x", v[4][i], bitsf(v[4][i]), gx ? gx[i] : 0u);
                printf("\n");
            } else {
                printf("  [%zu] cpu %08x gpu %08x\n", i, v[k][i], g[i]);
            }
        }
        free(g);
    }
    return !ok_card ? 2 : any;
}
