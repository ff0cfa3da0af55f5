#!/usr/bin/env bash
# device-gbdt.sh: the gradient boosting leg on a lent GPU machine, in one call
# from the repository root on a bare machine. It
#   1. records the machine and toolchain (nvidia-smi, nvcc, gcc, commit),
#   2. builds the CPU library (build/), the CUDA build (build-cuda/, make CUDA=1)
#      and the CUDA arms (build-cuda-{float-atomic,libdevice-exp,fmad}/),
#   3. runs every gradient boosting fixture with device=cuda, keeps its card and
#      compares it with the reference card (`samebits card diff`); the same for
#      the host CPU at 1 and 16 threads and for each arm,
#   4. unless SKIP_BENCH=1, runs bench/gpu_bench.py (time per tree, peak GPU
#      memory, CPU and LightGBM side by side, identity on real data),
#   5. writes summary.txt and packs everything as evidence.tar.gz in $OUT, for
#      evidence/cuda/<date>-<gpu>-gbdt-<commit7>/ (the name is written to
#      $OUT/evidence-folder.txt; evidence/README.md).
# Also (recorded, never fatal): the OpenCL tree device on the NVIDIA driver's
# OpenCL (step 3b: it registers /etc/OpenCL/vendors/nvidia.icd when missing,
# then verify --family gbdt device=opencl and its four arms) and, with
# OPENCL_BENCH=1, the benchmark on device=opencl; the OpenCL predictions are
# compared with the CPU's (tools/predict_check.py opencl).
#
# Usage (device): COMMIT=<sha> DATA=.devdata bash tools/device-gbdt.sh
#   DATA   a folder with flights-3m.parquet, fashion-mnist/*.gz and whl/ (a
#          LightGBM wheel), carried to the device (it is not in the repo).
# Exit status: 0 when every fixture's CUDA card equals its reference and the
# float-atomic arm differs on every fixture that grows trees from varied data;
# 1 otherwise; 2 a build failed.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
OUT=${OUT:-$ROOT/build/device-gbdt/out}
DATA=${DATA:-.devdata}
EV=$ROOT/build/device-gbdt/ev
rm -rf "$EV"
mkdir -p "$EV/cards" "$OUT"
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
LOG=$EV/run.log
: >"$LOG"
say() { echo "device-gbdt: $*" | tee -a "$LOG"; }
pack() {
  cp "$LOG" "$OUT/run.log" 2>/dev/null
  [ -f "$EV/summary.txt" ] && cp "$EV/summary.txt" "$OUT/summary.txt"
  tar -C "$EV" -czf "$OUT/evidence.tar.gz" . 2>/dev/null
}
FIXTURES=""  # every gbdt fixture, listed after the build
J=$(nproc)

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

