// The candidates of schedule "auto".
#include "workloads/step/schedule_choice.hpp"

#include <fmt/format.h>

namespace hopsim::work {

std::vector<TrainingStepJob> schedule_candidates(const TrainingStepJob& job, const JobEnv& env) {
  const int p = static_cast<int>(env.mesh.spec().pp);
  const std::int64_t layers = env.model != nullptr ? env.model->layers : 0;
  std::vector<TrainingStepJob> out;
  for (const ScheduleRow* row : pipe_schedules()) {
    for (const int chunks : row->auto_chunks(p, layers)) {
      TrainingStepJob one = job;
      one.schedule_auto = false;
      one.schedule = row;
      one.virtual_stages = chunks;
      one.microbatch_group = row->takes_group ? job.microbatch_group : 0;
      out.push_back(one);
    }
  }
  return out;
}

std::string schedule_label(const TrainingStepJob& job) {
  if (job.schedule->takes_chunks) {
    return fmt::format("{} x{}{}", job.schedule->name, job.virtual_stages,
                       job.microbatch_group > 0
                           ? fmt::format(" in groups of {}", job.microbatch_group)
                           : std::string());
  }
  return std::string(job.schedule->name);
}

}  // namespace hopsim::work
