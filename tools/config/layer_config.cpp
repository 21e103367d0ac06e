// Parallelism and layer-workload parsers. Cross-key checks live beside their models
// (work::Mesh::check, the jobs' check()).
#include "tools/config/layer_config.hpp"

#include <array>

#include <fmt/format.h>

#include "tools/config/collective_config.hpp"
#include "tools/config/keys/experiment_keys.hpp"
#include "tools/config/keys/transformer_keys.hpp"

namespace hopsim::config {
namespace {

namespace ak = keys::attention;
namespace mk = keys::moe_layer;
namespace tk = keys::transformer;

// An explicit expert placement: at most this many ranks, and experts per rank.
constexpr std::size_t kMaxPlacementRanks = std::size_t{1} << 16;
constexpr std::size_t kMaxPlacementSlots = 4096;
// Documents at least 1 token each, at most 2^24 of them.
constexpr std::size_t kMaxDocuments = std::size_t{1} << 24;

}  // namespace

work::ParallelSpec parse_parallel(const Node& n) {
  namespace pk = keys::parallel;
  n.allow_only(pk::kSection);
  work::ParallelSpec p;
  p.tp = n.read(pk::kTp);
  p.cp = n.read(pk::kCp);
  p.ep = n.read(pk::kEp);
  p.pp = n.read(pk::kPp);
  p.dp = n.read(pk::kDp);
  if (n.has(pk::kOrder)) {
    const Node order = n.at(pk::kOrder);
    order.expect_array();
    if (order.size() != 4) {
      order.fail(
          fmt::format("expected the 4 dimensions tp, cp, pp and dp, innermost first; got "
                      "{} entries",
                      order.size()));
    }
    for (std::size_t i = 0; i < 4; ++i) {
      p.order[i] = static_cast<work::Dim>(order.at(i).read_item(pk::kOrder));
    }
  }
  p.tp_across_nodes = n.read(pk::kTpAcrossNodes);
  return p;
}

namespace {

work::CpSettings parse_cp(const Node& n) {
  namespace ck = keys::attention_cp;
  n.allow_only(ck::kSection);
  work::CpSettings cp;
  cp.algorithm = n.read_as<work::CpAlgorithm>(ck::kAlgorithm);
  cp.balance = n.read_as<work::CpBalance>(ck::kBalance);
  cp.ulysses_degree = n.read_if(ck::kUlyssesDegree).value_or(cp.ulysses_degree);
  cp.replicate_kv = n.read(ck::kReplicateKv);
  cp.impl = n.read_as<work::CpImpl>(ck::kImpl);
  cp.rotate = n.read_as<work::CpRotate>(ck::kRotateMethod);
  if (n.has(ck::kRotateMethod) && cp.impl != work::CpImpl::Torch) {
    n.at(ck::kRotateMethod).fail("only with impl \"torch\" (PyTorch's rotate method)");
  }
  return cp;
}

std::vector<std::int64_t> parse_documents(const Node& n) {
  n.expect_array();
  if (n.size() == 0 || n.size() > kMaxDocuments) {
    n.fail(fmt::format("expected 1 to {} document lengths, got {}", kMaxDocuments, n.size()));
  }
  std::vector<std::int64_t> lengths;
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < n.size(); ++i) {
    lengths.push_back(n.at(i).read_item(ak::kDocuments));
    sum += lengths.back();
    if (sum > ak::kMaxTokens) {
      n.at(i).fail("document lengths sum to more than 2^31 tokens");
    }
  }
  return lengths;
}

// The attention part's keys (the section's allow_only has said which may appear).
work::AttentionLayerJob parse_attention(const Node& n) {
  work::AttentionLayerJob job;
  job.seq_len = n.read(ak::kSeqLen);
  job.micro_batch = n.read(ak::kMicroBatch);
  job.mask = n.read_as<work::AttentionMask>(ak::kMask);
  if (n.has(ak::kDocuments)) {
    job.documents = parse_documents(n.at(ak::kDocuments));
  }
  job.document_mean_tokens = n.read_if(ak::kDocumentMeanTokens).value_or(job.document_mean_tokens);
  job.cached_tokens = n.read(ak::kCachedTokens);
  job.mlp = n.read(ak::kMlp);
  job.layers = n.read(ak::kLayers);
  job.mode = n.read_as<work::LayerMode>(ak::kMode);
  // Prefill runs forward only; training both passes unless told.
  job.passes = job.mode == work::LayerMode::Prefill ? work::Passes::Forward : work::Passes::Both;
  if (n.has(ak::kPasses)) {
    job.passes = n.read_as<work::Passes>(ak::kPasses);
  }
  job.dtype = n.read_as<work::Dtype>(ak::kDtype);
  job.fp8_dot_product_attention = n.read(ak::kFp8DotProductAttention);
  job.mlp_dtype = n.has(ak::kMlpDtype) ? n.read_as<work::Dtype>(ak::kMlpDtype) : job.dtype;
  if (n.has(ak::kCp)) {
    job.cp = parse_cp(n.at(ak::kCp));
  }
  job.tp_overlap = n.read_as<work::TpOverlap>(ak::kTpOverlap);
  return job;
}

// The routing object's balancer keys (its popularity keys are parse_popularity's).
void parse_balancer(const Node& routing, work::MoeLayerJob& job) {
  namespace rk = keys::routing;
  job.balancer = routing.read_as<work::Balancer>(rk::kBalancer);
  for (const std::string_view key : {rk::kSteps.name, rk::kBiasUpdate.name}) {
    if (routing.has(key) && job.balancer != work::Balancer::Bias) {
      routing.at(key).fail("only with balancer \"bias\"");
    }
  }
  if (routing.has(rk::kAuxLossWeight) && job.balancer != work::Balancer::AuxLoss) {
    routing.at(rk::kAuxLossWeight).fail("only with balancer \"aux_loss\"");
  }
  job.aux_loss_weight = routing.read(rk::kAuxLossWeight);
  job.balance_steps = routing.read(rk::kSteps);
  job.bias_update = routing.read(rk::kBiasUpdate);
}

// Training routing is a balancer's residual already: its `balancer` names which one left it
// ("aux_loss", the run length's fit, by default; or "bias"), and no balancer is simulated.
void parse_training_balancer(const Node& routing, work::MoeLayerJob& job) {
  namespace rk = keys::routing;
  for (const std::string_view key :
       {rk::kSteps.name, rk::kBiasUpdate.name, rk::kAuxLossWeight.name}) {
    if (routing.has(key)) {
      routing.at(key).fail(
          "not with distribution \"training\" (its balancer names the residual the batch "
          "holds; none is simulated)");
    }
  }
  if (!routing.has(rk::kBalancer.name)) {
    return;
  }
  const auto balancer = routing.read_as<work::Balancer>(rk::kBalancer);
  if (balancer == work::Balancer::None) {
    routing.at(rk::kBalancer.name)
        .fail(
            "distribution \"training\" is what a balancer leaves (its residual): balancer "
            "\"aux_loss\" (the default) or \"bias\"");
  }
  job.routing.residual_balancer = balancer == work::Balancer::Bias
                                      ? work::ResidualBalancer::Bias
                                      : work::ResidualBalancer::AuxLoss;
}

// The routing: "balanced" (uniform), "training" (at its fitted concentration), or an object
// of popularity and balancer keys.
void parse_routing(const Node& routing, work::MoeLayerJob& job) {
  if (routing.is_string()) {
    const std::string mode = routing.string();
    if (mode != "balanced" && mode != "training") {
      routing.fail(fmt::format("expected \"balanced\", \"training\" or an object, got \"{}\"",
                               mode));
    }
    job.routing.distribution = mode == "training" ? work::RoutingDistribution::Training
                                                  : work::RoutingDistribution::Uniform;
    return;
  }
  routing.allow_only(keys::routing::kSection);
  parse_popularity(routing, job.routing);
  if (job.routing.distribution == work::RoutingDistribution::Training) {
    parse_training_balancer(routing, job);
    return;
  }
  parse_balancer(routing, job);
}

// Which experts each rank of an EP group hosts (the job checks that they fit).
std::vector<std::vector<int>> parse_placement(const Node& list) {
  list.expect_array();
  if (list.size() == 0 || list.size() > kMaxPlacementRanks) {
    list.fail(fmt::format("expected 1 to {} lists of experts, one per rank of the EP group",
                          kMaxPlacementRanks));
  }
  std::vector<std::vector<int>> placement;
  for (std::size_t g = 0; g < list.size(); ++g) {
    const Node rank = list.at(g);
    rank.expect_array();
    if (rank.size() > kMaxPlacementSlots) {
      rank.fail(fmt::format("more than {} experts on one rank", kMaxPlacementSlots));
    }
    std::vector<int> slots;
    for (std::size_t k = 0; k < rank.size(); ++k) {
      slots.push_back(static_cast<int>(rank.at(k).integer_in(0, mk::kMaxCount)));
    }
    placement.push_back(std::move(slots));
  }
  return placement;
}

// The MoE exchange's keys: routing, payloads, capacity, algorithm, SMs, pieces; defaults from
// the model.
work::MoeLayerJob parse_moe_exchange(const Node& n, const JobParseContext& ctx) {
  const work::MoeShape& moe = ctx.model->moe;
  work::MoeLayerJob job;
  work::MoeRouting& r = job.routing;
  r.experts = moe.routed_experts;
  r.seed = ctx.seed;
  r.popularity_seed = ctx.seed;
  r.top_k = n.read_if(mk::kTopK).value_or(moe.top_k);
  r.max_nodes_per_token = n.read_if(mk::kMaxNodesPerToken).value_or(moe.max_nodes_per_token);
  job.dtypes.experts = n.read_as<work::Dtype>(mk::kExpertDtype);
  job.dtypes.shared = n.has(mk::kSharedExpertDtype) ? n.read_as<work::Dtype>(mk::kSharedExpertDtype)
                                                    : job.dtypes.experts;
  job.dtypes.router = n.read_as<work::Dtype>(mk::kRouterDtype);
  // FP8 experts read FP8 rows; BF16 experts BF16 ones.
  job.dispatch_bytes_per_element =
      n.read_if(mk::kDispatchBytesPerElement)
          .value_or(job.dtypes.experts == work::Dtype::Fp8 ? 1.0 : 2.0);
  job.combine_bytes_per_element = n.read(mk::kCombineBytesPerElement);
  if (n.has(mk::kRouting)) {
    parse_routing(n.at(mk::kRouting), job);
  }
  r.capacity_factor = n.read_if(mk::kCapacityFactor).value_or(r.capacity_factor);
  job.algorithm = n.read_as<work::EpAlgorithm>(mk::kAlgorithm);
  job.comm_sms = n.read(mk::kCommSms);
  job.chunk_tokens = n.read_if(mk::kChunkTokens).value_or(job.chunk_tokens);
  if (n.has(mk::kPieces)) {
    job.pieces = n.read_as<work::Pieces>(mk::kPieces);  // the job checks the algorithm
  }
  job.redundant_experts = n.read(mk::kRedundantExperts);
  if (n.has(mk::kPlacement)) {
    r.placement = parse_placement(n.at(mk::kPlacement));
  }
  return job;
}

}  // namespace

