// Trace events from plan task times.
#include "tools/commands/trace.hpp"

#include <set>

namespace hopsim::tools {
namespace {

std::string fmt_flow_name(const std::string& phase, int dst) {
  return phase + " -> " + std::to_string(dst);
}

}  // namespace

nlohmann::json make_trace(const work::Plan& plan, const work::Outcome& outcome) {
  using Json = nlohmann::json;
  constexpr int kComputeThread = 0;
  constexpr int kCommThread = 1;
  Json events = Json::array();
  std::set<int> gpus;
  for (std::size_t i = 0; i < plan.tasks().size(); ++i) {
    const work::PlanTask& t = plan.tasks()[i];
    const sim::TaskTimes& tt = outcome.times[i];
    if (tt.end == Time::max() || t.kind == work::PlanTaskKind::Delay) {
      continue;
    }
    gpus.insert(t.src);
    const double start_us = tt.start.seconds() * 1e6;
    const double end_us = tt.end.seconds() * 1e6;
    const std::string& phase = plan.phases()[t.phase].name;
    if (t.kind == work::PlanTaskKind::Compute) {
      events.push_back({{"name", phase}, {"cat", "compute"}, {"ph", "X"}, {"pid", t.src},
                        {"tid", kComputeThread}, {"ts", start_us}, {"dur", end_us - start_us}});
      continue;
    }
    const Json args = {{"dst", t.dst}, {"bytes", t.bytes.n},
                       {"latency_us", outcome.latency[i].seconds() * 1e6}};
    const std::string name = fmt_flow_name(phase, t.dst);
    events.push_back({{"name", name}, {"cat", "flow"}, {"ph", "b"}, {"id", i}, {"pid", t.src},
                      {"tid", kCommThread}, {"ts", start_us}, {"args", args}});
    events.push_back({{"name", name}, {"cat", "flow"}, {"ph", "e"}, {"id", i}, {"pid", t.src},
                      {"tid", kCommThread}, {"ts", end_us}});
  }
  for (int gpu : gpus) {
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", gpu},
                      {"args", {{"name", "GPU " + std::to_string(gpu)}}}});
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", gpu}, {"tid", kComputeThread},
                      {"args", {{"name", "compute"}}}});
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", gpu}, {"tid", kCommThread},
                      {"args", {{"name", "comm"}}}});
  }
  return Json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}};
}

}  // namespace hopsim::tools
