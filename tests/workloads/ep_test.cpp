// Expert parallelism: the seeds' numbers, routing invariants (node limit, conservation, seeds),
// skew, and what the load statistics mean.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include <doctest/doctest.h>

#include "tests/approx.hpp"
#include "tests/gpu_ids.hpp"
#include "workloads/cp/attention_closed_forms.hpp"
#include "workloads/ep/balancer.hpp"
#include "workloads/ep/ep_details.hpp"
#include "workloads/ep/moe_closed_forms.hpp"
#include "workloads/ep/moe_layer_job.hpp"
#include "workloads/ep/moe_routing.hpp"
#include "workloads/ep/popularity.hpp"

using hopsim::Bandwidth;
using hopsim::Bytes;
using hopsim::Time;
using namespace hopsim::work;
namespace topo = hopsim::topo;

namespace {

topo::Spec h800(int nodes) {
  topo::Spec spec;
  spec.nodes = nodes;
  spec.nvlink = {Bandwidth::gigabytes_per_s(160), Time::ns(715), Bandwidth::gigabytes_per_s(200)};
  spec.nic = {Bandwidth::gigabytes_per_s(47), Time::ns(450), Bandwidth::gigabytes_per_s(50)};
  spec.gpu.name = "H800 SXM";
  spec.gpu.peak_bf16_tflops = 989;
  spec.gpu.peak_fp8_tflops = 1979;
  return spec;
}

// DeepSeek-V3's shapes, as configs/models/deepseek-v3.json has them.
ModelSpec deepseek_v3() {
  ModelSpec m;
  m.name = "deepseek-v3";
  m.layers = 61;
  m.hidden = 7168;
  m.ffn_hidden = 18432;
  m.heads = 128;
  m.head_dim = 128;
  m.vocab = 129280;
  m.mla = true;
  m.mla_shape.q_lora_rank = 1536;
  m.moe.routed_experts = 256;
  m.moe.shared_experts = 1;
  m.moe.top_k = 8;
  m.moe.expert_ffn_hidden = 2048;
  m.moe.max_nodes_per_token = 4;
  m.moe.first_dense_layers = 3;
  return m;
}

// Tokens-to-nodes of source rank i: with one token per GPU, the nodes its token reached.
std::int64_t row_nodes(const TwoTierMatrix& m, std::size_t i) {
  std::int64_t nodes = 0;
  for (std::size_t k = 0; k < m.nodes; ++k) {
    nodes += m.to_node[i * m.nodes + k];
  }
  return nodes;
}

std::vector<topo::GpuId> first_ranks(int n) {
  return hopsim::test::first_gpus(n);
}

std::int64_t sum(const std::vector<std::int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), std::int64_t{0});
}

}  // namespace

TEST_CASE("the seeds: 117.4 MB out, 234.9 MB back, 704.6 MB a step, 4.97 TFLOP, 5.0 ms vs 7.0 ms") {
  MoeLayerJob job;
  job.routing = MoeRouting{4096, 256, 8, 4, 1};
  const EpNumbers n = ep_numbers(deepseek_v3(), job, h800(8));
  CHECK(n.dispatch_bytes_ib / 1e6 == hopsim::test::approx(117.4).epsilon(0.001));
  CHECK(n.combine_bytes_ib / 1e6 == hopsim::test::approx(234.9).epsilon(0.001));
  CHECK(n.fwd_bwd_bytes_ib / 1e6 == hopsim::test::approx(704.6).epsilon(0.001));
  // The seeds take DeepSeek's rounded 37B active parameters: 2 x 37e9 / 61 x 4096 = 4.97
  // TFLOP. The model's shapes give 37.55B (embeddings and head included): 5.04 TFLOP, 5.1 ms.
  CHECK(2 * 37e9 / 61 * 4096 / 1e12 == hopsim::test::approx(4.97).epsilon(0.001));
  CHECK(n.layer_flops_per_gpu / 1e12 == hopsim::test::approx(4.97).epsilon(0.02));
  CHECK(n.compute_s_at_peak * 1e3 == hopsim::test::approx(5.0).epsilon(0.02));
  CHECK(n.comm_s_at_nic * 1e3 == hopsim::test::approx(7.0).epsilon(0.01));
}

