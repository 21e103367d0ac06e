// doctest entry point for the workloads tests.
#include "tests/doctest_main.hpp"
