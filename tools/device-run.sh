#!/usr/bin/env bash
# device-run.sh: the one script run on a lent GPU machine (an H200) in a
# single call, from the repository root on a bare machine. It
#   1. records the machine and toolchain (nvidia-smi, nvcc, gcc, commit),
#   2. builds the library (make -j16) and the CUDA leg of profile-core with its
#      two separating arms (tools/cuda-compile-check.sh holds the flags),
#   3. records the CPU card (1 and 16 threads), the CUDA card and the arms'
#      cards, and compares each with the CPU card (`samebits card diff`),
#   4. recomputes every stage on the CPU through the shared headers and
#      compares it element by element with each GPU run's raw dump, printing
#      the first differing elements of any stage that differs,
#   5. writes summary.txt (identical / differs per leg and arm) and packs the
#      evidence for evidence/cuda/<date>-<gpu>/.
#
# Usage (device): COMMIT=<sha> bash tools/device-run.sh
#   OUT     where the results go (the device tool's output folder); without it,
#           build/device-run/out. Written there: summary.txt, run.log and
#           evidence.tar.gz (everything, to unpack into evidence/cuda/...).
#   COMMIT  the commit the tree was copied from (needed when .git did not
#           travel whole; else `git rev-parse HEAD`, else a file named COMMIT).
# Exit status: 0 when the CUDA card equals the CPU card stage by stage and
# every arm differs from it; 1 otherwise; 2 when a build step failed.
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
OUT=${OUT:-$ROOT/build/device-run/out}
WORK=$ROOT/build/device-run
EV=$WORK/ev
rm -rf "$EV"
mkdir -p "$EV" "$OUT"
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
START=$(date +%s)
LOG=$EV/run.log
: >"$LOG"

# say MSG...: prints a progress line and appends it to the run log.
say() { echo "device-run: $*" | tee -a "$LOG"; }

# pack: copies summary and log to OUT and packs the evidence folder there.
pack() {
  cp "$LOG" "$OUT/run.log" 2>/dev/null
  [ -f "$EV/summary.txt" ] && cp "$EV/summary.txt" "$OUT/summary.txt"
  tar -C "$EV" -czf "$OUT/evidence.tar.gz" . 2>/dev/null
}

# die_build STEP: records a failed build step, packs what exists, exits 2.
die_build() {
  say "FAILED: $1 (see the logs in the evidence)"
  { echo "result: ERROR ($1 failed; nothing compared)"; } >>"$EV/summary.txt"
  pack
  exit 2
}

# ---- 1. facts -------------------------------------------------------------
COMMIT_ID=${COMMIT:-}
[ -z "$COMMIT_ID" ] && COMMIT_ID=$(git rev-parse --verify -q HEAD 2>/dev/null || true)
[ -z "$COMMIT_ID" ] && [ -f COMMIT ] && COMMIT_ID=$(head -n 1 COMMIT)
[ -z "$COMMIT_ID" ] && COMMIT_ID=unknown
{
  echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $COMMIT_ID"
  echo "uname: $(uname -a)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') ($(nproc) cores)"
} >"$EV/facts.txt"
# Sources that decide the bits, hashed: the tree may differ from the commit.
sha256sum src/backends/cuda/profile_core.cu src/backends/cuda/compat_cuda.h src/kernels/compat.h \
  src/kernels/profile_core.h src/core/rng.h src/math/*.h src/fixtures/profile_core.c \
  src/backends/cpu/*.c src/backends/cpu/*.h tools/device-run.sh tools/cuda-compile-check.sh \
  >"$EV/sources.sha256" 2>&1
nvidia-smi -q >"$WORK/nvidia-smi-q.full" 2>&1
grep -E 'Driver Version|CUDA Version|Product Name|Product Architecture|VBIOS|Persistence Mode|Compute Mode|MIG Mode|Current +:|Pending +:' \
  "$WORK/nvidia-smi-q.full" | head -n 40 >"$EV/nvidia-smi-q.txt"
nvidia-smi --query-gpu=index,name,driver_version,compute_cap,memory.total,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv >>"$EV/nvidia-smi-q.txt" 2>&1
nvcc --version >"$EV/nvcc-version.txt" 2>&1
gcc --version >"$EV/gcc-version.txt" 2>&1
GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
GPU_CC=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1)
GPU_DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)
NVCC_V=$(grep -o 'release [0-9.]*, V[0-9.]*' "$EV/nvcc-version.txt" | head -n 1)
GCC_V=$(head -n 1 "$EV/gcc-version.txt")
say "gpu: ${GPU_NAME:-none} (cc ${GPU_CC:-?}, driver ${GPU_DRIVER:-?}); nvcc ${NVCC_V:-none}; $GCC_V; commit $COMMIT_ID"

# ---- 2. builds ------------------------------------------------------------
T0=$(date +%s)
# CC=gcc on the command line: the Makefile derives ar from CC ($(CC:gcc=ar)),
# which breaks when the environment sets CC to a path without an ar beside it
# (seen on the H200 image: CC=/opt/gcc/bin/gcc, no /opt/gcc/bin/ar).
echo "environment CC: ${CC:-unset}; building with CC=gcc ($(command -v gcc))" >"$EV/make.log"
make -j16 CC=gcc >>"$EV/make.log" 2>&1 || die_build "make -j16"
say "library built ($(($(date +%s) - T0)) s)"
T0=$(date +%s)
for v in profile fmad libdevice-exp; do
  echo "$v: nvcc $(sh tools/cuda-compile-check.sh --print-flags $v) src/backends/cuda/profile_core.cu build/libsamebits.a -lpthread -lm"
done >"$EV/nvcc-flags.txt"
SAMEBITS_REQUIRE_NVCC=1 sh tools/cuda-compile-check.sh --outdir build/cuda >"$EV/nvcc-build.log" 2>&1 \
  || die_build "nvcc build (tools/cuda-compile-check.sh)"
say "CUDA leg and arms built ($(($(date +%s) - T0)) s)"

# The element-wise checker: every stage recomputed serially on the CPU through
# the same headers; its own card must equal the CPU fixture's card.
cat >"$WORK/stage_check.c" <<'EOF'
/*
 * stage_check.c (generated by tools/device-run.sh): recomputes every stage of
 * profile-core serially on the CPU through the shared device-neutral headers,
 * checks that the card of those values equals the CPU fixture's card, then
 * compares each stage element by element with a GPU run's raw dump
 * (DUMP/<tag>.bin, from profile_core_cuda --dump) and prints the first
 * differing elements. Usage: stage_check CPU_CARD DUMP_DIR [SHOW]
 * or stage_check CPU_CARD DIR --write-cpu (writes the CPU's values as a dump).
 * Exit: 0 all stages equal, 1 some differ, 2 error.
 */
