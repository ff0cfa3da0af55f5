#!/usr/bin/env bash
# device-h200.sh: every GPU leg of the device layer on a lent NVIDIA GPU, in one
# call from the repository root on a bare machine (the device tool's H200). It
#   1. records the machine and toolchain (nvidia-smi, nvcc, gcc, commit) and the
#      hashes of every source the run depends on (sources.sha256),
#   2. builds the CPU library (build/), the CUDA build (build-cuda/, make CUDA=1)
#      and the three CUDA arms (build-cuda-{fmad,libdevice-exp,float-atomic}/),
#   3. verifies every pinned fixture against its reference card on device=cuda,
#      on device=opencl through NVIDIA's OpenCL driver (registered when missing),
#      and on the host CPU at 1 and 16 threads; the histogram and chunk knobs
#      (SAMEBITS_{CUDA,OPENCL}_HIST=global, _FOREST_CHUNK) once more,
#   4. runs every arm on every leg for every family: each CUDA arm build
#      (fmad, libdevice-exp, float-atomic, gemm-fma) on device=cuda, each OpenCL
#      arm (SAMEBITS_OPENCL_ARM: contract, mad-enable, fast-relaxed-math,
#      float-atomic, vendor-exp, gemm-fma) on device=opencl, each over every
#      fixture; arms.tsv gets one line per (leg, arm, fixture): whether the
#      fixture parted from its reference card and at which stage, and
#      summary.txt one line per arm, "caught" only when at least one fixture
#      parted (a refusal or an error is never a catch); the contraction arms
#      (cuda fmad, opencl contract and mad-enable) also run the per-operation
#      parity test, which names the device operations they move
#      (parity-*-arm-*.txt),
#   5. runs the per-operation parity test (build-cuda/sb_unit device_ops: every
#      device operation on cuda and opencl, byte for byte against cpu-batched,
#      and under each float-atomic arm, which must fail it), the forest device
#      tests and the prediction check (tools/predict_check.py) on both backends,
#   6. unless SKIP_BENCH=1, runs bench/gpu_device_bench.py (time per tree on
#      cuda, opencl and XGBoost's CUDA backend, 10M x 28; .whl/ carries XGBoost),
#      and unless SKIP_GEMM_BENCH=1, bench/gemm_bench.py (the identical GEMM on
#      cuda and opencl beside cuBLAS SGEMM through PyTorch and CuPy, and on the
#      host's cores beside NumPy),
#   7. writes summary.txt and packs everything as evidence.tar.gz in $OUT, with
#      the folder name of evidence/README.md's scheme in evidence-folder.txt.
#
# Usage (device): COMMIT=<sha> DATA=.devdata bash tools/device-h200.sh
#   FAMILY=linalg (or gbdt, forest, ...) verifies that family's fixtures only (a
#   targeted run; its evidence folder is named after the family)
#   DATA  a folder holding lightgbm-examples/binary_classification_binary.{train,test}
#         (carried: ../shared does not travel)
#   ARMS="..." / OCL_ARMS="..." narrow the CUDA / OpenCL arms, SKIP_ARMS=1 runs
#   none: summary.txt then says "arms: INCOMPLETE" and names the arms not run
# Exit status: 0 when every leg is identical and every arm separates; 1 otherwise;
# 2 a build failed.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
OUT=${OUT:-$ROOT/build/device-h200/out}
DATA=${DATA:-.devdata}
EV=$ROOT/build/device-h200/ev
rm -rf "$EV"
mkdir -p "$EV/cards-cuda" "$EV/cards-opencl" "$OUT"
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
LOG=$EV/run.log
: >"$LOG"
J=$(nproc)
FAIL=0
say() { echo "device-h200: $*" | tee -a "$LOG"; }
summary() { echo "$*" | tee -a "$EV/summary.txt"; }
pack() {
  cp "$LOG" "$OUT/run.log" 2>/dev/null
  [ -f "$EV/summary.txt" ] && cp "$EV/summary.txt" "$OUT/summary.txt"
  tar -C "$EV" -czf "$OUT/evidence.tar.gz" . 2>/dev/null
}

