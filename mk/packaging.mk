# packaging.mk: wheels and the instruction-set gate (issue 32; docs/packaging.md).
#   make wheel          dist/: the sdist and the x86-64 wheel, built from this tree by
#                       `python3 -m build`, repaired and checked by auditwheel. The CUDA
#                       backend is in it when nvcc is here (build-cuda/), OpenCL always (the
#                       loader is opened at run time): one wheel for machines with and without
#                       a GPU
#   make wheel-aarch64  dist/: the aarch64 wheel, cross-built (build-aarch64-dyn/: dynamic,
#                       OpenCL opened at run time; no CUDA), repaired by auditwheel
#   make wheels         both
#   make isa-gate       tools/isa_gate.py over every binary the wheels ship, then its arms: a
#                       build with -mavx512f (build-isa-arm/) and an aarch64 one with
#                       -march=armv8.2-a+dotprod (build-isa-arm-aarch64/) must fail the gate
#   make wheel-check    each wheel installed into a fresh venv holding nothing else, then
#                       `samebits version`, `doctor` and `verify` through its console script;
#                       the aarch64 one under qemu-user with Debian's own arm64 CPython
#                       (tools/qemu-python.sh)
# tests/integration/test_packaging.py runs these in `make test`.

PY ?= python3
DIST ?= dist
HAVE_NVCC := $(shell command -v nvcc >/dev/null 2>&1 && echo 1 || ( [ -x /usr/local/cuda/bin/nvcc ] && echo 1 ))
WHEEL_BUILD := $(if $(HAVE_NVCC),build-cuda,build)
WHEEL_MAKE := $(if $(HAVE_NVCC),CUDA=1,)
A64_BUILD := build-aarch64-dyn

.PHONY: wheel wheel-aarch64 wheels isa-gate wheel-check wheel-bins a64-dyn-bins isa-arm-bins isa-arm-a64-bins

# The binaries a wheel ships, built by the ordinary rules with the profile's flags.
wheel-bins:
	$(MAKE) -j$(JOBS) $(WHEEL_MAKE) $(WHEEL_BUILD)/libsamebits.so $(WHEEL_BUILD)/samebits

a64-dyn-bins:
	$(MAKE) -j$(JOBS) ARCH=aarch64 BUILD=$(A64_BUILD) LINK_STATIC= OPENCL=1 \
	  $(A64_BUILD)/libsamebits.so $(A64_BUILD)/samebits

wheel: wheel-bins
	sh tools/build-wheel.sh x86_64 $(WHEEL_BUILD) $(DIST)

wheel-aarch64: a64-dyn-bins
	sh tools/build-wheel.sh aarch64 $(A64_BUILD) $(DIST)

wheels: wheel wheel-aarch64

# The arm: the same sources with -mavx512f (the seed's withdrawn wheel), which the
# gate must refuse; built apart so no shipped binary is touched.
isa-arm-bins:
	$(MAKE) -j$(JOBS) BUILD=build-isa-arm OPENCL=1 EXTRA_CFLAGS=-mavx512f build-isa-arm/libsamebits.so

isa-arm-a64-bins:
	$(MAKE) -j$(JOBS) ARCH=aarch64 BUILD=build-isa-arm-aarch64 LINK_STATIC= OPENCL=1 EXTRA_CFLAGS=-march=armv8.2-a+dotprod \
	  build-isa-arm-aarch64/libsamebits.so

isa-gate: wheel-bins a64-dyn-bins isa-arm-bins isa-arm-a64-bins
	$(PY) tools/isa_gate.py --arch x86_64 $(WHEEL_BUILD)/libsamebits.so $(WHEEL_BUILD)/samebits
	$(PY) tools/isa_gate.py --arch aarch64 $(A64_BUILD)/libsamebits.so $(A64_BUILD)/samebits
	@if $(PY) tools/isa_gate.py --arch x86_64 build-isa-arm/libsamebits.so >build-isa-arm/gate.txt; then \
	  cat build-isa-arm/gate.txt; echo "isa-gate: the -mavx512f arm PASSED the gate: the gate is broken"; exit 1; \
	else head -3 build-isa-arm/gate.txt; echo "isa-gate: arm (-mavx512f) refused, as it must be"; fi
	@if $(PY) tools/isa_gate.py --arch aarch64 build-isa-arm-aarch64/libsamebits.so >build-isa-arm-aarch64/gate.txt; then \
	  cat build-isa-arm-aarch64/gate.txt; echo "isa-gate: the armv8.2-a arm PASSED the gate: the gate is broken"; exit 1; \
	else head -3 build-isa-arm-aarch64/gate.txt; echo "isa-gate: arm (-march=armv8.2-a+dotprod) refused, as it must be"; fi

wheel-check:
	sh tools/wheel-check.sh $(DIST)
