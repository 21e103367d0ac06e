// A layer's backward as zero-bubble schedules split it (ZB-H1, DualPipe): the weight part, its
// weight-gradient kernels (dense and grouped), which nothing downstream waits for, and the
// input part, everything else: the input gradient the previous stage waits for, with the
// communication the weight kernels no longer hide. The unfolded step runs them as they are
// here; the folded step times them from its backward probe (the weight part: the most any
// GPU's weight kernels take; the input part: critical_path.hpp's makespan without them).
#pragma once

#include "workloads/plan/plan.hpp"
#include "workloads/step/pipe_op.hpp"

namespace hopsim::work {

/// Whether `t` is a weight-gradient kernel (a dense or grouped wgrad GEMM): the weight part.
bool weight_kernel(const PlanTask& t);

/// `part` of a layer's `backward` plan: BackwardInput, the tasks but the weight-gradient
/// kernels, each waiting for what it waited for through them; Weight, those kernels alone,
/// each GPU's one after the other (deferred, their inputs are long there); any other work,
/// the whole plan.
Plan backward_part(const Plan& backward, OpWork part);

}  // namespace hopsim::work
