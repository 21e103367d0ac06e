// Probes measured on a pool of threads (probe.hpp).
#include "workloads/plan/probe.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <utility>

#include "sim/assert.hpp"
#include "workloads/plan/sm_sharing.hpp"

namespace hopsim::work {

Measured::Measured(std::span<const ProbeResult> results) {
  for (const ProbeResult& r : results) {
    const bool fresh = by_name_.emplace(r.name, &r).second;
    HOPSIM_ASSERT(fresh, "two probes named \"{}\"", r.name);
  }
}

const ProbeResult& Measured::at(std::string_view name) const {
  const auto it = by_name_.find(name);
  HOPSIM_ASSERT(it != by_name_.end(), "probe \"{}\" was not declared", name);
  return *it->second;
}

const ProbeResult* Measured::find(std::string_view name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<ProbeResult> run_probes(const topo::Cluster& cluster, std::vector<Probe> probes,
                                    double tolerance, unsigned threads) {
  std::vector<ProbeResult> out(probes.size());
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> errors(probes.size());
  const auto work = [&] {
    for (std::size_t i = next++; i < probes.size(); i = next++) {
      try {
        ProbeResult& r = out[i];
        r.name = std::move(probes[i].name);
        r.plan = std::move(probes[i].plan);
        const topo::Cluster& on = probes[i].cluster ? *probes[i].cluster : cluster;
        r.outcome = simulate_sharing_sms(
            on, r.plan, {.tolerance = tolerance, .speeds = probes[i].speeds});
        r.summary = summarize(on, r.plan, r.outcome);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  const std::size_t count =
      std::min<std::size_t>(probes.size(), threads == 0 ? cores : threads);
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < count; ++t) {
    pool.emplace_back(work);
  }
  work();
  for (std::thread& t : pool) {
    t.join();
  }
  for (const std::exception_ptr& e : errors) {
    if (e) {
      std::rethrow_exception(e);
    }
  }
  return out;
}

}  // namespace hopsim::work
