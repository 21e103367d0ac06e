// Megatron's dispatchers' parts per call (dispatcher_parts.hpp).
#include "tools/commands/dispatcher_parts.hpp"

#include <cmath>
#include <string>

#include "workloads/collectives/ep_algorithms.hpp"
#include "workloads/ep/moe_closed_forms.hpp"

namespace hopsim::tools {
namespace {

using Json = nlohmann::ordered_json;

// The dispatcher's figures for one GPU: the group's size, its tokens, their bytes each.
struct Shape {
  double n = 0;
  double tokens = 0;
  double token_bytes = 0;
  double combine_bytes = 0;
  double experts = 0;
  double top_k = 0;
};

Json kernel(const std::string& name, const work::ComputeCost& cost) {
  return {{"part", name},
          {"kind", "kernel (compute stream)"},
          {"hbm_bytes", cost.bytes.n},
          {"time_s", cost.time.seconds()}};
}

Json collective(const std::string& name, const std::string& kind, double bytes_per_gpu) {
  return {{"part", name}, {"kind", kind}, {"bytes_per_gpu", bytes_per_gpu}};
}

// NCCL's all-to-all floor per call on the group's path (nccl_all_to_all's data file).
double nccl_floor_s(const work::Experiment& exp, bool across) {
  const work::LibraryFile* f = exp.ep_libraries.files.find("nccl_all_to_all");
  if (f == nullptr || !f->rates) {
    return 0;
  }
  return (across ? f->rates->internode : f->rates->intranode)[0].floor.seconds();
}

Json alltoall(const work::Experiment& exp, const Shape& s, const work::LayerCosts& permute) {
  const bool across = exp.parallel.ep > exp.cluster.gpus_per_node;
  const double copies_out = s.tokens * s.top_k * (s.n - 1) / s.n;  // balanced routing
  const Json call_floor = {{"floor_s", nccl_floor_s(exp, across)}};
  Json tokens = collective("tokens_all_to_all_v", "NCCL all-to-all-v (nccl_all_to_all's rates)",
                           copies_out * s.token_bytes);
  tokens.update(call_floor);
  Json probs = collective("probs_all_to_all_v", "NCCL all-to-all-v (nccl_all_to_all's rates)",
                          copies_out * static_cast<double>(work::kMegatronProbBytes));
  probs.update(call_floor);
  Json back = collective("tokens_all_to_all_v", "NCCL all-to-all-v (nccl_all_to_all's rates)",
                         copies_out * s.combine_bytes);
  back.update(call_floor);
  return {{"dispatch",
           {kernel("dispatcher_permute", permute.fwd[0].second),
            collective("token_counts_all_gather", "NCCL ring all-gather (LL), then the host waits",
                       (s.n - 1) * s.experts * static_cast<double>(work::kMegatronCountBytes)),
            tokens, probs}},
          {"combine", {back, kernel("dispatcher_unpermute", permute.fwd[1].second)}},
          {"note",
           "dispatch and combine forward; backward runs the same parts the other way round. "
           "The experts' own permute is Megatron's sort_chunks_by_idxs by local expert"}};
}

Json allgather(const Shape& s) {
  const double gathered = (s.n - 1) / s.n * s.n * s.tokens;  // the other ranks' tokens
  return {{"dispatch",
           {collective("routing_map_and_probs_all_gather", "NCCL ring all-gather",
                       gathered * s.experts *
                           static_cast<double>(work::kMegatronMapBytes + work::kMegatronProbBytes)),
            collective("tokens_all_gather", "NCCL ring all-gather", gathered * s.token_bytes)}},
          {"combine",
           {collective("outputs_reduce_scatter", "NCCL ring reduce-scatter",
                       gathered * s.combine_bytes)}},
          {"note",
           "over the EP group: each GPU sends (n - 1)/n of the group's n x tokens; the local "
           "experts' rows are picked out by the experts' own permute"}};
}

}  // namespace

Json megatron_parts(const work::Experiment& exp, const work::MoeLayerJob& job,
                    const work::ComputeModel& compute) {
  const work::ModelSpec& m = *exp.model;
  const auto hidden = static_cast<double>(m.hidden);
  Shape s;
  s.n = static_cast<double>(exp.parallel.ep);
  s.tokens = static_cast<double>(job.routing.tokens_per_gpu);
  s.token_bytes = std::round(hidden * job.dispatch_bytes_per_element);
  s.combine_bytes = std::round(hidden * job.combine_bytes_per_element);
  s.experts = static_cast<double>(m.moe.routed_experts);
  s.top_k = static_cast<double>(job.routing.top_k);
  Json out = {{"dispatcher", std::string(work::ep_algorithm_row(job.algorithm).library)},
              {"group", exp.parallel.ep},
              {"tokens_per_gpu", job.routing.tokens_per_gpu},
              {"hidden", m.hidden},
              {"top_k", job.routing.top_k}};
  if (work::ep_algorithm_row(job.algorithm).permutes_locally) {
    out.update(alltoall(
        exp, s,
        work::dispatcher_permute_costs(m, job.routing.tokens_per_gpu, job.routing.top_k, compute)));
  } else {
    out.update(allgather(s));
  }
  return out;
}

}  // namespace hopsim::tools
