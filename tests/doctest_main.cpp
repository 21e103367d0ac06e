// doctest's entry point, compiled once and linked into every test binary of the simulator
// (calibrate/ keeps its own, since it also configures on its own).
#include "tests/doctest_main.hpp"