# ---- 1. facts
# The device's copy of .git can be stale: only COMMIT is trusted.
COMMIT_ID=${COMMIT:-unknown}
{
  echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $COMMIT_ID"
  echo "uname: $(uname -a)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') ($J cores)"
  nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total,clocks.max.sm --format=csv
  nvcc --version | tail -n 2
  gcc --version | head -n 1
  echo "nvcc flags (profile): $(sh tools/cuda-compile-check.sh --print-flags profile)"
} >"$EV/facts.txt" 2>&1
evidence_folder gbdt "$COMMIT_ID"
# The sources that decide the bits of every leg this run records (CUDA, the
# host CPU, OpenCL on the NVIDIA driver) and the flags they are built with; the
# support matrix calls the run stale once any of them changes. A name that no
# longer exists lands here as sha256sum's complaint, which makes the record
# unverified rather than silently narrower: keep the list in step with src/.
sha256sum src/kernels/*.h src/backends/tdev.h src/backends/cuda/*.cu src/backends/cuda/*.h \
  src/backends/cpu/*.c src/backends/cpu/*.h src/backends/opencl/tdev_opencl.c src/backends/opencl/tdev_kernels.cl \
  src/backends/opencl/ocl_common.c src/backends/opencl/*.h src/core/*.h src/models/trees/*.c \
  src/models/gbdt/*.c src/math/*.h tools/cuda-compile-check.sh Makefile >"$EV/sources.sha256" 2>&1
cat "$EV/facts.txt"

# ---- 2. builds (CPU first: the arms' builds share nothing with it)
say "building (CPU, CUDA, three CUDA arms)"
make -j"$J" CC=gcc all >"$EV/build-cpu.log" 2>&1 || { say "FAILED: CPU build"; pack; exit 2; }
make -j"$J" CC=gcc CUDA=1 all >"$EV/build-cuda.log" 2>&1 || { say "FAILED: CUDA build"; tail -30 "$EV/build-cuda.log"; pack; exit 2; }
# SKIP_ARMS=1: no arm builds or runs (a short identity run; arms are recorded by full runs)
ARMS="float-atomic libdevice-exp fmad"
[ "${SKIP_ARMS:-0}" = 1 ] && ARMS=""
for v in $ARMS; do
  make -j"$J" CC=gcc CUDA=1 CUDA_VARIANT=$v all >"$EV/build-cuda-$v.log" 2>&1 &
done
wait
build-cuda/samebits doctor --threads "$J" >"$EV/doctor-cuda.txt" 2>&1
FIXTURES=$(build/samebits fixture list | grep '^gbdt-')
build-cuda/samebits verify --family gbdt device=cuda >"$EV/verify-cuda.txt" 2>&1
tail -n 1 "$EV/verify-cuda.txt" | tee -a "$LOG"
grep -E "^cuda:|^backends:" "$EV/doctor-cuda.txt" | tee -a "$LOG"

# ---- 3. fixtures
status=0
summary() { echo "$*" | tee -a "$EV/summary.txt"; }
summary "commit: $COMMIT_ID"
summary "gpu: $(nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader | head -n 1)"
for f in $FIXTURES; do
  for t in 1 $J; do
    build/samebits fixture run "$f" --threads "$t" --out "$EV/cards/$f.cpu-t$t.card" >/dev/null 2>&1
    r=$(build/samebits card diff "fixtures/cards/$f.card" "$EV/cards/$f.cpu-t$t.card" 2>&1 | head -n 1)
    summary "cpu  t=$t $f: $r"
    [ "$r" = identical ] || status=1
  done
  t0=$(date +%s.%N)
  build-cuda/samebits fixture run "$f" device=cuda --out "$EV/cards/$f.cuda.card" >"$EV/cards/$f.cuda.log" 2>&1
  t1=$(date +%s.%N)
  build/samebits card diff "fixtures/cards/$f.card" "$EV/cards/$f.cuda.card" >"$EV/cards/$f.cuda.diff" 2>&1
  r=$(head -n 1 "$EV/cards/$f.cuda.diff")
  summary "cuda $f: $r ($(awk "BEGIN{printf \"%.2f\", $t1 - $t0}") s)"
  [ "$r" = identical ] || { status=1; cat "$EV/cards/$f.cuda.log" "$EV/cards/$f.cuda.diff" | head -n 8 | tee -a "$LOG"; }
  for v in $ARMS; do
    if [ -x "build-cuda-$v/samebits" ]; then
      "build-cuda-$v/samebits" fixture run "$f" device=cuda --out "$EV/cards/$f.cuda-$v.card" >/dev/null 2>&1
      r=$(build/samebits card diff "fixtures/cards/$f.card" "$EV/cards/$f.cuda-$v.card" 2>&1 | head -n 1)
    else
      r="NOT BUILT"
    fi
    summary "arm $v $f: $r"
    # The float-atomic arm must show on every fixture that grows a tree from
    # varied data (gbdt-constant has one bin, gbdt-refusals trains nothing).
    case "$f" in gbdt-constant|gbdt-refusals) ;; *) [ "$v" = float-atomic ] && [ "$r" = identical ] && status=1 ;; esac
  done
done
# The device's run-to-run check: the CUDA leg twice more on the multiclass fixture.
for k in 2 3; do
  build-cuda/samebits fixture run gbdt-multiclass device=cuda --out "$EV/cards/gbdt-multiclass.cuda-run$k.card" >/dev/null 2>&1
  summary "cuda rerun $k gbdt-multiclass: $(build/samebits card diff fixtures/cards/gbdt-multiclass.card "$EV/cards/gbdt-multiclass.cuda-run$k.card" | head -n 1)"
done
# Prediction on the GPU against the CPU, byte for byte, every kind.
SAMEBITS_LIB=$ROOT/build-cuda/libsamebits.so PYTHONPATH=$ROOT/python python3 tools/predict_check.py \
  >"$EV/predict-check.txt" 2>&1 || status=1
while read -r line; do summary "$line"; done <"$EV/predict-check.txt"
summary "fixtures result: $([ $status = 0 ] && echo PASS || echo FAIL)"

# ---- 3b. the OpenCL tree device through the NVIDIA driver's OpenCL (docs/opencl.md).
# Recorded, never fatal: its lines start with "opencl" and leave $status alone.
# A container often has the driver's libnvidia-opencl.so.1 but no ICD file naming it.
if [ ! -e /etc/OpenCL/vendors/nvidia.icd ] && ldconfig -p 2>/dev/null | grep -q libnvidia-opencl.so.1; then
  { mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 >/etc/OpenCL/vendors/nvidia.icd; } 2>>"$LOG"
fi
# The loader: the system's libOpenCL.so.1, else the CUDA toolkit's copy.
ldconfig -p 2>/dev/null | grep -q 'libOpenCL.so.1 ' || export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
build/samebits doctor >"$EV/doctor-opencl.txt" 2>&1
grep -E '^opencl|^ {16}[0-9]+:[0-9]+ ' "$EV/doctor-opencl.txt" | tee -a "$LOG"
# The NVIDIA device's P:D from the doctor's list (else the library's default: the first GPU).
OCLDEV=$(grep -E '^opencl devices: |^ {16}[0-9]+:[0-9]+ ' "$EV/doctor-opencl.txt" | grep -i 'nvidia' \
  | grep -oE '^(opencl devices: )? *[0-9]+:[0-9]+' | grep -oE '[0-9]+:[0-9]+' | head -n 1)
export SAMEBITS_OPENCL_DEVICE=${SAMEBITS_OPENCL_DEVICE:-$OCLDEV}
mkdir -p "$EV/cards-opencl"
t0=$(date +%s.%N)
timeout 600 build/samebits verify --family gbdt --cards "$EV/cards-opencl" device=opencl >"$EV/verify-opencl.txt" 2>&1
t1=$(date +%s.%N)
summary "opencl device ${SAMEBITS_OPENCL_DEVICE:-default}: $(tail -n 2 "$EV/verify-opencl.txt" | tr '\n' ' ')($(awk "BEGIN{printf \"%.2f\", $t1 - $t0}") s)"
grep -E '^  gbdt-' "$EV/verify-opencl.txt" | sed 's/^  /opencl /' | while read -r line; do summary "$line"; done
# The global-atomics histogram fallback (docs/opencl.md) must give the same cards.
SAMEBITS_OPENCL_HIST=global timeout 600 build/samebits verify --family gbdt device=opencl >"$EV/verify-opencl-hist-global.txt" 2>&1
summary "opencl histograms by global atomics (SAMEBITS_OPENCL_HIST=global): $(tail -n 2 "$EV/verify-opencl-hist-global.txt" | tr '\n' ' ')"
OCL_ARMS="float-atomic fast-relaxed-math contract mad-enable"
[ "${SKIP_ARMS:-0}" = 1 ] && OCL_ARMS=""
for a in $OCL_ARMS; do
  SAMEBITS_OPENCL_ARM=$a timeout 600 build/samebits verify --family gbdt device=opencl >"$EV/verify-opencl-arm-$a.txt" 2>&1
  summary "opencl arm $a: $(tail -n 1 "$EV/verify-opencl-arm-$a.txt"); first: $(grep -m1 -E 'DIFFERS|ERROR|REFUSED' "$EV/verify-opencl-arm-$a.txt" | sed 's/^ *//')"
