// Pass-KV and pass-Q rings: per step a compute task per position and a flow to the next one.
#include "workloads/cp/ring_attention.hpp"

#include <fmt/format.h>

namespace hopsim::work {
namespace {

class Ring {
 public:
  Ring(Plan& plan, const RingInput& in)
      : plan_(plan), in_(in), r_(static_cast<int>(in.gpus.size())) {
    tasks_.compute.resize(static_cast<std::size_t>(r_));
    tasks_.send.resize(static_cast<std::size_t>(r_));
    tasks_.done.resize(static_cast<std::size_t>(r_));
    tasks_.returned.resize(static_cast<std::size_t>(r_));
    tasks_.merge.resize(static_cast<std::size_t>(r_));
  }

  int size() const { return r_; }
  int next(int p) const { return (p + 1) % r_; }
  int prev(int p) const { return (p + r_ - 1) % r_; }
  /// The position whose block p holds at step j.
  int origin(int p, int j) const { return ((p - j) % r_ + r_) % r_; }

  topo::GpuId gpu(int p) const { return in_.gpus[static_cast<std::size_t>(p)]; }

  PlanTaskId& compute(int p, int j) {
    return tasks_.compute[static_cast<std::size_t>(p)][static_cast<std::size_t>(j)];
  }
  PlanTaskId& send(int p, int j) {
    return tasks_.send[static_cast<std::size_t>(p)][static_cast<std::size_t>(j)];
  }
  std::vector<PlanTaskId>& done(int p) { return tasks_.done[static_cast<std::size_t>(p)]; }
  std::vector<PlanTaskId>& returned(int p) {
    return tasks_.returned[static_cast<std::size_t>(p)];
  }
  const std::vector<PlanTaskId>& ready(int p) const {
    return in_.ready[static_cast<std::size_t>(p)];
  }

  /// Step j's merge at p (in.merge), or its compute where there is none.
  PlanTaskId last(int p, int j) {
    return in_.merge ? tasks_.merge[static_cast<std::size_t>(p)][static_cast<std::size_t>(j)]
                     : compute(p, j);
  }

  /// Step j's compute at p, after `deps`; a step with nothing to compute is a zero delay.
  PlanTaskId add_compute(int p, int j, std::span<const PlanTaskId> deps) {
    return add_task(p, in_.compute(p, j), deps);
  }

  PlanTaskId add_task(int p, ComputeTask task, std::span<const PlanTaskId> deps) {
    task.gpu = gpu(p);
    task.phase = in_.phase;
    task.stream = kComputeStream;
    const PlanTaskId id = task.duration == Time{} && task.flops.n == 0
                              ? plan_.add_delay(gpu(p), Time{}, in_.phase)
                              : plan_.add_compute(task);
    for (PlanTaskId d : deps) {
      plan_.add_dependency(d, id);
    }
    return id;
  }

  PlanTaskId add_flow(int from, int to, std::int64_t bytes, std::string_view what, int j,
                      std::span<const PlanTaskId> deps) {
    const PlanTaskId id = plan_.add_flow(gpu(from), gpu(to), Bytes{bytes}, in_.phase);
    plan_.set_label(id, fmt::format("{} step {}", what, j));
    if (in_.efficiency) {
      plan_.set_efficiency(id, in_.efficiency(gpu(from), gpu(to)));
    }
    for (PlanTaskId d : deps) {
      plan_.add_dependency(d, id);
    }
    return id;
  }

  /// Step j's block transfer p -> p+1 (j < r-1): once p holds it and both ends finished
  /// step j-1's compute.
  void rotate(int p, int j, std::string_view what) {
    std::vector<PlanTaskId> deps;
    if (j == 0) {
      deps = ready(p);
      deps.insert(deps.end(), ready(next(p)).begin(), ready(next(p)).end());
    } else {
      deps = {send(prev(p), j - 1), compute(p, j - 1), compute(next(p), j - 1)};
    }
    send(p, j) = add_flow(p, next(p), in_.block_bytes(origin(p, j)), what, j, deps);
  }

