// doctest entry point for the calibration core tests (CPU only).
#include "tests/doctest_main.hpp"
