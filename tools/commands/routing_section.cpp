#include "tools/commands/routing_section.hpp"

#include <numeric>
#include <string>
#include <vector>

#include "workloads/ep/ep_details.hpp"
#include "workloads/ep/moe_routing.hpp"
#include "workloads/ep/training_routing.hpp"

namespace hopsim::tools {

nlohmann::ordered_json routing_section(const work::MoeLayerJob& job, const work::ParallelSpec& spec,
                                       int gpus_per_node) {
  const work::MoeRouting& r = job.routing;
  const std::vector<topo::GpuId> group = work::Mesh(spec).group(work::Dim::Ep, 0);
  nlohmann::ordered_json out;
  const bool training = r.distribution == work::RoutingDistribution::Training;
  const bool uniform = r.distribution == work::RoutingDistribution::Uniform &&
                       job.balancer == work::Balancer::None && r.bias.empty();
  out["mode"] = training  ? std::string("training")
                : uniform ? std::string("balanced")
                          : std::string(work::distribution_name(r.distribution));
  out["ep_group_gpus"] = group.size();
  out["tokens_per_gpu"] = r.tokens_per_gpu;
  if (training) {
    out["run_tokens"] = r.run_tokens;
    out["sequence_tokens"] = r.sequence_tokens > 0 ? r.sequence_tokens : r.tokens_per_gpu;
    out["independent_choices"] = work::independent_tokens(r, group.size());
    out["balancer"] = work::residual_balancer_name(r.residual_balancer);
    out["residual_scale"] = work::residual_scale(r);
    out["parameter_source"] = work::parameter_source(r);
  }
  work::RoutingLoad load;
  work::route_tokens(group, gpus_per_node, r, Bytes{1}, &load);
  std::vector<std::int64_t> rows;
  for (const std::vector<std::int64_t>& slots : load.slot_tokens) {
    rows.push_back(std::accumulate(slots.begin(), slots.end(), std::int64_t{0}));
  }
  out["busiest_rank_over_mean"] = work::max_over_mean(rows);
  out["busiest_expert_over_mean"] = work::max_over_mean(load.expert_tokens);
  out["note"] =
      "EP group 0, one batch (the first micro-batch `hopsim run` routes there): rows each GPU's "
      "experts receive; the busiest GPU sets the layer's pace";
  return out;
}

}  // namespace hopsim::tools