  /// Every step's compute and rotation (the transfers of r-1 steps).
  void run_steps(std::string_view what, std::size_t sends) {
    for (int p = 0; p < r_; ++p) {
      tasks_.compute[static_cast<std::size_t>(p)].resize(static_cast<std::size_t>(r_));
      tasks_.send[static_cast<std::size_t>(p)].resize(sends);
      tasks_.merge[static_cast<std::size_t>(p)].resize(in_.merge ? static_cast<std::size_t>(r_)
                                                                 : 0);
    }
    for (int j = 0; j < r_; ++j) {
      for (int p = 0; p < r_; ++p) {
        if (j == 0) {
          compute(p, 0) = add_compute(p, 0, ready(p));
        } else {
          const PlanTaskId arrived[] = {send(prev(p), j - 1), last(p, j - 1)};
          compute(p, j) = add_compute(p, j, std::span(arrived, in_.merge ? 2 : 1));
        }
        if (in_.merge) {
          const PlanTaskId after[] = {compute(p, j)};
          tasks_.merge[static_cast<std::size_t>(p)][static_cast<std::size_t>(j)] =
              add_task(p, in_.merge(p, j), after);
        }
      }
      if (j + 1 < r_) {
        for (int p = 0; p < r_; ++p) {
          rotate(p, j, what);
        }
      }
    }
  }

  RingTasks take() { return std::move(tasks_); }

 private:
  Plan& plan_;
  const RingInput& in_;
  int r_;
  RingTasks tasks_;
};

}  // namespace

RingTasks ring_pass_kv_forward(Plan& plan, const RingInput& in) {
  Ring ring(plan, in);
  const int r = ring.size();
  ring.run_steps("kv", static_cast<std::size_t>(r - 1));
  for (int p = 0; p < r; ++p) {
    ring.done(p) = {ring.compute(p, r - 1)};
  }
  return ring.take();
}

RingTasks ring_pass_kv_backward(Plan& plan, const RingInput& in) {
  Ring ring(plan, in);
  const int r = ring.size();
  ring.run_steps("kv", static_cast<std::size_t>(r - 1));
  if (r == 1) {
    ring.done(0) = {ring.last(0, 0)};
    return ring.take();
  }
  // dK/dV partial sums: p adds its share of block (p - j) and passes the sum on; after r hops
  // (the last from the block's predecessor) it is back with its owner.
  std::vector<std::vector<PlanTaskId>> dkv(static_cast<std::size_t>(r),
                                           std::vector<PlanTaskId>(static_cast<std::size_t>(r)));
  // With merges, p's merge of step j adds into the partial sum that arrived (its sends wait
  // for the merge instead of the compute).
  for (int j = 0; j < r; ++j) {
    for (int p = 0; p < r; ++p) {
      std::vector<PlanTaskId> deps = {ring.last(p, j)};
      if (j > 0) {
        const PlanTaskId arrived =
            dkv[static_cast<std::size_t>(ring.prev(p))][static_cast<std::size_t>(j - 1)];
        deps.push_back(arrived);
        if (in.merge) {
          plan.add_dependency(arrived, ring.last(p, j));
        }
      }
      dkv[static_cast<std::size_t>(p)][static_cast<std::size_t>(j)] = ring.add_flow(
          p, ring.next(p), in.block_bytes(ring.origin(p, j)), "dkv", j, deps);
    }
  }
  for (int p = 0; p < r; ++p) {
    ring.done(p) = {ring.last(p, r - 1),
                    dkv[static_cast<std::size_t>(ring.prev(p))][static_cast<std::size_t>(r - 1)]};
  }
  RingTasks out = ring.take();
  for (int p = 0; p < r; ++p) {  // report the dK/dV flows with the K/V ones
    auto& sends = out.send[static_cast<std::size_t>(p)];
    sends.insert(sends.end(), dkv[static_cast<std::size_t>(p)].begin(),
                 dkv[static_cast<std::size_t>(p)].end());
  }
  return out;
}

RingTasks ring_pass_q_forward(Plan& plan, const RingInput& in,
                              const std::function<std::int64_t(int p)>& output_bytes) {
  Ring ring(plan, in);
  const int r = ring.size();
  ring.run_steps("q", static_cast<std::size_t>(r - 1));
  for (int p = 0; p < r; ++p) {
    ring.done(p).push_back(ring.compute(p, 0));
  }
  // After the ring, an all-to-all takes each partial output home (Meta's pass-Q): a pair
  // exchanges once both have finished their last step; the owner merges them all.
  for (int j = 1; j < r; ++j) {
    for (int p = 0; p < r; ++p) {
      const int owner = ring.origin(p, j);
      const PlanTaskId both_done[] = {ring.compute(p, r - 1), ring.compute(owner, r - 1)};
      const PlanTaskId flow = ring.add_flow(p, owner, output_bytes(owner), "a2a", j, both_done);
      ring.done(owner).push_back(flow);
      ring.returned(owner).push_back(flow);
    }
  }
  return ring.take();
}

}  // namespace hopsim::work
