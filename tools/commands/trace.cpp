// Trace events from a run's task times, streams, labels and watched link loads.
#include "tools/commands/trace.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "tools/config/node.hpp"

namespace hopsim::tools {
namespace {

using PlainJson = nlohmann::json;

constexpr int kLinksProcess = -1;  // pid of the link-load counters

std::string name_of(const work::Plan& plan, const work::PlanTask& t) {
  const std::string phase(plan.phases()[t.phase].name());
  const std::string& label = plan.label(t);
  return label.empty() ? phase : phase + " " + label;
}

double us(Time t) { return t.seconds() * 1e6; }

// Where a task is drawn: a GPU's process and its stream's thread, or a probe's.
struct Place {
  int pid = 0;
  int tid = 0;
};

void add_task(const work::Plan& plan, const work::Outcome& outcome, std::size_t i, Time offset,
              std::uint64_t id, const topo::Cluster& cluster, Place at, PlainJson& events) {
  const work::PlanTask& t = plan.tasks()[i];
  const sim::TaskTimes& tt = outcome.times[i];
  const double start = us(offset + tt.start);
  const double end = us(offset + tt.end);
  if (t.kind == work::PlanTaskKind::Compute) {
    const PlainJson args = {{"flops", t.flops.n}, {"source", work::source_name(t.source)}};
    events.push_back({{"name", name_of(plan, t)}, {"cat", "compute"}, {"ph", "X"},
                      {"pid", at.pid}, {"tid", at.tid}, {"ts", start}, {"dur", end - start},
                      {"args", args}});
    return;
  }
  if (t.kind == work::PlanTaskKind::Hold) {  // communication measured elsewhere (a probe)
    events.push_back({{"name", name_of(plan, t)}, {"cat", "comm"}, {"ph", "X"},
                      {"pid", at.pid}, {"tid", at.tid}, {"ts", start}, {"dur", end - start}});
    return;
  }
  PlainJson links = PlainJson::array();
  for (topo::LinkId l : outcome.route(static_cast<work::PlanTaskId>(i))) {
    links.push_back(cluster.link(l).name);
  }
  const PlainJson args = {{"dst", t.dst.value()},
                     {"bytes", t.bytes.n},
                     {"latency_us", us(outcome.latency[i])},
                     {"links", std::move(links)}};
  const std::string name = name_of(plan, t);
  events.push_back({{"name", name}, {"cat", "flow"}, {"ph", "b"}, {"id", id}, {"pid", at.pid},
                    {"tid", at.tid}, {"ts", start}, {"args", args}});
  events.push_back({{"name", name}, {"cat", "flow"}, {"ph", "e"}, {"id", id}, {"pid", at.pid},
                    {"tid", at.tid}, {"ts", end}});
}

// Whether task i is drawn: it ran, is not a bare delay, and its GPU is among `ranks`.
bool drawn(const work::Plan& plan, const work::Outcome& outcome, std::size_t i,
           const std::set<topo::GpuId>& ranks) {
  const work::PlanTask& t = plan.tasks()[i];
  return outcome.times[i].end != Time::max() && t.kind != work::PlanTaskKind::Delay &&
         (ranks.empty() || ranks.count(t.src) != 0);
}

// Each probe as its own process after the GPUs' (pid kProbesBase + its index), from time 0,
// a thread per (GPU, stream) named like "n0.g3 compute".
constexpr int kProbesBase = 1 << 24;

void add_probes(const work::RunResult& result, const std::set<topo::GpuId>& ranks,
                std::uint64_t& id, PlainJson& events) {
  const topo::Cluster& cluster = *result.cluster;
  for (std::size_t k = 0; k < result.probes.size(); ++k) {
    const work::ProbeResult& p = result.probes[k];
    const int pid = kProbesBase + static_cast<int>(k);
    const auto streams = static_cast<int>(p.plan.streams().size());
    std::set<std::pair<topo::GpuId, int>> threads;
    for (std::size_t i = 0; i < p.plan.tasks().size(); ++i, ++id) {
      if (!drawn(p.plan, p.outcome, i, ranks)) {
        continue;
      }
      const work::PlanTask& t = p.plan.tasks()[i];
      threads.emplace(t.src, t.stream);
      add_task(p.plan, p.outcome, i, Time{}, id, cluster, {pid, t.src.value() * streams + t.stream},
               events);
    }
    for (const auto& [gpu, stream] : threads) {
      const std::string name =
          fmt::format("n{}.g{} {}", cluster.node_of(gpu), cluster.local_of(gpu),
                      p.plan.streams()[static_cast<std::size_t>(stream)]);
      events.push_back({{"name", "thread_name"},
                        {"ph", "M"},
                        {"pid", pid},
                        {"tid", gpu.value() * streams + stream},
                        {"args", {{"name", name}}}});
    }
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid},
                      {"args", {{"name", "probe: " + p.name}}}});
    events.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", pid},
                      {"args", {{"sort_index", pid}}}});
  }
}

