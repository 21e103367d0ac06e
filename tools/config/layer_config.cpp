// Parallelism and layer-workload parsers. Cross-key checks live beside their models
// (work::Mesh::check, the jobs' check()).
#include "tools/config/layer_config.hpp"

#include "tools/config/collective_config.hpp"

#include <array>

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

namespace {

// Index of a string key among `names` (enum order), a clear error for anything else.
template <class E, std::size_t N>
E parse_enum(const Node& n, const std::array<std::string_view, N>& names) {
  return static_cast<E>(n.index_of(names));
}

constexpr std::array<std::string_view, 2> kBalances{"contiguous", "zigzag"};
constexpr std::array<std::string_view, 3> kMasks{"causal", "full", "document"};
constexpr std::array<std::string_view, 2> kModes{"training", "prefill"};
constexpr std::array<std::string_view, 3> kPasses{"forward", "backward", "both"};
constexpr std::array<std::string_view, 2> kDtypes{"bf16", "fp8"};
constexpr std::array<std::string_view, 3> kEpOverlaps{"none", "two_microbatch",
                                                      "dualpipe_pair"};
constexpr std::array<std::string_view, 3> kBalancers{"none", "bias", "aux_loss"};
constexpr std::array<std::string_view, 2> kFfns{"dense", "moe"};
// An explicit expert placement: at most this many ranks, and experts per rank.
constexpr std::size_t kMaxPlacementRanks = std::size_t{1} << 16;
constexpr std::size_t kMaxPlacementSlots = 4096;
// Sequences up to 2^31 tokens; documents at least 1 token each, at most 2^24 of them.
constexpr std::int64_t kMaxTokens = std::int64_t{1} << 31;
constexpr std::size_t kMaxDocuments = std::size_t{1} << 24;

work::CpSettings parse_cp(const Node& n) {
  n.allow_only(Section::AttentionCp);
  work::CpSettings cp;
  if (n.has("algorithm")) {
    cp.algorithm = parse_enum<work::CpAlgorithm>(n.at("algorithm"), work::cp_algorithm_names());
  }
  if (n.has("balance")) {
    cp.balance = parse_enum<work::CpBalance>(n.at("balance"), kBalances);
  }
  if (n.has("ulysses_degree")) {
    cp.ulysses_degree = n.at("ulysses_degree").integer_in(1, kMaxDegree);
  }
  if (n.has("replicate_kv")) {
    cp.replicate_kv = n.at("replicate_kv").boolean();
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
    lengths.push_back(n.at(i).integer_in(1, kMaxTokens));
    sum += lengths.back();
    if (sum > kMaxTokens) {
      n.at(i).fail("document lengths sum to more than 2^31 tokens");
    }
  }
  return lengths;
}

// The attention part's keys (the section's allow_only has said which may appear).
work::AttentionLayerJob parse_attention(const Node& n) {
  work::AttentionLayerJob job;
  job.seq_len = n.at("seq_len").integer_in(1, kMaxTokens);
  if (n.has("micro_batch")) {
    job.micro_batch = n.at("micro_batch").integer_in(1, 1 << 20);
  }
  if (n.has("mask")) {
    job.mask = parse_enum<work::AttentionMask>(n.at("mask"), kMasks);
  }
  if (n.has("documents")) {
    job.documents = parse_documents(n.at("documents"));
  }
  if (n.has("document_mean_tokens")) {
    job.document_mean_tokens = n.at("document_mean_tokens").integer_in(1, kMaxTokens);
  }
  if (n.has("cached_tokens")) {
    job.cached_tokens = n.at("cached_tokens").integer_in(0, kMaxTokens);
  }
  if (n.has("mlp")) {
    job.mlp = n.at("mlp").boolean();
  }
  if (n.has("layers")) {
    job.layers = n.at("layers").integer_in(1, 1 << 20);
  }
  if (n.has("mode")) {
    job.mode = parse_enum<work::LayerMode>(n.at("mode"), kModes);
  }
  // Prefill runs forward only; training both passes unless told.
  job.passes = job.mode == work::LayerMode::Prefill ? work::Passes::Forward : work::Passes::Both;
  if (n.has("passes")) {
    job.passes = parse_enum<work::Passes>(n.at("passes"), kPasses);
  }
  if (n.has("dtype")) {
    job.dtype = parse_enum<work::Dtype>(n.at("dtype"), kDtypes);
  }
  job.mlp_dtype = n.has("mlp_dtype") ? parse_enum<work::Dtype>(n.at("mlp_dtype"), kDtypes)
                                     : job.dtype;
  if (n.has("cp")) {
    job.cp = parse_cp(n.at("cp"));
  }
  return job;
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
  if (n.has("routing")) {
    const Node& routing = n.at("routing");
    routing.allow_only(Section::MoeRoutingSection);
    parse_popularity(routing, r);
    if (routing.has("balancer")) {
      job.balancer = parse_enum<work::Balancer>(routing.at("balancer"), kBalancers);
    }
    for (const char* key : {"steps", "bias_update"}) {
      if (routing.has(key) && job.balancer != work::Balancer::Bias) {
        routing.at(key).fail("only with balancer \"bias\"");
      }
    }
    if (routing.has("aux_loss_weight")) {
      if (job.balancer != work::Balancer::AuxLoss) {
        routing.at("aux_loss_weight").fail("only with balancer \"aux_loss\"");
      }
      job.aux_loss_weight = routing.at("aux_loss_weight").number_in(0, 100);
    }
    if (routing.has("steps")) {
      job.balance_steps = routing.at("steps").integer_in(1, 10000);
    }
    if (routing.has("bias_update")) {
      job.bias_update = routing.at("bias_update").number_in(1e-6, 1);
    }
  }
  if (n.has("capacity_factor")) {
    r.capacity_factor = n.at("capacity_factor").number_in(0.01, 1000);
  }
  if (n.has("algorithm")) {
    job.algorithm = parse_enum<work::EpAlgorithm>(n.at("algorithm"), work::ep_algorithm_names());
  }
  if (n.has("comm_sms")) {
    job.comm_sms = n.at("comm_sms").integer_in(0, 1 << 20);
  }
  if (n.has("chunk_tokens")) {
    job.chunk_tokens = n.at("chunk_tokens").integer_in(1, std::int64_t{1} << 24);
  }
  if (n.has("pieces")) {
    job.pieces = parse_enum<work::Pieces>(n.at("pieces"), work::kPieceNames);  // job checks
  }
  if (n.has("redundant_experts")) {
    job.redundant_experts = n.at("redundant_experts").integer_in(0, 1 << 20);
  }
  if (n.has("placement")) {  // which experts each rank of an EP group hosts (job checks fit)
    const Node list = n.at("placement");
    list.expect_array();
    if (list.size() == 0 || list.size() > kMaxPlacementRanks) {
      list.fail(fmt::format("expected 1 to {} lists of experts, one per rank of the EP group",
                            kMaxPlacementRanks));
    }
    for (std::size_t g = 0; g < list.size(); ++g) {
      const Node rank = list.at(g);
      rank.expect_array();
      if (rank.size() > kMaxPlacementSlots) {
        rank.fail(fmt::format("more than {} experts on one rank", kMaxPlacementSlots));
      }
      std::vector<int> slots;
      for (std::size_t k = 0; k < rank.size(); ++k) {
        slots.push_back(static_cast<int>(rank.at(k).integer_in(0, 1 << 20)));
      }
      r.placement.push_back(std::move(slots));
    }
  }
  return job;
}

}  // namespace

