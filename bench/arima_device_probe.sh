#!/bin/sh
# Build and run bench/arima_device_probe.cu on a CUDA machine: the profile's
# nvcc flags (tools/cuda-compile-check.sh), for sm_90 alone. Usage:
#   [SRC=dir] sh bench/arima_device_probe.sh OUTDIR [E]
# SRC: a copy of src/ to compile the kernels from instead (an A/B's variant).
set -eu
out=${1:?usage: arima_device_probe.sh OUTDIR [E]}
mkdir -p "$out"
fl=$(sh tools/cuda-compile-check.sh --print-flags profile | sed 's/-gencode [^ ]*//g')
# SRC's -I first: the profile's flags carry -Isrc themselves, and the first
# directory that holds kernels/arima.h is the one compiled
nvcc -I"${SRC:-src}" $fl -gencode arch=compute_90,code=sm_90 bench/arima_device_probe.cu -o "$out/probe"
[ -f "$out/../ys.bin" ] || python3 bench/arima_probe_data.py "$out/../ys.bin" 10000
"$out/probe" "$out/../ys.bin" "${2:-50}"
rm -f "$out/probe"
