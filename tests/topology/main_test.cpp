// The doctest entry point of the topology tests.
#include "tests/doctest_main.hpp"
