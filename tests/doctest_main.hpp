// The doctest entry point of every test binary (include it from exactly one file): doctest's
// own main, except that a run whose filters select no test case fails. ctest runs each case by
// name; a name that no longer selects anything (renamed, or cut by CMake at a ';') would
// otherwise pass without running a single check.
#pragma once

#define DOCTEST_CONFIG_IMPLEMENT
#include <cstdio>

#include <doctest/doctest.h>

namespace hopsim::test_main {

inline unsigned selected = 0;  // test cases that passed the filters in the last run

/// A listener that only counts the test cases a run selects.
struct CountSelected : doctest::IReporter {
  explicit CountSelected(const doctest::ContextOptions& /*options*/) {}
  void report_query(const doctest::QueryData& /*data*/) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& stats) override {
    selected = stats.numTestCasesPassingFilters;
  }
  void test_case_start(const doctest::TestCaseData& /*data*/) override {}
  void test_case_reenter(const doctest::TestCaseData& /*data*/) override {}
  void test_case_end(const doctest::CurrentTestCaseStats& /*stats*/) override {}
  void test_case_exception(const doctest::TestCaseException& /*e*/) override {}
  void subcase_start(const doctest::SubcaseSignature& /*signature*/) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData& /*data*/) override {}
  void log_message(const doctest::MessageData& /*data*/) override {}
  void test_case_skipped(const doctest::TestCaseData& /*data*/) override {}
};

}  // namespace hopsim::test_main

REGISTER_LISTENER("count_selected", 1, hopsim::test_main::CountSelected);

namespace hopsim::test_main {

/// Runs the tests `context` selects; a run whose filters select none fails.
inline int run(doctest::Context& context) {
  const int rc = context.run();
  if (context.shouldExit()) {  // --help, --list-test-cases and the like ran no tests
    return rc;
  }
  if (rc == 0 && selected == 0) {
    std::fputs("[doctest] no test case matches the filters: nothing ran\n", stderr);
    return 1;
  }
  return rc;
}

}  // namespace hopsim::test_main

// A binary that needs its own main defines HOPSIM_TEST_OWN_MAIN and calls run().
#ifndef HOPSIM_TEST_OWN_MAIN
int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  return hopsim::test_main::run(context);
}
#endif
