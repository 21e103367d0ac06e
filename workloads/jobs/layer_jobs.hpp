// The layer workloads: the attention layer (CP, attention_layer_job.hpp) and the MoE layer
// (EP, moe_layer_job.hpp), and the checks they share.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/problem.hpp"
#include "workloads/collectives/moe_routing.hpp"
#include "workloads/jobs/attention_layer_job.hpp"
#include "workloads/jobs/job_env.hpp"
#include "workloads/jobs/moe_layer_job.hpp"

namespace hopsim::work {

/// The model a layer workload needs, fitted to the mesh's degrees, and the GPU figures its
/// kernels need; false (with problems) when either is missing.
bool check_model_and_gpu(const JobEnv& env, std::string_view kind, Problems& out);

}  // namespace hopsim::work
