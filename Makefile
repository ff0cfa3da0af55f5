# samebits build. User-facing targets:
#   make                 build/libsamebits.so, build/libsamebits.a, build/samebits
#   make test            install missing tools, build every leg and arm, run every test
#   make demo            build, then doctor and a small identity-card demo
#   make ARCH=aarch64    the same build for aarch64 (or s390x) into build-ARCH/, static,
#                        runnable under qemu-user
#   make SABOTAGE=NAME   a deliberately broken build (a separating arm) into
#                        build[-ARCH]-sabotage-NAME/; NAME: contract, libm-exp,
#                        thread-chunks, excess-precision (meaningful with ARCH=s390x),
#                        float-hist, ties, rng-order, rank-ties (gradient boosting),
#                        forest-keys (the forest device keys nodes by creation order),
#                        gemm-order (the product summed in float, chunked by thread count),
#                        gemm-fma (the product's parts recombined in float with fmaf),
#                        reduce-order (linalg sums, norms, distances in float, chunked
#                        by thread count), topk-ties (selection ties to the higher index)
#                        jacobi-order (the eigensolver's sweeps in another order),
#                        libm-log, libm-sigmoid (glibc's logf; the sigmoid through
#                        expf), forest-ties (forest split ties to the higher feature),
#                        bin-key (binning keys -0 apart from +0), writer-endian (the
#                        model writer in host byte order: meaningful with ARCH=s390x),
#                        f64-conv (decimals rounded through float64),
#                        refusal-downgrade (a device this build lacks runs on the CPU),
#                        nan-side (missing values always left at a node without any),
#                        lin-dot (the linear family's dot products as float sums chunked by thread),
#                        proba-recip (a forest classifier's probabilities as m * (1/s)),
#                        mono-order (monotone constraints' bounded score and midpoint rounded in another order),
#                        dart-scale (DART's dropped trees scaled by v * k / (k + 1), two roundings),
#                        cat-ties (categories of equal key sorted larger bin first),
#                        iforest-wdraw (the weighted isolation subsample drawn with replacement,
#                        repeats rejected: the same distribution by another rule),
#                        float-allreduce (distributed=mpi's histograms summed across ranks as floats),
#                        ets-sse-order (exponential smoothing's SSE added in pairs: another order)
#                        ets-auto-tie (AutoETS's pick: a tie of AICc goes to the later candidate)
#                        arima-kalman-order (ARIMA's filter adds T P T' + R R' in another order)
#                        gp-chol-order (the gaussian process's Cholesky diagonal blocks sum the products first: another order)
#                        mlp-grad-order (the mlp's bias gradients summed in float32 from the last row up: another order)
#                        lm-attn-order (the byte lm's attention softmax sums in float32 from the last key down: another order)
#                        umap-lane-deps (UMAP's epoch lanes start a row's steps without the dependence test)
#   make mpi             build/libsamebits_mpi.so, the MPI shim of distributed=mpi (needs mpicc)
#   make exhaustive      all 2^32 inputs of every elementary function (minutes)
#   make reference-cards rewrite fixtures/cards/ from this machine (a numerical change)
#   make profile-lock    extend fixtures/cards/PROFILE.lock with new stages and golden files;
#                        a moved stage is refused unless SB_PROFILE_VERSION was bumped
#   make support-matrix  docs/SUPPORT_MATRIX.md from evidence/*/*/summary.json
#   make evidence-cpu    record the CPU legs into evidence/cpu/ (a clean commit)
#   make install PREFIX=/usr/local
#   make igemm-bench     build/igemm_bench: the CPU's exact int8 product, GOPS per path and
#                        thread count beside the measured peak (not part of make test)

SABOTAGES := contract libm-exp thread-chunks excess-precision float-hist ties rng-order rank-ties forest-keys \
  gemm-order gemm-fma reduce-order topk-ties jacobi-order libm-log libm-sigmoid forest-ties bin-key writer-endian \
  f64-conv refusal-downgrade nan-side lin-dot kmeans-ties knn-ties knn-bound dbscan-border agglo-ties spectral-order \
  proba-recip mono-order dart-scale cat-ties iforest-wdraw float-allreduce kde-order ets-sse-order ets-auto-tie svm-wss-ties arima-kalman-order umap-epoch-order umap-lane-deps umap-nnd-ties gp-chol-order mlp-grad-order lm-attn-order
