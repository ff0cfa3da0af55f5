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
#      evidence for evidence/cuda/<date>-<gpu>-profile-<commit7>/ (the name is
#      written to $OUT/evidence-folder.txt; evidence/README.md).
#
# Usage (device): COMMIT=<sha> bash tools/device-run.sh
#   OUT     where the results go (the device tool's output folder); without it,
#           build/device-run/out. Written there: summary.txt, run.log,
#           evidence-folder.txt and evidence.tar.gz (everything, to unpack into
#           the folder evidence-folder.txt names).
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

# evidence_folder FAMILY COMMIT: the folder this run belongs in, by the one scheme of
# evidence/README.md (evidence/cuda/<date>-<gpu>-<family>-<commit7>; the GPU
# as its model in lower case, "NVIDIA H200" -> h200), written to
# $OUT/evidence-folder.txt so the folder is named by the run, not by hand
# (call it after facts.txt is written).
evidence_folder() {
  local gpu day
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 | sed 's/^NVIDIA //' \
    | awk '{print tolower($1)}' | tr -cd 'a-z0-9_')
  # the date of the run as facts.txt records it (summary.json takes it from there)
  day=$(sed -n 's/^date_utc: \([0-9-]\{10\}\).*/\1/p' "$EV/facts.txt")
  echo "evidence/cuda/${day:-$(date -u +%Y-%m-%d)}-${gpu:-gpu}-$1-$(printf %.7s "$2")" >"$OUT/evidence-folder.txt"
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
evidence_folder profile "$COMMIT_ID"
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
gcc -std=c11 -O2 -ffp-contract=off -fno-fast-math -fexcess-precision=standard -D_POSIX_C_SOURCE=200809L \
  -Iinclude -Isrc tools/stage_check.c build/libsamebits.a -pthread -lm -o "$WORK/stage_check" \
  >"$EV/stage_check-build.log" 2>&1 || die_build "stage_check (gcc)"

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