TEST_CASE("the seeds: an expert imbalance of 1.4x idles about 30% of expert FLOPs") {
  // Ten GPUs' expert rows: one at 1.4 times the mean of all.
  std::vector<std::int64_t> rows(10, 0);
  rows[0] = 1400;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    rows[i] = (10000 - 1400) / 9 + (i <= (10000 - 1400) % 9 ? 1 : 0);
  }
  REQUIRE(sum(rows) == 10000);
  CHECK(max_over_mean(rows) == hopsim::test::approx(1.4));
  const double idle = 1 - 1 / max_over_mean(rows);  // the report's idle_expert_fraction
  CHECK(idle == hopsim::test::approx(0.2857).epsilon(0.001));
  CHECK(max_over_mean({}) == 0);
  CHECK(max_over_mean({0, 0}) == 0);
}

TEST_CASE("routing: never more than max_nodes_per_token nodes, selections conserve tokens x top-k") {
  const topo::Cluster cluster(h800(8));
  const std::vector<topo::GpuId> ranks = first_ranks(64);
  for (auto dist : {RoutingDistribution::Uniform, RoutingDistribution::Zipf}) {
    for (std::int64_t limit : {1, 2, 4}) {
      CAPTURE(distribution_name(dist));
      CAPTURE(limit);
      // One token per GPU: the nodes each GPU's row reaches are that token's nodes.
      for (std::uint64_t seed = 1; seed <= 20; ++seed) {
        MoeRouting r{1, 256, 8, limit, seed};
        r.distribution = dist;
        RoutingLoad load;
        const TwoTierMatrix m = route_tokens(ranks, cluster, r, Bytes{1}, &load);
        const std::vector<std::int64_t>& per_expert = load.expert_tokens;
        for (std::size_t i = 0; i < m.gpu.n; ++i) {
          const std::int64_t nodes = row_nodes(m, i);
          CHECK(nodes >= 1);
          CHECK(nodes <= limit);
        }
        CHECK(sum(per_expert) == 64 * 8);
        CHECK(*std::max_element(per_expert.begin(), per_expert.end()) <= 64);  // distinct per token
        CHECK(sum(m.selections.bytes) == 64 * 8);
      }
    }
  }
}

TEST_CASE("routing: the same seed gives the same routing, another seed another") {
  const topo::Cluster cluster(h800(4));
  const std::vector<topo::GpuId> ranks = first_ranks(32);
  for (auto dist : {RoutingDistribution::Uniform, RoutingDistribution::Zipf}) {
    MoeRouting r{512, 128, 8, 2, 7};
    r.distribution = dist;
    RoutingLoad la;
    RoutingLoad lb;
    RoutingLoad lc;
    const TwoTierMatrix ma = route_tokens(ranks, cluster, r, Bytes{7168}, &la);
    const TwoTierMatrix mb = route_tokens(ranks, cluster, r, Bytes{7168}, &lb);
    r.seed = 8;
    const TwoTierMatrix mc = route_tokens(ranks, cluster, r, Bytes{7168}, &lc);
    const auto& a = la.expert_tokens;
    const auto& c = lc.expert_tokens;
    CHECK(a == lb.expert_tokens);
    CHECK(ma.gpu.bytes == mb.gpu.bytes);
    CHECK(ma.to_node == mb.to_node);
    CHECK(a != c);
    CHECK(sum(a) == sum(c));
  }
}

TEST_CASE("routing: zipf skews expert load, more with a larger exponent, s = 0 is uniform") {
  const topo::Cluster cluster(h800(8));
  const std::vector<topo::GpuId> ranks = first_ranks(64);
  const auto skew = [&](RoutingDistribution d, double s) {
    MoeRouting r{1024, 256, 8, 4, 3};
    r.distribution = d;
    r.zipf_s = s;
    RoutingLoad load;
    route_tokens(ranks, cluster, r, Bytes{1}, &load);
    return max_over_mean(load.expert_tokens);
  };
  const double uniform = skew(RoutingDistribution::Uniform, 1);
  CHECK(uniform < 1.2);
  CHECK(skew(RoutingDistribution::Zipf, 0) < 1.2);
  const double mild = skew(RoutingDistribution::Zipf, 0.5);
  const double strong = skew(RoutingDistribution::Zipf, 1.0);
  CHECK(mild > 1.3);
  CHECK(strong > mild);
}

