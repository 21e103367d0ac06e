# hopsim: the everyday commands. `make run` and `make test` install what is missing first.
.PHONY: help deps build program run test bench install asan tsan fuzz fuzz-long tidy format clean
.DEFAULT_GOAL := help

help:
	@echo "make run      install what is missing, build the hopsim program, run the default experiment"
	@echo "make test     install what is missing, build everything, run every test"
	@echo "make build    build everything (Release): the program, tests, bench, harness host code"
	@echo "make bench    speed benchmarks: medians of several runs (hyperfine), peak memory, and the speed curve (docs/images/speed-curve.png)"
	@echo "make install  install hopsim, its presets, docs and hopsim-plot-sweep (PREFIX=~/.local)"
	@echo "make asan     the tests under AddressSanitizer + UndefinedBehaviorSanitizer (not the docs and style checks, the slowest few, nor the calibration harness)"
	@echo "make tsan     the concurrent run() test under ThreadSanitizer"
	@echo "make fuzz     mutate the shipped configs and run them under ASan+UBSan (FUZZ_SECONDS=600)"
	@echo "make fuzz-long  10^5 fuzz cases under ASan+UBSan (FUZZ_CASES=100000; hours on 2 cores)"
	@echo "make tidy     clang-tidy over the library code"
	@echo "make format   clang-format every source"
	@echo "make deps     only install the build dependencies (apt-get, when CMake cannot find them)"
	@echo "make clean    remove build/"

deps:
	@bash tools/scripts/install_deps.sh

# Only what `make run` needs: the hopsim program.
program: deps
	@cmake --build --preset program

build: deps
	@cmake --build --preset release

run: program
	build/bin/hopsim run configs/experiments/default.json

# ctest runs the cases on every core (TEST_JOBS=1 for one at a time).
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
test: build
	ctest --preset release --parallel $(TEST_JOBS)

# The program, the presets it finds by name (share/hopsim/configs), hopsim-plot-sweep and the
# docs under PREFIX; an installed hopsim runs from any folder.
PREFIX ?= $(HOME)/.local
install: program
	cmake --install build --prefix "$(PREFIX)"

# Each case in its own process (its peak memory is its own): hyperfine median of 5 runs, peak
# memory from /usr/bin/time -v, events/s and solves (bench/run_bench.sh; see README).
bench: build
	@command -v hyperfine >/dev/null && [ -x /usr/bin/time ] || { echo "make bench needs" \
	  "hyperfine and GNU time: apt-get install hyperfine time (Debian, Ubuntu), or see" \
	  "https://github.com/sharkdp/hyperfine"; exit 1; }
	@bash bench/run_bench.sh

# AddressSanitizer + UndefinedBehaviorSanitizer over the tests that run the program or the
# libraries (Debug -O1); the docs, style and plot checks are Python over text and run in Release;
# the slowest few tests and the calibration harness (tested in Release and, with CUDA, in CI's
# CUDA stage) are left out to keep CI under 30 minutes on 2 cores (CMakePresets.json).
asan: deps
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan
	ctest --preset asan --parallel $(TEST_JOBS)

# ThreadSanitizer over the test that calls run() from two threads at once.
tsan: deps
	@cmake --preset tsan >/dev/null
	@cmake --build --preset tsan
	ctest --preset tsan

# Mutation fuzzing of the shipped configs against the sanitizer build: any crash, sanitizer
# report, hang (over 10 s, or 3x the unmutated run) or exit other than 0/2 fails; experiments
# slower than 10 s unmutated are left out, by name; inputs land in build/fuzz-crashes.
# FUZZ_SECONDS of random cases (a new seed each time), or FUZZ_CASES cases from FUZZ_SEED: the
# same cases every time (CI runs a fixed set, so that it cannot fail by the draw).
FUZZ_SECONDS ?= 600
FUZZ_BUDGET = $(if $(FUZZ_CASES),--cases $(FUZZ_CASES),--seconds $(FUZZ_SECONDS)) \
  $(if $(FUZZ_SEED),--seed $(FUZZ_SEED))
# FUZZ_BUILD=release fuzzes the Release binary instead: no sanitizer reports, but crashes, hangs
# and bad exits are caught at about 4.5x the rate (29 cases/s on 2 cores against 6.5).
FUZZ_BUILD ?= asan
FUZZ_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_BIN = $(if $(filter release,$(FUZZ_BUILD)),build/bin/hopsim,build/asan/bin/hopsim)
fuzz: deps
	@cmake --preset $(FUZZ_BUILD) >/dev/null
	@cmake --build --preset $(FUZZ_BUILD) --target hopsim
	python3 tools/fuzz/fuzz_configs.py --hopsim $(FUZZ_BIN) --source-dir . \
	  $(FUZZ_BUDGET) --jobs $(FUZZ_JOBS) --crashes build/fuzz-crashes $(FUZZ_PROGRESS)

# The long run, by count (not in CI): FUZZ_CASES cases from FUZZ_SEED under ASan+UBSan (10^5
# cases take about 4.3 h on 2 cores; FUZZ_BUILD=release about an hour, without sanitizer
# reports), with a progress line every 1,000 cases.
fuzz-long: FUZZ_CASES ?= 100000
fuzz-long: FUZZ_SEED ?= 1
fuzz-long: FUZZ_PROGRESS = --progress 1000
fuzz-long: fuzz

tidy: deps
	@cmake --preset tidy >/dev/null
	@cmake --build --preset tidy

format:
	@clang-format -i $$(git ls-files '*.cpp' '*.hpp')

clean:
	rm -rf build