# ---- 1. facts
COMMIT_ID=${COMMIT:-unknown}
{
  echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $COMMIT_ID"
  echo "uname: $(uname -a)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') ($J cores)"
  echo "cpu flags: $(grep -m1 flags /proc/cpuinfo | grep -o -w -E "avx2|avx512f|avx512_vnni|avx_vnni|amx_int8|amx_tile" | tr "\n" " ")"
  nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total,clocks.max.sm --format=csv
  nvcc --version | tail -n 2
  gcc --version | head -n 1
  echo "nvcc flags (profile): $(sh tools/cuda-compile-check.sh --print-flags profile)"
} >"$EV/facts.txt" 2>&1
# every file of the tree the run carried (the device copy's git index may be older than its files)
find src include cli Makefile tools/cuda-compile-check.sh tools/embed_cl.sh -type f | sed 's|^\./||' \
  | sort | xargs sha256sum >"$EV/sources.sha256"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1 | sed 's/^NVIDIA //' | awk '{print tolower($1)}' | tr -cd 'a-z0-9_')
FAM=${FAMILY:-}
FAMARG=${FAM:+--family $FAM}
echo "evidence/cuda/$(date -u +%Y-%m-%d)-${gpu:-gpu}-${FAM:-all}-$(printf %.7s "$COMMIT_ID")" >"$OUT/evidence-folder.txt"
cat "$EV/facts.txt" | tee -a "$LOG"
if [ ! -e /etc/OpenCL/vendors/nvidia.icd ]; then
  mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 >/etc/OpenCL/vendors/nvidia.icd
fi

# ---- 2. builds: the CPU and CUDA builds first, the arms beside the identity runs
say "building (CPU, CUDA)"
make -j"$J" all >"$EV/build-cpu.log" 2>&1 || { say "CPU build FAILED"; tail -30 "$EV/build-cpu.log"; pack; exit 2; }
make -j"$J" CUDA=1 all >"$EV/build-cuda.log" 2>&1 || { say "CUDA build FAILED"; tail -30 "$EV/build-cuda.log"; pack; exit 2; }
CUDA_ARMS_ALL="float-atomic libdevice-exp fmad gemm-fma ties forest-ties topk-ties nan-side kmeans-ties knn-bound agglo-order kde-order ets-sse-order svm-kernel-f32 mlp-grad-order mlp-softmax-order lm-attn-order arima-device-order gp-dev-order umap-float-sum ets-reg-order"
OCL_ARMS_ALL="float-atomic contract vendor-exp fast-relaxed-math gemm-fma ties forest-ties topk-ties nan-side kmeans-ties knn-bound agglo-order kde-order ets-sse-order svm-kernel-f32 mlp-grad-order mlp-softmax-order lm-attn-order arima-device-order gp-dev-order umap-float-sum"
# Controls: build options a driver or user may add that the profile must shrug
# off. -cl-mad-enable is one: OpenCL C's FP_CONTRACT pragma, OFF in the compat
# header, decides contraction, and the option must change no bit (the pragma
# turned ON is the contraction arm, `contract`). A control passes when every
# fixture is identical (refusals aside); a part fails the run.
OCL_CONTROLS="mad-enable"
ARMS=${ARMS-$CUDA_ARMS_ALL}
OCL_ARMS=${OCL_ARMS-$OCL_ARMS_ALL}
[ "${SKIP_ARMS:-0}" = 1 ] && ARMS="" && OCL_ARMS=""
( for v in $ARMS; do make -j"$((J / 2))" CUDA=1 CUDA_VARIANT=$v all >"$EV/build-cuda-$v.log" 2>&1 || echo "$v" >>"$EV/arm-build-failed"; done ) &
ARMPID=$!
S=build-cuda/samebits
$S doctor >"$EV/doctor.txt" 2>&1

# verdict FILE: "pass" when the verify run passed, else its first failing line
verdict() { if grep -q '^verify: PASS' "$1"; then echo pass; else grep -m1 -E 'DIFFERS|ERROR|REFUSED|FAIL' "$1" | sed 's/^ *//'; fi; }