void add_link_loads(const work::CaseResult& c, Time offset, const topo::Cluster& cluster,
                    std::size_t count, PlainJson& events) {
  for (std::size_t i = 0; i < std::min(count, c.link_loads.size()); ++i) {
    const work::LinkLoad& load = c.link_loads[i];
    const std::string& name = cluster.link(load.link).name;
    for (const auto& [at, bytes_per_s] : load.samples) {
      events.push_back({{"name", name}, {"ph", "C"}, {"pid", kLinksProcess},
                        {"ts", us(offset + at)}, {"args", {{"GB/s", bytes_per_s / 1e9}}}});
    }
  }
}

void add_names(const topo::Cluster& cluster, const std::set<std::pair<topo::GpuId, int>>& threads,
               const std::vector<std::string>& streams, bool links, PlainJson& events) {
  std::set<topo::GpuId> gpus;
  for (const auto& [gpu, stream] : threads) {
    gpus.insert(gpu);
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", gpu.value()},
                      {"tid", stream},
                      {"args", {{"name", streams[static_cast<std::size_t>(stream)]}}}});
  }
  for (const topo::GpuId gpu : gpus) {
    const std::string name = fmt::format("n{}.g{}", cluster.node_of(gpu), cluster.local_of(gpu));
    events.push_back(
        {{"name", "process_name"}, {"ph", "M"}, {"pid", gpu.value()}, {"args", {{"name", name}}}});
    events.push_back({{"name", "process_sort_index"},
                      {"ph", "M"},
                      {"pid", gpu.value()},
                      {"args", {{"sort_index", gpu.value()}}}});
  }
  if (links) {
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", kLinksProcess},
                      {"args", {{"name", "links (busiest)"}}}});
  }
}

}  // namespace

std::set<topo::GpuId> parse_trace_ranks(const std::string& text, int gpus) {
  std::set<topo::GpuId> out;
  std::size_t from = 0;
  const auto fail = [&](const std::string& what) {
    throw config::ConfigError(fmt::format("--trace-ranks {}: {}", text, what));
  };
  const auto number = [&](const std::string& s) {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) {
      fail(fmt::format("\"{}\" is not a GPU rank; expected e.g. 0-7,64", s));
    }
    const int n = std::stoi(s);
    if (n >= gpus) {
      fail(fmt::format("GPU {} is not in the cluster's {}", n, gpus));
    }
    return n;
  };
  while (from <= text.size()) {
    const std::size_t comma = text.find(',', from);
    const std::string part =
        text.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
    const std::size_t dash = part.find('-');
    const int lo = number(part.substr(0, dash));
    const int hi = dash == std::string::npos ? lo : number(part.substr(dash + 1));
    if (hi < lo) {
      fail(fmt::format("the range {} runs backwards", part));
    }
    for (int g = lo; g <= hi; ++g) {
      out.emplace(g);
    }
    if (comma == std::string::npos) {
      break;
    }
    from = comma + 1;
  }
  return out;
}

PlainJson make_trace(const work::RunResult& result, std::size_t links_drawn,
                const std::set<topo::GpuId>& ranks) {
  const topo::Cluster& cluster = *result.cluster;
  PlainJson events = PlainJson::array();
  std::set<std::pair<topo::GpuId, int>> threads;
  std::vector<std::string> streams;
  bool links = false;
  Time offset;
  std::uint64_t id = 0;
  for (const work::CaseResult& c : result.cases) {
    if (result.cases.size() > 1) {
      events.push_back({{"name", fmt::format("case {}", c.name)}, {"ph", "i"}, {"s", "g"},
                        {"pid", 0}, {"tid", 0}, {"ts", us(offset)}});
    }
    for (std::size_t i = 0; i < c.plan.tasks().size(); ++i, ++id) {
      if (!drawn(c.plan, c.outcome, i, ranks)) {
        continue;
      }
      const work::PlanTask& t = c.plan.tasks()[i];
      threads.emplace(t.src, t.stream);
      add_task(c.plan, c.outcome, i, offset, id, cluster, {t.src.value(), t.stream}, events);
    }
    add_link_loads(c, offset, cluster, links_drawn, events);
    links = links || (links_drawn > 0 && !c.link_loads.empty());
    if (c.plan.streams().size() > streams.size()) {
      streams = c.plan.streams();
    }
    offset += c.outcome.makespan;
  }
  add_names(cluster, threads, streams, links, events);
  add_probes(result, ranks, id, events);
  return PlainJson{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}};
}

}  // namespace hopsim::tools
