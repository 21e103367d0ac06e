// Parallelism and layer-workload parsers. Cross-key checks live beside their models
// (work::Mesh::check, the jobs' check()).
#include "tools/config/layer_config.hpp"

#include <fmt/format.h>

namespace hopsim::config {
namespace {

constexpr std::int64_t kMaxDegree = std::int64_t{1} << 24;  // the most GPUs of a cluster

work::Dim parse_dim(const Node& n) {
  const std::string name = n.one_of({"tp", "cp", "pp", "dp"});
  for (work::Dim d : {work::Dim::Tp, work::Dim::Cp, work::Dim::Pp, work::Dim::Dp}) {
    if (work::dim_name(d) == name) {
      return d;
    }
  }
  return work::Dim::Tp;
}

}  // namespace

work::ParallelSpec parse_parallel(const Node& n) {
  n.allow_only(Section::Parallel);
  work::ParallelSpec p;
  const auto degree = [&](std::string_view key, std::int64_t& out) {
    if (n.has(key)) {
      out = n.at(key).integer_in(1, kMaxDegree);
    }
  };
  degree("tp", p.tp);
  degree("cp", p.cp);
  degree("ep", p.ep);
  degree("pp", p.pp);
  degree("dp", p.dp);
  if (n.has("order")) {
    const Node order = n.at("order");
    order.expect_array();
    if (order.size() != 4) {
      order.fail(fmt::format("expected the 4 dimensions tp, cp, pp and dp, innermost first; got "
                             "{} entries",
                             order.size()));
    }
    for (std::size_t i = 0; i < 4; ++i) {
      p.order[i] = parse_dim(order.at(i));
    }
  }
  if (n.has("tp_across_nodes")) {
    p.tp_across_nodes = n.at("tp_across_nodes").boolean();
  }
  return p;
}

template <>
work::AttentionLayerJob parse_job<work::AttentionLayerJob>(const Node& workload,
                                                           const JobParseContext& /*ctx*/) {
  const Node& n = workload;
  n.allow_only(Section::AttentionLayerWorkload);
  work::AttentionLayerJob job;
  job.seq_len = n.at("seq_len").integer_in(1, std::int64_t{1} << 31);
  if (n.has("micro_batch")) {
    job.micro_batch = n.at("micro_batch").integer_in(1, 1 << 20);
  }
  if (n.has("mask")) {
    job.causal = n.at("mask").one_of({"causal", "full"}) == "causal";
  }
  return job;
}

template <>
work::MoeLayerJob parse_job<work::MoeLayerJob>(const Node& workload, const JobParseContext& ctx) {
  const Node& n = workload;
  n.allow_only(Section::MoeLayerWorkload);
  if (ctx.model == nullptr) {
    n.at("kind").fail("workload kind \"moe_layer\" needs a model (the experiment's \"model\")");
  }
  const work::MoeShape& moe = ctx.model->moe;
  work::MoeLayerJob job;
  work::MoeRouting& r = job.routing;
  r.experts = moe.routed_experts;
  r.seed = ctx.seed;
  r.tokens_per_gpu = n.at("tokens_per_gpu").integer_in(1, std::int64_t{1} << 24);
  r.top_k = n.has("top_k") ? n.at("top_k").integer_in(1, 1 << 20) : moe.top_k;
  r.max_nodes_per_token = n.has("max_nodes_per_token")
                              ? n.at("max_nodes_per_token").integer_in(0, 1 << 20)
                              : moe.max_nodes_per_token;
  if (n.has("dispatch_bytes_per_element")) {
    job.dispatch_bytes_per_element = n.at("dispatch_bytes_per_element").positive(64);
  }
  if (n.has("combine_bytes_per_element")) {
    job.combine_bytes_per_element = n.at("combine_bytes_per_element").positive(64);
  }
  return job;
}

}  // namespace hopsim::config
