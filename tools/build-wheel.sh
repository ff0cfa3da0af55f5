#!/bin/sh
# build-wheel.sh ARCH BUILD DIST: the samebits wheel for ARCH (x86_64 or aarch64)
# from the binaries already built in BUILD (make wheel / make wheel-aarch64 build
# them with the profile's flags), into DIST, repaired by auditwheel; x86_64 also
# writes the sdist. Steps:
#   1. `python3 -m build --no-isolation` (x86_64: --sdist --wheel from this tree;
#      aarch64: setup.py bdist_wheel --plat-name linux_aarch64, a cross build),
#      with SAMEBITS_WHEEL_BUILD=BUILD, so setup.py packs BUILD's library and CLI
#      instead of running make, and writes the build facts (_build_facts.json);
#   2. `auditwheel repair` to the lowest manylinux tag the binaries allow, which
#      also checks that they link only what that policy permits;
#   3. tools/isa_gate.py over every ELF file inside the repaired wheel.
# Needs: build, wheel, setuptools and auditwheel from PyPI; patchelf from Debian
# (tools/ensure-deps.sh installs them).
set -eu
ARCH=$1
BUILD=$2
DIST=$3
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
PY=${PY:-python3}
RAW="$BUILD/wheel-raw"
rm -rf "$RAW" "$BUILD/python" build/python
mkdir -p "$RAW" "$DIST"
for f in "$BUILD/libsamebits.so" "$BUILD/samebits"; do
  [ -f "$f" ] || { echo "build-wheel: $f is missing (make wheel builds it)" >&2; exit 2; }
done
export SAMEBITS_WHEEL_BUILD="$BUILD" SAMEBITS_WHEEL_ARCH="$ARCH"
if [ "$ARCH" = x86_64 ]; then
  rm -f "$DIST"/samebits-*.tar.gz "$DIST"/samebits-*x86_64.whl
  $PY -m build --no-isolation --sdist --wheel --outdir "$RAW" . >"$RAW/build.log" 2>&1 \
    || { tail -30 "$RAW/build.log" >&2; echo "build-wheel: python -m build failed" >&2; exit 1; }
  mv "$RAW"/samebits-*.tar.gz "$DIST"/
else
  rm -f "$DIST"/samebits-*aarch64.whl
  $PY setup.py -q bdist_wheel --plat-name "linux_$ARCH" --dist-dir "$RAW" >"$RAW/build.log" 2>&1 \
    || { tail -30 "$RAW/build.log" >&2; echo "build-wheel: bdist_wheel failed" >&2; exit 1; }
fi
whl=$(ls "$RAW"/samebits-*-py3-none-linux_"$ARCH".whl)
# auditwheel: the lowest policy the binaries' symbol versions allow.
plat=$($PY -m auditwheel show "$whl" 2>&1 | $PY -c "import re, sys; m = re.search(r'platform tag:\s*\"([^\"]+)\"', sys.stdin.read()); print(m.group(1) if m else '')")
[ -n "$plat" ] || { $PY -m auditwheel show "$whl" >&2; echo "build-wheel: auditwheel names no platform tag" >&2; exit 1; }
if [ "$ARCH" = "$(uname -m)" ]; then
  $PY -m auditwheel repair --plat "$plat" -w "$DIST" "$whl" >"$RAW/auditwheel.log" 2>&1 \
    || { cat "$RAW/auditwheel.log" >&2; echo "build-wheel: auditwheel repair failed" >&2; exit 1; }
else
  # auditwheel repairs only wheels of the host's architecture; `show` has read this
  # one (its ELF files, their symbol versions and needed libraries) and found it
  # within the policy with nothing to graft, so the tag is set without repair.
  if $PY -m auditwheel show "$whl" 2>&1 | grep -q "external shared libraries are required"; then
    $PY -m auditwheel show "$whl" >&2; echo "build-wheel: $whl needs libraries outside the policy" >&2; exit 1
  fi
  $PY -m wheel tags --remove --platform-tag "$plat" "$whl" >"$RAW/tags.log" 2>&1 \
    || { cat "$RAW/tags.log" >&2; echo "build-wheel: wheel tags failed" >&2; exit 1; }
  mv "$RAW"/samebits-*-"$plat".whl "$DIST"/
fi
out=$(ls -t "$DIST"/samebits-*"$ARCH".whl | head -1)
# The gate over what ships: every ELF file in the wheel, grafted libraries too.
chk="$RAW/unpacked"
rm -rf "$chk"
mkdir -p "$chk"
$PY -c "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])" "$out" "$chk"
elfs=$($PY -c "
import os, sys
for d, _, fs in os.walk(sys.argv[1]):
    for f in fs:
        p = os.path.join(d, f)
        with open(p, 'rb') as h:
            if h.read(4) == b'\\x7fELF':
                print(p)" "$chk")
[ -n "$elfs" ] || { echo "build-wheel: no binary in $out" >&2; exit 1; }
# shellcheck disable=SC2086
$PY tools/isa_gate.py --arch "$ARCH" $elfs
echo "build-wheel: $out ($plat)"
