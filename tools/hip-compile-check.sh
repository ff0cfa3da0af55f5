#!/bin/sh
# hip-compile-check.sh: compiles the entry kernels of every program
# (src/kernels/entry/, through src/backends/cuda/entry_*.cu) with Debian's
# hipcc for an AMD GPU, HIP reusing the CUDA vocabulary through
# src/backends/hip/compat_hip.h: the same source CUDA and OpenCL build. Under
# the profile's flags: no contraction (HIP's clang contracts by default),
# denormals kept, division and square root correctly rounded, no fast-math.
# Nothing runs (no AMD GPU here); the HIP runtime glue is room for later.
# Run by `make test` (target hip-check).
#
# Usage: sh tools/hip-compile-check.sh [--outdir DIR]
# Environment: HIPCC (default hipcc from PATH); HIP_ARCH (default gfx90a, an
# MI200); SAMEBITS_REQUIRE_HIPCC=1 turns a missing hipcc into a failure.
# Exit status: 0 every program compiled (or SKIP), 1 a compile error.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUTDIR=build/hip
[ "${1:-}" = --outdir ] && OUTDIR=$2
HIPCC=${HIPCC:-$(command -v hipcc 2>/dev/null || true)}
if [ -z "$HIPCC" ]; then
  if [ "${SAMEBITS_REQUIRE_HIPCC:-0}" = 1 ]; then echo "hip-compile-check: FAIL: hipcc not found" >&2; exit 1; fi
  echo "hip-compile-check: SKIP: hipcc not found (Debian's hipcc package; set SAMEBITS_REQUIRE_HIPCC=1 to fail)"
  exit 0
fi
ARCH=${HIP_ARCH:-gfx90a}
FLAGS="--offload-arch=$ARCH -std=c++17 -O3 -ffp-contract=off -fno-fast-math -fno-gpu-flush-denormals-to-zero \
-fhip-fp32-correctly-rounded-divide-sqrt -Wall -Wextra -Werror -Iinclude -Isrc -include backends/hip/compat_hip.h"
mkdir -p "$OUTDIR"
status=0
for p in tree forest core linalg; do
  # hipcc asks rocm_agent_enumerator for the local GPUs first; with the target
  # named there are none to find, and its complaint is noise
  # shellcheck disable=SC2086  # flags are words on purpose
  if "$HIPCC" $FLAGS -x hip -c "src/backends/cuda/entry_$p.cu" -o "$OUTDIR/entry_$p.o" >"$OUTDIR/entry_$p.log" 2>&1; then
    echo "hip-compile-check: $p program: ok ($ARCH)"
  else
    grep -v -e rocm_agent -e Traceback -e '^  ' -e FileNotFoundError "$OUTDIR/entry_$p.log" >&2 || true
    echo "hip-compile-check: $p program: FAILED" >&2
    status=1
  fi
done
[ $status = 0 ] && echo "hip-compile-check: PASS ($($HIPCC --version 2>/dev/null | grep -m1 -i 'hip version' || echo hipcc); flags $FLAGS)"
exit $status