ARCHES := aarch64 s390x
ARCH ?=
SABOTAGE ?=
PREFIX ?= /usr/local

CUDA ?=
CUDA_VARIANT ?= profile
ifeq ($(ARCH),)
  ifeq ($(origin CC),default)
    CC := gcc
  endif
  ifeq ($(origin AR),default)
    AR := ar
  endif
  BUILD := $(if $(CUDA),build-cuda$(if $(filter-out profile,$(CUDA_VARIANT)),-$(CUDA_VARIANT)),build)
  LINK_STATIC :=
else ifeq ($(ARCH),aarch64)
  CC := aarch64-linux-gnu-gcc
  AR := aarch64-linux-gnu-ar
  BUILD := build-aarch64
  LINK_STATIC := -static
else ifeq ($(ARCH),s390x)
  CC := s390x-linux-gnu-gcc
  AR := s390x-linux-gnu-ar
  BUILD := build-s390x
  LINK_STATIC := -static
else
  $(error ARCH must be empty (this machine), aarch64 or s390x; got '$(ARCH)')
endif

# The profile's compiler contract (docs/numeric-profile.md): no contraction,
# no fast-math, no excess precision, nothing tuned to the build machine.
# Excess precision: on x86-64 and aarch64 "standard" means float is float; gcc
# for s390x in ISO C mode makes "standard" mean FLT_EVAL_METHOD 1 (float
# expressions in double), so there "fast" is the flag that keeps float in float.
# src/core/float_eval.h refuses to compile if FLT_EVAL_METHOD is not 0.
FP_CONTRACT := -ffp-contract=off
EXCESS := -fexcess-precision=standard
ifeq ($(ARCH),s390x)
  EXCESS := -fexcess-precision=fast