TEST_CASE("routing: capacity drops the selections over it, counted, never more than the cap") {
  const topo::Cluster cluster(h800(8));
  const std::vector<topo::GpuId> ranks = first_ranks(64);
  MoeRouting r{512, 256, 8, 4, 5};
  r.distribution = RoutingDistribution::Zipf;
  RoutingLoad free;
  route_tokens(ranks, cluster, r, Bytes{1}, &free);
  CHECK(free.dropped == 0);
  r.capacity_factor = 1.25;
  RoutingLoad capped;
  const TwoTierMatrix m = route_tokens(ranks, cluster, r, Bytes{1}, &capped);
  const auto cap = static_cast<std::int64_t>(std::ceil(1.25 * 64 * 512 * 8 / 256.0));
  CHECK(*std::max_element(capped.expert_tokens.begin(), capped.expert_tokens.end()) <= cap);
  CHECK(capped.dropped > 0);
  CHECK(sum(capped.expert_tokens) + capped.dropped == 64 * 512 * 8);  // nothing lost silently
  CHECK(sum(m.selections.bytes) == sum(capped.expert_tokens));
  // A generous factor drops nothing under uniform routing.
  r.distribution = RoutingDistribution::Uniform;
  r.capacity_factor = 2;
  RoutingLoad uniform;
  route_tokens(ranks, cluster, r, Bytes{1}, &uniform);
  CHECK(uniform.dropped == 0);
}

TEST_CASE("balancer: the bias lowers max/mean over the steps of a skewed router") {
  const topo::Cluster cluster(h800(8));
  const std::vector<topo::GpuId> ranks = first_ranks(64);
  MoeRouting r{4096, 256, 8, 4, 1};
  r.distribution = RoutingDistribution::Zipf;
  const BiasBalance b = balance_bias(ranks, cluster, r, 50, 0.05);
  REQUIRE(b.max_over_mean.size() == 50);
  REQUIRE(b.bias.size() == 256);
  const double first = b.max_over_mean.front() - 1;
  const double last = b.max_over_mean.back() - 1;
  CHECK(first > 1.0);
  CHECK(last < first * 2 / 3);  // the excess down by at least a third
  // The popular experts lost weight, the unpopular gained.
  CHECK(*std::min_element(b.bias.begin(), b.bias.end()) < 0);
  CHECK(*std::max_element(b.bias.begin(), b.bias.end()) > 0);
  // Routing with the final bias is more even than without.
  RoutingLoad before;
  RoutingLoad after;
  route_tokens(ranks, cluster, r, Bytes{1}, &before);
  r.bias = b.bias;
  route_tokens(ranks, cluster, r, Bytes{1}, &after);
  CHECK(max_over_mean(after.expert_tokens) < max_over_mean(before.expert_tokens));
}

TEST_CASE("routing: dirichlet skews more as alpha shrinks, the same popularity seed, the same") {
  const topo::Cluster cluster(h800(8));
  const std::vector<topo::GpuId> ranks = first_ranks(64);
  const auto load_of = [&](double alpha, std::uint64_t popularity) {
    MoeRouting r{512, 256, 8, 4, 3};
    r.distribution = RoutingDistribution::Dirichlet;
    r.dirichlet_alpha = alpha;
    r.popularity_seed = popularity;
    RoutingLoad load;
    route_tokens(ranks, cluster, r, Bytes{1}, &load);
    CHECK(sum(load.expert_tokens) == 64 * 512 * 8);
    return load.expert_tokens;
  };
  const double flat = max_over_mean(load_of(1000, 1));
  const double one = max_over_mean(load_of(1, 1));
  const double peaked = max_over_mean(load_of(0.1, 1));
  CHECK(flat < 1.3);
  CHECK(one > flat);
  CHECK(peaked > 2 * one);
  CHECK(load_of(0.5, 7) == load_of(0.5, 7));
  CHECK(load_of(0.5, 7) != load_of(0.5, 8));
}

