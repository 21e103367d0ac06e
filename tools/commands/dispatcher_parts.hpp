// What one call of Megatron-Core's token dispatchers (EP rows megatron_alltoall and
// megatron_allgather) is made of, per GPU of the EP group: its kernels priced by the compute
// model and its collectives' bytes, as `hopsim run` builds them (ep_algorithms.cpp) with
// balanced routing. `hopsim explain` prints it as the layer's ep.per_call.
#pragma once

#include <nlohmann/json.hpp>

#include "workloads/compute/compute_model.hpp"
#include "workloads/ep/moe_layer_job.hpp"
#include "workloads/experiment/experiment.hpp"

namespace hopsim::tools {

nlohmann::ordered_json megatron_parts(const work::Experiment& exp, const work::MoeLayerJob& job,
                                      const work::ComputeModel& compute);

}  // namespace hopsim::tools
