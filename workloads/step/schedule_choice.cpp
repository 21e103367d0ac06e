// The candidates of schedule "auto".
#include "workloads/step/schedule_choice.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace hopsim::work {

std::vector<TrainingStepJob> schedule_candidates(const TrainingStepJob& job, const JobEnv& env) {
  const std::int64_t p = env.mesh.spec().pp;
  const std::int64_t layers = env.model != nullptr ? env.model->layers : 0;
  std::vector<TrainingStepJob> out;
  TrainingStepJob one = job;
  one.schedule_auto = false;
  one.schedule = PipeSchedule::OneFOneB;
  one.virtual_stages = 1;
  one.microbatch_group = 0;
  out.push_back(one);
  if (p < 2) {
    return out;  // one stage: no pipeline to interleave or run both ways
  }
  constexpr int kMostChunks = 8;
  for (int v = 2; v <= kMostChunks && p * v <= layers; ++v) {
    TrainingStepJob inter = one;
    inter.schedule = PipeSchedule::Interleaved;
    inter.virtual_stages = v;
    inter.microbatch_group = job.microbatch_group;
    out.push_back(inter);
  }
  if (p % 2 == 0) {
    TrainingStepJob dual = one;
    dual.schedule = PipeSchedule::DualPipe;
    out.push_back(dual);
  }
  return out;
}

std::string schedule_label(const TrainingStepJob& job) {
  if (job.schedule == PipeSchedule::Interleaved) {
    return fmt::format("interleaved x{}{}", job.virtual_stages,
                       job.microbatch_group > 0
                           ? fmt::format(" in groups of {}", job.microbatch_group)
                           : std::string());
  }
  return std::string(pipe_schedule_name(job.schedule));
}

}  // namespace hopsim::work
