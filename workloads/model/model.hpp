// Transformer shapes and their closed-form counts: parameters, FLOPs, saved activations.
//
// Per layer, for a GEMM of a [tokens x in] by [in x out] weight: 2 * tokens * in * out FLOPs
// forward, twice that backward (data and weight gradients). Attention scores and values: for
// each attended (query, key) pair, 2 * heads * (d_qk + d_v) FLOPs forward, 2.5x that backward
// (FlashAttention recomputes the scores). Saved activations with flash attention and sequence
// parallelism: 34 * s * b * h bytes per layer, divided by TP and by CP (Korthikanti et al.,
// "Reducing Activation Recomputation in Large Transformer Models", 2022, Table 2).
#pragma once

#include <cstdint>
#include <string>

namespace hopsim::work {

/// Multi-head latent attention (DeepSeek-V2/V3).
struct MlaShape {
  std::int64_t q_lora_rank = 0;  ///< 0: queries are projected directly
  std::int64_t kv_lora_rank = 512;
  std::int64_t qk_nope_head_dim = 128;
  std::int64_t qk_rope_head_dim = 64;
  std::int64_t v_head_dim = 128;
};

struct MoeShape {
  std::int64_t routed_experts = 0;  ///< 0: a dense model
  std::int64_t shared_experts = 0;
  std::int64_t top_k = 0;
  std::int64_t expert_ffn_hidden = 0;
  std::int64_t max_nodes_per_token = 0;  ///< 0: no node limit
  std::int64_t first_dense_layers = 0;   ///< layers before the first MoE layer
};

struct ModelSpec {
  std::string name;
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t ffn_hidden = 0;  ///< SwiGLU MLP width of dense layers
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;    ///< GQA; equal to heads for MHA
  std::int64_t head_dim = 0;
  std::int64_t vocab = 0;
  bool tied_embeddings = false;
  bool mla = false;
  MlaShape mla_shape;
  MoeShape moe;
  /// Multi-token-prediction modules trained with the model (DeepSeek-V3: 1). Each is one more
  /// transformer block after the last layer (MoE where the model's layers are), two norms and a
  /// projection from 2 x hidden to hidden before it, and the shared output head and loss after
  /// it, for the next token but k. Not in the parameter and FLOP counts (DeepSeek's 671B
  /// leaves its 14B out); a training step runs them.
  std::int64_t mtp_depth = 0;
};

/// Parameter counts of one layer's parts.
struct LayerParams {
  double attention = 0;
  double mlp = 0;            ///< dense layers: the SwiGLU MLP
  double router = 0;         ///< MoE layers
  double expert = 0;         ///< one routed expert
  double shared_experts = 0; ///< all shared experts
  double norms = 0;
};

LayerParams layer_params(const ModelSpec& m, bool moe_layer);
std::int64_t moe_layers(const ModelSpec& m);
/// The transformer blocks a training step runs: the model's layers, then one per MTP module.
std::int64_t trained_layers(const ModelSpec& m);
/// Of those, the MoE ones.
std::int64_t trained_moe_layers(const ModelSpec& m);
double total_params(const ModelSpec& m);
/// Parameters a token touches: all but the routed experts it does not use.
double active_params(const ModelSpec& m);

/// Forward FLOPs per token of the dense (GEMM) parts of one layer; 6 x active params covers
/// the whole model's fwd + bwd per token.
double layer_gemm_flops_per_token(const ModelSpec& m, bool moe_layer);

/// Attention-score FLOPs per token, fwd + bwd, whole model, full mask, at sequence length s:
/// 12 * L * h * s (3 passes x 2 matmuls x 2 FLOPs x h x s).
double attention_flops_per_token(const ModelSpec& m, std::int64_t seq_len);

/// Saved activations per GPU for all layers: 34 * s * b * h * L / (tp * cp) bytes.
double activation_bytes_per_gpu(const ModelSpec& m, std::int64_t seq_len, std::int64_t micro_batch,
                                std::int64_t tp, std::int64_t cp);

}  // namespace hopsim::work
