# Thin wrapper over CMake. `make run` and `make test` are the README's two commands: each installs
# the Debian packages first (scripts/install-deps.sh is idempotent and fast when done).
JOBS ?= 2
MAIN_SPEC ?= examples/specs/gpt2-small_cpu2_dp.yaml
ACCEL := build/cli/accel

.PHONY: deps build build-core build-asan build-asan-executor run finetune-example test test-full \
        test-asan test-asan-executor test-fuzz bench clean

deps:
	@bash scripts/install-deps.sh

build: deps
	cmake --preset default
	cmake --build build -j $(JOBS)

build-core: deps
	cmake --preset core
	cmake --build build-core -j $(JOBS)

build-asan: deps
	cmake --preset asan
	cmake --build build-asan -j $(JOBS)

# The executor (with Debian's LibTorch, itself uninstrumented) under the same sanitizers. Not part
# of `make test`: it compiles the executor a second time, about 30 minutes on 2 cores.
build-asan-executor: deps
	cmake --preset asan-executor
	cmake --build build-asan-executor -j $(JOBS)

# The main job: validate and plan every example, then train the default one.
run: build
	$(ACCEL) validate examples/specs/*.yaml
	$(ACCEL) plan $(MAIN_SPEC)
	$(ACCEL) run $(MAIN_SPEC)

# Pretrain with Llama-3's tokenizer.json, export, fine-tune from the export (docs/tokenize.md,
# "Fine-tuning from a Hugging Face checkpoint with a real tokenizer"); needs install-deps.sh's npm
# cache.
finetune-example: build
	bash scripts/finetune-example.sh --accel $(ACCEL)

# Every test, phase by phase, with each phase's time at the end (scripts/test-all.sh): the full
# build and its tests (the executor's too when LibTorch is installed), then the core under
# AddressSanitizer + UBSan (the `asan` preset) and the fuzz smoke run (the `fuzz` preset).
test:
	@JOBS=$(JOBS) bash scripts/test-all.sh

test-full: build
	ctest --test-dir build --output-on-failure -j $(JOBS)

# tests/lsan.supp silences leaks inside Graphviz's font stack (fontconfig, pango), not ours.
test-asan: build-asan
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	ctest --test-dir build-asan --output-on-failure -j $(JOBS) -L core

test-asan-executor: build-asan-executor
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	ctest --test-dir build-asan-executor --output-on-failure -j $(JOBS) -L executor

# libFuzzer targets (fuzz/) on their seeds plus 3 s of fuzzing each; needs clang, which
# scripts/install-deps.sh installs, so it is skipped only where clang++ is missing.
test-fuzz: deps
	@if command -v clang++ >/dev/null 2>&1; then \
	  JOBS=$(JOBS) bash fuzz/smoke.sh; \
	else \
	  echo "test-fuzz: clang++ not found; skipping the fuzz smoke run"; \
	fi

bench: build
	build/bench/accel_validate_bench
	build/bench/accel_plan_bench --verify
	bash bench/ddp_bench/run.sh
	bash bench/memory_bench/run.sh
	bash bench/pipeline_bench/run.sh

clean:
	rm -rf build build-core build-asan build-asan-executor build-fuzz
