// doctest entry point for the sim tests.
#include "tests/doctest_main.hpp"