#include "samebits.h"
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
EOF
gcc -std=c11 -O2 -ffp-contract=off -fno-fast-math -fexcess-precision=standard -Iinclude -Isrc \
  "$WORK/stage_check.c" build/libsamebits.a -pthread -lm -o "$WORK/stage_check" >"$EV/stage_check-build.log" 2>&1 \
  || die_build "stage_check (gcc)"
cp "$WORK/stage_check.c" "$EV/stage_check.c"

# ---- 3. cards -------------------------------------------------------------
build/samebits fixture run profile-core --threads 1 --out "$EV/cpu.card" >"$EV/cpu-run.log" 2>&1 \
  || die_build "CPU fixture run"
build/samebits fixture run profile-core --threads 16 --out "$EV/cpu-t16.card" >>"$EV/cpu-run.log" 2>&1 \
  || die_build "CPU fixture run (16 threads)"

# The host CPU as a leg of its own (another compiler, another x86-64): the
# doctor's self-check runs every pinned fixture (profile, logit, gradient
# boosting) against the reference cards built into the library.
build/samebits doctor --threads 1 >"$EV/doctor-t1.txt" 2>&1
DOC1=$?
build/samebits doctor --threads 16 >"$EV/doctor-t16.txt" 2>&1
DOC16=$?

# diff_to NAME A B: runs `samebits card diff A B` into NAME.diff.txt and prints
# identical or "differs at stage N: TAG (reason)".
diff_to() {
  build/samebits card diff "$2" "$3" >"$EV/$1.diff.txt" 2>&1
  if head -n 1 "$EV/$1.diff.txt" | grep -qx identical; then echo identical
  else echo "differs: $(head -n 1 "$EV/$1.diff.txt")"; fi
}

declare -A RES
RES[cpu16]=$(diff_to cpu-t16-vs-cpu "$EV/cpu.card" "$EV/cpu-t16.card")
if [ -f fixtures/cards/profile-core.card ]; then
  RES[ref]=$(diff_to cpu-vs-reference fixtures/cards/profile-core.card "$EV/cpu.card")
else
  RES[ref]="no reference card in this tree (fixtures/cards/profile-core.card)"
fi

# run_gpu NAME BIN VARIANT: runs one GPU build into NAME.card, its dump, log
# and timing; prints the program's exit status.
run_gpu() {
  local t0 rc ns
  t0=$(date +%s%N)
  "$2" --out "$EV/$1.card" --dump "$WORK/dump-$1" --timing "$EV/$1.timing.txt" --repeat 5 \
    --meta "nvcc=$NVCC_V" --meta "nvcc_flags=$(sh tools/cuda-compile-check.sh --print-flags "$3")" \
    --meta "commit=$COMMIT_ID" >"$EV/$1.log" 2>&1
  rc=$?
  ns=$(($(date +%s%N) - t0))
  printf 'wall seconds (whole process, context creation included): %d.%03d\n' \
    $((ns / 1000000000)) $((ns / 1000000 % 1000)) >>"$EV/$1.log"
  echo $rc
}

