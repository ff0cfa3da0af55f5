#!/bin/sh
# opencl-check.sh: the OpenCL leg of the profile-core fixture: the fixture run
# on an OpenCL device through the device layer (`samebits fixture run
# profile-core device=opencl`: the entry kernels of
# src/kernels/entry/core_entry.h, the source CUDA compiles too), PoCL in CI,
# and its separating arms (SAMEBITS_OPENCL_ARM); docs/opencl.md.
#
#   leg                the profile's build options; its card must be identical
#                      to the reference card
#   fast-relaxed-math  + -cl-fast-relaxed-math (rule 2/4: reassociation, no
#                      NaN/inf/signed-zero guarantees)
#   contract           + -DSB_SABOTAGE_CONTRACT: FP_CONTRACT ON in the source
#                      (-cl-mad-enable is no arm on PoCL: its clang ignores it
#                      on x86; the pragma alone decides contraction)
#   vendor-exp         math.exp through OpenCL's built-in exp (rule 3)
# Each arm's card must DIFFER from the reference; the first differing stage is
# printed. Reference: fixtures/cards/profile-core.card.
#
# Usage: sh tools/opencl-check.sh [--build-only] [--device P:D|N]
#   --build-only  check that build/samebits has the OpenCL backend, run nothing
#   --device D    the OpenCL device (SAMEBITS_OPENCL_DEVICE; samebits doctor lists them)
# Environment: POCL_CACHE_DIR (default build/opencl/pocl-cache, so that runs
# are self-contained).
# Cards: build/opencl/profile-core.card (the leg) and
# build/opencl/profile-core-arm-NAME.card.
# Exit status: 0 the build has the backend (--build-only), or the leg is
# identical to the reference and every arm differs; 1 otherwise; 2 usage.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=build/opencl
BUILD_ONLY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build-only) BUILD_ONLY=1; shift ;;
    --device) [ $# -ge 2 ] || { echo "opencl-check: --device needs a value" >&2; exit 2; }
              SAMEBITS_OPENCL_DEVICE=$2; export SAMEBITS_OPENCL_DEVICE; shift 2 ;;
    -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    *) echo "opencl-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

if [ ! -x build/samebits ]; then
  echo "== make (build/samebits is missing)"
  make
fi
if ! build/samebits doctor 2>/dev/null | grep -q '^opencl: built'; then
  echo "opencl-check: FAILED: build/samebits has no OpenCL backend"; exit 1
fi
[ "$BUILD_ONLY" = 1 ] && { echo "opencl-check: build/samebits has the OpenCL backend"; exit 0; }
mkdir -p "$OUT"

: "${POCL_CACHE_DIR:=$ROOT/$OUT/pocl-cache}"
export POCL_CACHE_DIR
mkdir -p "$POCL_CACHE_DIR"

REF=fixtures/cards/profile-core.card
FAIL=0

# run_leg NAME ARM: the fixture on device=opencl (ARM: SAMEBITS_OPENCL_ARM, or empty).
run_leg() {
  if [ "$1" = leg ]; then card=$OUT/profile-core.card; else card=$OUT/profile-core-arm-$1.card; fi
  rm -f "$card"
  if [ -n "$2" ]; then
    SAMEBITS_OPENCL_ARM=$2 build/samebits fixture run profile-core device=opencl --out "$card"
  else
    build/samebits fixture run profile-core device=opencl --out "$card"
  fi
  dev=$(sed -n 's/.*"meta.device":"\([^"]*\)".*/\1/p' "$card" | head -n 1)
  echo "profile_core: ${dev:-unknown device}: card $card"
}

echo "== leg (reference $REF)"
if run_leg leg ""; then
  d=$(build/samebits card diff "$REF" "$OUT/profile-core.card" 2>&1) && rc=0 || rc=$?
  if [ $rc -eq 0 ]; then
    echo "leg: identical to $REF"
  else
    echo "leg: FAILED, differs from $REF:"; echo "$d"; FAIL=1
  fi
else
  echo "leg: FAILED, the fixture did not produce a card (exit status above)"; FAIL=1
fi

arm() {
  echo "== arm $1"
  if ! run_leg "$1" "$1"; then
    echo "arm $1: FAILED, the fixture did not produce a card"; FAIL=1; return 0
  fi
  d=$(build/samebits card diff "$REF" "$OUT/profile-core-arm-$1.card" 2>&1) && rc=0 || rc=$?
  if [ $rc -eq 1 ]; then
    echo "arm $1: differs, as it must: $(echo "$d" | head -n 1)"
  elif [ $rc -eq 0 ]; then
    echo "arm $1: FAILED, INERT: identical to the reference, so this arm separates nothing"
    FAIL=1
  else
    echo "arm $1: FAILED, card diff error: $d"; FAIL=1
  fi
}

arm fast-relaxed-math
arm contract
arm vendor-exp

if [ $FAIL -eq 0 ]; then echo "opencl-check: passed"; else echo "opencl-check: FAILED"; fi
exit $FAIL