template <>
work::AttentionLayerJob parse_job<work::AttentionLayerJob>(const Node& workload,
                                                           const JobParseContext& /*ctx*/) {
  workload.allow_only(Section::AttentionLayerWorkload);
  work::AttentionLayerJob job = parse_attention(workload);
  if (workload.has("request_overhead_ms")) {
    const Node n = workload.at("request_overhead_ms");
    if (job.mode != work::LayerMode::Prefill) {
      n.fail("request_overhead_ms is a prefill request's fixed cost; set mode to \"prefill\" or "
             "remove it (--set workload.request_overhead_ms=null)");
    }
    job.request_overhead = Time::from_seconds(n.number_in(0, 1e6) * 1e-3);
  }
  return job;
}

std::uint8_t parse_recompute_modules(const Node& list) {
  std::array<std::string_view, work::kRecomputeModules.size()> names{};
  for (std::size_t k = 0; k < names.size(); ++k) {
    names[k] = work::kRecomputeModules[k].second;
  }
  list.expect_array();
  std::uint8_t modules = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    modules |= static_cast<std::uint8_t>(work::kRecomputeModules[list.at(i).index_of(names)].first);
  }
  if (modules == 0) {
    list.fail("selective recomputation needs at least one module (or recompute \"none\")");
  }
  return modules;
}

