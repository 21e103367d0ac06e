// The model file parser.
#include "tools/config/model_config.hpp"

#include <fmt/format.h>

#include "tools/config/keys/model_keys.hpp"
#include "workloads/model/model_check.hpp"

namespace hopsim::config {
namespace {

namespace mk = keys::model;

work::MlaShape parse_mla(const Node& n) {
  namespace ak = keys::mla;
  n.allow_only(ak::kSection);
  work::MlaShape a;
  a.q_lora_rank = n.read(ak::kQLoraRank);
  a.kv_lora_rank = n.read(ak::kKvLoraRank);
  a.qk_nope_head_dim = n.read(ak::kQkNopeHeadDim);
  a.qk_rope_head_dim = n.read(ak::kQkRopeHeadDim);
  a.v_head_dim = n.read(ak::kVHeadDim);
  return a;
}

work::MoeShape parse_moe(const Node& n) {
  namespace ek = keys::model_moe;
  n.allow_only(ek::kSection);
  work::MoeShape moe;
  moe.routed_experts = n.read(ek::kRoutedExperts);
  moe.shared_experts = n.read(ek::kSharedExperts);
  moe.top_k = n.read(ek::kTopK);
  moe.expert_ffn_hidden = n.read(ek::kExpertFfnHidden);
  moe.max_nodes_per_token = n.read(ek::kMaxNodesPerToken);
  moe.first_dense_layers = n.read(ek::kFirstDenseLayers);
  return moe;
}

}  // namespace

work::ModelSpec parse_model(const Node& root) {
  root.allow_only(mk::kSection);
  work::ModelSpec m;
  m.name = root.read(mk::kName);
  (void)root.read_if(mk::kDescription);
  m.layers = root.read(mk::kLayers);
  m.hidden = root.read(mk::kHidden);
  m.ffn_hidden = root.read(mk::kFfnHidden);
  m.heads = root.read(mk::kHeads);
  m.kv_heads = root.read_if(mk::kKvHeads).value_or(m.heads);
  m.head_dim = root.read_if(mk::kHeadDim).value_or(m.hidden / m.heads);
  m.vocab = root.read(mk::kVocab);
  m.tied_embeddings = root.read(mk::kTiedEmbeddings);
  if (root.has(mk::kMla)) {
    m.mla = true;
    m.mla_shape = parse_mla(root.at(mk::kMla));
  }
  if (root.has(mk::kMoe)) {
    m.moe = parse_moe(root.at(mk::kMoe));
  }
  m.mtp_depth = root.read(mk::kMtpDepth);
  if (root.has(mk::kSources)) {
    check_sources(root);
  }
  if (const Problems problems = work::check_model(m); !problems.empty()) {
    fail_at(*root.origin(), Node::Pointer(root.path().to_string() + problems.front().path),
            problems.front().message);
  }
  return m;
}

}  // namespace hopsim::config
