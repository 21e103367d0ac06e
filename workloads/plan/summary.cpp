// Interval unions per rank and phase, and byte totals per link kind.
#include "workloads/plan/summary.hpp"

#include <algorithm>

namespace hopsim::work {
namespace {

using Interval = std::pair<Time, Time>;

Time union_length(std::vector<Interval>& iv) {
  std::sort(iv.begin(), iv.end());
  Time total;
  Time open_start;
  Time open_end;
  bool open = false;
  for (const auto& [s, e] : iv) {
    if (open && s <= open_end) {
      open_end = std::max(open_end, e);
      continue;
    }
    if (open) {
      total += open_end - open_start;
    }
    open_start = s;
    open_end = e;
    open = true;
  }
  if (open) {
    total += open_end - open_start;
  }
  return total;
}

struct Intervals {
  std::vector<Interval> compute;
  std::vector<Interval> comm;
};

// Compute and communication time of one rank's intervals, and the exposed part.
RankTime account(Intervals& iv) {
  RankTime r;
  std::vector<Interval> all = iv.compute;
  all.insert(all.end(), iv.comm.begin(), iv.comm.end());
  r.busy = union_length(all);
  r.compute = union_length(iv.compute);
  r.comm = union_length(iv.comm);
  r.exposed = r.busy - r.compute;
  return r;
}

void add_link_bytes(const topo::Cluster& cluster, std::span<const topo::LinkId> route,
                    const PlanTask& t, Summary& s) {
  const RouteKinds kinds = route_kinds(cluster, route);
  if (kinds.nvlink) {
    s.nvlink_bytes = s.nvlink_bytes + t.bytes;
  }
  if (kinds.ib) {
    s.ib_bytes = s.ib_bytes + t.bytes;
  }
}

// Whether `t` is communication of its ranks: a flow between two GPUs, or held communication.
bool communicates(const PlanTask& t) {
  return (t.kind == PlanTaskKind::Flow && t.src != t.dst) || t.kind == PlanTaskKind::Hold;
}

// Per phase: its span over all ranks, and the critical rank's compute and communication in it;
// a phase's communication is exposed where none of the rank's compute runs, of any phase (with
// two micro-batches one's dispatch hides under the other's attention).
std::vector<PhaseTime> phase_times(const Plan& plan, const Outcome& outcome,
                                   topo::GpuId critical_rank) {
  const auto& tasks = plan.tasks();
  std::vector<Intervals> per_phase(plan.phases().size());
  std::vector<PhaseTime> phases(plan.phases().size());
  std::vector<Interval> computing;  // the critical rank's, every phase
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const PlanTask& t = tasks[i];
    const sim::TaskTimes& tt = outcome.times[i];
    if (tt.end == Time::max()) {
      continue;
    }
    PhaseTime& p = phases[t.phase];
    p.start = std::min(p.start, tt.start);
    p.end = std::max(p.end, tt.end);
    const bool mine = t.src == critical_rank || t.dst == critical_rank;
    if (mine && t.kind == PlanTaskKind::Compute) {
      per_phase[t.phase].compute.emplace_back(tt.start, tt.end);
      computing.emplace_back(tt.start, tt.end);
    } else if (mine && communicates(t)) {
      per_phase[t.phase].comm.emplace_back(tt.start, tt.end);
    }
  }
  const Time computing_s = union_length(computing);
  for (std::size_t p = 0; p < phases.size(); ++p) {
    phases[p].compute = union_length(per_phase[p].compute);
    phases[p].comm = union_length(per_phase[p].comm);
    std::vector<Interval> with = computing;
    with.insert(with.end(), per_phase[p].comm.begin(), per_phase[p].comm.end());
    phases[p].exposed = union_length(with) - computing_s;
    if (phases[p].start == Time::max()) {
      phases[p].start = Time{};
    }
  }
  return phases;
}

}  // namespace

RouteKinds route_kinds(const topo::Cluster& cluster, std::span<const topo::LinkId> route) {
  RouteKinds k;
  for (topo::LinkId l : route) {
    k.nvlink = k.nvlink || cluster.link(l).kind == topo::LinkKind::NvLink;
    k.ib = k.ib || cluster.link(l).kind != topo::LinkKind::NvLink;
  }
  return k;
}

