// What a job sees of its experiment: to check itself, and to build the plans it simulates.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "topology/cluster.hpp"
#include "topology/spec.hpp"
#include "workloads/collectives/collectives.hpp"
#include "workloads/compute/compute_model.hpp"
#include "workloads/mesh/mesh.hpp"
#include "workloads/model/model.hpp"
#include "workloads/plan/plan.hpp"

namespace hopsim::work {

/// A job checks itself against these; every part has passed its own checks.
struct JobEnv {
  const topo::Spec& cluster;
  const NcclModel& nccl;
  const Mesh& mesh;
  const ModelSpec* model = nullptr;  ///< null when the experiment names none
  std::uint64_t seed = 1;
};

/// A job builds its plans from these.
struct BuildEnv {
  const JobEnv& env;
  const topo::Cluster& cluster;
  const ComputeModel* compute = nullptr;  ///< null when the job needs none
};

/// One simulated case of a job: for a collective, one size.
struct Case {
  std::string name;
  Plan plan;
};

}  // namespace hopsim::work
