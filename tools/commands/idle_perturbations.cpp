// Perturbations that change nothing: identities, and GPUs and links the run does not use.
#include "tools/commands/idle_perturbations.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

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

// What the cases of an unfolded run use: the GPUs that run a kernel, and the links that their
// flows would cross on the healthy fabric.
struct Used {
  std::vector<char> computes;  // [rank]
  std::vector<char> links;     // [link]
};

Used used_by(const work::RunResult& result, bool need_links) {
  const topo::Cluster& cluster = *result.cluster;
  Used u{std::vector<char>(static_cast<std::size_t>(cluster.gpu_count()), 0),
         std::vector<char>(need_links ? cluster.link_count() : 0, 0)};
  for (const work::CaseResult& c : result.cases) {
    for (const work::PlanTask& t : c.plan.tasks()) {
      if (t.kind == work::PlanTaskKind::Compute) {
        u.computes[t.src.index()] = 1;
      } else if (need_links && t.kind == work::PlanTaskKind::Flow && t.src != t.dst) {
        const auto route = cluster.unfailed_route(t.src, t.dst, t.nics_only);  // outlives span()
        for (const topo::LinkId l : route.span()) {
          u.links[l.index()] = 1;
        }
      }
    }
  }
  return u;
}

// Why a perturbation changes nothing that the run used, if it does not.
std::optional<std::string> unused(const Perturbation& p, const topo::Cluster& cluster,
                                  const Used& u) {
  if (p.part == PerturbedPart::Compute) {
    const bool any = std::ranges::any_of(
        p.gpus, [&](int g) { return u.computes[static_cast<std::size_t>(g)] != 0; });
    return any ? std::nullopt
               : std::optional(fmt::format("changes nothing in this run: {} {} {} no kernel",
                                           p.gpus.size() == 1 ? "GPU" : "GPUs",
                                           fmt::join(p.gpus, ", "),
                                           p.gpus.size() == 1 ? "runs" : "run"));
  }
  if (!on_links(p)) {
    return std::nullopt;
  }
  const std::vector<topo::LinkId> links = cluster.links_of(p);
  if (std::ranges::any_of(links, [&](topo::LinkId l) { return u.links[l.index()] != 0; })) {
    return std::nullopt;
  }
  std::string names;
  for (std::size_t i = 0; i < std::min<std::size_t>(links.size(), 4); ++i) {
    names += fmt::format("{}{}", i == 0 ? "" : ", ", cluster.link(links[i]).name);
  }
  return fmt::format("changes nothing in this run: no flow {} its {} links ({}{})",
                     p.failed ? "had to go round" : "crosses", links.size(), names,
                     links.size() > 4 ? ", ..." : "");
}

}  // namespace

std::vector<std::string> idle_perturbations(const config::ExperimentFile& file,
                                            const work::RunResult& result) {
  const auto& list = file.experiment.cluster.perturbations;
  if (list.empty()) {
    return {};
  }
  const bool whole = work::cases_at_speeds(file.experiment) && result.cluster.has_value();
  const bool need_links = whole && std::ranges::any_of(list, on_links);
  const Used u = whole ? used_by(result, need_links) : Used{};
  std::map<std::size_t, std::optional<std::string>> reasons;  // entry -> why (all its GPUs')
  for (const Perturbation& p : list) {
    std::optional<std::string> why = identity(p);
    if (!why && whole) {
      why = unused(p, *result.cluster, u);
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
