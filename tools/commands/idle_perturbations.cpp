// Perturbations that change nothing: identities, and GPUs and links the run does not use.
#include "tools/commands/idle_perturbations.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <unordered_set>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "workloads/mesh/mesh.hpp"

namespace hopsim::tools {
namespace {

using topo::Perturbation;
using topo::PerturbedPart;
using topo::on_links;

// Why a perturbation is the healthy cluster itself, if it is.
std::optional<std::string> identity(const Perturbation& p) {
  if (p.part == PerturbedPart::Compute) {
    const bool drawn = p.kernel_draw &&
                       (p.kernel_draw->speed_min != 1.0 || p.kernel_draw->speed_max != 1.0);
    if (p.compute_speed == 1.0 && !drawn) {
      return fmt::format("changes nothing: compute_speed 1{} is the compute model's own rate",
                         p.kernel_draw ? " with kernel_speed [1, 1]" : "");
    }
  } else if (on_links(p) && !p.failed && p.bandwidth == 1.0 && p.extra_latency == Time{}) {
    return std::string("changes nothing: bandwidth 1 with no extra latency leaves the links "
                       "as they are");
  }
  return std::nullopt;
}

// What a run uses: the GPUs that run a kernel (none known: empty), and the links that its
// flows would cross on the healthy fabric (not known: empty).
struct Used {
  std::vector<char> computes;  // [rank]
  std::vector<char> links;     // [link]
};

// The GPUs a kind runs kernels on, without its plans: none for flows and collectives, every
// GPU of the mesh for the layers and the step (folded too: its probes stand for every rank),
// unknown for a trace.
std::vector<char> kernel_gpus(const work::Experiment& e) {
  std::vector<char> out(static_cast<std::size_t>(e.cluster.gpu_count()), 0);
  if (std::holds_alternative<work::ChakraJob>(e.job)) {
    return {};
  }
  if (!std::holds_alternative<work::FlowsJob>(e.job) &&
      !std::holds_alternative<work::CollectiveJob>(e.job)) {
    const auto mesh = static_cast<std::size_t>(work::Mesh(e.parallel).size());
    std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(std::min(mesh, out.size())),
              1);
  }
  return out;
}

// What the cases of a run that simulated its whole plans use; each (source, destination) pair
// routed once.
Used used_by(const work::RunResult& result, bool need_links) {
  const topo::Cluster& cluster = *result.cluster;
  Used u{std::vector<char>(static_cast<std::size_t>(cluster.gpu_count()), 0),
         std::vector<char>(need_links ? cluster.link_count() : 0, 0)};
  std::unordered_set<std::uint64_t> routed;
  for (const work::CaseResult& c : result.cases) {
    for (const work::PlanTask& t : c.plan.tasks()) {
      if (t.kind == work::PlanTaskKind::Compute) {
        u.computes[t.src.index()] = 1;
      } else if (need_links && t.kind == work::PlanTaskKind::Flow && t.src != t.dst) {
        const std::uint64_t pair = (std::uint64_t{t.src.index()} << 33) |
                                   (std::uint64_t{t.dst.index()} << 1) | (t.nics_only ? 1 : 0);
        if (!routed.insert(pair).second) {
          continue;
        }
        const auto route = cluster.unfailed_route(t.src, t.dst, t.nics_only);  // outlives span()
        for (const topo::LinkId l : route.span()) {
          u.links[l.index()] = 1;
        }
      }
    }
  }
  return u;
}

// What the run (or, without one, the kind) uses: a run that simulated its whole plans says
// which GPUs compute and which links its flows cross; a folded step, or no run, only which
// GPUs compute, by its kind.
Used used_in(const work::Experiment& e, const work::RunResult* result, bool need_links) {
  if (result != nullptr && result->cluster && work::cases_at_speeds(e)) {
    return used_by(*result, need_links);
  }
  return {kernel_gpus(e), {}};
}

// Why a perturbation changes nothing that the run used, if it does not.
// `cluster`: the run's (links are known only with a run).
std::optional<std::string> unused(const Perturbation& p, const topo::Cluster* cluster,
                                  const Used& u) {
  if (p.part == PerturbedPart::Compute) {
    if (u.computes.empty()) {
      return std::nullopt;
    }
    const bool any = std::ranges::any_of(
        p.gpus, [&](int g) { return u.computes[static_cast<std::size_t>(g)] != 0; });
    return any ? std::nullopt
               : std::optional(fmt::format("changes nothing in this run: {} {} {} no kernel",
                                           p.gpus.size() == 1 ? "GPU" : "GPUs",
                                           fmt::join(p.gpus, ", "),
                                           p.gpus.size() == 1 ? "runs" : "run"));
  }
  if (!on_links(p) || u.links.empty() || cluster == nullptr) {
    return std::nullopt;
  }
  const std::vector<topo::LinkId> links = cluster->links_of(p);
  if (std::ranges::any_of(links, [&](topo::LinkId l) { return u.links[l.index()] != 0; })) {
    return std::nullopt;
  }
  std::string names;
  for (std::size_t i = 0; i < std::min<std::size_t>(links.size(), 4); ++i) {
    names += fmt::format("{}{}", i == 0 ? "" : ", ", cluster->link(links[i]).name);
  }
  return fmt::format("changes nothing in this run: no flow {} its {} links ({}{})",
                     p.failed ? "had to go round" : "crosses", links.size(), names,
                     links.size() > 4 ? ", ..." : "");
}

}  // namespace

std::vector<std::string> idle_perturbations(const config::ExperimentFile& file,
                                            const work::RunResult* result) {
  const auto& list = file.experiment.cluster.perturbations;
  if (list.empty()) {
    return {};
  }
  const Used u = used_in(file.experiment, result, std::ranges::any_of(list, on_links));
  std::map<std::size_t, std::optional<std::string>> reasons;  // entry -> why (all its GPUs')
  for (const Perturbation& p : list) {
    std::optional<std::string> why = identity(p);
    if (!why) {
      why = unused(p, result != nullptr && result->cluster ? &*result->cluster : nullptr, u);
    }
    const auto [it, first] = reasons.try_emplace(p.entry, why);
    if (!first && !why) {
      it->second.reset();  // a draw's entry changes something where one of its GPUs does
    }
  }
  std::vector<std::string> out;
  for (const auto& [entry, why] : reasons) {
    if (why) {
      const std::string at = fmt::format("/perturbations/{}", entry);
      out.push_back(fmt::format("{}: {}: {}",
                                file.origin->describe(nlohmann::json::json_pointer(at)), at,
                                *why));
    }
  }
  return out;
}

}  // namespace hopsim::tools
