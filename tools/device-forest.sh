#!/usr/bin/env bash
# device-forest.sh: the random forest / Extra Trees leg on a lent GPU machine,
# in one call from the repository root on a bare machine. It
#   1. records the machine and toolchain (nvidia-smi, nvcc, gcc, commit),
#   2. builds the CPU library (build/), the CUDA build (build-cuda/, make CUDA=1)
#      and its float-atomic arm (build-cuda-float-atomic/),
#   3. verifies the whole forest family (random forests, Extra Trees, the
#      weighted forests, the isolation forest: six fixtures) with device=cuda
#      (cards kept) and with device=cpu-batched, twice on CUDA (run to run);
#      the float-atomic arm must make forest-et-regression differ,
#   3b. verifies the whole forest family (the same six fixtures, `--family forest`)
#      with device=opencl on the NVIDIA driver's OpenCL (it registers
#      /etc/OpenCL/vendors/nvidia.icd when missing), with global histograms,
#      the float-atomic arm (both regression fixtures should differ), and the
#      parity tests on opencl (weighted and isolation forests included):
#      recorded, never fatal,
#   4. runs tests/python/test_py_forest_devices.py against the CUDA library
#      (every configuration's model bytes, weighted and isolation forests
#      included: CUDA's equal the CPU forest's),
#   5. unless SKIP_BENCH=1, times bench/forest_device_parity.py (ROWS, TREES:
#      default 1,000,000 rows x 28 features, 100 trees; CUDA against the CPU
#      forest on every core, model bytes compared),
#   6. writes summary.txt and packs everything as evidence.tar.gz in $OUT, for
#      evidence/cuda/<date>-<gpu>-forest-<commit7>/ (the name is written to
#      $OUT/evidence-folder.txt; evidence/README.md).
#
# Usage (device): COMMIT=<sha> [DATA=.devdata] bash tools/device-forest.sh
#   DATA   optional: a folder with the flights file; then bench/forest_gpu_bench.py
#          (beside scikit-learn, FOREST_ROWS rows) runs too.
# Exit status: 0 when every CUDA card equals its reference, every parity test
# passes and the arm differs; 1 otherwise; 2 a build failed.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
OUT=${OUT:-$ROOT/build/device-forest/out}
EV=$ROOT/build/device-forest/ev
rm -rf "$EV"
mkdir -p "$EV/cards" "$OUT"
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
LOG=$EV/run.log
: >"$LOG"
say() { echo "device-forest: $*" | tee -a "$LOG"; }
summary() { echo "$*" | tee -a "$EV/summary.txt"; }
pack() {
  cp "$LOG" "$OUT/run.log" 2>/dev/null
  [ -f "$EV/summary.txt" ] && cp "$EV/summary.txt" "$OUT/summary.txt"
  tar -C "$EV" -czf "$OUT/evidence.tar.gz" . 2>/dev/null
}
J=$(nproc)
FIXTURES="--family forest"   # all six forest fixtures

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

