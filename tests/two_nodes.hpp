// Two 8-GPU nodes with round numbers for closed forms: NVLink 400 GB/s (0.7 us a hop), NICs
// 50 GB/s (0.5 us), 2 us of software overhead a message; a flow between two GPUs of a node pays
// 2 x 0.7 + 2 = 3.4 us before its bytes.
#pragma once

#include "sim/units.hpp"
#include "topology/spec.hpp"

namespace hopsim::test {

inline topo::Spec two_nodes() {
  topo::Spec spec;
  spec.nodes = 2;
  spec.nvlink = {Bandwidth::gigabytes_per_s(400), Time::ns(700)};
  spec.nic = {Bandwidth::gigabytes_per_s(50), Time::ns(500)};
  spec.software_overhead = Time::ns(2'000);
  return spec;
}

}  // namespace hopsim::test