done
# OpenCL prediction on the NVIDIA driver against the CPU's, byte for byte.
SAMEBITS_LIB=$ROOT/build/libsamebits.so PYTHONPATH=$ROOT/python timeout 600 python3 tools/predict_check.py opencl \
  >"$EV/predict-check-opencl.txt" 2>&1
while read -r line; do summary "$line"; done <"$EV/predict-check-opencl.txt"
python3 tools/evidence_gbdt_summary.py "$EV" >>"$LOG" 2>&1
pack

# ---- 4. benchmark
if [ "${SKIP_BENCH:-0}" != 1 ]; then
  if ls "$DATA"/whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$DATA"/whl/*.whl \
      >>"$LOG" 2>&1 && export PYTHONPATH=/tmp/site
  fi
  say "benchmark"
  SAMEBITS_LIB=$ROOT/build-cuda/libsamebits.so PYTHONPATH=$ROOT/python:${PYTHONPATH:-} PYTHONUNBUFFERED=1 \
    timeout "${BENCH_TIMEOUT:-420}" python3 bench/gpu_bench.py --data "$DATA" --out "$EV/gpu_bench.json" \
    ${BENCH_ARGS:-} 2>&1 | tee "$EV/gpu_bench.log" | grep -v '^ ' | tail -n 40
  # Ranking: lambdarank at 1.05M rows on CUDA and on the host's cores beside
  # LightGBM on the same cores (bench/rank_bench.py); SKIP_RANK_BENCH=1 skips it.
  if [ "${SKIP_RANK_BENCH:-0}" != 1 ]; then
    say "ranking benchmark"
    mkdir -p "$EV/bench"
    PYTHONPATH=${PYTHONPATH:-} PYTHONUNBUFFERED=1 timeout "${RANK_TIMEOUT:-300}" python3 bench/rank_bench.py \
      --data "$DATA" --exe build-cuda/samebits --devices cuda,cpu --threads "$J" --commit "$COMMIT_ID" \
      --results-dir "$EV/bench" --workdir /tmp/rank-bench ${RANK_ARGS:-} 2>&1 | tee "$EV/rank_bench.log" | tail -n 14
  fi
  # OPENCL_BENCH=1: the same benchmark on device=opencl (the NVIDIA driver's
  # OpenCL), for a speed comparison with CUDA; recorded, never fatal.
  if [ "${OPENCL_BENCH:-0}" = 1 ]; then
    say "benchmark, device=opencl"
    SAMEBITS_LIB=$ROOT/build/libsamebits.so PYTHONPATH=$ROOT/python:${PYTHONPATH:-} PYTHONUNBUFFERED=1 \
      timeout "${BENCH_TIMEOUT:-420}" python3 bench/gpu_bench.py --data "$DATA" --out "$EV/gpu_bench_opencl.json" \
      --device opencl ${OPENCL_BENCH_ARGS:---workloads flights-3m --trees 50} 2>&1 | tee "$EV/gpu_bench_opencl.log" \
      | grep -v '^ ' | tail -n 40
    # Where the time goes, per operation, on both devices: 20 trees on flights
    # 2.4M rows with SAMEBITS_{CUDA,OPENCL}_TIMING=1 (each operation synchronized).
    for dv in cuda opencl; do
      lib=$ROOT/build/libsamebits.so; [ $dv = cuda ] && lib=$ROOT/build-cuda/libsamebits.so
      SAMEBITS_CUDA_TIMING=1 SAMEBITS_OPENCL_TIMING=1 SAMEBITS_LIB=$lib PYTHONPATH=$ROOT/python:$ROOT/bench:${PYTHONPATH:-} \
        timeout 300 python3 -c "
import sys, gpu_bench
X, y, Xt, yt = gpu_bench.load_flights('$DATA')
print('fit s', gpu_bench.sb_fit(X, y, Xt, 'regression', 20, '$dv', $J)[0])
" >"$EV/timing-$dv.txt" 2>&1
      grep -E 'timing: (all|histograms|partition|split)|schedule:|fit s' "$EV/timing-$dv.txt" | tee -a "$LOG"
    done
  fi
fi
pack
exit $status