# ---- 1. facts (the device's copy of .git can be stale: only COMMIT is trusted)
{
  echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: ${COMMIT:-unknown}"
  echo "uname: $(uname -a)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') ($J cores)"
  nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv
  nvcc --version | tail -n 2
  gcc --version | head -n 1
  echo "nvcc flags (profile): $(sh tools/cuda-compile-check.sh --print-flags profile)"
} >"$EV/facts.txt" 2>&1
evidence_folder forest "${COMMIT:-unknown}"
# The sources that decide the bits of the legs this run records (CUDA, OpenCL
# on the NVIDIA driver, cpu-batched): the devices, the kernel headers they
# include (the Makefile's dependencies of fdev_cuda.o among them), the forest
# models, and the flags. A name that no longer exists lands here as sha256sum's
# complaint, which makes the record unverified rather than silently narrower.
sha256sum src/kernels/*.h src/core/rng.h src/math/*.h src/backends/fdev.h src/backends/cuda/fdev_cuda.cu \
  src/backends/cuda/cuda_common.h src/backends/cuda/compat_cuda.h src/backends/cpu/fdev_cpu.c \
  src/backends/opencl/fdev_opencl.c src/backends/opencl/fdev_kernels.cl src/backends/opencl/ocl_common.c \
  src/backends/opencl/*.h src/models/forest/*.c tools/cuda-compile-check.sh Makefile >"$EV/sources.sha256" 2>&1
cat "$EV/facts.txt"

# ---- 2. builds
say "building (CPU, CUDA)"
make -j"$J" CC=gcc all >"$EV/build-cpu.log" 2>&1 || { say "FAILED: CPU build"; pack; exit 2; }
make -j"$J" CC=gcc CUDA=1 all >"$EV/build-cuda.log" 2>&1 || { say "FAILED: CUDA build"; tail -30 "$EV/build-cuda.log"; pack; exit 2; }
# the separating arm of the GPU leg: float atomics in the regression histograms
make -j"$J" CC=gcc CUDA=1 CUDA_VARIANT=float-atomic all >"$EV/build-cuda-float-atomic.log" 2>&1 \
  || say "FAILED: the float-atomic arm's build"

# ---- 3. fixtures
status=0
summary "commit: ${COMMIT:-unknown}"
summary "gpu: $(nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader | head -n 1)"
for run in 1 2; do
  build-cuda/samebits verify --cards "$EV/cards" $FIXTURES device=cuda >"$EV/verify-cuda-$run.txt" 2>&1 || status=1
  summary "cuda run $run: $(tail -n 2 "$EV/verify-cuda-$run.txt" | tr '\n' ' ')"
done
cat "$EV/verify-cuda-1.txt" | tee -a "$LOG"
grep -q "6 fixtures: 6 identical" "$EV/verify-cuda-1.txt" || status=1
# the family without cards (read by tools/evidence_forest_summary.py)
build-cuda/samebits verify --family forest device=cuda >"$EV/verify-cuda-family.txt" 2>&1 || status=1
summary "cuda --family forest: $(tail -n 2 "$EV/verify-cuda-family.txt" | tr '\n' ' ')"
# the arm must make the regression fixture differ (the classification ones sum counts only)
build-cuda-float-atomic/samebits verify forest-et-regression forest-et-weighted device=cuda \
  >"$EV/verify-cuda-float-atomic.txt" 2>&1
grep -q "forest-et-regression DIFFERS" "$EV/verify-cuda-float-atomic.txt" || status=1
summary "arm float-atomic (forest-et-regression must differ): $(grep -E '^  forest-' "$EV/verify-cuda-float-atomic.txt" | tr '\n' ' ')"
build/samebits verify --threads "$J" $FIXTURES device=cpu-batched >"$EV/verify-cpu-batched.txt" 2>&1 || status=1
summary "cpu-batched: $(tail -n 1 "$EV/verify-cpu-batched.txt")"

# ---- 3b. the OpenCL forest device through the NVIDIA driver's OpenCL (docs/forest.md,
# docs/opencl.md). Recorded, never fatal: its lines start with "opencl" and leave
# $status alone. A container often has the driver's libnvidia-opencl.so.1 but no
# ICD file naming it: register it, as tools/device-gbdt.sh does.
if [ ! -e /etc/OpenCL/vendors/nvidia.icd ] && ldconfig -p 2>/dev/null | grep -q libnvidia-opencl.so.1; then
  { mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 >/etc/OpenCL/vendors/nvidia.icd; } 2>>"$LOG"
fi
# The loader: the system's libOpenCL.so.1, else the CUDA toolkit's copy (for the
# OpenCL steps only: the CUDA steps keep their environment).
OCL_LD=${LD_LIBRARY_PATH:-}
ldconfig -p 2>/dev/null | grep -q 'libOpenCL.so.1 ' || OCL_LD=${OCL_LD:+$OCL_LD:}/usr/local/cuda/lib64
LD_LIBRARY_PATH=$OCL_LD build/samebits doctor >"$EV/doctor-opencl.txt" 2>&1
grep -E '^opencl|^ {16}[0-9]+:[0-9]+ ' "$EV/doctor-opencl.txt" | tee -a "$LOG"
# The NVIDIA device's P:D from the doctor's list (else the library's default: the first GPU).
OCLDEV=$(grep -E '^opencl devices: |^ {16}[0-9]+:[0-9]+ ' "$EV/doctor-opencl.txt" | grep -i 'nvidia' \
  | grep -oE '^(opencl devices: )? *[0-9]+:[0-9]+' | grep -oE '[0-9]+:[0-9]+' | head -n 1)
OCLDEV=${SAMEBITS_OPENCL_DEVICE:-$OCLDEV}
# the whole family: RF/ET, the weighted forests and the isolation forest (six fixtures)
OCL_FIXTURES="--family forest"
ocl() { LD_LIBRARY_PATH=$OCL_LD SAMEBITS_OPENCL_DEVICE=$OCLDEV timeout 600 "$@"; }
mkdir -p "$EV/cards-opencl"
t0=$(date +%s.%N)
ocl build/samebits verify --cards "$EV/cards-opencl" $OCL_FIXTURES device=opencl >"$EV/verify-opencl.txt" 2>&1
t1=$(date +%s.%N)
summary "opencl device ${OCLDEV:-default}: $(tail -n 2 "$EV/verify-opencl.txt" | tr '\n' ' ')($(awk "BEGIN{printf \"%.2f\", $t1 - $t0}") s)"
grep -E '^  forest-' "$EV/verify-opencl.txt" | sed 's/^  /opencl /' | while read -r line; do summary "$line"; done
SAMEBITS_OPENCL_HIST=global ocl build/samebits verify $OCL_FIXTURES device=opencl >"$EV/verify-opencl-hist-global.txt" 2>&1
summary "opencl histograms by global atomics (SAMEBITS_OPENCL_HIST=global): $(tail -n 2 "$EV/verify-opencl-hist-global.txt" | tr '\n' ' ')"
SAMEBITS_OPENCL_ARM=float-atomic ocl build/samebits verify $OCL_FIXTURES device=opencl >"$EV/verify-opencl-arm-float-atomic.txt" 2>&1
summary "opencl arm float-atomic (forest-et-regression and forest-et-weighted should differ): $(grep -E '^  forest-et-(regression|weighted)' "$EV/verify-opencl-arm-float-atomic.txt" | sed 's/^ *//' | tr '\n' ' ')"
SAMEBITS_LIB=$ROOT/build/libsamebits.so SAMEBITS_FOREST_DEVICES=opencl PYTHONPATH=$ROOT/python ocl \
  python3 -m pytest tests/python/test_py_forest_devices.py -q -p no:cacheprovider >"$EV/parity-opencl.txt" 2>&1
