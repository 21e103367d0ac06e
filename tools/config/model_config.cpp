// The model file parser.
#include "tools/config/model_config.hpp"

#include <fmt/format.h>

#include "workloads/model/model_check.hpp"

namespace hopsim::config {
namespace {

// Ranges that keep every kernel shape the layers build (widths x heads x tokens) within what the
// compute model accepts (2^31 per dimension), and far above any real model (Llama 3 405B: hidden
// 16384, 128 heads; DeepSeek-V3: 256 experts, vocabulary 129280).
constexpr std::int64_t kMaxWidth = std::int64_t{1} << 20;  // hidden, FFN and LoRA widths
constexpr std::int64_t kMaxHeads = std::int64_t{1} << 14;  // heads and per-head dimensions
constexpr std::int64_t kMaxVocab = std::int64_t{1} << 24;
constexpr std::int64_t kMaxExperts = std::int64_t{1} << 16;
constexpr std::int64_t kMaxSharedExperts = std::int64_t{1} << 10;
constexpr std::int64_t kMaxLayers = 100'000;
constexpr std::int64_t kMaxMtpDepth = 64;  // DeepSeek-V3 trains 1

std::int64_t width(const Node& n, std::string_view key) {
  return n.at(key).integer_in(1, kMaxWidth);
}

std::int64_t heads(const Node& n, std::string_view key) {
  return n.at(key).integer_in(1, kMaxHeads);
}

work::MlaShape parse_mla(const Node& n) {
  n.allow_only(Section::Mla);
  work::MlaShape a;
  a.q_lora_rank = n.has("q_lora_rank") ? n.at("q_lora_rank").integer_in(0, kMaxWidth) : 0;
  a.kv_lora_rank = width(n, "kv_lora_rank");
  a.qk_nope_head_dim = heads(n, "qk_nope_head_dim");
  a.qk_rope_head_dim = heads(n, "qk_rope_head_dim");
  a.v_head_dim = heads(n, "v_head_dim");
  return a;
}

work::MoeShape parse_moe(const Node& n) {
  n.allow_only(Section::ModelMoe);
  work::MoeShape moe;
  moe.routed_experts = n.at("routed_experts").integer_in(1, kMaxExperts);
  moe.shared_experts =
      n.has("shared_experts") ? n.at("shared_experts").integer_in(0, kMaxSharedExperts) : 0;
  moe.top_k = n.at("top_k").integer_in(1, kMaxExperts);
  moe.expert_ffn_hidden = width(n, "expert_ffn_hidden");
  if (n.has("max_nodes_per_token")) {
    moe.max_nodes_per_token = n.at("max_nodes_per_token").integer_in(0, kMaxExperts);
  }
  if (n.has("first_dense_layers")) {
    moe.first_dense_layers = n.at("first_dense_layers").integer_in(0, kMaxLayers);
  }
  return moe;
}

}  // namespace

work::ModelSpec parse_model(const Node& root) {
  root.allow_only(Section::Model);
  work::ModelSpec m;
  m.name = root.at("name").string();
  if (root.has("description")) {
    root.at("description").string();
  }
  m.layers = root.at("layers").integer_in(1, kMaxLayers);
  m.hidden = width(root, "hidden");
  m.ffn_hidden = width(root, "ffn_hidden");
  m.heads = heads(root, "heads");
  m.kv_heads = root.has("kv_heads") ? heads(root, "kv_heads") : m.heads;
  m.head_dim = root.has("head_dim") ? heads(root, "head_dim") : m.hidden / m.heads;
  m.vocab = root.at("vocab").integer_in(1, kMaxVocab);
  m.tied_embeddings = root.has("tied_embeddings") && root.at("tied_embeddings").boolean();
  if (root.has("mla")) {
    m.mla = true;
    m.mla_shape = parse_mla(root.at("mla"));
  }
  if (root.has("moe")) {
    m.moe = parse_moe(root.at("moe"));
  }
  if (root.has("mtp_depth")) {
    m.mtp_depth = root.at("mtp_depth").integer_in(0, kMaxMtpDepth);
  }
  if (root.has("sources")) {
    check_sources(root);
  }
  if (const Problems problems = work::check_model(m); !problems.empty()) {
    fail_at(*root.origin(), Node::Pointer(root.path().to_string() + problems.front().path),
            problems.front().message);
  }
  return m;
}

}  // namespace hopsim::config
