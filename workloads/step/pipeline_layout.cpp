// The one layout of a schedule's order (pipeline_layout.hpp).
#include "workloads/step/pipeline_layout.hpp"

#include "sim/assert.hpp"

namespace hopsim::work {
namespace {

// Where one pass of one (stage, micro-batch) ran: its rank and tasks.
struct Ran {
  int rank = -1;
  PlanTaskId first = 0;
  PlanTaskId last = 0;
};

// Per (stage, micro-batch): its forward's and its input gradient's op.
class StagePasses {
 public:
  StagePasses(int stages, int micro_batches)
      : m_(micro_batches),
        forward_(static_cast<std::size_t>(stages) * static_cast<std::size_t>(micro_batches)),
        backward_(forward_.size()) {}

  Ran& forward(int stage, int mb) { return forward_[at(stage, mb)]; }

  Ran& backward(int stage, int mb) { return backward_[at(stage, mb)]; }

 private:
  std::size_t at(int stage, int mb) const {
    return static_cast<std::size_t>(stage) * static_cast<std::size_t>(m_) +
           static_cast<std::size_t>(mb);
  }

  int m_;
  std::vector<Ran> forward_;
  std::vector<Ran> backward_;
};

// `to` waits for `from` and its data; nothing when one op holds both.
void link(Plan& plan, OpSource& source, const Ran& from, const Ran& to, bool forward) {
  HOPSIM_ASSERT(from.rank >= 0 && to.rank >= 0, "an op of the order was never laid");
  if (from.last == to.last) {
    return;
  }
  source.cross(plan, from.rank, to.rank, from.last, to.first, forward);
}

}  // namespace

LaidPipeline lay_pipeline(Plan& plan, const PipeOrder& order, int stages, int micro_batches,
                          OpSource& source) {
  LaidPipeline out(order.size());
  StagePasses passes(stages, micro_batches);
  for (std::size_t r = 0; r < order.size(); ++r) {
    const int rank = static_cast<int>(r);
    for (const PipeOp& op : order[r]) {
      OpTasks tasks = source.add_op(plan, rank, op);
      const Ran ran{rank, tasks.first(), tasks.last()};
      if (const auto f = forward_of(op)) {
        passes.forward(f->stage, f->micro_batch) = ran;
      }
      if (const auto b = input_gradient_of(op)) {
        passes.backward(b->stage, b->micro_batch) = ran;
      }
      out[r].push_back({op, std::move(tasks)});
    }
  }
  for (int mb = 0; mb < micro_batches; ++mb) {
    for (int s = 1; s < stages; ++s) {
      link(plan, source, passes.forward(s - 1, mb), passes.forward(s, mb), true);
    }
    const Ran& last_forward = passes.forward(stages - 1, mb);
    const Ran& last_backward = passes.backward(stages - 1, mb);
    if (last_forward.last != last_backward.last) {
      plan.add_dependency(last_forward.last, last_backward.first);
    }
    for (int s = stages - 1; s > 0; --s) {
      link(plan, source, passes.backward(s, mb), passes.backward(s - 1, mb), false);
    }
  }
  return out;
}

}  // namespace hopsim::work
