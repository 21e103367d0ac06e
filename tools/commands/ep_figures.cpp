// A MoE layer's settings that apply, its token load, exchange bytes and busiest rank.
#include "tools/commands/ep_figures.hpp"

#include <cmath>
#include <vector>

#include "workloads/plan/sm_sharing.hpp"

namespace hopsim::tools {
namespace {

// Bytes of each phase's flows per pass, by the kinds of link their routes cross.
std::map<std::pair<std::string, std::string>, ExchangeBytes> exchange_bytes(
    const work::CaseResult& c, const topo::Cluster& cluster) {
  std::map<std::pair<std::string, std::string>, ExchangeBytes> sums;
  const auto& tasks = c.plan.tasks();
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const work::PlanTask& t = tasks[i];
    if (t.kind != work::PlanTaskKind::Flow) {
      continue;
    }
    const work::RouteKinds kinds =
        work::route_kinds(cluster, c.outcome.route(static_cast<work::PlanTaskId>(i)));
    const work::Phase& ph = c.plan.phases()[t.phase];
    ExchangeBytes& b = sums[{std::string(ph.pass()), std::string(ph.name())}];
    b.ib += kinds.ib ? t.bytes.n : 0;
    b.nvlink += kinds.nvlink ? t.bytes.n : 0;
  }
  for (auto& [key, b] : sums) {  // repeated layers move what the simulated ones did, each
    b.ib = static_cast<std::int64_t>(std::llround(static_cast<double>(b.ib) * c.plan_scale));
    b.nvlink =
        static_cast<std::int64_t>(std::llround(static_cast<double>(b.nvlink) * c.plan_scale));
  }
  return sums;
}

// The busiest rank's fixed costs per call (tasks labelled deepep_*, collectives/ep_algorithms),
// its calls scaled to every layer of the run.
std::map<std::string, EpFigures::CallFigure> per_call(const work::CaseResult& c,
                                                      topo::GpuId rank) {
  std::map<std::string, EpFigures::CallFigure> out;
  for (const work::PlanTask& t : c.plan.tasks()) {
    const std::string& label = c.plan.labels()[t.label];
    if (t.kind == work::PlanTaskKind::Hold && t.src == rank && label.starts_with("deepep_")) {
      out[label].each_s = t.duration.seconds();
      out[label].calls += c.plan_scale;
    }
  }
  return out;
}

// The settings only some algorithms, distributions or balancers have, and the placement.
void settings(const work::MoeLayerJob& job, EpFigures& f) {
  if (work::ep_algorithm_row(job.algorithm).chunked) {
    f.pieces = work::pieces_name(job.pieces_used());
  }
  const work::MoeRouting& r = job.routing;
  if (r.distribution == work::RoutingDistribution::Zipf) {
    f.zipf_s = r.zipf_s;
  }
  if (r.distribution == work::RoutingDistribution::Dirichlet) {
    f.dirichlet_alpha = r.dirichlet_alpha;
  }
  if (job.balancer == work::Balancer::AuxLoss) {
    f.aux_loss_weight = job.aux_loss_weight;
  }
  if (r.capacity_factor > 0) {
    f.capacity_factor = r.capacity_factor;
  }
  f.placement = job.redundant_experts > 0 ? "redundant"
                : r.placement.empty()     ? "even"
                                          : "explicit";
}

// How evenly the routed tokens landed on experts and ranks, and what capacity dropped.
void load(const work::EpDetails& ep, EpFigures& f) {
  for (const std::vector<int>& rank : ep.placement) {
    f.slots_per_rank.push_back(rank.size());
  }
  f.dropped_fraction =
      ep.selections > 0 ? static_cast<double>(ep.dropped) / static_cast<double>(ep.selections)
                        : 0.0;
  f.max_over_mean = work::max_over_mean(ep.tokens_per_rank);
  f.expert_max_over_mean = work::max_over_mean(ep.tokens_per_expert);
  f.idle_expert_fraction = f.max_over_mean > 0 ? 1 - 1 / f.max_over_mean : 0.0;
}

}  // namespace

// The settings, the load, the exchange bytes, then the busiest rank's streams.
EpFigures ep_figures(const work::CaseResult& c, const work::MoeLayerJob& job,
                     const work::EpDetails& ep, const topo::Cluster& cluster,
                     const std::optional<work::Validation>& validation) {
  EpFigures f;
  settings(job, f);
  load(ep, f);
  f.bytes = exchange_bytes(c, cluster);
  const work::Summary& s = c.summary;
  const work::RankTime& busiest = s.ranks[s.critical_rank.index()];
  f.busiest_rank = s.critical_rank;
  f.per_call = per_call(c, s.critical_rank);
  f.compute_s = busiest.compute.seconds();
  f.comm_s = busiest.comm.seconds();
  f.exposed_comm_s = busiest.exposed.seconds();
  if (busiest.comm.count_ps() > 0) {
    f.hidden_comm_share = 1 - busiest.exposed.seconds() / busiest.comm.seconds();
    f.compute_comm_ratio = busiest.compute.seconds() / busiest.comm.seconds();
  }
  f.layer_time_s = s.step.seconds() / static_cast<double>(job.layers);
  if (c.plan.sm_share().held > 0) {  // over the layers simulated, scaled to all of them
    const std::size_t g = s.critical_rank.index();
    const std::vector<Time> held = work::sm_held_times(c.plan, c.outcome);
    f.sm_held_s = g < held.size() ? held[g].seconds() * c.plan_scale : 0;
    f.sm_tax_s = g < c.outcome.sm_tax.size() ? c.outcome.sm_tax[g].seconds() * c.plan_scale : 0;
  }
  if (validation) {
    f.validation = validation_figures(*validation, s.step.seconds());
  }
  return f;
}

}  // namespace hopsim::tools
