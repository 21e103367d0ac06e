// The `collective` workload parser.
#include "tools/config/collective_config.hpp"

#include <array>
#include <cmath>
#include <filesystem>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "tools/config/json_file.hpp"
#include "tools/config/keys/collective_keys.hpp"
#include "workloads/costs/bounds.hpp"

namespace hopsim::config {
namespace {

namespace ck = keys::collective;
namespace mk = keys::collective_moe;
namespace pk = keys::popularity;
using work::CollectiveAlgorithm;
using work::CollectiveOp;

std::vector<int> parse_ranks(const Node& list) {
  list.expect_array();
  std::vector<int> ranks;
  for (std::size_t i = 0; i < list.size(); ++i) {
    ranks.push_back(static_cast<int>(list.at(i).read_item(ck::kRanks)));
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
      sizes.push_back(Bytes{n.at(i).read_item(ck::kBytes)});
    }
    if (sizes.empty()) {
      n.fail("expected at least one size");
    }
    return sizes;
  }
  if (!n.is_object()) {
    return {Bytes{n.read_item(ck::kBytes)}};
  }
  namespace rk = keys::size_range;
  n.allow_only(rk::kSection);
  const std::int64_t lo = n.read(rk::kMin);
  const std::int64_t hi = n.read(rk::kMax, {.lo = lo});
  const std::int64_t factor = n.read(rk::kFactor);
  for (std::int64_t s = lo;; s *= factor) {
    sizes.push_back(Bytes{s});
    if (s > hi / factor) {  // the next size would pass max (or overflow)
      break;
    }
  }
  return sizes;
}

work::MoeRouting parse_moe(const Node& n, std::uint64_t seed, Bytes& token_bytes) {
  n.allow_only(mk::kSection);
  work::MoeRouting m;
  m.tokens_per_gpu = n.read(mk::kTokensPerGpu);
  m.experts = n.read(mk::kExperts);
  m.top_k = n.read(mk::kTopK);
  m.max_nodes_per_token = n.read(mk::kMaxNodesPerToken);
  const std::int64_t hidden = n.read(mk::kHidden);
  const double per_element = n.read(mk::kBytesPerElement);
  if (const auto problem = work::token_bytes_problem(hidden, per_element)) {
    (n.has(mk::kBytesPerElement) ? n.at(mk::kBytesPerElement) : n).fail(*problem);
  }
  token_bytes = Bytes{std::llround(static_cast<double>(hidden) * per_element)};
  m.seed = n.has(mk::kSeed) ? static_cast<std::uint64_t>(n.read(mk::kSeed)) : seed;
  m.popularity_seed = m.seed;
  parse_popularity(n, m);
  return m;
}

// The counts of distribution "counts": inline, or in a file beside the config that holds the
// array (a router's histogram).
void parse_counts(const Node& n, work::MoeRouting& routing) {
  if (!n.has(pk::kCounts)) {
    n.at(pk::kDistribution)
        .fail(
            "distribution \"counts\" needs counts: an array of one number per expert, or a "
            "JSON file that holds one");
  }
  const Node at = n.at(pk::kCounts);
  nlohmann::json from_file;
  std::optional<Node> list;
  if (at.is_string()) {
    const std::filesystem::path path = std::filesystem::path(at.file()).parent_path() / at.string();
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

}  // namespace

void parse_popularity(const Node& n, work::MoeRouting& routing) {
  using work::RoutingDistribution;
  routing.distribution = n.read_as<RoutingDistribution>(pk::kDistribution);
  const auto only = [&](std::string_view key, RoutingDistribution d) {
    if (n.has(key) && routing.distribution != d) {
      n.at(key).fail(fmt::format("only with distribution \"{}\"", work::distribution_name(d)));
    }
  };
  only(pk::kZipfS.name, RoutingDistribution::Zipf);
  only(pk::kAlpha.name, RoutingDistribution::Dirichlet);
  only(pk::kCounts.name, RoutingDistribution::Counts);
  only(pk::kRunTokens.name, RoutingDistribution::Training);
  routing.zipf_s = n.read(pk::kZipfS);
  routing.run_tokens = n.read(pk::kRunTokens);
  routing.dirichlet_alpha = n.read(pk::kAlpha);
  if (routing.distribution == RoutingDistribution::Counts) {
    parse_counts(n, routing);
  }
}

template <>
work::CollectiveJob parse_job<work::CollectiveJob>(const Node& workload,
                                                   const JobParseContext& ctx) {
  workload.allow_only(ck::kSection);
  work::CollectiveJob job;
  job.op = work::kCollectiveOps[workload.read(ck::kOp)].op;
  job.algorithm = job.op == CollectiveOp::AllToAll
                      ? work::exchange_algorithm(work::EpAlgorithm::Flat)
                      : CollectiveAlgorithm::Ring;
  if (const auto a = workload.read_if(ck::kAlgorithm)) {
    job.algorithm = work::kCollectiveAlgorithms[*a].algorithm;
  }
  if (workload.has(ck::kRanks)) {
    job.ranks = parse_ranks(workload.at(ck::kRanks));
  }
  if (const auto group = workload.read_if(ck::kGroup)) {
    job.group = static_cast<work::Dim>(*group);
  }
  if (workload.has(ck::kMoe)) {
    job.moe = parse_moe(workload.at(ck::kMoe), ctx.seed, job.token_bytes);
    if (workload.has(ck::kBytes)) {
      workload.at(ck::kBytes)
          .fail(
              "with \"moe\", the size comes from the routing: tokens_per_gpu x "
              "hidden x bytes_per_element; leave \"bytes\" out");
    }
    job.sizes = {Bytes{job.moe->tokens_per_gpu * job.token_bytes.n}};
  } else {
    job.sizes = parse_sizes(workload.at(ck::kBytes));
  }
  if (const auto chunks = workload.read_if(ck::kChunks)) {
    job.chunks = static_cast<int>(*chunks);
  }
  if (const auto channels = workload.read_if(ck::kChannels)) {
    job.channels = static_cast<int>(*channels);
  }
  if (const auto p = workload.read_if(ck::kProtocol)) {
    job.auto_protocol = ck::kProtocolNames[*p] == "auto";
    if (!job.auto_protocol) {
      job.protocol = work::kProtocols[*p];
    }
  }
  job.combine = workload.read(ck::kCombine);
  job.chunk_tokens = workload.read_if(ck::kChunkTokens).value_or(job.chunk_tokens);
  job.comm_sms = workload.read(ck::kCommSms);
  if (workload.has(ck::kPieces)) {
    job.pieces = workload.read_as<work::Pieces>(ck::kPieces);
  }
  return job;
}

}  // namespace hopsim::config
