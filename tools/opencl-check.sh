#!/bin/sh
# opencl-check.sh: builds the OpenCL leg of the profile-core fixture
# (src/backends/opencl/profile_core_cl.c) into build/opencl/, runs it on an
# OpenCL device (PoCL in CI) and runs its separating arms; docs/opencl.md.
#
#   leg                the profile's build options; its card must be identical
#                      to the reference card
#   fast-relaxed-math  + -cl-fast-relaxed-math (rule 2/4: reassociation, no
#                      NaN/inf/signed-zero guarantees)
#   contract           + -DSB_SABOTAGE_CONTRACT: FP_CONTRACT ON in the source
#                      (-cl-mad-enable is no arm on PoCL: its clang ignores it
#                      on x86; the pragma alone decides contraction)
# Each arm's card must DIFFER from the reference; the first differing stage is
# printed. Reference: fixtures/cards/profile-core.card, or, while that file
# does not exist, a card made here by `build/samebits fixture run profile-core
# --threads 1` (build/opencl/cpu-reference.card).
#
# Usage: sh tools/opencl-check.sh [--build-only] [--device N]
#   --build-only  compile and link build/opencl/profile_core_cl, run nothing
#   --device N    OpenCL device index (profile_core_cl --list); also env
#                 SAMEBITS_OPENCL_DEVICE
# Environment: CC (default gcc); POCL_CACHE_DIR (default
# build/opencl/pocl-cache, so that runs are self-contained).
# Cards: build/opencl/profile-core.card (the leg) and
# build/opencl/profile-core-arm-NAME.card.
# Exit status: 0 the build succeeded (--build-only), or the leg is identical to
# the reference and every arm that ran differs; 1 otherwise; 2 usage.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=build/opencl
EXE=$OUT/profile_core_cl
BUILD_ONLY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build-only) BUILD_ONLY=1; shift ;;
    --device) [ $# -ge 2 ] || { echo "opencl-check: --device needs a value" >&2; exit 2; }
              SAMEBITS_OPENCL_DEVICE=$2; export SAMEBITS_OPENCL_DEVICE; shift 2 ;;
    -h|--help) sed -n '2,32p' "$0"; exit 0 ;;
    *) echo "opencl-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

# The library's profile flags (Makefile PROFILE_FLAGS for this machine).
CC=${CC:-gcc}
PROFILE_FLAGS="-std=c11 -ffp-contract=off -fno-fast-math -fexcess-precision=standard"

if [ ! -f build/libsamebits.a ] || [ ! -x build/samebits ]; then
  echo "== make (build/libsamebits.a or build/samebits is missing)"
  make
fi
mkdir -p "$OUT"
echo "== build $EXE"
# shellcheck disable=SC2086
$CC $PROFILE_FLAGS -O2 -g -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc \
  -DSB_CL_SRC_DIR="\"$ROOT/src\"" src/backends/opencl/profile_core_cl.c build/libsamebits.a \
  -lOpenCL -pthread -lm -o "$EXE"
[ "$BUILD_ONLY" = 1 ] && { echo "built $EXE"; exit 0; }

: "${POCL_CACHE_DIR:=$ROOT/$OUT/pocl-cache}"
export POCL_CACHE_DIR
mkdir -p "$POCL_CACHE_DIR"

REF=fixtures/cards/profile-core.card
if [ ! -f "$REF" ]; then
  REF=$OUT/cpu-reference.card
  echo "== no fixtures/cards/profile-core.card yet: CPU reference $REF"
  build/samebits fixture run profile-core --threads 1 --out "$REF"
fi

FAIL=0

# run_leg NAME EXTRA: runs the program with extra build options EXTRA into
# $OUT/profile-core[-arm-NAME].card; prints where; returns its exit status.
run_leg() {
  if [ "$1" = leg ]; then card=$OUT/profile-core.card; else card=$OUT/profile-core-arm-$1.card; fi
  rm -f "$card"
  "$EXE" --out "$card" --build-options-extra "$2"
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
  echo "leg: FAILED, profile_core_cl did not produce a card (exit status above)"; FAIL=1
fi

# arm NAME EXTRA: runs one separating arm; it must produce a card that differs.
arm() {
  echo "== arm $1 ($2)"
  if ! run_leg "$1" "$2"; then
    echo "arm $1: FAILED, profile_core_cl did not produce a card"; FAIL=1; return 0
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

arm fast-relaxed-math -cl-fast-relaxed-math
arm contract -DSB_SABOTAGE_CONTRACT

if [ $FAIL -eq 0 ]; then echo "opencl-check: passed"; else echo "opencl-check: FAILED"; fi
exit $FAIL
