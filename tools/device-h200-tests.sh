#!/usr/bin/env bash
# device-h200-tests.sh: the device tests of tools/device-h200.sh's stage 5 alone
# (no arms, no cards), for a call whose device time cannot hold the whole run:
# the CUDA build for sm_90 only (the H200), gradient boosting's fixtures on
# cuda and NVIDIA's OpenCL, the forest, warm-start, gbdt (constraints, DART,
# initial scores, several validation sets), agglomerative and exponential
# smoothing device tests (ets-fit on both, its arm on NVIDIA OpenCL), the
# byte language model (lm-fit on both, its float-atomic arm, the cross-device
# resume tests), and the prediction check. Writes everything, with the sources' hashes, to $OUT.
# Usage (device): bash tools/device-h200-tests.sh; exit 1 when any part fails.
# IDENTITY=1 COMMIT=<sha>: the fixtures only, on every leg of the GPU host (below).
set -u
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-build/device-h200-tests}
mkdir -p "$OUT"
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
if [ ! -e /etc/OpenCL/vendors/nvidia.icd ]; then
  mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 >/etc/OpenCL/vendors/nvidia.icd
fi
find src include cli Makefile tools/cuda-compile-check.sh tools/embed_cl.sh -type f | sort | xargs sha256sum >"$OUT/sources.sha256"
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv >"$OUT/facts.txt" 2>&1
CUDA_ARCH=sm_90 make -j"$(nproc)" CUDA=1 all >"$OUT/build-cuda.log" 2>&1 || { tail -30 "$OUT/build-cuda.log"; exit 2; }
FAIL=0
S=build-cuda/samebits
L=build-cuda/libsamebits.so
if [ "${IDENTITY:-0}" = 1 ]; then
  # IDENTITY=1 COMMIT=<sha>: every fixture on cuda, on NVIDIA's OpenCL and on
  # the host at 1 and 16 threads, in tools/device-h200.sh's file layout (so
  # tools/evidence_device_summary.py reads it); no arm runs in this mode.
  {
    echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: ${COMMIT:-unknown}"
    echo "uname: $(uname -a)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') ($(nproc) cores)"
    nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv
    echo "nvcc flags (profile): $(CUDA_ARCH=sm_90 sh tools/cuda-compile-check.sh --print-flags profile)"
  } >"$OUT/facts.txt" 2>&1
  pass_of() { grep -q '^verify: PASS' "$1" || ! grep -q -E 'DIFFERS|ERROR' "$1"; }
  timeout 200 $S verify device=cuda >"$OUT/verify-cuda.txt" 2>&1
  timeout 200 $S verify device=opencl >"$OUT/verify-opencl.txt" 2>&1
  for t in 1 16; do timeout 200 $S verify --threads $t >"$OUT/verify-cpu-$t.txt" 2>&1; done
  for f in cuda opencl cpu-1 cpu-16; do
    pass_of "$OUT/verify-$f.txt" || FAIL=1
    echo "verify $f: $(grep -E '^[0-9]+ fixtures' "$OUT/verify-$f.txt")" >>"$OUT/summary.txt"
  done
  echo "arms: not run in this mode (identity only)" >>"$OUT/summary.txt"
  echo "result: $([ $FAIL = 0 ] && echo pass || echo FAIL)" >>"$OUT/summary.txt"
  cat "$OUT/summary.txt"
  exit $FAIL
fi
for d in cuda opencl; do
  timeout 300 $S verify --family gbdt device=$d >"$OUT/verify-gbdt-$d.txt" 2>&1 || FAIL=1
  echo "verify gbdt device=$d: $(tail -n 2 "$OUT/verify-gbdt-$d.txt" | tr '\n' ' ')" >>"$OUT/summary.txt"
done
run() { # name, env..., -- pytest args
  local name=$1; shift
  env "$@" >"$OUT/$name.txt" 2>&1 || FAIL=1
  echo "$name: $(tail -n 1 "$OUT/$name.txt")" >>"$OUT/summary.txt"
}
run forest-warm-start SAMEBITS_LIB=$L SAMEBITS_FOREST_DEVICES=cuda,opencl,cpu-batched PYTHONPATH=python timeout 240 \
  python3 -m pytest tests/python/test_py_forest_devices.py tests/python/test_py_warm_start.py tests/python/test_py_iforest_weights.py -q -p no:cacheprovider