endif
SABOTAGE_DEFS :=
ifneq ($(SABOTAGE),)
  ifeq ($(filter $(SABOTAGE),$(SABOTAGES)),)
    $(error unknown SABOTAGE '$(SABOTAGE)'; known: $(SABOTAGES))
  endif
  BUILD := $(BUILD)-sabotage-$(SABOTAGE)
  ifeq ($(SABOTAGE),contract)
    FP_CONTRACT := -ffp-contract=fast
  else ifeq ($(SABOTAGE),libm-exp)
    SABOTAGE_DEFS := -DSB_SABOTAGE_LIBM_EXP
  else ifeq ($(SABOTAGE),thread-chunks)
    SABOTAGE_DEFS := -DSB_SABOTAGE_THREAD_CHUNKS
  else ifeq ($(SABOTAGE),float-hist)
    SABOTAGE_DEFS := -DSB_SABOTAGE_FLOAT_HIST
  else ifeq ($(SABOTAGE),ties)
    SABOTAGE_DEFS := -DSB_SABOTAGE_TIES
  else ifeq ($(SABOTAGE),rank-ties)
    SABOTAGE_DEFS := -DSB_SABOTAGE_RANK_TIES
  else ifeq ($(SABOTAGE),forest-keys)
    SABOTAGE_DEFS := -DSB_SABOTAGE_FOREST_KEYS
  else ifeq ($(SABOTAGE),gemm-order)
    SABOTAGE_DEFS := -DSB_SABOTAGE_GEMM_ORDER
  else ifeq ($(SABOTAGE),gemm-fma)
    SABOTAGE_DEFS := -DSB_SABOTAGE_GEMM_FMA
  else ifeq ($(SABOTAGE),reduce-order)
    SABOTAGE_DEFS := -DSB_SABOTAGE_REDUCE_ORDER
  else ifeq ($(SABOTAGE),topk-ties)
    SABOTAGE_DEFS := -DSB_SABOTAGE_TOPK_TIES
  else ifeq ($(SABOTAGE),jacobi-order)
    SABOTAGE_DEFS := -DSB_SABOTAGE_JACOBI_ORDER
  else ifeq ($(SABOTAGE),rng-order)
    SABOTAGE_DEFS := -DSB_SABOTAGE_RNG_ORDER
  else ifeq ($(SABOTAGE),libm-log)
    SABOTAGE_DEFS := -DSB_SABOTAGE_LIBM_LOG
  else ifeq ($(SABOTAGE),libm-sigmoid)
    SABOTAGE_DEFS := -DSB_SABOTAGE_LIBM_SIGMOID
  else ifeq ($(SABOTAGE),forest-ties)
    SABOTAGE_DEFS := -DSB_SABOTAGE_FOREST_TIES
  else ifeq ($(SABOTAGE),nan-side)
    SABOTAGE_DEFS := -DSB_SABOTAGE_NAN_SIDE
  else ifeq ($(SABOTAGE),lin-dot)
    SABOTAGE_DEFS := -DSB_SABOTAGE_LIN_DOT
  else ifeq ($(SABOTAGE),kmeans-ties)
    SABOTAGE_DEFS := -DSB_SABOTAGE_KMEANS_TIES
  else ifeq ($(SABOTAGE),knn-ties)
    SABOTAGE_DEFS := -DSB_SABOTAGE_KNN_TIES
  else ifeq ($(SABOTAGE),knn-bound)
    SABOTAGE_DEFS := -DSB_SABOTAGE_KNN_BOUND
  else ifeq ($(SABOTAGE),kde-order)
    SABOTAGE_DEFS := -DSB_SABOTAGE_KDE_ORDER
  else ifeq ($(SABOTAGE),svm-wss-ties)
    SABOTAGE_DEFS := -DSB_SABOTAGE_SVM_WSS_TIES
  else ifeq ($(SABOTAGE),dbscan-border)
    SABOTAGE_DEFS := -DSB_SABOTAGE_DBSCAN_BORDER
  else ifeq ($(SABOTAGE),agglo-ties)
    SABOTAGE_DEFS := -DSB_SABOTAGE_AGGLO_TIES
  else ifeq ($(SABOTAGE),umap-epoch-order)
    SABOTAGE_DEFS := -DSB_SABOTAGE_UMAP_EPOCH_ORDER
  else ifeq ($(SABOTAGE),umap-lane-deps)
    SABOTAGE_DEFS := -DSB_SABOTAGE_UMAP_LANE_DEPS
  else ifeq ($(SABOTAGE),umap-nnd-ties)
    SABOTAGE_DEFS := -DSB_SABOTAGE_UMAP_NND_TIES
  else ifeq ($(SABOTAGE),spectral-order)
    SABOTAGE_DEFS := -DSB_SABOTAGE_SPECTRAL_ORDER
  else ifeq ($(SABOTAGE),proba-recip)
    SABOTAGE_DEFS := -DSB_SABOTAGE_PROBA_RECIP
  else ifeq ($(SABOTAGE),mono-order)
    SABOTAGE_DEFS := -DSB_SABOTAGE_MONO_ORDER
  else ifeq ($(SABOTAGE),dart-scale)
    SABOTAGE_DEFS := -DSB_SABOTAGE_DART_SCALE
  else ifeq ($(SABOTAGE),cat-ties)
    SABOTAGE_DEFS := -DSB_SABOTAGE_CAT_TIES
  else ifeq ($(SABOTAGE),iforest-wdraw)
    SABOTAGE_DEFS := -DSB_SABOTAGE_IFOREST_WDRAW
  else ifeq ($(SABOTAGE),float-allreduce)
    SABOTAGE_DEFS := -DSB_SABOTAGE_FLOAT_ALLREDUCE
  else ifeq ($(SABOTAGE),ets-sse-order)
    SABOTAGE_DEFS := -DSB_SABOTAGE_ETS_SSE_ORDER
  else ifeq ($(SABOTAGE),ets-auto-tie)
    SABOTAGE_DEFS := -DSB_SABOTAGE_ETS_AUTO_TIE
  else ifeq ($(SABOTAGE),arima-kalman-order)
    SABOTAGE_DEFS := -DSB_SABOTAGE_ARIMA_KALMAN_ORDER
  else ifeq ($(SABOTAGE),gp-chol-order)
    SABOTAGE_DEFS := -DSB_SABOTAGE_GP_CHOL_ORDER
  else ifeq ($(SABOTAGE),mlp-grad-order)
    SABOTAGE_DEFS := -DSB_SABOTAGE_MLP_GRAD_ORDER
  else ifeq ($(SABOTAGE),lm-attn-order)
    SABOTAGE_DEFS := -DSB_SABOTAGE_LM_ATTN_ORDER
  else ifeq ($(SABOTAGE),bin-key)
    SABOTAGE_DEFS := -DSB_SABOTAGE_BIN_KEY
  else ifeq ($(SABOTAGE),writer-endian)
    SABOTAGE_DEFS := -DSB_SABOTAGE_WRITER_ENDIAN
  else ifeq ($(SABOTAGE),f64-conv)
    SABOTAGE_DEFS := -DSB_SABOTAGE_F64_CONV
  else ifeq ($(SABOTAGE),refusal-downgrade)
    SABOTAGE_DEFS := -DSB_SABOTAGE_REFUSAL_DOWNGRADE
  else ifeq ($(SABOTAGE),excess-precision)
    EXCESS := -fexcess-precision=standard
    SABOTAGE_DEFS := -DSB_SABOTAGE_EXCESS_PRECISION
  endif
