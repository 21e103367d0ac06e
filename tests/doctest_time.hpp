// Prints hopsim::Time in doctest failure messages.
#pragma once

#include <ostream>

#include "sim/units.hpp"

namespace hopsim {
inline std::ostream& operator<<(std::ostream& os, Time t) { return os << t.count_ps() << " ps"; }
}  // namespace hopsim

#include <doctest/doctest.h>
