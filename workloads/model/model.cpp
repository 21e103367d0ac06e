// Closed-form parameter, FLOP and activation counts.
#include "workloads/model/model.hpp"

#include "sim/int_math.hpp"

namespace hopsim::work {
namespace {

double attention_params(const ModelSpec& m) {
  const double h = d(m.hidden);
  if (!m.mla) {
    const double q = h * d(m.heads * m.head_dim);
    const double kv = 2 * h * d(m.kv_heads * m.head_dim);
    const double out = d(m.heads * m.head_dim) * h;
    return q + kv + out;
  }
  const MlaShape& a = m.mla_shape;
  const double qk_dim = d(a.qk_nope_head_dim + a.qk_rope_head_dim);
  const double q = a.q_lora_rank > 0
                       ? h * d(a.q_lora_rank) + d(a.q_lora_rank) +  // down-projection + its norm
                             d(a.q_lora_rank) * d(m.heads) * qk_dim
                       : h * d(m.heads) * qk_dim;
  const double kv_down = h * d(a.kv_lora_rank + a.qk_rope_head_dim) + d(a.kv_lora_rank);
  const double kv_up = d(a.kv_lora_rank) * d(m.heads) * d(a.qk_nope_head_dim + a.v_head_dim);
  const double out = d(m.heads * a.v_head_dim) * h;
  return q + kv_down + kv_up + out;
}

}  // namespace

std::int64_t moe_layers(const ModelSpec& m) {
  return m.moe.routed_experts > 0 ? m.layers - m.moe.first_dense_layers : 0;
}

std::int64_t trained_layers(const ModelSpec& m) { return m.layers + m.mtp_depth; }

std::int64_t trained_moe_layers(const ModelSpec& m) {
  return m.moe.routed_experts > 0 ? trained_layers(m) - m.moe.first_dense_layers : 0;
}

LayerParams layer_params(const ModelSpec& m, bool moe_layer) {
  LayerParams p;
  p.attention = attention_params(m);
  p.norms = 2 * d(m.hidden);
  if (!moe_layer) {
    p.mlp = 3 * d(m.hidden) * d(m.ffn_hidden);
    return p;
  }
  p.router = d(m.hidden) * d(m.moe.routed_experts);
  p.expert = 3 * d(m.hidden) * d(m.moe.expert_ffn_hidden);
  p.shared_experts = d(m.moe.shared_experts) * p.expert;
  return p;
}

namespace {

double embedding_params(const ModelSpec& m) {
  return d(m.vocab) * d(m.hidden) * (m.tied_embeddings ? 1 : 2) + d(m.hidden);  // + final norm
}

double sum_layers(const ModelSpec& m, double routed_experts_used) {
  const std::int64_t moe = moe_layers(m);
  const LayerParams dense = layer_params(m, false);
  const LayerParams sparse = layer_params(m, true);
  const double dense_layer = dense.attention + dense.mlp + dense.norms;
  const double moe_layer = sparse.attention + sparse.norms + sparse.router +
                           sparse.shared_experts + routed_experts_used * sparse.expert;
  return d(m.layers - moe) * dense_layer + d(moe) * moe_layer;
}

}  // namespace

double total_params(const ModelSpec& m) {
  return sum_layers(m, d(m.moe.routed_experts)) + embedding_params(m);
}

double active_params(const ModelSpec& m) {
  return sum_layers(m, d(m.moe.top_k)) + embedding_params(m);
}

double layer_gemm_flops_per_token(const ModelSpec& m, bool moe_layer) {
  const LayerParams p = layer_params(m, moe_layer);
  const double weights = p.attention + p.mlp + p.router + p.shared_experts +
                         (moe_layer ? d(m.moe.top_k) * p.expert : 0);
  return 2 * weights;
}

double attention_flops_per_token(const ModelSpec& m, std::int64_t seq_len) {
  return 12 * d(m.layers) * d(m.hidden) * d(seq_len);
}

double activation_bytes_per_gpu(const ModelSpec& m, std::int64_t seq_len, std::int64_t micro_batch,
                                std::int64_t tp, std::int64_t cp) {
  return 34 * d(seq_len) * d(micro_batch) * d(m.hidden) * d(m.layers) / d(tp * cp);
}

}  // namespace hopsim::work
