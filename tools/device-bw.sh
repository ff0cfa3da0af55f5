#!/usr/bin/env bash
# device-bw.sh: on the GPU machine, the device's measured copy bandwidth
# (cupy device-to-device copies of 4 GiB, best of 5) and where a tree's time
# goes on flights-10m (SAMEBITS_CUDA_TIMING=1: per-operation CUDA event times).
# Usage (device): COMMIT=<sha> DATA=.devdata bash tools/device-bw.sh; results in $OUT.
set -u
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-build/device-bw}
mkdir -p "$OUT"
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
echo "commit: ${COMMIT:-unknown}" | tee "$OUT/bw.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.max.mem --format=csv,noheader | tee -a "$OUT/bw.txt"
python3 - <<'PY' 2>&1 | tee -a "$OUT/bw.txt"
import cupy as cp
n = 1 << 30  # 4 GiB of float32
a = cp.ones(n, dtype=cp.float32); b = cp.empty_like(a)
ev0, ev1 = cp.cuda.Event(), cp.cuda.Event()
best = 1e9
for _ in range(6):
    ev0.record(); cp.copyto(b, a); ev1.record(); ev1.synchronize()
    best = min(best, cp.cuda.get_elapsed_time(ev0, ev1) / 1e3)
print("d2d copy: %.0f GB/s (read + write of 4 GiB, best of 6)" % (2 * 4 * 2**30 / best / 1e9))
PY
make -j"$(nproc)" CC=gcc CUDA=1 all >"$OUT/build.log" 2>&1 || { echo "build failed"; tail "$OUT/build.log"; exit 2; }
SAMEBITS_CUDA_TIMING=1 SAMEBITS_LIB=$PWD/build-cuda/libsamebits.so PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1 \
  python3 bench/gpu_bench.py --data "${DATA:-.devdata}" --out "$OUT/timing.json" --workloads flights-10m \
  --trees 60 --few 10 --cpu-trees 11 >"$OUT/timing.log" 2>&1
grep -E "cuda timing|ms_per_tree" "$OUT/timing.log" | head -24 | tee -a "$OUT/bw.txt"