template <>
work::AttentionLayerJob parse_job<work::AttentionLayerJob>(const Node& workload,
                                                           const JobParseContext& /*ctx*/) {
  workload.allow_only(ak::kSection);
  work::AttentionLayerJob job = parse_attention(workload);
  if (workload.has(ak::kRequestOverheadMs)) {
    if (job.mode != work::LayerMode::Prefill) {
      workload.at(ak::kRequestOverheadMs)
          .fail(
              "request_overhead_ms is a prefill request's fixed cost; set mode to \"prefill\" "
              "or remove it (--set workload.request_overhead_ms=null)");
    }
    job.request_overhead = Time::from_seconds(workload.read(ak::kRequestOverheadMs) * 1e-3);
  }
  return job;
}

std::uint8_t parse_recompute_modules(const Node& list, const ChoiceKey& key) {
  list.expect_array();
  std::uint8_t modules = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::size_t k = list.at(i).read_item(key);
    modules |= static_cast<std::uint8_t>(work::kRecomputeModules[k].first);
  }
  if (modules == 0) {
    list.fail("selective recomputation needs at least one module (or recompute \"none\")");
  }
  return modules;
}

template <>
work::MoeLayerJob parse_job<work::MoeLayerJob>(const Node& workload, const JobParseContext& ctx) {
  const Node& n = workload;
  n.allow_only(mk::kSection);
  if (ctx.model == nullptr) {
    n.at(mk::kKind).fail("workload kind \"moe_layer\" needs a model (the experiment's \"model\")");
  }
  work::MoeLayerJob job = parse_moe_exchange(n, ctx);
  job.routing.tokens_per_gpu = n.read(mk::kTokensPerGpu);
  if (n.has(mk::kPasses)) {
    job.passes = n.read_as<work::Passes>(mk::kPasses);
  }
  job.overlap = n.read_as<work::EpOverlap>(mk::kOverlap);
  if (job.overlap == work::EpOverlap::DualPipePair && !n.has(mk::kPasses)) {
    job.passes = work::Passes::Both;  // a forward chunk against a backward chunk
  }
  job.attention = n.read(mk::kAttention);
  job.layers = n.read(mk::kLayers);
  job.repeat_layers = n.read(mk::kRepeatLayers);
  if (n.has(mk::kRecomputeModules)) {  // the job checks that a backward runs
    job.recompute_modules =
        parse_recompute_modules(n.at(mk::kRecomputeModules), mk::kRecomputeModules);
  }
  return job;
}