Summary summarize(const topo::Cluster& cluster, const Plan& plan, const Outcome& outcome) {
  Summary s;
  s.step = outcome.makespan;
  s.failed_links = cluster.failures().any;
  const auto gpus = static_cast<std::size_t>(cluster.gpu_count());
  std::vector<Intervals> per_rank(gpus);
  const auto& tasks = plan.tasks();
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const PlanTask& t = tasks[i];
    const sim::TaskTimes& tt = outcome.times[i];
    if (tt.end == Time::max()) {
      continue;
    }
    if (t.kind == PlanTaskKind::Compute) {
      per_rank[t.src.index()].compute.emplace_back(tt.start, tt.end);
      s.flops.n += t.flops.n;
      s.compute_sources.add(t.source, tt.end - tt.start);
      s.compute_kernels.add(t.kernel, tt.end - tt.start);
    } else if (communicates(t)) {
      per_rank[t.src.index()].comm.emplace_back(tt.start, tt.end);
      if (t.kind == PlanTaskKind::Flow) {  // a held collective is its own GPU's only
        per_rank[t.dst.index()].comm.emplace_back(tt.start, tt.end);
        const std::span<const topo::LinkId> route = outcome.route(static_cast<PlanTaskId>(i));
        add_link_bytes(cluster, route, t, s);
        // Through the NICs alone: DeepEP's low-latency kernels' own choice, not a detour.
        if (cluster.detoured(route, t.src, t.dst, t.nics_only)) {
          ++s.rerouted_flows;
          s.rerouted_bytes = s.rerouted_bytes + t.bytes;
        }
      }
    }
  }
  // Ranks that appear in the plan count; the rest of the cluster is idle by choice.
  std::vector<bool> involved(gpus, false);
  for (const PlanTask& t : tasks) {
    if (t.kind != PlanTaskKind::Delay) {
      involved[t.src.index()] = true;
      involved[t.dst.index()] = true;
    }
  }
  double busy_sum = 0;
  for (std::size_t r = 0; r < gpus; ++r) {
    s.ranks.push_back(account(per_rank[r]));
    if (!involved[r]) {
      continue;
    }
    ++s.involved;
    busy_sum += s.ranks.back().busy.seconds();
    if (s.ranks.back().busy > s.ranks[s.critical_rank.index()].busy) {
      s.critical_rank = topo::GpuId{static_cast<int>(r)};
    }
  }
  s.mean_busy_s = s.involved == 0 ? 0 : busy_sum / static_cast<double>(s.involved);

  s.phases = phase_times(plan, outcome, s.critical_rank);
  if (cluster.mixed()) {
    s.critical_gpu = cluster.gpu_type(s.critical_rank).name;
  }
  return s;
}

Summary at_rank(Summary s, const Plan& plan, const Outcome& outcome, topo::GpuId rank) {
  if (s.critical_rank != rank) {
    s.critical_rank = rank;
    s.phases = phase_times(plan, outcome, rank);
  }
  return s;
}

namespace {

// b + extra x (b - a): b after `extra` more units that each add what b's last one did.
Time ahead(Time a, Time b, std::int64_t extra) { return b + extra * (b - a); }
double ahead(double a, double b, std::int64_t extra) {
  return b + static_cast<double>(extra) * (b - a);
}
Bytes ahead(Bytes a, Bytes b, std::int64_t extra) { return Bytes{b.n + extra * (b.n - a.n)}; }

bool same_increment(Time a, Time b, Time c) { return b - a == c - b; }

}  // namespace

