// Straggler draws (stragglers.hpp).
#include "workloads/experiment/stragglers.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>
#include <vector>

#include "workloads/ep/routing_rng.hpp"

namespace hopsim::work {

namespace {

// The draw of entry `p`: its GPUs (ascending), each with its speed.
std::vector<topo::Perturbation> draw(const topo::Perturbation& p, int gpus, std::uint64_t seed) {
  const topo::StragglerDraw& d = *p.drawn;
  const auto count = std::clamp<std::int64_t>(
      std::llround(d.share * static_cast<double>(gpus)), 1, gpus);
  // Its own stream per entry: another entry, or the routing's draws, do not move it.
  RoutingRng rng(seed ^ (0xD1B54A32D192ED03ULL * (p.entry + 1)));
  std::vector<int> order(static_cast<std::size_t>(gpus));
  std::iota(order.begin(), order.end(), 0);
  std::vector<std::pair<int, double>> picked;
  for (std::int64_t i = 0; i < count; ++i) {  // a partial Fisher-Yates shuffle
    const auto left = static_cast<double>(gpus - i);
    const auto j = i + static_cast<std::int64_t>(unit(rng) * left);
    std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(j)]);
    const double speed = d.speed_min + (d.speed_max - d.speed_min) * unit(rng);
    picked.emplace_back(order[static_cast<std::size_t>(i)], speed);
  }
  std::sort(picked.begin(), picked.end());
  std::vector<topo::Perturbation> out;
  for (const auto& [gpu, speed] : picked) {
    topo::Perturbation one = p;
    one.drawn->population = gpus;
    one.gpus = {gpu};
    one.compute_speed = speed;
    out.push_back(std::move(one));
  }
  return out;
}

}  // namespace

void draw_stragglers(Experiment& e) {
  const int used = mesh_gpus(e);
  const int gpus = used > 0 ? used : e.cluster.gpu_count();
  std::vector<topo::Perturbation> out;
  for (const topo::Perturbation& p : e.cluster.perturbations) {
    if (p.drawn && p.gpus.empty() && gpus > 0) {
      for (topo::Perturbation& one : draw(p, gpus, e.seed)) {
        out.push_back(std::move(one));
      }
    } else {
      out.push_back(p);
    }
  }
  e.cluster.perturbations = std::move(out);
}

}  // namespace hopsim::work
