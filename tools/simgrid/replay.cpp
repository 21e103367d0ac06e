// Replays a hopsim flows report in SimGrid: the same links, routes and sizes, each flow joining
// the network at the instant hopsim's report says (start_s + latency_s), under SimGrid's own
// max-min solver. Two uses (docs/network-model.md#against-simgrid): an independent check of
// hopsim's finish times, and SimGrid's wall time on exactly the flows hopsim solved.
//
// SimGrid is set to plain max-min: the CM02 model (no bandwidth or latency factors), no TCP
// window bound, no cross-traffic, zero link latencies (hopsim's latency is the join instant),
// so that every flow has the same sharing weight; its full (not lazy) update and a clock of
// 1e-12 s (its default 1e-9 s merges events a nanosecond apart, and the lazy update drifts by
// 1e-4); and small actor stacks without guard pages, so that 10^5 actors fit in a process's
// mappings.
//
// Usage: simgrid_replay REPORT.json [--max-error E] [--cfg=KEY:VALUE...]
// Prints SimGrid's wall time (platform and simulation, not reading the report) and each flow's
// finish against hopsim's: the worst difference in picoseconds and relative to the finish (at
// least 2 us, as tools/check_report.py takes it). Exit status 1 when that relative error passes
// E (default 1e-6), 2 on unusable input.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <simgrid/s4u.hpp>
#include <xbt/config.hpp>

namespace sg4 = simgrid::s4u;

namespace {

struct Flow {
  int src = 0;
  int dst = 0;
  std::uint64_t bytes = 0;
  double join = 0;    // start_s + latency_s
  double finish = 0;  // hopsim's finish_s
  std::vector<std::string> links;
};

struct Report {
  std::map<std::string, double> capacity;  // bytes/s
  std::vector<Flow> flows;
  int hosts = 0;
};

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "simgrid_replay: %s\n", what.c_str());
  std::exit(2);
}

Report read_report(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    fail(path + ": cannot open");
  }
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    fail(path + ": " + e.what());
  }
  if (!j.contains("links") || !j.contains("flows")) {
    fail(path + ": not a report of workload kind \"flows\" (no \"links\" or \"flows\")");
  }
  Report r;
  try {
    for (const auto& [name, link] : j.at("links").items()) {
      r.capacity[name] = link.at("bandwidth_Bps").get<double>();
      if (!(r.capacity[name] > 0)) {
        fail(path + ": links." + name + ".bandwidth_Bps: must be > 0");
      }
    }
    for (const auto& f : j.at("flows")) {
      Flow flow;
      flow.src = f.at("src").get<int>();
      flow.dst = f.at("dst").get<int>();
      flow.bytes = f.at("bytes").get<std::uint64_t>();
      flow.join = f.at("start_s").get<double>() + f.at("latency_s").get<double>();
      flow.finish = f.at("finish_s").get<double>();
      flow.links = f.at("links").get<std::vector<std::string>>();
      const std::string where = path + ": flows[" + std::to_string(r.flows.size()) + "]";
      if (flow.src < 0 || flow.dst < 0) {
        fail(where + ": src and dst must be GPUs (>= 0)");
      }
      for (const std::string& link : flow.links) {
        if (r.capacity.count(link) == 0) {
          fail(where + ": link \"" + link + "\" is not in the report's \"links\"");
        }
      }
      r.hosts = std::max({r.hosts, flow.src + 1, flow.dst + 1});
      r.flows.push_back(std::move(flow));
    }
  } catch (const nlohmann::json::exception& e) {
    fail(path + ": " + e.what());
  }
  return r;
}

// One host per GPU of the report, one link per hopsim link, one route per GPU pair: the route
// of the pair's first flow (a later flow of the pair on another route is refused).
std::vector<sg4::Host*> build_platform(const Report& r) {
  sg4::NetZone* zone = sg4::create_full_zone("cluster");
  std::vector<sg4::Host*> hosts;
  for (int h = 0; h < r.hosts; ++h) {
    hosts.push_back(zone->create_host("gpu" + std::to_string(h), 1e9)->seal());
  }
  std::unordered_map<std::string, sg4::Link*> links;
  for (const auto& [name, bps] : r.capacity) {
    links[name] = zone->create_link(name, bps)->set_latency(0)->seal();
  }
  std::map<std::pair<int, int>, const std::vector<std::string>*> routes;
  for (const Flow& f : r.flows) {
    if (f.links.empty()) {
      continue;
    }
    auto [it, fresh] = routes.try_emplace({f.src, f.dst}, &f.links);
    if (!fresh) {
      if (*it->second != f.links) {
        fail("GPUs " + std::to_string(f.src) + " -> " + std::to_string(f.dst) +
             ": flows on two routes (SimGrid keeps one route per host pair)");
      }
      continue;
    }
    std::vector<sg4::LinkInRoute> route;
    for (const std::string& name : f.links) {
      route.emplace_back(links.at(name));
    }
    zone->add_route(hosts[static_cast<std::size_t>(f.src)]->get_netpoint(),
                    hosts[static_cast<std::size_t>(f.dst)]->get_netpoint(), nullptr, nullptr,
                    route, false);
  }
  zone->seal();
  return hosts;
}

