#!/bin/sh
# cuda-compile-check.sh: compiles the CUDA backend of the device layer and the
# entry kernels (every GPU family and the profile-core fixture) with nvcc under
# the numeric profile's flags (make CUDA=1), and its separating arms the same
# way (CUDA_VARIANT=fmad, libdevice-exp, float-atomic, gemm-fma), into build-cuda/ and
# build-cuda-VARIANT/. Run by `make test` (target cuda-check) on CI machines,
# which have nvcc but no GPU: nothing is run, only compiled and linked.
# tools/device-h200.sh uses it too, so the flags live in this one place.
#
# Usage: sh tools/cuda-compile-check.sh [--outdir DIR] [--print-flags VARIANT]
#   --outdir DIR          where the build logs go (default build/cuda)
#   --print-flags VARIANT print the nvcc flags of VARIANT (profile, fmad,
#                         libdevice-exp, float-atomic, gemm-fma) on one line and exit
# The arms: fmad (nvcc's default contraction, -fmad=true), libdevice-exp (the
# entry kernels' exp through CUDA's expf), float-atomic (histogram sums as
# float atomics), gemm-fma (the matrix product's parts recombined in float with fma),
# ties, forest-ties, topk-ties (the kernels' tie rules of gradient boosting, forests and
# top-k broken as the CPU arms of those names break them), nan-side (missing values
# always left at a node without any, the rule before the majority's; compiled only on request,
# CUDA_CHECK_ARMS="...", and by tools/device-h200.sh). CUDA_CHECK_ARMS="..." narrows them ("" for none).
# Environment: NVCC (default: nvcc from PATH, then /usr/local/cuda/bin/nvcc);
# CUDA_ARCH (default: every architecture, see below; sm_90 for the arms); SAMEBITS_REQUIRE_NVCC=1 turns a missing nvcc into
# a failure instead of a SKIP.
# Exit status: 0 all compiled (or SKIP), 1 a compile or link error or a
# missing nvcc under SAMEBITS_REQUIRE_NVCC=1, 2 usage.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUTDIR=build/cuda
PRINT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --outdir) OUTDIR=$2; shift 2 ;;
    --print-flags) PRINT=$2; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "cuda-compile-check: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

# The architectures: machine code for compute capability 7.5 (the oldest nvcc 13
# supports) and for each major generation after it (a binary for X.0 runs on
# every X.y, y >= 0: sm_80 serves 8.6, 8.7, 8.9; sm_100 serves 10.3; sm_120
# serves 12.1), and PTX of the newest for GPUs newer than this nvcc, which
# the driver compiles at load time. With -fmad=false the PTX spells every
# multiply and add with its rounding (mul.rn, add.rn), which ptxas never
# fuses, so a load-time compile keeps the profile. The separating arms are run
# only on the H200 and are built for it alone (sm_90). CUDA_ARCH=sm_XX narrows
# every build to one architecture (development).
CUDA_ARCHS_ALL="-gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_100,code=sm_100 -gencode arch=compute_110,code=sm_110 -gencode arch=compute_120,code=sm_120 -gencode arch=compute_120,code=compute_120 --threads 0"
if [ -n "${CUDA_ARCH:-}" ]; then PROFILE_ARCH="-arch=$CUDA_ARCH"; ARM_ARCH="-arch=$CUDA_ARCH"
else PROFILE_ARCH=$CUDA_ARCHS_ALL; ARM_ARCH="-arch=sm_90"; fi
# The profile (DESIGN.md section 1, rule 2): no contraction, denormals kept,
# correctly rounded division and square root; host code likewise.
COMMON_FLAGS="-std=c++17 -O3 -fmad=false -ftz=false -prec-div=true -prec-sqrt=true -Xcompiler -ffp-contract=off,-fno-fast-math,-Wall,-Wextra,-Werror -Werror all-warnings -Iinclude -Isrc"

