// The step simulated twice, once per schedule; each run's MoE layer timing from its details.
#include "tools/commands/ep_overlap_figures.hpp"

#include <algorithm>
#include <cstdint>
#include <string_view>

#include <fmt/format.h>

#include "workloads/experiment/run.hpp"
#include "workloads/step/schedule_table.hpp"

namespace hopsim::tools {

namespace {

// The step of `exp` under `schedule`, simulated; null when it cannot run.
std::optional<work::CaseResult> step_under(const work::Experiment& exp, std::string_view schedule) {
  work::Experiment one = exp;
  auto& job = std::get<work::TrainingStepJob>(one.job);
  job.schedule = work::schedule_named(schedule);
  one.validation.reset();
  work::RunOptions options;
  options.watch_links = 0;
  options.probe_threads = 1;
  work::RunResult result = work::run(one, options);
  if (!result.ok() || result.cases.empty() || result.cases.front().step() == nullptr) {
    return std::nullopt;
  }
  return std::move(result.cases.front());
}

}  // namespace

std::optional<EpOverlapFigures> ep_overlap_figures(const work::Experiment& exp,
                                                   const work::TrainingStepJob& job) {
  // The schedule without the overlap and with it, from the overlap row's `overlaps`.
  const auto rows = work::pipe_schedules();
  const auto overlap = std::ranges::find_if(rows, [&](const work::ScheduleRow* r) {
    return !r->overlaps.empty() &&
           (job.schedule->name == r->name || job.schedule->name == r->overlaps);
  });
  if (!job.layer.moe || job.schedule_auto || overlap == rows.end()) {
    return std::nullopt;
  }
  const struct {
    std::string_view without;
    std::string_view with;
  } pair{(*overlap)->overlaps, (*overlap)->name};
  // The overlap first: where its schedule refuses the shape (1f1b_ep_overlap at pp > 1) that
  // costs a check, not a simulated step.
  const std::optional<work::CaseResult> with = step_under(exp, pair.with);
  if (!with) {
    return std::nullopt;
  }
  const std::optional<work::CaseResult> without = step_under(exp, pair.without);
  if (!without) {
    return std::nullopt;
  }
  EpOverlapFigures f;
  f.schedule_without = pair.without;
  f.schedule_with = pair.with;
  f.step_without_s = without->summary.step.seconds();
  f.step_with_s = with->summary.step.seconds();
  const auto& layers = with->step()->layers;
  const auto moe = std::ranges::find_if(layers, [](const work::LayerTiming& t) { return t.moe; });
  if (moe != layers.end()) {
    f.moe_pair_s = moe->pair.seconds();
    f.moe_forward_backward_s = (moe->forward + moe->backward).seconds();
    f.pair_simulated = moe->pair < moe->forward + moe->backward;
    f.ep_exposed_forward_s = moe->ep_exposed_forward.seconds();
    f.ep_exposed_backward_s = moe->ep_exposed_backward.seconds();
    f.moe_pair_hidden_s = f.moe_forward_backward_s - f.moe_pair_s;
  }
  if (!f.pair_simulated) {
    const std::int64_t held = job.layer.moe->comm_sms;
    const std::int64_t sms = exp.cluster.gpu.sms;
    if (exp.parallel.cp > 1) {
      f.note = "the MoE pair is simulated with cp 1 only: here it costs forward + backward, and "
               "the overlap hides nothing";
    } else if (held > 0 && held < sms) {
      // A kernel beside an exchange runs on the SMs left while the exchange runs; in a
      // compute-heavy pair that can cost more than the exchanges hide.
      f.note = fmt::format(
          "the MoE pair is no faster than its forward + backward: the {} SMs its exchanges hold "
          "(workload.moe.comm_sms) slow each kernel beside one by up to {:.3f} (SMs / (SMs - "
          "comm_sms)) while it runs, which can outweigh what the exchanges hide",
          held, job.layer.moe->compute_slowdown(sms));
    } else {
      f.note = "the MoE pair is no faster than its forward + backward: nothing to hide";
    }
  }
  return f;
}

}  // namespace hopsim::tools