bool steady(const Summary& one, const Summary& two, const Summary& three) {
  if (!same_increment(one.step, two.step, three.step) || one.ranks.size() != two.ranks.size() ||
      two.ranks.size() != three.ranks.size() || one.phases.size() != three.phases.size() ||
      two.phases.size() != three.phases.size()) {
    return false;
  }
  for (std::size_t r = 0; r < one.ranks.size(); ++r) {
    const RankTime& a = one.ranks[r];
    const RankTime& b = two.ranks[r];
    const RankTime& c = three.ranks[r];
    if (!same_increment(a.busy, b.busy, c.busy) ||
        !same_increment(a.compute, b.compute, c.compute) ||
        !same_increment(a.comm, b.comm, c.comm)) {
      return false;
    }
  }
  for (std::size_t p = 0; p < one.phases.size(); ++p) {
    const PhaseTime& a = one.phases[p];
    const PhaseTime& b = two.phases[p];
    const PhaseTime& c = three.phases[p];
    if (!same_increment(a.end, b.end, c.end) ||
        !same_increment(a.compute, b.compute, c.compute) ||
        !same_increment(a.comm, b.comm, c.comm)) {
      return false;
    }
  }
  return true;
}

topo::GpuId busiest_after(const Summary& fewer, const Summary& more, std::int64_t extra) {
  topo::GpuId busiest{0};
  Time most{};
  for (std::size_t r = 0; r < more.ranks.size(); ++r) {
    const Time busy = ahead(fewer.ranks[r].busy, more.ranks[r].busy, extra);
    if (more.ranks[r].busy > Time{} && busy > most) {
      most = busy;
      busiest = topo::GpuId{static_cast<int>(r)};
    }
  }
  return busiest;
}

Summary extrapolate(const Summary& fewer, const Summary& more, std::int64_t extra) {
  HOPSIM_ASSERT(fewer.ranks.size() == more.ranks.size() &&
                    fewer.phases.size() == more.phases.size() && extra >= 0,
                "extrapolating summaries of different shapes");
  Summary s = more;
  s.step = ahead(fewer.step, more.step, extra);
  s.critical_rank = busiest_after(fewer, more, extra);
  double busy_sum = 0;
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    const RankTime& a = fewer.ranks[r];
    const RankTime& b = more.ranks[r];
    s.ranks[r] = {ahead(a.busy, b.busy, extra), ahead(a.compute, b.compute, extra),
                  ahead(a.comm, b.comm, extra), ahead(a.exposed, b.exposed, extra)};
    if (b.busy > Time{}) {
      busy_sum += s.ranks[r].busy.seconds();
    }
  }
  s.mean_busy_s = s.involved == 0 ? 0 : busy_sum / static_cast<double>(s.involved);
  s.nvlink_bytes = ahead(fewer.nvlink_bytes, more.nvlink_bytes, extra);
  s.ib_bytes = ahead(fewer.ib_bytes, more.ib_bytes, extra);
  s.rerouted_flows = more.rerouted_flows + extra * (more.rerouted_flows - fewer.rerouted_flows);
  s.rerouted_bytes = ahead(fewer.rerouted_bytes, more.rerouted_bytes, extra);
  s.flops.n = ahead(fewer.flops.n, more.flops.n, extra);
  s.compute_sources = {};
  for (Source src : kSources) {
    s.compute_sources.add(
        src, ahead(fewer.compute_sources.time(src), more.compute_sources.time(src), extra));
  }
  s.compute_kernels = {};
  for (std::size_t k = 0; k < kKernelClasses; ++k) {
    const auto kind = static_cast<KernelClass>(k);
    s.compute_kernels.add(
        kind, ahead(fewer.compute_kernels.time(kind), more.compute_kernels.time(kind), extra));
  }
  for (std::size_t p = 0; p < s.phases.size(); ++p) {
    const PhaseTime& a = fewer.phases[p];
    const PhaseTime& b = more.phases[p];
    // A phase of the first units starts where it did; one after them (a backward after every
    // forward) moves on by what the last unit added.
    const bool ran = a.start != Time::max() && b.start != Time::max();
    s.phases[p] = {ran ? ahead(a.start, b.start, extra) : b.start, ahead(a.end, b.end, extra),
                   ahead(a.compute, b.compute, extra), ahead(a.comm, b.comm, extra),
                   ahead(a.exposed, b.exposed, extra)};
  }
  return s;
}

}  // namespace hopsim::work
