// doctest entry point for the CUDA backend tests (graph construction runs without a GPU).
#include <string_view>

#define HOPSIM_TEST_OWN_MAIN
#include "tests/doctest_main.hpp"

int main(int argc, char** argv) {
  doctest::Context context;
  context.applyCommandLine(argc, argv);
  // GPU tests carry a skip decorator when there is no device; list them anyway, so that ctest
  // discovers them and reports them as skipped (see gpu_skip.hpp) instead of not at all.
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (arg == "--list-test-cases" || arg == "-ltc") {
      context.setOption("no-skip", true);
    }
  }
  return hopsim::test_main::run(context);
}
