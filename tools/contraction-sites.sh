#!/bin/sh
# contraction-sites.sh: where a contracting compiler can fuse a multiply into
# an add in samebits' code, found by compiling it both ways and comparing the
# machine code; the evidence behind docs/verification.md ("Where contraction
# can bite"). A contraction arm (make SABOTAGE=contract, CUDA_VARIANT=fmad,
# SAMEBITS_OPENCL_ARM=contract or mad-enable) can only part from a reference
# card where such a site is, and only with inputs whose product is inexact.
#
#   cpu   every library source (src/), by aarch64-linux-gnu-gcc at -O2 under
#         -ffp-contract=fast (the profile's -ffp-contract=off emits none: an
#         explicit fmaf is a call the arms leave alone): the source lines of
#         the fmadd/fmsub/fnmadd/fnmsub instructions, f32 or f64 (f64: the
#         host's clock arithmetic for timing, harmless), and how many
#   cuda  every entry kernel (src/backends/cuda/entry_*.cu), by nvcc under the
#         profile's flags and the fmad arm's (tools/cuda-compile-check.sh
#         --print-flags, for one architecture: CUDA_ARCH, default sm_90): the kernels whose count of fused multiply-adds
#         differs, in SASS through nvdisasm when it is found (NVDISASM, PATH,
#         the CUDA bin folder), else in PTX (fma.rn.f32; ptxas may still fuse
#         the plain mul.f32/add.f32 that -fmad=true leaves, so PTX can miss
#         sites: prefer SASS). The FFMAs present in both builds are the ones
#         the profile allows: IEEE division and square root, explicit fmaf.
#   OpenCL compiles the very entry sources CUDA does (src/kernels/entry/), so
#         its sites are the CUDA ones; PoCL and NVIDIA's driver are not
#         disassembled here.
#
# Usage: sh tools/contraction-sites.sh [cpu|cuda|all] [SRC...]
#   SRC  limit the cpu part to these sources (default: every src/**/*.c)
# Output: one line per site, "cpu FILE:LINE f32|f64 xCOUNT" or "cuda FILE KERNEL
# profile=N fmad=M", then a line "sites: N". Exit status: 0 (sites are facts,
# not failures), 2 a compiler is missing or a compile failed.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
WHAT=${1:-all}
[ $# -gt 0 ] && shift
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sb-sites.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
N=0

cpu_sites() {
  CC=${CROSS_CC:-aarch64-linux-gnu-gcc}
  command -v "$CC" >/dev/null || { echo "contraction-sites: $CC not found (Debian: gcc-aarch64-linux-gnu)" >&2; exit 2; }
  if [ $# -eq 0 ]; then set -- $(find src -name '*.c' ! -path 'src/backends/cuda/*' ! -path 'src/backends/hip/*' | sort); fi
  : >"$TMP/cpu"
  for s in "$@"; do
    # the profile's flags but -ffp-contract; debug line tables to name each site
    "$CC" -std=c11 -ffp-contract=fast -fno-fast-math -fexcess-precision=standard -O2 -g -fPIC -pthread \
      -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc -DSB_NO_OPENCL -S "$s" -o "$TMP/fast.s" || exit 2
    awk '/^\t\.file [0-9]+ "/ { f = $3; gsub(/"/, "", f); file[$2] = f }
         /^\t\.loc / { cur = file[$2] ":" $3 }
         /\tf(n)?m(add|sub)\ts[0-9]/ { print cur " f32" }
         /\tf(n)?m(add|sub)\td[0-9]/ { print cur " f64" }' "$TMP/fast.s" >>"$TMP/cpu"
  done
  # one line per source line (a header's site shows once, whatever includes it):
  # f32 the profile's data, f64 host clock arithmetic for timing
  sed 's|^[^ ]*\.\./|src/|; s|^src/src/|src/|' "$TMP/cpu" | sort | uniq -c | awk '{ print "cpu " $2 " " $3 " x" $1 }' \
    | sort -u -k2,2 >"$TMP/sites"
  cat "$TMP/sites"
  N=$((N + $(wc -l <"$TMP/sites")))
}

cuda_sites() {
  [ -d /usr/local/cuda/bin ] && PATH="$PATH:/usr/local/cuda/bin"
  NVCC=${NVCC:-$(command -v nvcc || true)}
  [ -n "$NVCC" ] || { echo "contraction-sites: nvcc not found" >&2; exit 2; }
  DIS=${NVDISASM:-$(command -v nvdisasm || true)}
  for e in src/backends/cuda/entry_*.cu; do
    for v in profile fmad; do
      if [ -n "$DIS" ]; then
        "$NVCC" $(CUDA_ARCH=${CUDA_ARCH:-sm_90} sh tools/cuda-compile-check.sh --print-flags $v) -cubin "$e" -o "$TMP/$v.cubin" || exit 2
        "$DIS" "$TMP/$v.cubin" | awk '/^\.text\.[A-Za-z_0-9]+:/ { k = $1; sub(/^\.text\./, "", k); sub(/:$/, "", k) }
          /FFMA/ { c[k]++ } END { for (k in c) print k, c[k] }' | sort >"$TMP/$v.cnt"
      else
        "$NVCC" $(CUDA_ARCH=${CUDA_ARCH:-sm_90} sh tools/cuda-compile-check.sh --print-flags $v) -ptx "$e" -o "$TMP/$v.ptx" || exit 2
        awk '/^\.visible \.entry/ { k = $3; sub(/\(.*/, "", k) } /fma\.rn\.f32/ { c[k]++ }
          END { for (k in c) print k, c[k] }' "$TMP/$v.ptx" | sort >"$TMP/$v.cnt"
      fi
    done
    join -a1 -a2 -e0 -o 0,1.2,2.2 "$TMP/profile.cnt" "$TMP/fmad.cnt" \
      | awk -v e="$e" -v how="$([ -n "$DIS" ] && echo sass || echo ptx)" \
        '$2 != $3 { print "cuda " e " " $1 " profile=" $2 " fmad=" $3 " (" how ")" }' >"$TMP/sites"
    cat "$TMP/sites"
    N=$((N + $(wc -l <"$TMP/sites")))
  done
}

case "$WHAT" in
  cpu) cpu_sites "$@" ;;
  cuda) cuda_sites ;;
  all) cpu_sites "$@"; cuda_sites ;;
  *) echo "usage: sh tools/contraction-sites.sh [cpu|cuda|all] [SRC...]" >&2; exit 2 ;;
esac
echo "sites: $N"