# ---- 3. identity
say "identity"
timeout 900 $S verify $FAMARG --cards "$EV/cards-cuda" device=cuda >"$EV/verify-cuda.txt" 2>&1
summary "verify device=cuda: $(tail -n 2 "$EV/verify-cuda.txt" | head -n 1)"
timeout 900 $S verify $FAMARG --cards "$EV/cards-opencl" device=opencl >"$EV/verify-opencl.txt" 2>&1
summary "verify device=opencl (NVIDIA): $(tail -n 2 "$EV/verify-opencl.txt" | head -n 1)"
for t in 1 16; do
  timeout 900 $S verify $FAMARG --threads $t >"$EV/verify-cpu-$t.txt" 2>&1
  summary "verify cpu --threads $t: $(tail -n 2 "$EV/verify-cpu-$t.txt" | head -n 1)"
done
SAMEBITS_CUDA_HIST=global timeout 900 $S verify --family gbdt device=cuda >"$EV/verify-cuda-hist-global.txt" 2>&1
summary "verify gbdt device=cuda SAMEBITS_CUDA_HIST=global: $(verdict "$EV/verify-cuda-hist-global.txt")"
SAMEBITS_OPENCL_HIST=global timeout 900 $S verify device=opencl >"$EV/verify-opencl-hist-global.txt" 2>&1
summary "verify device=opencl SAMEBITS_OPENCL_HIST=global: $(verdict "$EV/verify-opencl-hist-global.txt")"
SAMEBITS_CUDA_FOREST_CHUNK=3 SAMEBITS_FOREST_LEVEL_CHUNK=5 timeout 900 $S verify --family forest device=cuda >"$EV/verify-cuda-chunks.txt" 2>&1
summary "verify forest device=cuda chunks 3/5: $(verdict "$EV/verify-cuda-chunks.txt")"

# ---- 4. arms
# arm_record LEG ARM FILE: FILE's fixture lines into arms.tsv (leg, arm, fixture,
# parted|identical|refused|error, first differing stage) and the arm's line in
# summary.txt: caught only when at least one fixture parted from its reference.
printf 'leg\tarm\tfixture\tverdict\tstage\n' >"$EV/arms.tsv"
NOT_CAUGHT=""
arm_record() {
  awk -v leg="$1" -v arm="$2" '
    /^  [^ ]+ +(identical|DIFFERS|REFUSED|ERROR)/ {
      w = $2; sub(/:$/, "", w)
      v = w == "identical" ? "identical" : w == "DIFFERS" ? "parted" : w == "REFUSED" ? "refused" : "error"
      st = "-"
      if (v == "parted" && match($0, /differ at stage [0-9]+: [^ ]+/)) { st = substr($0, RSTART, RLENGTH); sub(/^differ at stage [0-9]+: /, "", st) }
      printf "%s\t%s\t%s\t%s\t%s\n", leg, arm, $1, v, st
    }' "$3" >"$EV/arm-$1-$2.tsv"
  cat "$EV/arm-$1-$2.tsv" >>"$EV/arms.tsv"
  local n_p n_i n_r n_e where
  n_p=$(awk -F'\t' '$4 == "parted"' "$EV/arm-$1-$2.tsv" | wc -l)
  n_i=$(awk -F'\t' '$4 == "identical"' "$EV/arm-$1-$2.tsv" | wc -l)
  n_r=$(awk -F'\t' '$4 == "refused"' "$EV/arm-$1-$2.tsv" | wc -l)
  n_e=$(awk -F'\t' '$4 == "error"' "$EV/arm-$1-$2.tsv" | wc -l)
  where=$(awk -F'\t' '$4 == "parted" { printf "%s%s at %s", n++ ? ", " : "", $3, $5 }' "$EV/arm-$1-$2.tsv")
  if [ "$n_p" -gt 0 ]; then
    summary "$1 arm $2: caught: $n_p fixtures part ($where); $n_i identical, $n_r refused, $n_e errors"
  else
    summary "$1 arm $2: NOT CAUGHT: no fixture parts; $n_i identical, $n_r refused, $n_e errors"
    NOT_CAUGHT="$NOT_CAUGHT $1:$2"; FAIL=1
  fi
}
say "arms"
wait $ARMPID
for v in $ARMS; do
  if [ -x build-cuda-$v/samebits ]; then
    timeout 900 build-cuda-$v/samebits verify $FAMARG device=cuda >"$EV/verify-cuda-arm-$v.txt" 2>&1
    arm_record cuda "$v" "$EV/verify-cuda-arm-$v.txt"
  else
    summary "cuda arm $v: BUILD FAILED"; FAIL=1
  fi