TEST_CASE("routing: counts replay a histogram in proportion, never-chosen experts stay idle") {
  const topo::Cluster cluster(h800(2));
  const std::vector<topo::GpuId> ranks = first_ranks(16);
  MoeRouting r{2048, 64, 4, 0, 5};
  r.distribution = RoutingDistribution::Counts;
  r.counts.assign(64, 1.0);
  for (std::size_t e = 0; e < 8; ++e) {
    r.counts[e] = 0;  // never chosen in the log
  }
  r.counts[63] = 20;  // the hot one
  RoutingLoad load;
  route_tokens(ranks, cluster, r, Bytes{1}, &load);
  for (std::size_t e = 0; e < 8; ++e) {
    CHECK(load.expert_tokens[e] == 0);
  }
  // Expert 63 weighs 20 against 55 x 1: chosen by most tokens (a token takes it at most once),
  // each other expert by about 1/20 as many.
  const std::int64_t hot = load.expert_tokens[63];
  CHECK(hot > 16 * 2048 * 6 / 10);
  CHECK(hot <= 16 * 2048);
  const double others = static_cast<double>(sum(load.expert_tokens) - hot) / 55;
  CHECK(static_cast<double>(hot) > 10 * others);
  CHECK(sum(load.expert_tokens) == 16 * 2048 * 4);
}

TEST_CASE("routing: a uniform share (the aux-loss balancer's model) shrinks the excess load") {
  const topo::Cluster cluster(h800(8));
  const std::vector<topo::GpuId> ranks = first_ranks(64);
  const auto excess = [&](double share) {
    MoeRouting r{1024, 256, 8, 4, 3};
    r.distribution = RoutingDistribution::Zipf;
    r.uniform_share = share;
    RoutingLoad load;
    route_tokens(ranks, cluster, r, Bytes{1}, &load);
    return max_over_mean(load.expert_tokens) - 1;
  };
  // The load's excess shrinks as the share grows (not in proportion: a token takes the hottest
  // expert at most once, so its load saturates).
  const double none = excess(0);
  const double half = excess(0.5);
  const double most = excess(0.9);
  CHECK(none > 1.0);
  CHECK(half < none);
  CHECK(most < half / 2);
  CHECK(excess(1) < 0.25);
  CHECK(aux_uniform_share(0.01) == hopsim::test::approx(0.5));
  CHECK(aux_uniform_share(0.0) == 0);
}

TEST_CASE("placement: the even placement written out routes exactly as the default") {
  const topo::Cluster cluster(h800(8));
  const std::vector<topo::GpuId> ranks = first_ranks(64);
  for (auto dist : {RoutingDistribution::Uniform, RoutingDistribution::Zipf}) {
    MoeRouting r{256, 256, 8, 4, 9};
    r.distribution = dist;
    RoutingLoad a;
    RoutingLoad b;
    const TwoTierMatrix plain = route_tokens(ranks, cluster, r, Bytes{1}, &a);
    r.placement = even_placement(256, 64);
    const TwoTierMatrix written = route_tokens(ranks, cluster, r, Bytes{1}, &b);
    CHECK(plain.gpu.bytes == written.gpu.bytes);
    CHECK(plain.to_node == written.to_node);
    CHECK(a.expert_tokens == b.expert_tokens);
    CHECK(a.slot_tokens == b.slot_tokens);
  }
}

