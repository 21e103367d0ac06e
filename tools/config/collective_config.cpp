// The `collective` workload parser.
#include "tools/config/collective_config.hpp"

#include <array>
#include <cmath>
#include <filesystem>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "tools/config/json_file.hpp"
#include "workloads/costs/bounds.hpp"

namespace hopsim::config {
namespace {

using work::CollectiveAlgorithm;
using work::CollectiveOp;

constexpr std::int64_t kMaxSize = INT64_MAX / 4;
constexpr std::int64_t kMaxRank = std::int64_t{1} << 24;

template <class E, std::size_t N>
E parse_enum(const Node& n, const std::array<E, N>& values, std::string_view (*name)(E)) {
  std::array<std::string_view, N> names{};
  for (std::size_t i = 0; i < N; ++i) {
    names[i] = name(values[i]);
  }
  return values[n.index_of(names)];
}

std::vector<int> parse_ranks(const Node& list) {
  list.expect_array();
  std::vector<int> ranks;
  for (std::size_t i = 0; i < list.size(); ++i) {
    ranks.push_back(static_cast<int>(list.at(i).integer_in(0, kMaxRank)));
  }
  if (ranks.empty()) {
    list.fail("expected at least 2 ranks, got none (leave \"ranks\" out for every GPU)");
  }
  return ranks;
}

std::vector<Bytes> parse_sizes(const Node& n) {
  std::vector<Bytes> sizes;
  if (n.is_array()) {
    for (std::size_t i = 0; i < n.size(); ++i) {
      sizes.push_back(Bytes{n.at(i).integer_in(1, kMaxSize)});
    }
    if (sizes.empty()) {
      n.fail("expected at least one size");
    }
    return sizes;
  }
  if (!n.is_object()) {
    return {Bytes{n.integer_in(1, kMaxSize)}};
  }
  n.allow_only(Section::SizeRange);
  const std::int64_t lo = n.at("min").integer_in(1, kMaxSize);
  const std::int64_t hi = n.at("max").integer_in(lo, kMaxSize);
  const std::int64_t factor = n.at("factor").integer_in(2, 1024);
  for (std::int64_t s = lo;; s *= factor) {
    sizes.push_back(Bytes{s});
    if (s > hi / factor) {  // the next size would pass max (or overflow)
      break;
    }
  }
  return sizes;
}

work::MoeRouting parse_moe(const Node& n, std::uint64_t seed, Bytes& token_bytes) {
  n.allow_only(Section::CollectiveMoe);
  work::MoeRouting m;
  m.tokens_per_gpu = n.at("tokens_per_gpu").integer_in(1, 1 << 20);
  m.experts = n.at("experts").integer_in(1, 1 << 20);
  m.top_k = n.at("top_k").integer_in(1, 1 << 20);
  if (n.has("max_nodes_per_token")) {
    m.max_nodes_per_token = n.at("max_nodes_per_token").integer_in(0, 1 << 20);
  }
  const std::int64_t hidden = n.at("hidden").integer_in(1, 1 << 24);
  const Node per = n.has("bytes_per_element") ? n.at("bytes_per_element") : n;
  const double per_element = n.has("bytes_per_element") ? per.positive(64) : 2;
  if (const auto problem = work::token_bytes_problem(hidden, per_element)) {
    per.fail(*problem);
  }
  token_bytes = Bytes{std::llround(static_cast<double>(hidden) * per_element)};
  m.seed = n.has("seed") ? static_cast<std::uint64_t>(n.at("seed").integer_in(0, INT64_MAX))
                         : seed;
  m.popularity_seed = m.seed;
  parse_popularity(n, m);
  return m;
}

}  // namespace

void parse_popularity(const Node& n, work::MoeRouting& routing) {
  using work::RoutingDistribution;
  if (n.has("distribution")) {
    routing.distribution = static_cast<RoutingDistribution>(n.at("distribution").index_of(
        std::array<std::string_view, 4>{"uniform", "zipf", "dirichlet", "counts"}));
  }
  const auto only = [&](const char* key, RoutingDistribution d) {
    if (n.has(key) && routing.distribution != d) {
      n.at(key).fail(fmt::format("only with distribution \"{}\"", work::distribution_name(d)));
    }
  };
  only("zipf_s", RoutingDistribution::Zipf);
  only("alpha", RoutingDistribution::Dirichlet);
  only("counts", RoutingDistribution::Counts);
  if (n.has("zipf_s")) {
    routing.zipf_s = n.at("zipf_s").number_in(0, 8);
  }
  if (n.has("alpha")) {
    routing.dirichlet_alpha = n.at("alpha").number_in(1e-3, 1e3);
  }
  if (routing.distribution != RoutingDistribution::Counts) {
    return;
  }
  if (!n.has("counts")) {
    n.at("distribution").fail("distribution \"counts\" needs counts: an array of one number per "
                              "expert, or a JSON file that holds one");
  }
  // Inline, or a file beside the config that holds the array (a router's histogram).
  const Node at = n.at("counts");
  nlohmann::json from_file;
  std::optional<Node> list;
  if (at.is_string()) {
    const std::filesystem::path path =
        std::filesystem::path(at.file()).parent_path() / at.string();
    try {
      from_file = read_json_file(path.string());
    } catch (const ConfigError& e) {
      at.fail(e.what());
    }
    list.emplace(from_file, path.string());
  } else {
    list.emplace(at);
  }
  list->expect_array();
  if (static_cast<std::int64_t>(list->size()) != routing.experts) {
    list->fail(fmt::format("expected {} counts (one per routed expert), got {}", routing.experts,
                           list->size()));
  }
  routing.counts.clear();
  double total = 0;
  for (std::size_t e = 0; e < list->size(); ++e) {
    routing.counts.push_back(list->at(e).non_negative());
    total += routing.counts.back();
  }
  if (!(total > 0)) {
    list->fail("the counts sum to 0: no expert was ever chosen");
  }
}

template <>
work::CollectiveJob parse_job<work::CollectiveJob>(const Node& workload,
                                                   const JobParseContext& ctx) {
  workload.allow_only(Section::CollectiveWorkload);
  work::CollectiveJob job;
  job.op = parse_enum(workload.at("op"), work::all_ops(), work::op_name);
  job.algorithm = job.op == CollectiveOp::AllToAll
                      ? work::exchange_algorithm(work::EpAlgorithm::Flat)
                      : CollectiveAlgorithm::Ring;
  if (workload.has("algorithm")) {
    job.algorithm =
        parse_enum(workload.at("algorithm"), work::all_algorithms(), work::algorithm_name);
  }
  if (workload.has("ranks")) {
    job.ranks = parse_ranks(workload.at("ranks"));
  }
  if (workload.has("group")) {
    job.group = parse_enum(workload.at("group"),
                           std::array{work::Dim::Tp, work::Dim::Cp, work::Dim::Pp, work::Dim::Dp,
                                      work::Dim::Ep},
                           work::dim_name);
  }
  if (workload.has("moe")) {
    job.moe = parse_moe(workload.at("moe"), ctx.seed, job.token_bytes);
    if (workload.has("bytes")) {
      workload.at("bytes").fail("with \"moe\", the size comes from the routing: tokens_per_gpu x "
                                "hidden x bytes_per_element; leave \"bytes\" out");
    }
    job.sizes = {Bytes{job.moe->tokens_per_gpu * job.token_bytes.n}};
  } else {
    job.sizes = parse_sizes(workload.at("bytes"));
  }
  if (workload.has("chunks")) {
    job.chunks = static_cast<int>(workload.at("chunks").integer_in(1, 1024));
  }
  if (workload.has("channels")) {
    job.channels = static_cast<int>(workload.at("channels").integer_in(1, 64));
  }
  if (workload.has("protocol")) {
    const Node p = workload.at("protocol");
    if (p.is_string() && p.string() == "auto") {
      job.auto_protocol = true;
    } else {
      job.protocol = parse_enum(p, work::kProtocols, work::protocol_name);
    }
  }
  if (workload.has("combine")) {
    job.combine = workload.at("combine").boolean();
  }
  if (workload.has("chunk_tokens")) {
    job.chunk_tokens = workload.at("chunk_tokens").integer_in(0, 1 << 20);
  }
  if (workload.has("pieces")) {
    job.pieces = static_cast<work::Pieces>(workload.at("pieces").index_of(work::kPieceNames));
  }
  return job;
}

}  // namespace hopsim::config