done
for a in $OCL_ARMS; do
  SAMEBITS_OPENCL_ARM=$a timeout 900 $S verify $FAMARG device=opencl >"$EV/verify-opencl-arm-$a.txt" 2>&1
  arm_record opencl "$a" "$EV/verify-opencl-arm-$a.txt"
done
for a in $OCL_CONTROLS; do
  f="$EV/verify-opencl-control-$a.txt"
  SAMEBITS_OPENCL_ARM=$a timeout 900 $S verify $FAMARG device=opencl >"$f" 2>&1
  n_i=$(grep -cE '^  [^ ]+ +identical' "$f"); n_d=$(grep -cE '^  [^ ]+ +(DIFFERS|ERROR)' "$f")
  n_r=$(grep -cE '^  [^ ]+ +REFUSED' "$f")
  if [ "$n_d" = 0 ] && [ "$n_i" -gt 0 ]; then
    summary "opencl control $a: holds: $n_i fixtures identical, $n_r refused (the option changes no bit)"
  else
    summary "opencl control $a: BROKEN: $n_d fixtures differ or fail, $n_i identical, $n_r refused"; FAIL=1
  fi
done
# the contraction arms, operation by operation: which device operations they move
# (gini and entropy split scores, the linalg factorizations; no tree operation has a site)
parity_arm() { # LABEL FILE: the differing op configs of a parity run under an arm
  local ops
  ops=$(grep ': DIFFERS' "$2" | awk '{print $1 "/" $2}' | sort -u | tr '\n' ' ' | sed 's/ $//')
  summary "per-operation parity, $1: $(grep -c ': DIFFERS' "$2") differing op configs (${ops:-none})"
}
case " $ARMS " in *" fmad "*)
  if [ -x build-cuda-fmad/sb_unit ]; then
    timeout 600 build-cuda-fmad/sb_unit device_ops >"$EV/parity-cuda-arm-fmad.txt" 2>&1
    parity_arm "cuda fmad arm" "$EV/parity-cuda-arm-fmad.txt"
  fi ;;
esac
for a in contract mad-enable; do
  case " $OCL_ARMS $OCL_CONTROLS " in *" $a "*)
    SAMEBITS_OPENCL_ARM=$a timeout 600 build-cuda/sb_unit device_ops >"$EV/parity-opencl-arm-$a.txt" 2>&1
    parity_arm "opencl $a arm" "$EV/parity-opencl-arm-$a.txt" ;;
  esac
done
missing=""
for v in $CUDA_ARMS_ALL; do case " $ARMS " in *" $v "*) ;; *) missing="$missing cuda:$v" ;; esac; done
for a in $OCL_ARMS_ALL; do case " $OCL_ARMS " in *" $a "*) ;; *) missing="$missing opencl:$a" ;; esac; done
if [ -n "$missing" ] || [ -n "$FAM" ]; then
  summary "arms: INCOMPLETE: not run:${missing:- none}${FAM:+; fixtures of family $FAM only}"
else
  summary "arms: every arm on cuda and opencl over every fixture${NOT_CAUGHT:+; NOT CAUGHT:$NOT_CAUGHT}"
fi

# ---- 5. per-operation parity and predictions
say "parity and predictions"
# every device operation on cuda and NVIDIA's OpenCL against cpu-batched, on both
# histogram paths; then the float-atomic arm of each backend, which must fail it
SAMEBITS_PARITY_REQUIRE=cuda,opencl timeout 600 build-cuda/sb_unit device_ops >"$EV/parity.txt" 2>&1; rc=$?
summary "per-operation parity (cuda, opencl vs cpu-batched): $(grep -A3 '^device_ops summary' "$EV/parity.txt" | tail -n 2 | tr -s ' ' | tr '\n' ';') rc $rc"
[ $rc = 0 ] || FAIL=1
SAMEBITS_PARITY_REQUIRE=cuda,opencl SAMEBITS_CUDA_HIST=global SAMEBITS_OPENCL_HIST=global timeout 600 \
  build-cuda/sb_unit device_ops >"$EV/parity-hist-global.txt" 2>&1; rc=$?
