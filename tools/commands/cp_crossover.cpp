// Pass-KV against pass-Q, simulated: one layer per point, bisection over the new tokens.
#include "tools/commands/cp_crossover.hpp"

#include <variant>

#include "tools/commands/cp_figures.hpp"
#include "workloads/experiment/run.hpp"
#include "workloads/layer/case_details.hpp"

namespace hopsim::tools {

std::optional<PrefillParts> prefill_parts(const work::Experiment& exp,
                                          work::CpAlgorithm algorithm, std::int64_t new_tokens) {
  work::Experiment one = exp;
  auto* job = std::get_if<work::AttentionLayerJob>(&one.job);
  if (job == nullptr) {
    return std::nullopt;
  }
  const std::int64_t context = job->seq_len + job->cached_tokens;
  job->seq_len = new_tokens;
  job->cached_tokens = context - new_tokens;
  job->cp.algorithm = algorithm;
  job->layers = 1;
  job->request_overhead = Time{};
  one.validation.reset();
  work::RunOptions options;
  options.watch_links = 0;
  options.probe_threads = 1;
  const work::RunResult result = work::run(one, options);
  if (!result.ok() || result.cases.empty()) {
    return std::nullopt;
  }
  const work::CaseResult& c = result.cases.front();
  const work::CpDetails* cp = work::cp_details(c.details);
  if (cp == nullptr) {
    return std::nullopt;
  }
  const CpFigures f = cp_figures(c, *cp, 1, std::nullopt);
  PrefillParts parts;
  parts.layer_s = f.layer_time_s;
  for (const CpRingStep& s : f.steps) {
    parts.attention_compute_s += s.compute_s;
    parts.exposed_ring_comm_s += s.wait_s;
  }
  parts.output_all_to_all_s = f.output_all_to_all_s.value_or(0.0);
  return parts;
}

namespace {

// Pass-KV's layer minus pass-Q's at k grid steps of new tokens; nullopt when either cannot run.
std::optional<double> kv_minus_q(const work::Experiment& exp, std::int64_t tokens,
                                 SimulatedCrossover& out) {
  const auto kv = prefill_parts(exp, work::CpAlgorithm::Ring, tokens);
  const auto q = prefill_parts(exp, work::CpAlgorithm::RingPassQ, tokens);
  out.simulations += 2;
  if (!kv || !q) {
    return std::nullopt;
  }
  return kv->layer_s - q->layer_s;
}

}  // namespace

std::optional<SimulatedCrossover> simulated_crossover(const work::Experiment& exp) {
  const auto* job = std::get_if<work::AttentionLayerJob>(&exp.job);
  if (job == nullptr || job->mode != work::LayerMode::Prefill || exp.parallel.cp < 2) {
    return std::nullopt;
  }
  SimulatedCrossover out;
  out.grid_tokens = 2 * exp.parallel.cp * exp.parallel.tp;
  const std::int64_t context = job->seq_len + job->cached_tokens;
  std::int64_t lo = 1;
  std::int64_t hi = context / out.grid_tokens;
  auto d_lo = kv_minus_q(exp, lo * out.grid_tokens, out);
  auto d_hi = kv_minus_q(exp, hi * out.grid_tokens, out);
  if (!d_lo || !d_hi || hi < 2) {
    return std::nullopt;
  }
  if (*d_lo <= 0 || *d_hi > 0) {
    out.miss_rate = *d_lo <= 0 ? 0.0 : 1.0;
    return out;
  }
  while (hi - lo > 1) {  // pass-KV slower at lo, no slower at hi
    const std::int64_t mid = lo + (hi - lo) / 2;
    const auto d = kv_minus_q(exp, mid * out.grid_tokens, out);
    if (!d) {
      return std::nullopt;
    }
    (*d > 0 ? lo : hi) = mid;
    (*d > 0 ? d_lo : d_hi) = d;
  }
  const double k = static_cast<double>(lo) + *d_lo / (*d_lo - *d_hi);
  out.miss_rate = k * static_cast<double>(out.grid_tokens) / static_cast<double>(context);
  return out;
}

}  // namespace hopsim::tools
