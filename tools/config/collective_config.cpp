// The `collective` workload parser.
#include "tools/config/collective_config.hpp"

#include <algorithm>
#include <map>
#include <cmath>
#include <string>

#include <fmt/format.h>

namespace hopsim::config {
namespace {

using work::CollectiveAlgorithm;
using work::CollectiveOp;

CollectiveOp parse_op(const Node& n) {
  const std::string op =
      n.one_of({"send_recv", "all_gather", "reduce_scatter", "all_reduce", "all_to_all"});
  if (op == "send_recv") {
    return CollectiveOp::SendRecv;
  }
  if (op == "all_gather") {
    return CollectiveOp::AllGather;
  }
  if (op == "reduce_scatter") {
    return CollectiveOp::ReduceScatter;
  }
  return op == "all_reduce" ? CollectiveOp::AllReduce : CollectiveOp::AllToAll;
}

CollectiveAlgorithm parse_algorithm(const Node& workload, CollectiveOp op) {
  const bool a2a = op == CollectiveOp::AllToAll;
  if (!workload.has("algorithm")) {
    return a2a ? CollectiveAlgorithm::Flat : CollectiveAlgorithm::Ring;
  }
  const Node n = workload.at("algorithm");
  const std::string a = n.one_of({"ring", "direct", "flat", "two_tier"});
  const bool ok = (a2a && (a == "flat" || a == "two_tier")) ||
                  (op == CollectiveOp::AllGather && (a == "ring" || a == "direct")) ||
                  (!a2a && op != CollectiveOp::AllGather && a == "ring");
  if (!ok) {
    n.fail(fmt::format("algorithm \"{}\" does not implement {}; {} takes {}", a,
                       work::op_name(op), work::op_name(op),
                       a2a ? "\"flat\" or \"two_tier\""
                           : (op == CollectiveOp::AllGather ? "\"ring\" or \"direct\"" : "\"ring\"")));
  }
  if (a == "direct") {
    return CollectiveAlgorithm::Direct;
  }
  if (a == "flat") {
    return CollectiveAlgorithm::Flat;
  }
  return a == "two_tier" ? CollectiveAlgorithm::TwoTier : CollectiveAlgorithm::Ring;
}

std::vector<int> parse_ranks(const Node& workload, int gpus) {
  std::vector<int> ranks;
  if (!workload.has("ranks")) {
    for (int r = 0; r < gpus; ++r) {
      ranks.push_back(r);
    }
    return ranks;
  }
  const Node list = workload.at("ranks");
  list.expect_array();
  std::vector<bool> seen(static_cast<std::size_t>(gpus), false);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const int r = static_cast<int>(list.at(i).integer_in(0, gpus - 1));
    if (seen[static_cast<std::size_t>(r)]) {
      list.at(i).fail(fmt::format("rank {} is listed twice", r));
    }
    seen[static_cast<std::size_t>(r)] = true;
    ranks.push_back(r);
  }
  if (ranks.size() < 2) {
    list.fail(fmt::format("a collective needs at least 2 ranks, got {}", ranks.size()));
  }
  return ranks;
}

std::vector<Bytes> parse_sizes(const Node& n) {
  std::vector<Bytes> sizes;
  if (n.is_array()) {
    for (std::size_t i = 0; i < n.size(); ++i) {
      sizes.push_back(Bytes{n.at(i).integer_in(1, INT64_MAX / 4)});
    }
    if (sizes.empty()) {
      n.fail("expected at least one size");
    }
    return sizes;
  }
  if (!n.is_object()) {
    return {Bytes{n.integer_in(1, INT64_MAX / 4)}};
  }
  n.allow_only({"min", "max", "factor"});
  const std::int64_t lo = n.at("min").integer_in(1, INT64_MAX / 4);
  const std::int64_t hi = n.at("max").integer_in(lo, INT64_MAX / 4);
  const std::int64_t factor = n.at("factor").integer_in(2, 1024);
  for (std::int64_t s = lo; s <= hi; s *= factor) {
    sizes.push_back(Bytes{s});
  }
  return sizes;
}

// The fewest experts a token can choose from: those of the `limit` nodes with the fewest ranks.
std::size_t smallest_choice(const std::vector<int>& ranks, int gpus_per_node, int experts,
                            int max_nodes) {
  std::map<int, std::size_t> ranks_on_node;
  for (int r : ranks) {
    ++ranks_on_node[r / gpus_per_node];
  }
  std::vector<std::size_t> counts;
  counts.reserve(ranks_on_node.size());
  for (const auto& [node, count] : ranks_on_node) {
    counts.push_back(count);
  }
  std::sort(counts.begin(), counts.end());
  const std::size_t limit = max_nodes <= 0 ? counts.size()
                                           : std::min(counts.size(), std::size_t(max_nodes));
  const std::size_t per_gpu = static_cast<std::size_t>(experts) / ranks.size();
  std::size_t choice = 0;
  for (std::size_t i = 0; i < limit; ++i) {
    choice += counts[i] * per_gpu;
  }
  return choice;
}

work::MoeRouting parse_moe(const Node& n, const std::vector<int>& rank_list, int gpus_per_node) {
  const std::size_t ranks = rank_list.size();
  n.allow_only({"tokens_per_gpu", "experts", "top_k", "max_nodes_per_token", "hidden",
                "bytes_per_element", "seed"});
  work::MoeRouting m;
  m.tokens_per_gpu = n.at("tokens_per_gpu").integer_in(1, 1 << 20);
  m.experts = static_cast<int>(n.at("experts").integer_in(1, 1 << 20));
  if (static_cast<std::size_t>(m.experts) % ranks != 0) {
    n.at("experts").fail(fmt::format("{} experts do not divide evenly over {} ranks", m.experts,
                                     ranks));
  }
  m.top_k = static_cast<int>(n.at("top_k").integer_in(1, m.experts));
  if (n.has("max_nodes_per_token")) {
    m.max_nodes_per_token = static_cast<int>(n.at("max_nodes_per_token").integer_in(0, 1 << 20));
  }
  const std::size_t choice =
      smallest_choice(rank_list, gpus_per_node, m.experts, m.max_nodes_per_token);
  if (static_cast<std::size_t>(m.top_k) > choice) {
    n.at("top_k").fail(fmt::format(
        "{} experts per token, but a token limited to {} node(s) may see only {} experts",
        m.top_k, m.max_nodes_per_token, choice));
  }
  const std::int64_t hidden = n.at("hidden").integer_in(1, 1 << 24);
  const double per_element = n.has("bytes_per_element") ? n.at("bytes_per_element").positive() : 2;
  m.token_bytes = std::llround(static_cast<double>(hidden) * per_element);
  if (n.has("seed")) {
    m.seed = static_cast<std::uint64_t>(n.at("seed").integer_in(0, INT64_MAX));
  }
  return m;
}

// Flows of one collective: ring steps x ranks x chunks, or every pair; a bound keeps a typo
// in `chunks` or `ranks` from asking for more memory than the machine has.
void check_size(const Node& workload, const work::CollectiveJob& job) {
  constexpr double kMaxFlows = 10e6;  // about 6 GB: 1M flows peak at 0.6 GB (bench c)
  const auto n = static_cast<double>(job.ranks.size());
  double flows = n * (n - 1);
  if (job.algorithm == CollectiveAlgorithm::Ring) {
    const double steps = job.op == CollectiveOp::AllReduce ? 2 * (n - 1) : n - 1;
    flows = steps * n * job.chunks;
  }
  if (flows > kMaxFlows) {
    workload.fail(fmt::format("{} {} over {} ranks in {} chunk(s) makes {:.3g} flows per "
                              "collective; at most {:.3g} are supported",
                              work::algorithm_name(job.algorithm), work::op_name(job.op),
                              job.ranks.size(), job.chunks, flows, kMaxFlows));
  }
}

}  // namespace

