#!/usr/bin/env bash
# device_records.sh PART...: the GPU records of one session, on a bare lent
# GPU machine (the device tool), each PART self-contained (a call may start a
# fresh machine): the CUDA build for sm_90 (make CUDA=1) is made first when
# missing. Writes under $OUT/PART/. COMMIT=<sha> names the sources (the device
# copy's git metadata can be older than its files; sources.sha256 lists them).
#   ident  every fixture on cuda, NVIDIA's OpenCL and the host at 1 and 16
#          threads (tools/device-h200-tests.sh IDENTITY=1: evidence layout)
#   tests  tools/device-h200-tests.sh's device tests (forest, gbdt rules,
#          agglomerative, ets, arima, lm with its arm and the resume tests)
#   lm     bench/lm_bench.py on cuda and opencl: 128 steps, the identity check
#          over all 128 against the host at 16 threads, resume across devices
#          at step 64 both ways, PyTorch eager and compiled beside it
#   svm    bench/svm_gpu_bench.py at 50,000 rows (bench/adult_svm.npz carried)
#   umap   umap-fit on cuda and NVIDIA's OpenCL and its arm umap-float-sum
#          there, then bench/umap_gpu_bench.py at 70,000 Fashion-MNIST rows, seeds 42-44,
#          trustworthiness on the GPU (the IDX files carried in fmnist/, and
#          umap-learn's and pynndescent's wheels in .whl/, installed first)
#   ts     bench/ts_gpu_bench.py: exponential smoothing and ARIMA over 10,000
#          taxi-derived series on cuda and opencl beside statsforecast on the
#          16 host cores (statsforecast's wheels in .whl/, docs/timeseries.md;
#          pyarrow and numba the image's), the host's reference on 2,000;
#          TS_CHUNKS=2500,5000 times the devices again at those caps on the
#          series a launch takes, TS_ARGS adds options (--no-sf, --n ...)
# After each part $OUT/records.tgz holds everything written so far (the device
# tool brings back only a few files a call; a call cut by its limit keeps the
# parts done). Exit status: 1 when a part fails, 2 when the build fails.
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$(pwd)
OUT=${OUT:-$ROOT/build/device-records}
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
if [ ! -e /etc/OpenCL/vendors/nvidia.icd ]; then
  mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 >/etc/OpenCL/vendors/nvidia.icd
fi
mkdir -p "$OUT"
if [ ! -x build-cuda/samebits ]; then
  CUDA_ARCH=sm_90 make -j"$(nproc)" CUDA=1 all >"$OUT/build-cuda.log" 2>&1 || { tail -30 "$OUT/build-cuda.log"; exit 2; }
fi
export SAMEBITS_COMMIT=${COMMIT:-}
FAIL=0
for part in "$@"; do
  o=$OUT/$part
  mkdir -p "$o"
  t0=$(date +%s)
  case $part in
    ident) OUT=$o IDENTITY=1 COMMIT=${COMMIT:-unknown} bash tools/device-h200-tests.sh || FAIL=1 ;;
    tests) OUT=$o bash tools/device-h200-tests.sh || FAIL=1 ;;
    lm)
      for d in cuda opencl; do
        SAMEBITS_LIB=build-cuda/libsamebits.so timeout 280 python3 bench/lm_bench.py --device $d --threads 16 \
          --steps 128 --check 128 --check-threads 16 --resume --out "$o" >"$o/lm-$d.log" 2>&1 || FAIL=1
        tail -n 3 "$o/lm-$d.log"
      done ;;
    svm)
      SAMEBITS_LIB=build-cuda/libsamebits.so timeout 400 python3 bench/svm_gpu_bench.py --npz bench/adult_svm.npz \
        --sizes 50000 --out-dir "$o" >"$o/svm.log" 2>&1 || FAIL=1
      tail -n 12 "$o/svm.log" ;;
    umap|ts)
      if ls .whl/*.whl >/dev/null 2>&1 && [ ! -d /tmp/site ]; then
        python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
      fi ;;&
    ts)
      SAMEBITS_LIB=build-cuda/libsamebits.so PYTHONPATH=python:/tmp/site PYTHONUNBUFFERED=1 timeout 560 \
        python3 bench/ts_gpu_bench.py --devices cuda,opencl --threads 16 --sf-jobs 16 --host-sample 2000 \
        --families ${TS_FAMILIES:-ets,arima} --chunks "${TS_CHUNKS:-}" ${TS_ARGS:-} --out "$o" >"$o/ts.log" 2>&1 || FAIL=1
      tail -n 16 "$o/ts.log" ;;
    umap)
      for d in cuda opencl; do # the fixture first: its batched cases' epochs on the device
        timeout 120 build-cuda/samebits verify umap-fit device=$d >"$o/verify-umap-$d.txt" 2>&1 || FAIL=1
      done
      SAMEBITS_OPENCL_ARM=umap-float-sum timeout 120 build-cuda/samebits verify umap-fit device=opencl \
        >"$o/verify-umap-arm-opencl.txt" 2>&1 && FAIL=1 # the arm must part it
      tail -n 1 "$o"/verify-umap-*.txt
      SAMEBITS_LIB=build-cuda/libsamebits.so PYTHONPATH=python:/tmp/site PYTHONUNBUFFERED=1 timeout 560 \
        python3 bench/umap_gpu_bench.py --data fmnist --threads 16 --seeds ${UMAP_SEEDS:-42,43,44} --split --trust-gpu \
        --out-dir "$o" >"$o/umap.log" 2>&1 || FAIL=1
      tail -n 16 "$o/umap.log" ;;
    *) echo "device_records: unknown part '$part'" >&2; exit 1 ;;
  esac
  echo "$part: $(($(date +%s) - t0)) s" | tee -a "$OUT/times.txt"
  # the device tool brings back a handful of files a call: one archive holds them all
  tar -C "$OUT" -czf "$OUT/records.tgz" --exclude=records.tgz . 2>/dev/null
done
exit $FAIL
