# hopsim: the everyday commands. `make run` and `make test` install what is missing first.
.PHONY: deps build run test bench asan tidy format clean

deps:
	@bash tools/scripts/install_deps.sh

build: deps
	@cmake --preset release >/dev/null
	@cmake --build --preset release

run: build
	build/bin/hopsim run configs/experiments/default.json

test: build
	ctest --preset release

# AddressSanitizer + UndefinedBehaviorSanitizer over every test (Debug -O1).
asan: deps
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan
	ctest --preset asan

# Each case in its own process (its peak memory is its own): hyperfine median of 5 runs, peak
# memory from /usr/bin/time -v, events/s and solves (bench/run_bench.sh; see README).
bench: build
	@bash bench/run_bench.sh

tidy: deps
	@cmake --preset tidy >/dev/null
	@cmake --build --preset tidy

format:
	@clang-format -i $$(git ls-files '*.cpp' '*.hpp')

clean:
	rm -rf build
