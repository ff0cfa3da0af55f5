#!/bin/sh
# ensure-deps.sh: install what `make test` needs when it is missing, from Debian's
# packages and PyPI only: the cross compilers and qemu-user for the aarch64 and
# s390x legs, PoCL for OpenCL on the CPU, and pytest. Installs nothing that is
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
[ -e /usr/include/CL/cl.h ] || need_apt="$need_apt ocl-icd-opencl-dev opencl-headers"

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

if [ -n "$need_apt" ]; then
  echo "ensure-deps: installing Debian packages:$need_apt"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $need_apt
fi

if ! python3 -c 'import pytest' >/dev/null 2>&1; then
  echo "ensure-deps: installing pytest"
  python3 -m pip install -q pytest 2>/dev/null \
    || python3 -m pip install -q --break-system-packages pytest 2>/dev/null \
    || { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-pytest; }
fi
python3 -c 'import pytest' || { echo "ensure-deps: pytest could not be installed" >&2; exit 1; }