summary "per-operation parity, histograms by global atomics: rc $rc"
[ $rc = 0 ] || FAIL=1
SAMEBITS_OPENCL_ARM=float-atomic timeout 600 build-cuda/sb_unit device_ops >"$EV/parity-opencl-arm-float-atomic.txt" 2>&1; rc=$?
summary "per-operation parity, opencl float-atomic arm (must fail): rc $rc, $(grep -c DIFFERS "$EV/parity-opencl-arm-float-atomic.txt") differing op configs"
[ $rc != 0 ] || FAIL=1
if [ -x build-cuda-float-atomic/sb_unit ]; then
  timeout 600 build-cuda-float-atomic/sb_unit device_ops >"$EV/parity-cuda-arm-float-atomic.txt" 2>&1; rc=$?
  summary "per-operation parity, cuda float-atomic arm (must fail): rc $rc, $(grep -c DIFFERS "$EV/parity-cuda-arm-float-atomic.txt") differing op configs"
  [ $rc != 0 ] || FAIL=1
fi
SAMEBITS_LIB=build-cuda/libsamebits.so SAMEBITS_FOREST_DEVICES=cuda,opencl,cpu-batched timeout 600 \
  python3 -m pytest tests/python/test_py_forest_devices.py -q -p no:cacheprovider >"$EV/forest-devices-pytest.txt" 2>&1
summary "forest devices (tests/python/test_py_forest_devices.py on cuda, opencl): $(tail -n 1 "$EV/forest-devices-pytest.txt")"
# agglomerative clustering's device matrix beside the CPU's tree at 4,200 rows (two blocks of the matrix), every linkage
SAMEBITS_LIB=build-cuda/libsamebits.so PYTHONPATH=python timeout 300 python3 -m pytest tests/python/test_py_agglomerative.py \
  -q -p no:cacheprovider -k gpu >"$EV/agglomerative-devices-pytest.txt" 2>&1 || FAIL=1
summary "agglomerative devices (tests/python/test_py_agglomerative.py -k gpu on cuda, opencl): $(tail -n 1 "$EV/agglomerative-devices-pytest.txt")"
# kernel density's sums on the device beside the CPU's bits, every kernel, weighted and not
SAMEBITS_LIB=build-cuda/libsamebits.so PYTHONPATH=python timeout 300 python3 -m pytest tests/python/test_py_kde.py \
  -q -p no:cacheprovider -k gpu >"$EV/kde-devices-pytest.txt" 2>&1 || FAIL=1
summary "kde devices (tests/python/test_py_kde.py -k gpu on cuda, opencl): $(tail -n 1 "$EV/kde-devices-pytest.txt")"
# the linear family's eigensolver on the device (Householder, Q, the QL rotations) against the host's
# sb_lin_eigh byte for byte, n up to 1024; the contraction arms of each backend must part it
SAMEBITS_PARITY_REQUIRE=cuda,opencl SAMEBITS_EIGH_BIG=1 timeout 300 build-cuda/sb_unit test_lin_eigh_device_roads_agree \
  >"$EV/eigh-devices.txt" 2>&1 || FAIL=1
summary "eigh devices (sb_unit test_lin_eigh_device_roads_agree on cuda, opencl): $(tail -n 1 "$EV/eigh-devices.txt")"
SAMEBITS_OPENCL_ARM=contract SAMEBITS_PARITY_REQUIRE=opencl timeout 300 build-cuda/sb_unit test_lin_eigh_device_roads_agree \
  >"$EV/eigh-opencl-arm-contract.txt" 2>&1; rc=$?
summary "eigh devices, opencl contract arm (must fail): rc $rc"
[ $rc != 0 ] || FAIL=1
if [ -x build-cuda-fmad/sb_unit ]; then
  SAMEBITS_PARITY_REQUIRE=cuda timeout 300 build-cuda-fmad/sb_unit test_lin_eigh_device_roads_agree >"$EV/eigh-cuda-arm-fmad.txt" 2>&1; rc=$?
  summary "eigh devices, cuda fmad arm (must fail): rc $rc"
  [ $rc != 0 ] || FAIL=1
fi
# kernel density's device sums and exponential smoothing's per-series device fit against the host, and the
# estimators on both backends (a series alone and inside a shuffled batch)
SAMEBITS_PARITY_REQUIRE=cuda,opencl timeout 300 build-cuda/sb_unit test_kde_device_sums_agree test_ets_devices_give_the_cpu_bits \
  test_gp_devices_give_the_cpu_bits >"$EV/kde-ets-device-units.txt" 2>&1 || FAIL=1
