// schedule "auto": the pipeline schedules a training step could run, each tried, and the
// fastest whose memory fits kept (workloads/experiment/run.cpp runs them).
#pragma once

#include <string>
#include <vector>

#include "workloads/env/job_env.hpp"
#include "workloads/step/training_step_job.hpp"

namespace hopsim::work {

/// The schedules `job` (schedule auto) may run on its mesh, each a copy of it with the
/// schedule set, in table order, each row with the chunks it offers (ScheduleRow::auto_chunks:
/// 1F1B; interleaved with 2 to 8 chunks per rank while pp x chunks does not exceed the layers,
/// with the job's micro-batch group; ZB-H1, DualPipe (pp even) and DualPipeV on two ranks or
/// more). Shapes a schedule does not allow are left to its check, which names them.
std::vector<TrainingStepJob> schedule_candidates(const TrainingStepJob& job, const JobEnv& env);

/// "1f1b", "interleaved x4", "interleaved x2 in groups of 3", "dualpipe".
std::string schedule_label(const TrainingStepJob& job);

}  // namespace hopsim::work