endif
PROFILE_FLAGS := -std=c11 $(FP_CONTRACT) -fno-fast-math $(EXCESS)

# OPENCL=1 (the default): the "opencl" tree device, which opens the OpenCL
# loader with dlopen at run time, so it adds no build or run-time dependency.
# The static cross builds (ARCH=...) and the sanitizer builds have none
# (OPENCL=0: device=opencl is refused by name).
OPENCL ?= 1
ifneq ($(ARCH),)
  OPENCL := 0
endif
OPENCL_DEFS := $(if $(filter 1,$(OPENCL)),,-DSB_NO_OPENCL)
# gzip input through the system's zlib, opened at run time (src/io/csv.c): built
# where zlib.h is (Debian's zlib1g-dev; tools/ensure-deps.sh installs it), never
# in the static cross builds; elsewhere gzip input is refused by name.
ZLIB_DEFS := $(if $(and $(if $(ARCH),,1),$(wildcard /usr/include/zlib.h)),-DSB_HAVE_ZLIB,)

# distributed=mpi (docs/distributed.md): the library opens an MPI shim with
# dlopen at run time and links no MPI; the shim (libsamebits_mpi.so, `make mpi`)
# is built by mpicc where one is installed. The static cross builds have none
# (SB_NO_MPI: distributed=mpi is refused by name).
MPI_DEFS := $(if $(ARCH),-DSB_NO_MPI,)
MPICC := $(if $(ARCH),,$(shell command -v mpicc 2>/dev/null))

CFLAGS_ALL := $(EXTRA_CFLAGS) $(PROFILE_FLAGS) -O2 -g -Wall -Wextra -Werror -fPIC -fvisibility=hidden -pthread \
  -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc -MMD -MP $(SABOTAGE_DEFS) $(OPENCL_DEFS) $(ZLIB_DEFS) $(MPI_DEFS) \
  -DSB_BUILD_CC='"$(notdir $(CC)) $(shell $(CC) -dumpfullversion 2>/dev/null)"' \
  -DSB_BUILD_TARGET='"$(shell $(CC) -dumpmachine 2>/dev/null)"' \
  -DSB_BUILD_CFLAGS='"$(PROFILE_FLAGS)"' \
  -DSB_SABOTAGE='"$(if $(SABOTAGE),$(SABOTAGE),none)"'
LDLIBS := -pthread -lm