summary "kde, ets and gp device unit tests (cuda, opencl): $(tail -n 1 "$EV/kde-ets-device-units.txt")"
# support vector machines: the SMO's kernel rows and decision values on both backends against the host (ten
# cases), then the estimators (digest, attributes, decisions, probabilities)
SAMEBITS_PARITY_REQUIRE=cuda,opencl timeout 300 build-cuda/sb_unit test_svm_devices_give_the_cpu_bits \
  >"$EV/svm-device-units.txt" 2>&1 || FAIL=1
summary "svm device unit test (cuda, opencl): $(grep -E 'svm on' "$EV/svm-device-units.txt" | tr '\n' ' ') $(tail -n 1 "$EV/svm-device-units.txt")"
SAMEBITS_LIB=build-cuda/libsamebits.so PYTHONPATH=python timeout 300 python3 -m pytest tests/python/test_py_svm.py \
  -q -p no:cacheprovider -k gpu >"$EV/svm-devices-pytest.txt" 2>&1 || FAIL=1
summary "svm devices (tests/python/test_py_svm.py -k gpu on cuda, opencl): $(tail -n 1 "$EV/svm-devices-pytest.txt")"
SAMEBITS_LIB=build-cuda/libsamebits.so SAMEBITS_PARITY_REQUIRE=cuda,opencl PYTHONPATH=python timeout 300 python3 -m pytest \
  tests/python/test_py_ets_devices.py -q -p no:cacheprovider >"$EV/ets-devices-pytest.txt" 2>&1 || FAIL=1
summary "ets devices (tests/python/test_py_ets_devices.py on cuda, opencl): $(tail -n 1 "$EV/ets-devices-pytest.txt")"
# the multi-layer perceptrons trained on the device beside the CPU's bits (both solvers, early stopping)
SAMEBITS_LIB=build-cuda/libsamebits.so PYTHONPATH=python timeout 600 python3 -m pytest tests/python/test_py_mlp.py \
  -q -p no:cacheprovider -k "gpu or device" >"$EV/mlp-devices-pytest.txt" 2>&1 || FAIL=1
summary "mlp devices (tests/python/test_py_mlp.py -k gpu on cuda, opencl): $(tail -n 1 "$EV/mlp-devices-pytest.txt")"
# Gaussian process regression's estimator on both backends against the CPU (fit, predict, sample_y, the likelihood)
SAMEBITS_LIB=build-cuda/libsamebits.so SAMEBITS_PARITY_REQUIRE=cuda,opencl PYTHONPATH=python timeout 600 python3 -m pytest \
  tests/python/test_py_gp_devices.py -q -p no:cacheprovider >"$EV/gp-devices-pytest.txt" 2>&1 || FAIL=1
summary "gp devices (tests/python/test_py_gp_devices.py on cuda, opencl): $(tail -n 1 "$EV/gp-devices-pytest.txt")"
# forest warm start (tree k of a warm-started forest keyed by its index) and gradient boosting's per-node
# rules and DART (test_py_constraints.py, test_py_dart.py) on the GPU backends beside the CPU
SAMEBITS_LIB=build-cuda/libsamebits.so SAMEBITS_FOREST_DEVICES=cuda,opencl,cpu-batched PYTHONPATH=python timeout 300 \
  python3 -m pytest tests/python/test_py_warm_start.py tests/python/test_py_iforest_weights.py -q -p no:cacheprovider >"$EV/warm-start-devices-pytest.txt" 2>&1 || FAIL=1
summary "forest warm start devices (tests/python/test_py_warm_start.py on cuda, opencl): $(tail -n 1 "$EV/warm-start-devices-pytest.txt")"
SAMEBITS_LIB=build-cuda/libsamebits.so SAMEBITS_GBDT_DEVICES=cuda,opencl,cpu-batched PYTHONPATH=python timeout 300 \
  python3 -m pytest tests/python/test_py_constraints.py tests/python/test_py_dart.py tests/python/test_py_init_score.py tests/python/test_py_multivalid.py tests/python/test_py_categorical.py \
  -q -p no:cacheprovider \
  >"$EV/gbdt-rules-devices-pytest.txt" 2>&1 || FAIL=1
