// Failed links and the detours around them: which GPU's NIC carries a GPU's traffic when its
// own has failed, and which spines a leaf still reaches.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "sim/problem.hpp"
#include "topology/leaves.hpp"
#include "topology/spec.hpp"

namespace hopsim::topo {

/// What a spec's perturbations fail, as tables over the cluster's GPUs and leaf-spine pairs.
/// A GPU whose NIC failed sends and receives through a carrier: the next GPU of its node, by
/// index and wrapping around, whose NIC and NVLink both work, reached over NVLink (PXN-style).
struct Failures {
  std::vector<char> nic;         ///< [rank] its NIC failed, both directions
  std::vector<char> nvlink;      ///< [rank] its NVLink failed, both directions
  std::vector<int> nic_carrier;  ///< [rank] the GPU whose NIC carries its traffic; -1: none
  std::vector<char> spine;       ///< [leaf * spines + spine] that leaf's links to it failed
  int spines = 0;                ///< spines per leaf in `spine` (0: no spine links)
  bool any = false;  ///< when false, the tables are empty

  bool spine_failed(int leaf, int s) const {
    return spine[static_cast<std::size_t>(leaf * spines + s)] != 0;
  }
};

/// The (leaf, spine) pairs whose links a Spine perturbation names, leaves first.
std::vector<std::pair<int, int>> spine_links_of(const Spec& spec, const Perturbation& p);

/// The failures of `spec`, whose perturbations name GPUs, leaves and spines that exist.
Failures failures_of(const Spec& spec);

/// Partitions the failures of `spec` leave: a GPU with neither NVLink nor NIC, a failed NIC
/// with no carrier in its node, two leaves with no working spine in common. Paths are JSON
/// pointers into the experiment ("/perturbations/2").
Problems check_failures(const Spec& spec);

}  // namespace hopsim::topo