LIB_SRC := $(sort $(wildcard src/core/*.c src/device/*.c src/backends/cpu/*.c src/fixtures/*.c src/io/*.c src/linalg/*.c src/models/*.c src/models/*/*.c)) \
  $(if $(CUDA),,src/backends/cuda/dev_cuda_none.c) src/backends/opencl/dev_opencl.c src/backends/opencl/ocl_common.c
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/ref_cards.o \
  $(if $(filter 1,$(OPENCL)),$(BUILD)/obj/gen/compat_cl_src.o $(BUILD)/obj/gen/tree_cl_src.o $(BUILD)/obj/gen/forest_cl_src.o \
  $(BUILD)/obj/gen/core_cl_src.o $(BUILD)/obj/gen/linalg_cl_src.o $(BUILD)/obj/gen/ts_cl_src.o $(BUILD)/obj/gen/gp_cl_src.o)

# CUDA=1: the CUDA backend of the device layer (dev_cuda.cu) and the entry kernels
# (src/kernels/entry/, the source OpenCL builds too, compiled by entry_*.cu), by nvcc
# under the profile's flags (one place: tools/cuda-compile-check.sh --print-flags profile),
# into build-cuda/. CUDA_VARIANT=fmad|libdevice-exp|float-atomic|gemm-fma|ties|forest-ties|topk-ties|nan-side|kmeans-ties|knn-bound|agglo-order|kde-order|ets-sse-order|svm-kernel-f32|mlp-grad-order|mlp-softmax-order|lm-attn-order|arima-device-order|gp-dev-order|umap-float-sum: a separating arm of the
# GPU leg, into build-cuda-VARIANT/.
ifneq ($(CUDA),)
  ifneq ($(ARCH),)
    $(error CUDA=1 is for this machine's build only)
  endif
  NVCC ?= $(shell command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)
  CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
  NVCC_FLAGS := $(shell CUDA_ARCH=$(CUDA_ARCH) sh tools/cuda-compile-check.sh --print-flags $(CUDA_VARIANT))
  CUDA_OBJ := $(BUILD)/obj/src/backends/cuda/dev_cuda.o $(BUILD)/obj/src/backends/cuda/entry_tree.o \
    $(BUILD)/obj/src/backends/cuda/entry_forest.o $(BUILD)/obj/src/backends/cuda/entry_core.o \
    $(BUILD)/obj/src/backends/cuda/entry_linalg.o $(BUILD)/obj/src/backends/cuda/entry_ts.o $(BUILD)/obj/src/backends/cuda/entry_gp.o
  LIB_OBJ += $(CUDA_OBJ)
  LDLIBS += -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lstdc++
endif

KERNEL_HEADERS := $(wildcard src/kernels/*.h src/kernels/entry/*.h src/math/*.h src/core/rng.h src/core/float_eval.h \
  src/device/*.h src/backends/cuda/*.h)
# The nvcc flags are a prerequisite too (they change with CUDA_ARCH and the
# architectures tools/cuda-compile-check.sh lists): rewritten only when they differ.
$(BUILD)/nvcc-flags.txt: FORCE
	@mkdir -p $(dir $@)
	@echo '$(NVCC_FLAGS)' | cmp -s - $@ || echo '$(NVCC_FLAGS)' > $@
FORCE:
.PHONY: FORCE
$(BUILD)/obj/src/backends/cuda/%.o: src/backends/cuda/%.cu $(KERNEL_HEADERS) $(BUILD)/nvcc-flags.txt
	@mkdir -p $(dir $@)
	@echo "  NVCC $(BUILD)/$<"
	$(Q)$(NVCC) $(NVCC_FLAGS) -Xcompiler -fPIC,-fvisibility=hidden -DSB_CUDA_FLAGS='"$(NVCC_FLAGS)"' \
	  -DSB_CUDA_LIBDIR='"$(CUDA_HOME)/lib64"' -c $< -o $@
UNIT_SRC := $(sort $(wildcard tests/unit/*.c))
UNIT_OBJ := $(UNIT_SRC:%.c=$(BUILD)/obj/%.o)
CARDS := $(sort $(wildcard fixtures/cards/*.card))

.PHONY: mpi all test demo exhaustive reference-cards profile-lock install clean legs arms deps cuda-check hip-check opencl-check bench-gemm \
  support-matrix support-matrix-check evidence-cpu igemm-bench
.DEFAULT_GOAL := all

all: $(BUILD)/libsamebits.so $(BUILD)/libsamebits.a $(BUILD)/samebits $(BUILD)/sb_unit $(if $(MPICC),$(BUILD)/libsamebits_mpi.so)

# The MPI shim: the one file that includes mpi.h, built by mpicc (never linked
# into the library). `make mpi` asks for it by name and says why when it cannot.
mpi: $(BUILD)/libsamebits_mpi.so
$(BUILD)/libsamebits_mpi.so: src/backends/mpi/mpi_shim.c src/core/dist_shim.h
	@[ -n "$(MPICC)" ] || { echo "make mpi: no mpicc (install Debian's libopenmpi-dev and openmpi-bin; tools/ensure-deps.sh does)"; exit 1; }
	@mkdir -p $(dir $@)
	@echo "  MPICC $@"
	$(Q)$(MPICC) -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -g -Wall -Wextra -Werror -fPIC -fvisibility=hidden -shared \
	  -Isrc -o $@ $<

Q := $(if $(V),,@)

# ccache, where installed (tools/ensure-deps.sh installs it): the arms differ
# from the plain build only in the files their SB_SABOTAGE_* macro reaches, and
# ccache's preprocessor-mode hash (the preprocessed text, not the -D flags) lets
# every other object of an arm come from the plain build's compile. The object
# is the one the compiler writes for that text either way; SB_NO_CCACHE=1 (or no
# ccache) compiles everything.
CCACHE := $(if $(SB_NO_CCACHE),,$(shell command -v ccache 2>/dev/null))

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC  $(BUILD)/$<"
	$(Q)$(CCACHE) $(CC) $(CFLAGS_ALL) -c $< -o $@

# Exponential smoothing's AVX2 instance of its fit (ets_avx2.c) at -O3: the
# vectorizer takes the loops over the states; the arithmetic is the same
# operations (no fast-math, the profile's no contraction).
$(BUILD)/obj/src/models/timeseries/ets_avx2.o: CFLAGS_ALL += -O3

$(BUILD)/gen/ref_cards.c: $(CARDS) tools/embed_cards.sh
	@mkdir -p $(dir $@)
	sh tools/embed_cards.sh $(CARDS) > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/gen/ref_cards.o: $(BUILD)/gen/ref_cards.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_ALL) -c $< -o $@

# The OpenCL programs: the compat header and each entry source, #includes inlined,
# carried by the library (the OpenCL device puts the compat text in front of each).
CL_HEADERS := $(wildcard src/kernels/*.h src/kernels/entry/*.h src/math/*.h src/core/rng.h src/core/float_eval.h)
$(BUILD)/gen/compat_cl_src.c: src/backends/opencl/compat_opencl.h tools/embed_cl.sh
	@mkdir -p $(dir $@)
	sh tools/embed_cl.sh $< sb_compat_cl_src > $@.tmp && mv $@.tmp $@
$(BUILD)/gen/tree_cl_src.c: src/kernels/entry/tree_entry.h $(CL_HEADERS) tools/embed_cl.sh
	@mkdir -p $(dir $@)
	sh tools/embed_cl.sh $< sb_tree_cl_src > $@.tmp && mv $@.tmp $@
$(BUILD)/gen/forest_cl_src.c: src/kernels/entry/forest_entry.h $(CL_HEADERS) tools/embed_cl.sh
	@mkdir -p $(dir $@)
	sh tools/embed_cl.sh $< sb_forest_cl_src > $@.tmp && mv $@.tmp $@
$(BUILD)/gen/core_cl_src.c: src/kernels/entry/core_entry.h $(CL_HEADERS) tools/embed_cl.sh
	@mkdir -p $(dir $@)
	sh tools/embed_cl.sh $< sb_core_cl_src > $@.tmp && mv $@.tmp $@
$(BUILD)/gen/linalg_cl_src.c: src/kernels/entry/linalg_entry.h $(CL_HEADERS) tools/embed_cl.sh
	@mkdir -p $(dir $@)
	sh tools/embed_cl.sh $< sb_linalg_cl_src > $@.tmp && mv $@.tmp $@
$(BUILD)/gen/ts_cl_src.c: src/kernels/entry/ts_entry.h $(CL_HEADERS) tools/embed_cl.sh
	@mkdir -p $(dir $@)
	sh tools/embed_cl.sh $< sb_ts_cl_src > $@.tmp && mv $@.tmp $@
$(BUILD)/gen/gp_cl_src.c: src/kernels/entry/gp_entry.h $(CL_HEADERS) tools/embed_cl.sh
	@mkdir -p $(dir $@)
	sh tools/embed_cl.sh $< sb_gp_cl_src > $@.tmp && mv $@.tmp $@
$(BUILD)/obj/gen/%_cl_src.o: $(BUILD)/gen/%_cl_src.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/libsamebits.a: $(LIB_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/libsamebits.so: $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,libsamebits.so.0 -o $@ $^ $(LDLIBS)

CLI_OBJ := $(BUILD)/obj/cli/samebits.o $(BUILD)/obj/cli/certify.o $(BUILD)/obj/cli/lightgbm.o $(BUILD)/obj/cli/ets_cli.o $(BUILD)/obj/cli/gp_cli.o $(BUILD)/obj/cli/mlp_cli.o $(BUILD)/obj/cli/lm_cli.o

$(BUILD)/samebits: $(CLI_OBJ) $(BUILD)/libsamebits.a
	$(CC) $(LINK_STATIC) -o $@ $^ $(LDLIBS)

$(BUILD)/sb_unit: $(UNIT_OBJ) $(BUILD)/libsamebits.a
	$(CC) $(LINK_STATIC) -o $@ $^ $(LDLIBS)

# The identical GEMM's speed with data resident on the device (bench/gemm_bench.py runs it).
bench-gemm: $(BUILD)/gemm_bench
$(BUILD)/gemm_bench: $(BUILD)/obj/bench/gemm_bench.o $(BUILD)/libsamebits.a
	$(CC) $(LINK_STATIC) -o $@ $^ $(LDLIBS)

$(BUILD)/igemm_bench: $(BUILD)/obj/bench/igemm_bench.o $(BUILD)/libsamebits.a
	$(CC) $(LINK_STATIC) -o $@ $^ $(LDLIBS)

igemm-bench: $(BUILD)/igemm_bench
	$(BUILD)/igemm_bench $(IGEMM_BENCH_ARGS)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# ---- legs, arms and tests -------------------------------------------------

deps:
	sh tools/ensure-deps.sh

JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# pytest's workers in `make test` (pytest-xdist): every test is a process of its own
# files (tmp_path); the packaging tests, which run make, share one worker.
PYTEST_WORKERS ?= $(JOBS)
NATIVE_ARMS := libm-exp thread-chunks float-hist ties rng-order rank-ties forest-keys gemm-order gemm-fma \
  reduce-order topk-ties jacobi-order libm-log libm-sigmoid forest-ties bin-key writer-endian f64-conv \
  refusal-downgrade nan-side lin-dot kmeans-ties knn-ties knn-bound dbscan-border agglo-ties spectral-order \
  proba-recip mono-order dart-scale cat-ties iforest-wdraw float-allreduce kde-order ets-sse-order ets-auto-tie svm-wss-ties arima-kalman-order umap-epoch-order umap-lane-deps umap-nnd-ties gp-chol-order mlp-grad-order lm-attn-order
# Arms cross-built too, CLI only (tests/integration/test_arms.py says why these):
# glibc's logf and expf are other code on aarch64 and s390x, and the writer's
# byte order shows only on a big-endian host.
CROSS_ARMS_aarch64 := libm-log libm-sigmoid
CROSS_ARMS_s390x := libm-log libm-sigmoid writer-endian

legs:
	$(MAKE) -j$(JOBS) all
	$(foreach a,$(ARCHES),$(MAKE) -j$(JOBS) ARCH=$(a) all &&) true

arms:
	$(foreach s,$(NATIVE_ARMS),$(MAKE) -j$(JOBS) SABOTAGE=$(s) all &&) true
	$(foreach a,$(ARCHES),$(MAKE) -j$(JOBS) ARCH=$(a) SABOTAGE=contract all &&) true
	$(MAKE) -j$(JOBS) ARCH=s390x SABOTAGE=excess-precision all
	$(foreach a,$(ARCHES),$(foreach s,$(CROSS_ARMS_$(a)),\
	  $(MAKE) -j$(JOBS) ARCH=$(a) SABOTAGE=$(s) build-$(a)-sabotage-$(s)/samebits &&)) true

cuda-check:
	sh tools/cuda-compile-check.sh

hip-check:
	sh tools/hip-compile-check.sh

opencl-check:
	sh tools/opencl-check.sh --build-only

test: deps
	$(MAKE) support-matrix-check
	$(MAKE) legs
	$(MAKE) arms
	$(MAKE) cuda-check
	$(MAKE) hip-check
	$(MAKE) opencl-check
	$(MAKE) sanitize
	$(MAKE) -j$(JOBS) wheel-bins a64-dyn-bins isa-arm-bins isa-arm-a64-bins
	python3 -m pytest tests -ra -p no:cacheprovider --durations=40 -n $(PYTEST_WORKERS) --dist loadgroup

# docs/SUPPORT_MATRIX.md is generated from evidence/*/*/summary.json only.
support-matrix:
	python3 tools/support_matrix.py

support-matrix-check:
	python3 tools/support_matrix.py --check

# Record the CPU legs (x86-64 native; aarch64, s390x under qemu, emulated) and
# their arms into evidence/cpu/<date>-<leg>-<commit>/, and OpenCL on PoCL into
# evidence/opencl/; needs a clean commit.
evidence-cpu: legs arms
	python3 tools/evidence_cpu.py
	python3 tools/support_matrix.py

demo: all
	sh tools/demo.sh $(BUILD)

exhaustive: $(BUILD)/exhaustive_elem
	$(BUILD)/exhaustive_elem --threads $(JOBS)

# The checker's reference is MPFR (Debian's libmpfr-dev), installed when missing.
$(BUILD)/exhaustive_elem: tools/exhaustive_elem.c src/math/sb_elem.h
	@mkdir -p $(dir $@)
	@[ -e /usr/include/mpfr.h ] || { echo "installing libmpfr-dev"; \
	  $(if $(filter 0,$(shell id -u)),,sudo) apt-get install -y -qq libmpfr-dev; }
	$(CC) -O2 $(PROFILE_FLAGS) -pthread -Iinclude -Isrc $< -o $@ -lmpfr -lm

reference-cards: all
	@mkdir -p fixtures/cards
	for f in $$($(BUILD)/samebits fixture list); do \
	  $(BUILD)/samebits fixture run $$f --threads 1 --out fixtures/cards/$$f.card || exit 1; \
	  $(BUILD)/samebits fixture inputs $$f --out fixtures/cards/$$f.inputs.card || exit 1; done
	$(MAKE) all

profile-lock:
	python3 tools/profile_lock.py write

install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/bin \
	  $(DESTDIR)$(PREFIX)/share/samebits/cards
	install -m 644 include/samebits.h include/samebits_cert.h $(DESTDIR)$(PREFIX)/include/
	install -m 755 $(BUILD)/libsamebits.so $(DESTDIR)$(PREFIX)/lib/libsamebits.so.0
	ln -sf libsamebits.so.0 $(DESTDIR)$(PREFIX)/lib/libsamebits.so
	install -m 644 $(BUILD)/libsamebits.a $(DESTDIR)$(PREFIX)/lib/
	if [ -e $(BUILD)/libsamebits_mpi.so ]; then install -m 755 $(BUILD)/libsamebits_mpi.so $(DESTDIR)$(PREFIX)/lib/; fi
	install -m 755 $(BUILD)/samebits $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(CARDS) $(DESTDIR)$(PREFIX)/share/samebits/cards/

clean:
	rm -rf build build-*

include mk/hardening.mk
include mk/packaging.mk