summary "opencl parity (tests/python/test_py_forest_devices.py on opencl, build/): $(tail -n 1 "$EV/parity-opencl.txt")"

# ---- 4. parity on many configurations, CUDA against the CPU forest
SAMEBITS_LIB=$ROOT/build-cuda/libsamebits.so SAMEBITS_FOREST_DEVICES=cuda PYTHONPATH=$ROOT/python \
  python3 -m pytest tests/python/test_py_forest_devices.py -q -p no:cacheprovider >"$EV/parity-cuda.txt" 2>&1 || status=1
summary "parity (tests/python/test_py_forest_devices.py on cuda): $(tail -n 1 "$EV/parity-cuda.txt")"
summary "fixtures and parity: $([ $status = 0 ] && echo PASS || echo FAIL)"

# ---- 5. speed
if [ "${SKIP_BENCH:-0}" != 1 ]; then
  SAMEBITS_LIB=$ROOT/build-cuda/libsamebits.so PYTHONPATH=$ROOT/python \
    python3 bench/forest_device_parity.py --rows "${ROWS:-1000000}" --trees "${TREES:-100}" --threads "$J" \
    >"$EV/bench.txt" 2>&1
  while read -r line; do summary "bench: $line"; done <"$EV/bench.txt"
fi
# the real-data benchmark beside scikit-learn (bench/forest_gpu_bench.py), when DATA holds the flights file
if [ -n "${DATA:-}" ] && [ -d "${DATA}" ]; then
  SAMEBITS_LIB=$ROOT/build-cuda/libsamebits.so PYTHONPATH=$ROOT/python \
    python3 bench/forest_gpu_bench.py --data "$DATA" --out "$EV/forest-gpu-bench.json" --threads "$J" \
    --rows "${FOREST_ROWS:-1000000,10000000}" --commit "${COMMIT:-unknown}" >"$EV/forest-gpu-bench.txt" 2>&1
  summary "real-data bench: $(tail -n 3 "$EV/forest-gpu-bench.txt" | tr '\n' ' ')"
fi
pack
exit $status
