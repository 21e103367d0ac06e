// Model shape checks.
#include "workloads/model/model_check.hpp"

#include <fmt/format.h>

namespace hopsim::work {

Problems check_model(const ModelSpec& m) {
  Problems out;
  if (m.layers < 1 || m.hidden < 1 || m.heads < 1 || m.kv_heads < 1 || m.head_dim < 1) {
    out.push_back({"", "layers, hidden, heads, kv_heads and head_dim must be >= 1"});
    return out;
  }
  if (m.heads % m.kv_heads != 0) {
    out.push_back({"/kv_heads",
                   fmt::format("must divide heads ({}), got {}", m.heads, m.kv_heads)});
  }
  if (m.moe.routed_experts > 0 && m.moe.top_k > m.moe.routed_experts) {
    out.push_back({"/moe/top_k", fmt::format("must be at most routed_experts ({}), got {}",
                                                   m.moe.routed_experts, m.moe.top_k)});
  }
  if (m.moe.first_dense_layers > m.layers) {
    out.push_back({"/moe/first_dense_layers",
                   fmt::format("must be at most layers ({}), got {}", m.layers,
                               m.moe.first_dense_layers)});
  }
  return out;
}

Problems check_model_fit(const ModelSpec& m, const ParallelSpec& p) {
  Problems out;
  const bool kv_splits = m.mla || m.kv_heads % p.tp == 0 || p.tp % m.kv_heads == 0;
  if (m.heads % p.tp != 0 || !kv_splits) {
    out.push_back({"/parallel/tp", fmt::format("{} does not split the model's {} heads ({} KV "
                                               "heads)",
                                               p.tp, m.heads, m.kv_heads)});
  }
  if (m.moe.routed_experts > 0 && m.moe.routed_experts % p.ep != 0) {
    out.push_back({"/parallel/ep", fmt::format("{} does not divide the model's {} routed experts",
                                               p.ep, m.moe.routed_experts)});
  }
  return out;
}

}  // namespace hopsim::work