run gbdt-rules SAMEBITS_LIB=$L SAMEBITS_GBDT_DEVICES=cuda,opencl,cpu-batched PYTHONPATH=python timeout 180 \
  python3 -m pytest tests/python/test_py_constraints.py tests/python/test_py_dart.py tests/python/test_py_init_score.py tests/python/test_py_multivalid.py tests/python/test_py_categorical.py \
  tests/python/test_py_continue.py -q -p no:cacheprovider
run agglomerative SAMEBITS_LIB=$L PYTHONPATH=python timeout 150 \
  python3 -m pytest tests/python/test_py_agglomerative.py -q -p no:cacheprovider -k gpu
for d in cuda opencl; do
  timeout 300 $S verify ets-fit device=$d >"$OUT/verify-ets-$d.txt" 2>&1 || FAIL=1
  echo "verify ets-fit device=$d: $(tail -n 2 "$OUT/verify-ets-$d.txt" | tr '\n' ' ')" >>"$OUT/summary.txt"
  # the arm must part it on the device (NVIDIA's OpenCL here; CUDA: its variant in tools/device-h200.sh)
  [ $d = opencl ] && { SAMEBITS_OPENCL_ARM=ets-sse-order timeout 300 $S verify ets-fit device=opencl \
    >"$OUT/verify-ets-arm-opencl.txt" 2>&1 && FAIL=1
    echo "ets-sse-order arm on NVIDIA OpenCL: $(grep -m1 'ets-fit' "$OUT/verify-ets-arm-opencl.txt")" >>"$OUT/summary.txt"; }
done
for d in cuda opencl; do
  timeout 300 $S verify arima-fit device=$d >"$OUT/verify-arima-$d.txt" 2>&1 || FAIL=1
  echo "verify arima-fit device=$d: $(tail -n 2 "$OUT/verify-arima-$d.txt" | tr '\n' ' ')" >>"$OUT/summary.txt"
  [ $d = opencl ] && { SAMEBITS_OPENCL_ARM=arima-device-order timeout 300 $S verify arima-fit device=opencl \
    >"$OUT/verify-arima-arm-opencl.txt" 2>&1 && FAIL=1
    echo "arima-device-order arm on NVIDIA OpenCL: $(grep -m1 'arima-fit' "$OUT/verify-arima-arm-opencl.txt")" >>"$OUT/summary.txt"; }
done
# the byte language model (src/models/lm/lm_dev.c): lm-fit on both (its half run trains on the device and
# resumes on the host), the float-atomic embedding gradient arm must part it on NVIDIA's OpenCL, and the
# cross-device resume tests (host->device, device->host) through the command line
for d in cuda opencl; do
  timeout 300 $S verify lm-fit device=$d >"$OUT/verify-lm-$d.txt" 2>&1 || FAIL=1
  echo "verify lm-fit device=$d: $(tail -n 2 "$OUT/verify-lm-$d.txt" | tr '\n' ' ')" >>"$OUT/summary.txt"
  [ $d = opencl ] && { SAMEBITS_OPENCL_ARM=float-atomic timeout 300 $S verify lm-fit device=opencl \
    >"$OUT/verify-lm-arm-opencl.txt" 2>&1 && FAIL=1
    echo "float-atomic arm on NVIDIA OpenCL (lm-fit): $(grep -m1 'lm-fit' "$OUT/verify-lm-arm-opencl.txt")" >>"$OUT/summary.txt"; }
done
run lm-resume SAMEBITS_BUILD=build-cuda SAMEBITS_LM_DEVICES=cuda,opencl timeout 600 \
  python3 -m pytest tests/integration/test_lm_device.py -q -p no:cacheprovider -k resume
run arima-unit SAMEBITS_PARITY_REQUIRE=cuda,opencl timeout 300 build-cuda/sb_unit test_arima_devices_give_the_cpu_bits test_arima_kernel_on_host_gives_the_host_bits
run ets-unit SAMEBITS_PARITY_REQUIRE=cuda,opencl timeout 300 build-cuda/sb_unit test_ets_devices_give_the_cpu_bits
run ets-devices SAMEBITS_PARITY_REQUIRE=cuda,opencl SAMEBITS_LIB=$L PYTHONPATH=python timeout 600 \
  python3 -m pytest tests/python/test_py_ets_devices.py -q -p no:cacheprovider
for d in cuda opencl; do
  run predict-check-$d SAMEBITS_LIB=$L PYTHONPATH=python timeout 150 python3 tools/predict_check.py $d
done
echo "result: $([ $FAIL = 0 ] && echo pass || echo FAIL)" >>"$OUT/summary.txt"
cat "$OUT/summary.txt"
exit $FAIL