TEST_CASE("placement: redundant copies of hot experts spread the load, within the node limit") {
  const topo::Cluster cluster(h800(8));
  const std::vector<topo::GpuId> ranks = first_ranks(64);
  MoeRouting r{1024, 256, 8, 4, 3};
  r.distribution = RoutingDistribution::Zipf;
  const std::vector<std::vector<int>> slots = redundant_placement(r, 64, 2);
  std::map<int, int> copies;
  for (const std::vector<int>& rank : slots) {
    CHECK(rank.size() == 4 + 2);
    CHECK(std::set<int>(rank.begin(), rank.end()).size() == rank.size());  // no twin on a rank
    for (int e : rank) {
      ++copies[e];
    }
  }
  CHECK(copies.size() == 256);  // every expert somewhere
  // The most popular expert (rank 1 of the Zipf ranking) has the most copies.
  const auto most = std::max_element(copies.begin(), copies.end(), [](auto a, auto b) {
    return a.second < b.second;
  });
  CHECK(most->second > 2);
  const auto rows = [](const RoutingLoad& load) {
    std::vector<std::int64_t> out;
    for (const auto& s : load.slot_tokens) {
      out.push_back(sum(s));
    }
    return out;
  };
  RoutingLoad before;
  route_tokens(ranks, cluster, r, Bytes{1}, &before);
  r.placement = slots;
  RoutingLoad after;
  const TwoTierMatrix m = route_tokens(ranks, cluster, r, Bytes{1}, &after);
  CHECK(sum(rows(after)) == 64 * 1024 * 8);  // conserved
  CHECK(sum(after.expert_tokens) == 64 * 1024 * 8);
  CHECK(max_over_mean(rows(after)) < 0.6 * max_over_mean(rows(before)));
  for (std::size_t i = 0; i < m.gpu.n; ++i) {  // at most 4 nodes per token, on average
    const std::int64_t nodes = row_nodes(m, i);
    CHECK(nodes <= 4 * 1024);
  }
  // One token per GPU: the nodes of a GPU's row are its token's, never more than the limit.
  r.tokens_per_gpu = 1;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    r.seed = seed;
    const TwoTierMatrix one = route_tokens(ranks, cluster, r, Bytes{1});
    for (std::size_t i = 0; i < one.gpu.n; ++i) {
      const std::int64_t nodes = row_nodes(one, i);
      CHECK(nodes <= 4);
    }
  }
}

TEST_CASE("placement: an explicit placement is checked: size, ids, twins, coverage, top-k") {
  const std::vector<topo::GpuId> ranks = first_ranks(16);  // 2 nodes of 8
  MoeRouting r{64, 32, 4, 1, 1};
  const auto problem = [&](std::vector<std::vector<int>> placement) {
    r.placement = std::move(placement);
    const hopsim::Problems p = check_routing(r, ranks, 8, "/workload", "/workload/placement");
    return p.empty() ? std::string("ok") : p.front().path + ": " + p.front().message;
  };
  std::vector<std::vector<int>> even = even_placement(32, 16);
  CHECK(problem(even) == "ok");
  CHECK(problem({{0, 1}}).find("1 lists of experts for an EP group of 16 ranks") !=
        std::string::npos);
  auto bad = even;
  bad[3] = {6, 6};
  CHECK(problem(bad).find("/workload/placement/3: expert 6 twice on one rank") == 0);
  bad[3] = {6, 99};
  CHECK(problem(bad).find("expert 99 is not one of the 32 routed experts") != std::string::npos);
  bad[3] = {6};
  CHECK(problem(bad).find("expert 7 is on no rank") != std::string::npos);
  // All experts on node 0, one copy each, node 1 hosts copies of 2 experts only: a token that
  // picks node 1 alone (limit 1) sees 2 experts, fewer than top-4.
  std::vector<std::vector<int>> lopsided(16);
  for (int e = 0; e < 32; ++e) {
    lopsided[static_cast<std::size_t>(e % 8)].push_back(e);
  }
  for (std::size_t g = 8; g < 16; ++g) {
    lopsided[g] = {static_cast<int>(g % 2)};
  }
  CHECK(problem(lopsided).find("/workload/top_k: 4 experts per token, but a token limited to 1 "
                               "node(s) may see only 2 experts") == 0);
  r.max_nodes_per_token = 2;
  CHECK(problem(lopsided) == "ok");
}