template <>
work::MoeLayerJob parse_job<work::MoeLayerJob>(const Node& workload, const JobParseContext& ctx) {
  const Node& n = workload;
  n.allow_only(Section::MoeLayerWorkload);
  if (ctx.model == nullptr) {
    n.at("kind").fail("workload kind \"moe_layer\" needs a model (the experiment's \"model\")");
  }
  work::MoeLayerJob job = parse_moe_exchange(n, ctx);
  job.routing.tokens_per_gpu = n.at("tokens_per_gpu").integer_in(1, std::int64_t{1} << 24);
  if (n.has("passes")) {
    job.passes = parse_enum<work::Passes>(n.at("passes"), kPasses);
  }
  if (n.has("overlap")) {
    job.overlap = parse_enum<work::EpOverlap>(n.at("overlap"), kEpOverlaps);
    if (job.overlap == work::EpOverlap::DualPipePair && !n.has("passes")) {
      job.passes = work::Passes::Both;  // a forward chunk against a backward chunk
    }
  }
  if (n.has("attention")) {
    job.attention = n.at("attention").boolean();
  }
  if (n.has("layers")) {
    job.layers = n.at("layers").integer_in(1, 1 << 20);
  }
  if (n.has("repeat_layers")) {
    job.repeat_layers = n.at("repeat_layers").boolean();
  }
  if (n.has("recompute_modules")) {  // the job checks that a backward runs
    job.recompute_modules = parse_recompute_modules(n.at("recompute_modules"));
  }
  return job;
}

work::TransformerLayerJob parse_transformer_layer(const Node& n, const JobParseContext& ctx,
                                                  std::string_view kind) {
  if (ctx.model == nullptr) {
    n.at("kind").fail(fmt::format(
        "workload kind \"{}\" needs a model (the experiment's \"model\")", kind));
  }
  work::TransformerLayerJob job;
  job.attention = parse_attention(n);
  // The feed-forward part: the model's (MoE when it has routed experts) unless told.
  const bool has_experts = ctx.model->moe.routed_experts > 0;
  bool moe = has_experts;
  if (n.has("ffn")) {
    moe = n.at("ffn").index_of(kFfns) == 1;
    if (moe && !has_experts) {
      n.at("ffn").fail(fmt::format("model \"{}\" has no routed experts", ctx.model->name));
    }
  }
  // The moe object is read (and checked) even when ffn is dense, so that a sweep can vary ffn
  // over a config that has one.
  if (n.has("moe")) {
    n.at("moe").allow_only(Section::TransformerMoe);
  }
  if (moe) {
    static const nlohmann::json kNone = nlohmann::json::object();  // every key at its default
    job.moe = parse_moe_exchange(
        n.has("moe") ? n.at("moe") : Node(kNone, n.origin(), n.path() / "moe"), ctx);
  } else {
    if (n.has("moe") && has_experts) {
      (void)parse_moe_exchange(n.at("moe"), ctx);
    }
    job.attention.mlp = true;
  }
  return job;
}

template <>
work::TransformerLayerJob parse_job<work::TransformerLayerJob>(const Node& workload,
                                                               const JobParseContext& ctx) {
  workload.allow_only(Section::TransformerLayerWorkload);
  return parse_transformer_layer(workload, ctx, work::TransformerLayerJob::kKind);
}

}  // namespace hopsim::config