summary "gbdt constraints, dart and initial scores on devices (test_py_constraints.py, test_py_dart.py, test_py_init_score.py on cuda, opencl): $(tail -n 1 "$EV/gbdt-rules-devices-pytest.txt")"
for d in cuda opencl; do
  SAMEBITS_LIB=build-cuda/libsamebits.so PYTHONPATH=python timeout 600 python3 tools/predict_check.py $d >"$EV/predict-check-$d.txt" 2>&1
  summary "predict-check $d: $(tail -n 1 "$EV/predict-check-$d.txt")"
done

# ---- 6. speed
if [ "${SKIP_BENCH:-0}" != 1 ]; then
  say "bench"
  SAMEBITS_LIB=build-cuda/libsamebits.so PYTHONPATH=python${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 \
    timeout 900 python3 bench/gpu_device_bench.py --data "$DATA" --out "$EV/bench.json" ${BENCH_ARGS:-} >"$EV/bench.txt" 2>&1
  summary "bench: $(grep -E '^(cuda|opencl|xgboost) ' "$EV/bench.txt" | sed 's/"model_digest".*//' | tr '\n' ' ')"
  cp "$EV/bench.json" "$OUT/bench.json" 2>/dev/null
fi

if [ "${SKIP_GEMM_BENCH:-0}" != 1 ]; then
  say "gemm bench"
  make -j"$J" CUDA=1 bench-gemm >"$EV/build-gemm-bench.log" 2>&1
  make -j"$J" bench-gemm >>"$EV/build-gemm-bench.log" 2>&1
  PYTHONUNBUFFERED=1 timeout 1200 python3 bench/gemm_bench.py --devices cuda,opencl --peers torch,cupy \
    --reps ${GEMM_REPS:-5} --out "$EV/gemm-gpu.json" >"$EV/gemm-gpu.txt" 2>&1
  summary "gemm gpu: $(grep -c '^samebits' "$EV/gemm-gpu.txt") samebits rows; $(grep 'identical across' "$EV/gemm-gpu.txt")"
  # the host's exact int8 product on every path it has (AMX where the Xeon has it), then its speed
  timeout 300 build/sb_unit igemm >"$EV/igemm-unit.txt" 2>&1; rc=$?
  summary "host igemm unit (every path vs the scalar reference): rc $rc; $(grep -E 'amx|path' "$EV/igemm-unit.txt" | head -3 | tr '\n' ' ')"
  [ $rc = 0 ] || FAIL=1
  make -j"$J" build/igemm_bench >/dev/null 2>&1 && timeout 300 build/igemm_bench >"$EV/igemm-bench.txt" 2>&1
  PYTHONUNBUFFERED=1 timeout 900 python3 bench/gemm_bench.py --devices cpu --peers numpy --sizes ${GEMM_CPU_SIZES:-1024,4096} \
    --tall 0 --reps 3 --exe build/gemm_bench --out "$EV/gemm-cpu.json" >"$EV/gemm-cpu.txt" 2>&1
  summary "gemm cpu ($J cores): $(grep -E '^(samebits|peer)' "$EV/gemm-cpu.txt" | sed 's/"c_sha256".*//' | tr '\n' ' ' | cut -c1-600)"
  cp "$EV/gemm-gpu.json" "$EV/gemm-cpu.json" "$OUT/" 2>/dev/null
fi

for f in verify-cuda verify-opencl verify-cpu-1 verify-cpu-16; do
  # the host-only fixture (logit-train) is refused on a GPU by name, as
  # expected (the library's words "runs on the cpu only in this library");
  # every other fixture must be identical (umap-fit's batched cases run their
  # epochs on the device, its other cases on the host)
  if grep -E 'DIFFERS|ERROR' "$EV/$f.txt" >/dev/null ||
     grep 'REFUSED' "$EV/$f.txt" | grep -vE '^  (logit-train) +REFUSED SB_ERR_BACKEND_UNAVAILABLE: .*runs on the cpu only in this library' >/dev/null; then FAIL=1; fi
done
summary "result: $([ $FAIL = 0 ] && echo pass || echo FAIL)"
pack
exit $FAIL