declare -A RC
RC[cuda]=$(run_gpu cuda build/cuda/profile_core_cuda profile)
RC[fmad]=$(run_gpu cuda-arm-fmad build/cuda/profile_core_cuda_fmad fmad)
RC[libexp]=$(run_gpu cuda-arm-libdevice-exp build/cuda/profile_core_cuda_libdevice_exp libdevice-exp)
say "GPU runs: exit status cuda=${RC[cuda]} fmad=${RC[fmad]} libdevice-exp=${RC[libexp]}"

# card_result NAME RC: identical/differs of NAME.card against the CPU card,
# or the failure of its run.
card_result() {
  if [ ! -f "$EV/$1.card" ]; then echo "NO CARD (program exit status $2; see $1.log)"; return; fi
  diff_to "$1-vs-cpu" "$EV/cpu.card" "$EV/$1.card"
}
RES[cuda]=$(card_result cuda "${RC[cuda]}")
RES[fmad]=$(card_result cuda-arm-fmad "${RC[fmad]}")
RES[libexp]=$(card_result cuda-arm-libdevice-exp "${RC[libexp]}")

# ---- 4. element-wise comparison --------------------------------------------
for n in cuda cuda-arm-fmad cuda-arm-libdevice-exp; do
  if [ -d "$WORK/dump-$n" ]; then
    "$WORK/stage_check" "$EV/cpu.card" "$WORK/dump-$n" 8 >"$EV/$n.stages.txt" 2>&1
  else
    echo "no dump" >"$EV/$n.stages.txt"
  fi
done
# Raw dumps travel only when the real leg differs (a finding to investigate).
if [ "${RES[cuda]}" != identical ] && [ -d "$WORK/dump-cuda" ]; then
  tar -C "$WORK" -czf "$EV/dump-cuda.tar.gz" dump-cuda
fi

# ---- 5. summary -----------------------------------------------------------
PASS=1
[ "${RES[cuda]}" = identical ] && [ "${RC[cuda]}" = 0 ] || PASS=0
[ "$DOC1" = 0 ] && [ "$DOC16" = 0 ] || PASS=0
case "${RES[fmad]}" in differs*) ;; *) PASS=0 ;; esac
case "${RES[libexp]}" in differs*) ;; *) PASS=0 ;; esac
[ "${RC[fmad]}" = 0 ] && [ "${RC[libexp]}" = 0 ] || PASS=0
# arm_word RES: PASS when an arm's card differs (it must), else FAIL.
arm_word() { case "$1" in differs*) echo "PASS (differs, as it must)";; *) echo "FAIL (an arm must differ)";; esac; }
{
  echo "samebits device run: fixture profile-core, CUDA leg"
  cat "$EV/facts.txt"
  echo "gpu: $GPU_NAME, compute capability $GPU_CC, driver $GPU_DRIVER"
  echo "nvcc: $NVCC_V"
  echo "gcc: $GCC_V"
  echo "nvcc flags (profile): $(sh tools/cuda-compile-check.sh --print-flags profile)"
  echo
  echo "leg cpu x86_64 1 thread vs reference card:   ${RES[ref]}"
  echo "leg cpu x86_64 16 threads vs 1 thread:       ${RES[cpu16]}"
  echo "leg cpu host doctor, 1 thread:               $(tail -n 1 "$EV/doctor-t1.txt") (exit $DOC1)"
  echo "leg cpu host doctor, 16 threads:             $(tail -n 1 "$EV/doctor-t16.txt") (exit $DOC16)"
  grep -E '^  [a-z-]+ +(identical|DIFFERS|ERROR)' "$EV/doctor-t16.txt" | sed 's/^/    /'
  echo "leg cuda (profile flags) vs cpu:             ${RES[cuda]} (program exit ${RC[cuda]})"
  echo "arm cuda -fmad=true vs cpu:                  ${RES[fmad]} -> $(arm_word "${RES[fmad]}")"
  echo "arm cuda libdevice expf vs cpu:              ${RES[libexp]} -> $(arm_word "${RES[libexp]}")"
  echo
  echo "self-checks of the CUDA leg:"
  grep '^self-check' "$EV/cuda.log" | sed 's/^/  /'
  echo
  echo "element-wise, stages that differ (details in *.stages.txt):"
  for n in cuda cuda-arm-fmad cuda-arm-libdevice-exp; do
    echo "  $n: $(grep -c DIFFERS "$EV/$n.stages.txt") stage(s) differ; $(grep '^checker' "$EV/$n.stages.txt" | head -n 1)"
    grep DIFFERS "$EV/$n.stages.txt" | sed 's/^/    /'
  done
  echo
  echo "GPU time per stage group (profile build; median of 5 runs, CUDA events):"
  sed 's/^/  /' "$EV/cuda.timing.txt" 2>/dev/null
  echo
  echo "script wall time: $(($(date +%s) - START)) s"
  if [ $PASS = 1 ]; then echo "result: PASS"; else echo "result: FAIL"; fi
} >"$EV/summary.txt"
cat "$EV/summary.txt"
pack
[ $PASS = 1 ] && exit 0
exit 1
