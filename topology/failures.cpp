// Failed links and their detours (failures.hpp).
#include "topology/failures.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

#include <fmt/format.h>

namespace hopsim::topo {
namespace {

std::size_t at(std::int64_t i) { return static_cast<std::size_t>(i); }

// The next GPU of `rank`'s node, by index and wrapping around, whose NIC and NVLink work;
// `rank` itself while its NIC works; -1 when none can carry its traffic.
int carrier_of(const Spec& spec, const Failures& f, int rank) {
  if (f.nic[at(rank)] == 0) {
    return rank;
  }
  if (f.nvlink[at(rank)] != 0) {
    return -1;  // its traffic cannot reach another GPU's NIC either
  }
  const int per_node = spec.gpus_per_node;
  const int first = rank - rank % per_node;
  for (int step = 1; step < per_node; ++step) {
    const int other = first + (rank % per_node + step) % per_node;
    if (f.nic[at(other)] == 0 && f.nvlink[at(other)] == 0) {
      return other;
    }
  }
  return -1;
}

// The last entry of the experiment's list that fails `part` of GPU `rank`, or that fails a
// spine link of leaf `leaf` (part Spine), as a JSON pointer.
std::string entry_of(const Spec& spec, PerturbedPart part, int rank, int leaf) {
  std::size_t entry = 0;
  for (const Perturbation& p : spec.perturbations) {
    if (!p.failed || p.part != part) {
      continue;
    }
    if (part == PerturbedPart::Spine) {
      for (const auto& [l, s] : spine_links_of(spec, p)) {
        entry = l == leaf ? p.entry : entry;
      }
    } else {
      for (const int g : p.gpus) {
        entry = g == rank ? p.entry : entry;
      }
    }
  }
  return fmt::format("/perturbations/{}", entry);
}

void check_gpus(const Spec& spec, const Failures& f, Problems& out) {
  for (int rank = 0; rank < spec.gpu_count() && out.empty(); ++rank) {
    const int node = rank / spec.gpus_per_node;
    if (f.nic[at(rank)] != 0 && f.nvlink[at(rank)] != 0 && spec.gpu_count() > 1) {
      out.push_back({entry_of(spec, PerturbedPart::Nic, rank, 0),
                     fmt::format("GPU {} has neither its NVLink nor its NIC left: nothing "
                                 "reaches it",
                                 rank)});
    } else if (f.nic_carrier[at(rank)] < 0) {
      out.push_back({entry_of(spec, PerturbedPart::Nic, rank, 0),
                     fmt::format("GPU {}'s NIC failed and no other GPU of node {} has a NIC and "
                                 "an NVLink that work to carry its traffic",
                                 rank, node)});
    }
  }
}

// Leaves with the same working spines reach each other alike: check each distinct set once.
void check_spines(const Spec& spec, const Failures& f, Problems& out) {
  if (f.spines == 0) {
    return;
  }
  const std::int64_t leaves = leaf_count(spec);
  std::map<std::vector<bool>, int> first_leaf;  // working spines -> the first leaf with them
  for (int leaf = 0; leaf < leaves; ++leaf) {
    std::vector<bool> working(at(f.spines));
    for (int s = 0; s < f.spines; ++s) {
      working[at(s)] = !f.spine_failed(leaf, s);
    }
    first_leaf.try_emplace(std::move(working), leaf);
  }
  for (const auto& [a, leaf_a] : first_leaf) {
    for (const auto& [b, leaf_b] : first_leaf) {
      bool shared = false;
      for (std::size_t s = 0; s < a.size() && !shared; ++s) {
        shared = a[s] && b[s];
      }
      if (shared || leaf_a > leaf_b) {
        continue;
      }
      const auto none = [](const std::vector<bool>& w) { return std::ranges::count(w, true) == 0; };
      if (none(a) || none(b)) {
        const int broken = none(a) ? leaf_a : leaf_b;
        out.push_back({entry_of(spec, PerturbedPart::Spine, 0, broken),
                       fmt::format("leaf {} has no spine link left: its NICs reach no other leaf",
                                   broken)});
      } else {
        out.push_back({entry_of(spec, PerturbedPart::Spine, 0, leaf_b),
                       fmt::format("leaves {} and {} have no working spine in common: their "
                                   "NICs cannot reach each other",
                                   leaf_a, leaf_b)});
      }
      return;
    }
  }
}

}  // namespace

std::vector<std::pair<int, int>> spine_links_of(const Spec& spec, const Perturbation& p) {
  std::vector<int> leaves = p.leaves;
  std::vector<int> spines = p.spines;
  if (leaves.empty()) {
    for (int leaf = 0; leaf < leaf_count(spec); ++leaf) {
      leaves.push_back(leaf);
    }
  }
  if (spines.empty()) {
    for (int s = 0; s < spine_count(spec); ++s) {
      spines.push_back(s);
    }
  }
  std::vector<std::pair<int, int>> out;
  for (const int leaf : leaves) {
    for (const int s : spines) {
      out.emplace_back(leaf, s);
    }
  }
  return out;
}

Failures failures_of(const Spec& spec) {
  Failures f;
  for (const Perturbation& p : spec.perturbations) {
    f.any = f.any || p.failed;
  }
  if (!f.any) {
    return f;
  }
  const std::size_t gpus = at(spec.gpu_count());
  f.nic.assign(gpus, 0);
  f.nvlink.assign(gpus, 0);
  f.spines = spine_count(spec);
  f.spine.assign(at(leaf_count(spec)) * at(f.spines), 0);
  for (const Perturbation& p : spec.perturbations) {
    if (!p.failed) {
      continue;
    }
    if (p.part == PerturbedPart::Spine) {
      for (const auto& [leaf, s] : spine_links_of(spec, p)) {
        f.spine[at(leaf) * at(f.spines) + at(s)] = 1;
      }
      continue;
    }
    std::vector<char>& table = p.part == PerturbedPart::Nic ? f.nic : f.nvlink;
    for (const int rank : p.gpus) {
      table[at(rank)] = 1;
    }
  }
  f.nic_carrier.resize(gpus);
  for (int rank = 0; rank < spec.gpu_count(); ++rank) {
    f.nic_carrier[at(rank)] = carrier_of(spec, f, rank);
  }
  return f;
}

Problems check_failures(const Spec& spec) {
  Problems out;
  const Failures f = failures_of(spec);
  if (!f.any) {
    return out;
  }
  check_gpus(spec, f, out);
  if (out.empty()) {
    check_spines(spec, f, out);
  }
  return out;
}

}  // namespace hopsim::topo