TEST_CASE("placement: redundant copies fill every extra slot, no twin on a rank, at any skew") {
  // Zipf s = 8: the hottest expert would want more copies than there are ranks; every rank's
  // extra slots up to the room it has (all 64 experts on each of 16 ranks at the most).
  MoeRouting r{64, 64, 4, 0, 1};
  r.distribution = RoutingDistribution::Zipf;
  r.zipf_s = 8;
  for (std::int64_t extra : {1, 7, 30, 60}) {
    CAPTURE(extra);
    const std::vector<std::vector<int>> slots = redundant_placement(r, 16, extra);
    std::map<int, int> copies;
    for (const std::vector<int>& rank : slots) {
      CHECK(rank.size() == static_cast<std::size_t>(4 + extra));
      CHECK(std::set<int>(rank.begin(), rank.end()).size() == rank.size());
      for (int e : rank) {
        ++copies[e];
      }
    }
    CHECK(copies.size() == 64);
    for (const auto& [e, c] : copies) {
      CHECK(c <= 16);
    }
  }
  CHECK(check_redundancy(64, 16, 60).empty());
  CHECK(check_redundancy(64, 16, 61).front().message ==
        "61 extra slots per GPU, but a GPU that hosts 4 of the 64 experts has room for copies "
        "of at most 60 others");
}

namespace {

// The exact chance that each expert is among a token's top-k under weighted routing: experts
// drawn one after another by weight among those still allowed (not chosen; once the token has
// reached `limit` nodes, on those nodes only), renormalised at each draw. Enumerated over every
// ordered choice, so for small groups only.
struct Inclusion {
  const std::vector<double>& weight;
  const std::vector<std::size_t>& node_of_expert;
  std::size_t limit;  // 0: none
  std::size_t top_k;
  std::vector<double> p;

  void walk(std::vector<std::size_t>& chosen, double chance) {
    if (chosen.size() == top_k) {
      for (std::size_t e : chosen) {
        p[e] += chance;
      }
      return;
    }
    std::set<std::size_t> reached;
    for (std::size_t e : chosen) {
      reached.insert(node_of_expert[e]);
    }
    const auto allowed = [&](std::size_t e) {
      return weight[e] > 0 && std::find(chosen.begin(), chosen.end(), e) == chosen.end() &&
             (limit == 0 || reached.size() < limit || reached.count(node_of_expert[e]) > 0);
    };
    double total = 0;
    for (std::size_t e = 0; e < weight.size(); ++e) {
      total += allowed(e) ? weight[e] : 0;
    }
    for (std::size_t e = 0; e < weight.size(); ++e) {
      if (allowed(e)) {
        chosen.push_back(e);
        walk(chosen, chance * weight[e] / total);
        chosen.pop_back();
      }
    }
  }
};

}  // namespace