work::TransformerLayerJob parse_transformer_layer(const Node& n, const JobParseContext& ctx,
                                                  std::string_view kind) {
  if (ctx.model == nullptr) {
    n.at(tk::kKind).fail(
        fmt::format("workload kind \"{}\" needs a model (the experiment's \"model\")", kind));
  }
  work::TransformerLayerJob job;
  job.attention = parse_attention(n);
  // The feed-forward part: the model's (MoE when it has routed experts) unless told.
  const bool has_experts = ctx.model->moe.routed_experts > 0;
  bool moe = has_experts;
  if (n.has(tk::kFfn)) {
    moe = tk::kFfnNames[n.read(tk::kFfn)] == "moe";
    if (moe && !has_experts) {
      n.at(tk::kFfn).fail(fmt::format("model \"{}\" has no routed experts", ctx.model->name));
    }
  }
  // The moe object is read (and checked) even when ffn is dense, so that a sweep can vary ffn
  // over a config that has one.
  if (n.has(tk::kMoe)) {
    n.at(tk::kMoe).allow_only(keys::transformer_moe::kSection);
  }
  if (moe) {
    static const nlohmann::json kNone = nlohmann::json::object();  // every key at its default
    job.moe = parse_moe_exchange(
        n.has(tk::kMoe) ? n.at(tk::kMoe)
                        : Node(kNone, n.origin(), n.path() / std::string(tk::kMoe.name)),
        ctx);
  } else {
    if (n.has(tk::kMoe) && has_experts) {
      (void)parse_moe_exchange(n.at(tk::kMoe), ctx);
    }
    job.attention.mlp = true;
  }
  return job;
}

template <>
work::TransformerLayerJob parse_job<work::TransformerLayerJob>(const Node& workload,
                                                               const JobParseContext& ctx) {
  workload.allow_only(tk::kSection);
  return parse_transformer_layer(workload, ctx, work::TransformerLayerJob::kKind);
}

}  // namespace hopsim::config
