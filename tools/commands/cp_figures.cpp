// The ring's balance, one rank's ring steps and the attention phase of a CP layer's run.
#include "tools/commands/cp_figures.hpp"

#include <algorithm>

namespace hopsim::tools {
double max_over_min(const std::vector<double>& v) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return lo == v.end() || *lo <= 0 ? 0.0 : *hi / *lo;
}

namespace {

// Ring steps of one rank in the first layer's forward pass: compute, the transfer it sends, and
// how long its compute stream waited since its previous step ended.
std::vector<CpRingStep> ring_steps(const work::CaseResult& c, const work::CpDetails& cp,
                                   int rank) {
  std::vector<CpRingStep> steps;
  const auto& compute = cp.step_compute[static_cast<std::size_t>(rank)];
  const auto& send = cp.step_send[static_cast<std::size_t>(rank)];
  Time previous_end;
  for (std::size_t j = 0; j < compute.size(); ++j) {
    const sim::TaskTimes& t = c.outcome.times[compute[j]];
    CpRingStep step;
    step.compute_s = (t.end - t.start).seconds();
    if (j < send.size()) {
      const sim::TaskTimes& f = c.outcome.times[send[j]];
      step.transfer_s = (f.end - f.start).seconds();
    }
    step.wait_s = j == 0 ? 0.0 : std::max(0.0, (t.start - previous_end).seconds());
    previous_end = t.end;
    steps.push_back(step);
  }
  return steps;
}

// From the end of the rank's last ring step until its last partial output arrived (pass-Q).
std::optional<double> output_all_to_all(const work::CaseResult& c, const work::CpDetails& cp,
                                        int rank) {
  const auto& flows = cp.step_output[static_cast<std::size_t>(rank)];
  const auto& compute = cp.step_compute[static_cast<std::size_t>(rank)];
  if (flows.empty() || compute.empty()) {
    return std::nullopt;
  }
  const Time last_step = c.outcome.times[compute.back()].end;
  Time arrived = last_step;
  for (const work::PlanTaskId f : flows) {
    arrived = std::max(arrived, c.outcome.times[f].end);
  }
  return (arrived - last_step).seconds();
}

}  // namespace

// The balance, the attention phase summed over passes and layers, the ring steps.
CpFigures cp_figures(const work::CaseResult& c, const work::CpDetails& cp, std::int64_t layers,
                     const std::optional<work::Validation>& validation) {
  CpFigures f;
  const std::vector<int>& units = cp.work_units_per_rank;
  if (!units.empty()) {
    const auto [lo, hi] = std::minmax_element(units.begin(), units.end());
    f.min_work_units = *lo;
    f.max_work_units = *hi;
  }
  f.work_units_max_over_min = max_over_min(std::vector<double>(units.begin(), units.end()));
  f.flops_max_over_min = max_over_min(cp.flops_per_rank);
  const work::Summary& s = c.summary;
  Time exposed;
  Time compute;
  for (std::size_t p = 0; p < s.phases.size(); ++p) {
    if (c.plan.phases()[p].kind == work::PhaseKind::Attention) {
      exposed += s.phases[p].exposed;
      compute += s.phases[p].compute;
    }
  }
  f.attention_compute_s = compute.seconds();
  f.attention_exposed_comm_s = exposed.seconds();
  f.layer_time_s = s.step.seconds() / static_cast<double>(layers);
  f.steps = ring_steps(c, cp, cp.steps_gpu);
  f.output_all_to_all_s = output_all_to_all(c, cp, cp.steps_gpu);
  if (validation) {
    f.validation = validation_figures(*validation, s.step.seconds());
  }
  return f;
}

}  // namespace hopsim::tools