TEST_CASE("routing: each expert is chosen as often as sampling without replacement says") {
  // 8 ranks, two on each of 4 nodes, 16 experts (4 a node), top-4; 65,536 tokens. Each expert's
  // share of the tokens is within 5 standard deviations of its exact inclusion probability.
  const topo::Cluster cluster(h800(4));
  const std::vector<topo::GpuId> ranks = hopsim::test::gpu_ids({0, 1, 8, 9, 16, 17, 24, 25});
  std::vector<std::size_t> node_of_expert(16);
  for (std::size_t e = 0; e < 16; ++e) {
    node_of_expert[e] = e / 4;
  }
  const auto check_against_exact = [&](MoeRouting r) {
    RoutingLoad load;
    const TwoTierMatrix m = route_tokens(ranks, cluster, r, Bytes{1}, &load);
    const auto tokens = static_cast<double>(r.tokens_per_gpu) * 8;
    std::vector<double> exact(16, static_cast<double>(r.top_k) / 16);  // uniform: by symmetry
    if (r.distribution != RoutingDistribution::Uniform) {
      const std::vector<double> weight = expert_weights(r);
      Inclusion inc{weight, node_of_expert, static_cast<std::size_t>(r.max_nodes_per_token),
                    static_cast<std::size_t>(r.top_k), std::vector<double>(16, 0.0)};
      std::vector<std::size_t> chosen;
      inc.walk(chosen, 1.0);
      exact = inc.p;
    }
    double included = 0;
    for (std::size_t e = 0; e < 16; ++e) {
      CAPTURE(e);
      const double p = exact[e];
      const double share = static_cast<double>(load.expert_tokens[e]) / tokens;
      CHECK(std::abs(share - p) <= 5 * std::sqrt(std::max(0.0, p * (1 - p)) / tokens) + 1 / tokens);
      included += p;
    }
    CHECK(included == hopsim::test::approx(static_cast<double>(r.top_k)).epsilon(1e-9));
    // The node limit holds for every token: with one token per rank the rows are tokens.
    r.tokens_per_gpu = 1;
    for (std::uint64_t seed = 1; seed <= 50; ++seed) {
      r.seed = seed;
      const TwoTierMatrix one = route_tokens(ranks, cluster, r, Bytes{1});
      for (std::size_t i = 0; i < one.gpu.n; ++i) {
        CHECK(row_nodes(one, i) <= (r.max_nodes_per_token == 0 ? 4 : r.max_nodes_per_token));
      }
    }
    (void)m;
  };
  for (std::int64_t limit : {0, 1, 2}) {
    CAPTURE(limit);
    MoeRouting r{8192, 16, 4, limit, 3};
    SUBCASE("uniform") { check_against_exact(r); }
    SUBCASE("zipf") {
      r.distribution = RoutingDistribution::Zipf;
      for (double s : {0.5, 1.0, 2.0, 8.0}) {
        CAPTURE(s);
        r.zipf_s = s;
        check_against_exact(r);
      }
    }
    SUBCASE("dirichlet") {
      r.distribution = RoutingDistribution::Dirichlet;
      for (double alpha : {0.2, 1.0}) {
        CAPTURE(alpha);
        r.dirichlet_alpha = alpha;
        check_against_exact(r);
      }
    }
    SUBCASE("one dominant expert, and one with zero counts") {
      r.distribution = RoutingDistribution::Counts;
      r.counts.assign(16, 1.0);
      r.counts[5] = 1e6;
      if (limit != 1) {  // (one node with 3 live experts cannot serve a top-4 token alone)
        r.counts[11] = 0;
      }
      check_against_exact(r);
    }
  }
}

TEST_CASE("routing: one dominant expert, the others share the remaining picks (EP16, top-8)") {
  // 16 ranks on 2 nodes, 256 experts, top-8: expert 0 weighs 1e6 against 255 x 1, so a token
  // takes it and 7 of the other 255 at random. Expected distinct GPUs per token: GPU 0, and each
  // other GPU unless all 7 picks miss its 16 experts: 1 + 15 (1 - C(239,7) / C(255,7)).
  const topo::Cluster cluster(h800(2));
  const std::vector<topo::GpuId> ranks = first_ranks(16);
  MoeRouting r{2048, 256, 8, 4, 1};
  r.distribution = RoutingDistribution::Counts;
  r.counts.assign(256, 1.0);
  r.counts[0] = 1e6;
  RoutingLoad load;
  const TwoTierMatrix m = route_tokens(ranks, cluster, r, Bytes{1}, &load);
  const double tokens = 16.0 * 2048;
  double miss = 1;
  for (int i = 0; i < 7; ++i) {
    miss *= (239.0 - i) / (255.0 - i);
  }
  const double gpus_per_token = static_cast<double>(sum(m.gpu.bytes)) / tokens;
  CHECK(gpus_per_token == hopsim::test::approx(1 + 15 * (1 - miss)).epsilon(0.01));
  // Rank 0: every token's pick of expert 0, and its 15 others' share of the 7 picks; the mean
  // rank takes 8 x 16 / 256 of the tokens' picks.
  std::vector<std::int64_t> per_rank(16, 0);
  for (std::size_t e = 0; e < 256; ++e) {
    per_rank[e / 16] += load.expert_tokens[e];
  }
  const double mean = static_cast<double>(sum(per_rank)) / 16;
  CHECK(static_cast<double>(per_rank[0]) / mean ==
        hopsim::test::approx((1 + 15 * 7.0 / 255) / (8.0 / 16)).epsilon(0.01));
}