work::CollectiveJob parse_collective(const Node& workload, int gpus, int gpus_per_node,
                                     const work::CollectiveLatency& latency) {
  workload.allow_only({"kind", "op", "algorithm", "ranks", "bytes", "chunks", "moe"});
  work::CollectiveJob job;
  job.op = parse_op(workload.at("op"));
  job.algorithm = parse_algorithm(workload, job.op);
  job.ranks = parse_ranks(workload, gpus);
  job.latency = latency;
  if (workload.has("moe")) {
    if (job.op != CollectiveOp::AllToAll) {
      workload.at("moe").fail("\"moe\" routing applies to op \"all_to_all\" only");
    }
    job.moe = parse_moe(workload.at("moe"), job.ranks, gpus_per_node);
    job.sizes = {Bytes{job.moe->tokens_per_gpu * job.moe->token_bytes}};
  } else {
    job.sizes = parse_sizes(workload.at("bytes"));
  }
  if (workload.has("chunks")) {
    const Node chunks = workload.at("chunks");
    job.chunks = static_cast<int>(chunks.integer_in(1, 1024));
    if (job.algorithm != CollectiveAlgorithm::Ring && job.chunks != 1) {
      chunks.fail(fmt::format("chunks apply to ring algorithms; {} {} sends each pair's data as "
                              "one flow",
                              work::algorithm_name(job.algorithm), work::op_name(job.op)));
    }
  }
  check_size(workload, job);
  return job;
}

}  // namespace hopsim::config
