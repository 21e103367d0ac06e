// Parallelism and layer-workload parsers, with the divisibility checks that degrees need.
#include "tools/config/layer_config.hpp"

#include <fmt/format.h>

namespace hopsim::config {

work::ParallelSpec parse_parallel(const Node& n, const work::ModelSpec* model, int gpus) {
  n.allow_only({"tp", "cp", "ep", "pp", "dp"});
  work::ParallelSpec p;
  const auto degree = [&](std::string_view key, std::int64_t& out) {
    if (n.has(key)) {
      out = n.at(key).integer_in(1, gpus);
    }
  };
  degree("tp", p.tp);
  degree("cp", p.cp);
  degree("ep", p.ep);
  degree("pp", p.pp);
  degree("dp", p.dp);
  const std::int64_t product = p.tp * p.cp * p.pp * p.dp;
  if (product > gpus) {
    n.fail(fmt::format("tp x cp x pp x dp = {} x {} x {} x {} = {} GPUs, but the cluster has {}",
                       p.tp, p.cp, p.pp, p.dp, product, gpus));
  }
  if (model != nullptr && (model->heads % p.tp != 0 || (!model->mla && model->kv_heads % p.tp != 0 &&
                                                         p.tp % model->kv_heads != 0))) {
    n.at("tp").fail(fmt::format("{} does not split the model's {} heads ({} KV heads)", p.tp,
                                model->heads, model->kv_heads));
  }
  if (model != nullptr && model->moe.routed_experts > 0 &&
      model->moe.routed_experts % p.ep != 0) {
    n.at("ep").fail(fmt::format("{} does not divide the model's {} routed experts", p.ep,
                                model->moe.routed_experts));
  }
  return p;
}

work::AttentionLayerJob parse_attention_layer(const Node& n, const work::ParallelSpec& parallel) {
  n.allow_only({"kind", "seq_len", "micro_batch", "mask"});
  work::AttentionLayerJob job;
  const Node seq = n.at("seq_len");
  job.seq_len = seq.integer_in(1, std::int64_t{1} << 32);
  if (job.seq_len % (2 * parallel.cp) != 0) {
    seq.fail(fmt::format("{} does not split into 2*cp = {} equal chunks (cp = {})", job.seq_len,
                         2 * parallel.cp, parallel.cp));
  }
  if (n.has("micro_batch")) {
    job.micro_batch = n.at("micro_batch").integer_in(1, 1 << 20);
  }
  if (n.has("mask")) {
    job.causal = n.at("mask").one_of({"causal", "full"}) == "causal";
  }
  return job;
}

work::MoeLayerJob parse_moe_layer(const Node& n, const work::ModelSpec& model,
                                  const work::ParallelSpec& parallel) {
  n.allow_only({"kind", "tokens_per_gpu", "top_k", "max_nodes_per_token",
                "dispatch_bytes_per_element", "combine_bytes_per_element"});
  if (model.moe.routed_experts == 0) {
    n.at("kind").fail(fmt::format("model \"{}\" has no routed experts", model.name));
  }
  work::MoeLayerJob job;
  job.tokens_per_gpu = n.at("tokens_per_gpu").integer_in(1, std::int64_t{1} << 24);
  job.top_k = n.has("top_k") ? n.at("top_k").integer_in(1, model.moe.routed_experts)
                             : model.moe.top_k;
  job.max_nodes_per_token = n.has("max_nodes_per_token")
                                ? n.at("max_nodes_per_token").integer_in(0, parallel.ep)
                                : model.moe.max_nodes_per_token;
  if (n.has("dispatch_bytes_per_element")) {
    job.dispatch_bytes_per_element = n.at("dispatch_bytes_per_element").positive();
  }
  if (n.has("combine_bytes_per_element")) {
    job.combine_bytes_per_element = n.at("combine_bytes_per_element").positive();
  }
  return job;
}

}  // namespace hopsim::config
