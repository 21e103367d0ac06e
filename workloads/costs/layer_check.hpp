// The checks the layer kinds (attention, MoE, transformer layers, training steps) share.
#pragma once

#include <string_view>

#include "sim/problem.hpp"
#include "workloads/env/job_env.hpp"

namespace hopsim::work {

/// The model a layer workload needs, fitted to the mesh's degrees, and the GPU figures its
/// kernels need; false (with problems) when either is missing.
bool check_model_and_gpu(const JobEnv& env, std::string_view kind, Problems& out);

}  // namespace hopsim::work