TEST_CASE("routing: counts with fewer non-zero experts than top-k are refused, naming counts") {
  const std::vector<topo::GpuId> ranks = first_ranks(16);
  MoeRouting r{64, 64, 8, 1, 1};
  r.distribution = RoutingDistribution::Counts;
  r.counts.assign(64, 0.0);
  for (std::size_t e = 0; e < 7; ++e) {
    r.counts[e * 9] = 1;  // 7 live experts, on both nodes
  }
  hopsim::Problems p = check_routing(r, ranks, 8, "/workload", "/workload/placement",
                             "/workload/routing/counts");
  REQUIRE(p.size() == 1);
  CHECK(p.front().path == "/workload/routing/counts");
  CHECK(p.front().message.find("7 of the 64 counts are non-zero") != std::string::npos);
  // 8 live experts over both nodes, but a token limited to one node sees at most 4 of them.
  r.counts[63] = 1;
  p = check_routing(r, ranks, 8, "/workload", "/workload/placement", "/workload/routing/counts");
  REQUIRE(p.size() == 1);
  CHECK(p.front().path == "/workload/routing/counts");
  r.max_nodes_per_token = 2;
  CHECK(check_routing(r, ranks, 8, "/workload").empty());
}

TEST_CASE("balancer: tokens per step shrink past 200 steps, never below 32 per expert") {
  CHECK(sample_tokens(1, 256, 8) == 16384);
  CHECK(sample_tokens(200, 256, 8) == 16384);
  CHECK(sample_tokens(400, 256, 8) == 8192);
  CHECK(sample_tokens(3200, 256, 8) == 1024);
  CHECK(sample_tokens(10000, 256, 8) == 1024);  // 32 selections per expert: 32 x 256 / 8
  CHECK(sample_tokens(10000, 64, 4) == 512);
  CHECK(sample_tokens(10000, 65536, 1) == 16384);  // never more than a full step
  // Total work: at most 200 full steps up to 3,200 steps, then linear in steps x experts.
  for (std::int64_t steps : {1, 50, 200, 1000, 3200}) {
    CHECK(steps * sample_tokens(steps, 256, 8) <= 200 * 16384);
  }
}

TEST_CASE("popularity: the guide table finds the expert a search of the whole cdf finds") {
  // At every cumulative weight and bucket edge, the doubles either side of them, 0 and the
  // total, over skews from mild to extreme, never-chosen experts and a bias.
  std::vector<MoeRouting> routings;
  for (const double s : {0.0, 1.2, 3.0, 8.0}) {
    MoeRouting r{1, 256, 8, 4, 1};
    r.distribution = RoutingDistribution::Zipf;
    r.zipf_s = s;
    routings.push_back(r);
  }
  MoeRouting dirichlet{1, 64, 8, 4, 1};
  dirichlet.distribution = RoutingDistribution::Dirichlet;
  dirichlet.dirichlet_alpha = 0.05;
  routings.push_back(dirichlet);
  MoeRouting counts{1, 16, 2, 4, 1};
  counts.distribution = RoutingDistribution::Counts;
  counts.counts = {0, 5, 0, 0, 1e-300, 3, 0, 7, 7, 0, 1, 0, 0, 2, 0, 0};
  routings.push_back(counts);
  MoeRouting bias{1, 32, 8, 4, 1};
  for (int e = 0; e < 32; ++e) {
    bias.bias.push_back(e % 3 == 0 ? 30.0 : -5.0);
  }
  routings.push_back(bias);
  const double kInf = std::numeric_limits<double>::infinity();
  for (const MoeRouting& r : routings) {
    const Popularity p = weights(r);
    REQUIRE(p.edge.size() == 2 * p.cdf.size() + 1);
    std::vector<double> at{0.0};
    for (const std::vector<double>* v : {&p.cdf, &p.edge}) {
      for (const double x : *v) {
        if (std::isfinite(x)) {
          at.insert(at.end(), {std::nextafter(x, 0.0), x, std::nextafter(x, kInf)});
        }
      }
    }
    for (const double u : at) {
      if (u < 0 || u > p.cdf.back()) {
        continue;
      }
      const auto whole = std::upper_bound(p.cdf.begin(), p.cdf.end(), u) - p.cdf.begin();
      CAPTURE(u);
      CHECK(expert_at(p, u) ==
            std::min<std::ptrdiff_t>(whole, static_cast<std::ptrdiff_t>(p.cdf.size()) - 1));
    }
  }
}