// Defaults before the command line's --cfg, which Engine's constructor has already read:
// only keys it did not set.
void configure(sg4::Engine& engine) {
  for (const char* cfg : {"network/model:CM02", "network/TCP-gamma:0", "network/crosstraffic:0",
                          "network/optim:Full", "surf/precision:1e-12", "contexts/guard-size:0",
                          "contexts/stack-size:64"}) {
    const std::string key(cfg, std::string_view(cfg).find(':'));
    if (simgrid::config::is_default(key.c_str())) {
      engine.set_config(cfg);
    }
  }
}

// The flows that cross links, in join order (local and empty flows take no network time).
std::vector<std::size_t> join_order(const Report& r) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < r.flows.size(); ++i) {
    if (!r.flows[i].links.empty() && r.flows[i].bytes > 0) {
      order.push_back(i);
    }
  }
  std::stable_sort(order.begin(), order.end(), [&r](std::size_t a, std::size_t b) {
    return r.flows[a].join < r.flows[b].join;
  });
  return order;
}

// One actor per flow, as an s4u program would write it: it waits for its join instant, sends,
// and notes when its last byte arrived. Returns each flow's finish (-1 for those not replayed).
std::vector<double> replay(sg4::Engine& engine, const Report& r,
                           const std::vector<sg4::Host*>& hosts,
                           const std::vector<std::size_t>& order) {
  std::vector<double> finish(r.flows.size(), -1);
  for (std::size_t i : order) {
    const Flow& f = r.flows[i];
    sg4::Host* src = hosts[static_cast<std::size_t>(f.src)];
    sg4::Host* dst = hosts[static_cast<std::size_t>(f.dst)];
    sg4::Actor::create("flow", src, [&finish, &f, src, dst, i] {
      sg4::this_actor::sleep_until(f.join);
      sg4::Comm::sendto(src, dst, f.bytes);
      finish[i] = sg4::Engine::get_clock();
    });
  }
  engine.run();
  return finish;
}

// hopsim rounds each event up to a whole picosecond: errors relative to the finish, at least
// 2 us (tools/check_report.py's floor). Prints the comparison; 1 when a flow is past max_error.
int compare(const Report& r, const std::vector<std::size_t>& order,
            const std::vector<double>& finish, double wall, double makespan, double max_error) {
  double worst = 0;
  double worst_ps = 0;
  double sum = 0;
  std::size_t worst_flow = 0;
  for (std::size_t i : order) {
    const double diff = std::abs(finish[i] - r.flows[i].finish);
    const double err = diff / std::max(r.flows[i].finish, 2e-6);
    sum += err;
    worst_ps = std::max(worst_ps, diff * 1e12);
    if (err > worst) {
      worst = err;
      worst_flow = i;
    }
  }
  std::printf("simgrid %zu flows  wall %.3f s  makespan %.9f s  worst %.2f ps, relative %.2e "
              "(flow %zu)  mean relative %.2e\n",
              order.size(), wall, makespan, worst_ps, worst, worst_flow,
              order.empty() ? 0.0 : sum / static_cast<double>(order.size()));
  if (worst > max_error) {
    std::printf("flow %zu: hopsim finishes at %.12f s, SimGrid at %.12f s: more than %.1e apart\n",
                worst_flow, r.flows[worst_flow].finish, finish[worst_flow], max_error);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  sg4::Engine engine(&argc, argv);
  double max_error = 1e-6;
  if (argc == 4 && std::string(argv[2]) == "--max-error") {
    max_error = std::stod(argv[3]);
  } else if (argc != 2) {
    std::fprintf(stderr,
                 "usage: simgrid_replay REPORT.json [--max-error E] [--cfg=KEY:VALUE...]\n"
                 "  REPORT.json: `hopsim run --json` of a workload of kind \"flows\"\n");
    return 2;
  }
  configure(engine);
  const Report report = read_report(argv[1]);
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<sg4::Host*> hosts = build_platform(report);
  const std::vector<std::size_t> order = join_order(report);
  const std::vector<double> finish = replay(engine, report, hosts, order);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return compare(report, order, finish, wall, sg4::Engine::get_clock(), max_error);
}
