// The doctest entry point of the config (tools) tests.
#include "tests/doctest_main.hpp"