# flags_of VARIANT: prints the nvcc flags of one build variant.
PROFILE_FLAGS="$COMMON_FLAGS $PROFILE_ARCH"
ARM_FLAGS="$COMMON_FLAGS $ARM_ARCH"
flags_of() {
  case "$1" in
    profile) echo "$PROFILE_FLAGS" ;;
    fmad) echo "$ARM_FLAGS" | sed 's/-fmad=false/-fmad=true/' | sed 's/$/ -DSB_CUDA_ARM_FMAD/' ;;
    libdevice-exp) echo "$ARM_FLAGS -DSB_ARM_VENDOR_EXP" ;;
    float-atomic) echo "$ARM_FLAGS -DSB_ARM_FLOAT_ATOMIC" ;;
    gemm-fma) echo "$ARM_FLAGS -DSB_ARM_GEMM_FMA" ;;
    ties) echo "$ARM_FLAGS -DSB_SABOTAGE_TIES" ;;
    forest-ties) echo "$ARM_FLAGS -DSB_SABOTAGE_FOREST_TIES" ;;
    topk-ties) echo "$ARM_FLAGS -DSB_SABOTAGE_TOPK_TIES" ;;
    nan-side) echo "$ARM_FLAGS -DSB_SABOTAGE_NAN_SIDE" ;;
    kmeans-ties) echo "$ARM_FLAGS -DSB_SABOTAGE_KMEANS_TIES" ;;
    knn-bound) echo "$ARM_FLAGS -DSB_SABOTAGE_KNN_BOUND" ;;
    agglo-order) echo "$ARM_FLAGS -DSB_SABOTAGE_AGGLO_ORDER" ;;
    kde-order) echo "$ARM_FLAGS -DSB_SABOTAGE_KDE_ORDER" ;;
    ets-sse-order) echo "$ARM_FLAGS -DSB_SABOTAGE_ETS_SSE_ORDER" ;;
    ets-reg-order) echo "$ARM_FLAGS -DSB_SABOTAGE_ETS_REG_ORDER" ;;
    svm-kernel-f32) echo "$ARM_FLAGS -DSB_SABOTAGE_SVM_KERNEL_F32" ;;
    mlp-grad-order) echo "$ARM_FLAGS -DSB_SABOTAGE_MLP_GRAD_ORDER" ;;
    mlp-softmax-order) echo "$ARM_FLAGS -DSB_SABOTAGE_MLP_SOFTMAX_ORDER" ;;
    lm-attn-order) echo "$ARM_FLAGS -DSB_SABOTAGE_LM_ATTN_ORDER" ;;
    arima-device-order) echo "$ARM_FLAGS -DSB_SABOTAGE_ARIMA_DEVICE_ORDER" ;;
    gp-dev-order) echo "$ARM_FLAGS -DSB_SABOTAGE_GP_DEV_ORDER" ;;
    umap-float-sum) echo "$ARM_FLAGS -DSB_SABOTAGE_UMAP_FLOAT_SUM" ;;
    *) echo "cuda-compile-check: unknown variant '$1'" >&2; return 2 ;;
  esac
}

if [ -n "$PRINT" ]; then
  flags_of "$PRINT"
  exit $?
fi

# Find nvcc: NVCC, then PATH, then the usual install location.
if [ -d /usr/local/cuda/bin ]; then PATH="$PATH:/usr/local/cuda/bin"; export PATH; fi
NVCC=${NVCC:-$(command -v nvcc 2>/dev/null || true)}
if [ -z "$NVCC" ] || [ ! -x "$NVCC" ]; then
  if [ "${SAMEBITS_REQUIRE_NVCC:-0}" = 1 ]; then
    echo "cuda-compile-check: FAIL: nvcc not found (PATH, /usr/local/cuda/bin) and SAMEBITS_REQUIRE_NVCC=1" >&2
    exit 1
  fi
  echo "cuda-compile-check: SKIP: nvcc not found (PATH, /usr/local/cuda/bin); the CUDA leg was not compiled (set SAMEBITS_REQUIRE_NVCC=1 to make this a failure)"
  exit 0
fi

if [ ! -f build/libsamebits.a ]; then
  echo "cuda-compile-check: build/libsamebits.a missing; building it"
  ${MAKE:-make} build/libsamebits.a
fi

mkdir -p "$OUTDIR"
echo "cuda-compile-check: $("$NVCC" --version | tail -n 2 | head -n 1)"
status=0
# The CUDA backend of the device layer and the entry kernels (src/kernels/entry/, the
# source OpenCL builds too): the whole library, CLI and unit runner with it
# (make CUDA=1 into build-cuda/), and each separating arm (CUDA_VARIANT=... into
# build-cuda-VARIANT/), nvcc under the flags above. Nothing runs: no GPU here.
J=$(nproc 2>/dev/null || echo 2)
for variant in profile ${CUDA_CHECK_ARMS-fmad libdevice-exp float-atomic gemm-fma}; do
  log="$OUTDIR/build-cuda-$variant.log"
  echo "cuda-compile-check: $variant: make CUDA=1 CUDA_VARIANT=$variant"
  if NVCC="$NVCC" ${MAKE:-make} -j"$J" CUDA=1 CUDA_VARIANT="$variant" all >"$log" 2>&1; then
    echo "cuda-compile-check: $variant: ok"
  else
    tail -n 30 "$log" >&2
    echo "cuda-compile-check: $variant: FAILED to compile or link (log: $log)" >&2
    status=1
  fi
done
[ $status = 0 ] && echo "cuda-compile-check: PASS (compiled and linked; nothing run: no GPU needed)"
exit $status
