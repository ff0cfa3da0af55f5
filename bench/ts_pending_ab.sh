#!/usr/bin/env bash
# ts_pending_ab.sh VARIANT...: exponential smoothing's GPU fit under pending
# patches, one machine, one call of the device tool (bench/results records
# ratios only from one machine). A VARIANT is NAME or NAME=PATCH[+PATCH...]
# (pending/ files applied in order with patch -p1; "main" applies none).
# For each: the CUDA library for sm_90 built (incrementally), `samebits
# verify ets-fit device=cuda`, and bench/ts_gpu_bench.py's 10,000 series on
# CUDA (--no-sf, the host's reference on 64); the patches are reverted after
# each. With SF_LAST=1 the last variant stays applied and the bench runs
# again with statsforecast beside it and NVIDIA's OpenCL (statsforecast's
# wheels in .whl/, as bench/device_records.sh's ts part carries them).
# Writes under $OUT/NAME/ and $OUT/ab.tgz (everything so far, after each).
# Example (docs/timeseries.md, "Not built yet"):
#   COMMIT=<sha> SF_LAST=1 bash bench/ts_pending_ab.sh main \
#     three=pending/ets-three-launches.patch ring=pending/ets-private-ring.patch \
#     both=pending/ets-three-launches.patch+pending/ets-private-ring.patch
set -u
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-build/ts-pending-ab}
export SAMEBITS_COMMIT=${COMMIT:-unknown}
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
if [ ! -e /etc/OpenCL/vendors/nvidia.icd ]; then
  mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 >/etc/OpenCL/vendors/nvidia.icd
fi
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$OUT/gpu.txt" 2>&1
pack() { tar -C "$OUT" -czf "$OUT/ab.tgz" --exclude=ab.tgz . 2>/dev/null; }
build() {
  local t0; t0=$(date +%s)
  CUDA_ARCH=sm_90 make -j"$(nproc)" CUDA=1 build-cuda/libsamebits.so build-cuda/samebits >"$1/build.log" 2>&1 ||
    { tail -20 "$1/build.log"; return 1; }
  echo "build: $(($(date +%s) - t0)) s"
}
bench() { # dir, extra args
  local d=$1; shift
  SAMEBITS_LIB=build-cuda/libsamebits.so PYTHONPATH=python:/tmp/site PYTHONUNBUFFERED=1 timeout 400 \
    python3 bench/ts_gpu_bench.py --threads 16 --families ets --out "$d" "$@" >"$d/ts.log" 2>&1
  grep -E "^ets:" "$d/ts.log"
}
FAIL=0
n=$#
i=0
for v in "$@"; do
  i=$((i + 1))
  name=${v%%=*}
  patches=""
  [ "$name" != "$v" ] && patches=$(echo "${v#*=}" | tr '+' ' ')
  d=$OUT/$name
  mkdir -p "$d"
  echo "== $name: ${patches:-no patch}"
  ok=1
  applied=""
  for p in $patches; do
    if patch -p1 -s --no-backup-if-mismatch --dry-run <"$p" >/dev/null && patch -p1 -s --no-backup-if-mismatch <"$p"; then applied="$p $applied"; else echo "$p does not apply"; ok=0; break; fi
  done
  if [ $ok = 1 ] && build "$d"; then
    timeout 120 build-cuda/samebits verify ets-fit device=cuda >"$d/verify-cuda.txt" 2>&1 || FAIL=1
    echo "verify ets-fit device=cuda: $(tail -n 1 "$d/verify-cuda.txt")"
    bench "$d" --devices cuda --no-sf --host-sample 64
    if [ "${SF_LAST:-0}" = 1 ] && [ $i = "$n" ]; then
      if ls .whl/*.whl >/dev/null 2>&1 && [ ! -d /tmp/site ]; then
        python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
      fi
      mkdir -p "$d/sf"
      timeout 120 build-cuda/samebits verify ets-fit device=opencl >"$d/verify-opencl.txt" 2>&1 || FAIL=1
      echo "verify ets-fit device=opencl: $(tail -n 1 "$d/verify-opencl.txt")"
      bench "$d/sf" --devices cuda,opencl --sf-jobs 16 --host-sample 300
    fi
  else
    FAIL=1
  fi
  for p in $applied; do patch -R -p1 -s --no-backup-if-mismatch <"$p" || FAIL=1; done
  pack
done
exit $FAIL
