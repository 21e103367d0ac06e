// Straggler draws: an experiment's perturbations that name a share of its GPUs rather than the
// GPUs themselves (docs/what-ifs.md, "Stragglers").
#pragma once

#include "workloads/experiment/experiment.hpp"

namespace hopsim::work {

/// Replaces each straggler draw among the cluster's perturbations (`drawn` set, no GPUs yet) by
/// one compute perturbation per GPU drawn: round(share x n) GPUs, at least one, distinct, of the
/// n the workload runs on (its mesh's, or the whole cluster for the kinds that name their GPUs),
/// each at a speed uniform in [speed_min, speed_max]. The draw depends on the experiment's seed
/// and the entry's position alone, the same on every platform; the GPUs come out ascending.
void draw_stragglers(Experiment& experiment);

}  // namespace hopsim::work
