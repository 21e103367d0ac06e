// Reads /workload: the kind, then that kind's parser, from one table indexed like work::Job.
#pragma once

#include <cstdint>

#include "tools/config/node.hpp"
#include "workloads/experiment/job.hpp"
#include "workloads/model/model.hpp"

namespace hopsim::config {

/// What a workload parser may need besides its own keys.
struct JobParseContext {
  const work::ModelSpec* model = nullptr;  ///< null when the experiment names none
  std::uint64_t seed = 1;
};

/// The parser of one kind; each kind defines its specialization (a missing one fails to link).
template <class J>
J parse_job(const Node& workload, const JobParseContext& ctx);

/// /workload: "kind" picks the parser. Types and ranges of single keys are checked here;
/// what keys mean together is the job's check().
work::Job parse_workload(const Node& workload, const JobParseContext& ctx);

}  // namespace hopsim::config
