# hardening.mk: sanitizer and fuzz builds (issue #9; docs/robustness.md).
#   make asan        build-asan/: library, CLI and unit runner under AddressSanitizer
#                    (LeakSanitizer included) and UndefinedBehaviorSanitizer; any report
#                    aborts the process (-fno-sanitize-recover=all)
#   make fuzz-build  build-fuzz/fuzz_{csv,libsvm,model,card,records,predict}: libFuzzer targets (clang)
#   make fuzz        replay each seed corpus, then fuzz each target FUZZ_SECONDS (60)
#   make sanitize    both builds; tests/integration/test_hardening.py runs them in `make test`
# Both builds keep the profile's compiler flags (-ffp-contract=off, no fast-math),
# so the sanitized library still gives the reference cards' bits.

SAN_CC ?= clang
FUZZ_TARGETS := csv libsvm model card records predict
FUZZ_SECONDS ?= 60
# float-cast-overflow is in clang's "undefined"; float-divide-by-zero is not (IEEE
# defines it, and the profile relies on it), so it is left out on purpose.
# clang 14 ignores -fexcess-precision (SSE float is float; compat_cpu.h checks).
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
  -Wno-ignored-optimization-argument -Wno-unused-command-line-argument
SAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

.PHONY: asan fuzz-build fuzz-link fuzz sanitize

asan:
	$(MAKE) -j$(JOBS) BUILD=build-asan CC=$(SAN_CC) ARCH= SABOTAGE= OPENCL=0 \
	  EXTRA_CFLAGS="$(SAN_FLAGS)" LDLIBS="-pthread -lm $(SAN_FLAGS)" \
	  build-asan/samebits build-asan/sb_unit build-asan/sb_canary

# Deliberate bugs that the sanitizers must report (the build's own check).
build-asan/sb_canary: tests/hardening/sanitizer_canary.c
	@mkdir -p $(dir $@)
	$(SAN_CC) -std=c11 -O2 -g $(SAN_FLAGS) $< -o $@

# The library is built with fuzzer-no-link (coverage) by the main Makefile's own
# rule into build-fuzz/; each target then links libFuzzer. (No rule here may name
# build-fuzz/libsamebits.a: the inner make includes this file too.)
fuzz-build:
	$(MAKE) -j$(JOBS) BUILD=build-fuzz CC=$(SAN_CC) ARCH= SABOTAGE= OPENCL=0 \
	  EXTRA_CFLAGS="-fsanitize=fuzzer-no-link $(SAN_FLAGS)" build-fuzz/libsamebits.a
	$(MAKE) -j$(JOBS) fuzz-link

fuzz-link: $(FUZZ_TARGETS:%=build-fuzz/fuzz_%)

build-fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.h build-fuzz/libsamebits.a
	$(SAN_CC) $(PROFILE_FLAGS) -O1 -g -Wall -Wextra -Werror -fsanitize=fuzzer $(SAN_FLAGS) \
	  -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc $< build-fuzz/libsamebits.a -o $@ -pthread -lm

sanitize: asan fuzz-build

# Each target: the corpus replayed, then FUZZ_SECONDS of fuzzing from it. New
# inputs go to build-fuzz/new-<target>/, not into the committed corpus; a crash
# input is written to build-fuzz/ (add it to tests/fuzz/corpus/<target>/).
fuzz: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
	  echo "fuzz_$$t: $(FUZZ_SECONDS) s"; mkdir -p build-fuzz/new-$$t; \
	  $(SAN_ENV) build-fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=64 \
	    -print_final_stats=1 -artifact_prefix=build-fuzz/crash-$$t- \
	    build-fuzz/new-$$t tests/fuzz/corpus/$$t || exit 1; done
