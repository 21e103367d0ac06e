// A training step's throughput, its busiest pipeline rank's timeline and its memory peak.
#include "tools/commands/step_figures.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "tools/commands/throughput_figures.hpp"

namespace hopsim::tools {
namespace {

// One pipeline rank's ops and the step-plan tasks after them.
struct RankTimeline {
  Time ops;  // forward and backward ops
  // The ops by pass: forwards, backwards (DualPipe: input parts where the weight part is
  // deferred), deferred weight parts, overlapped forward-backward pairs.
  Time forward;
  Time backward;
  Time weight;
  Time pair;
  Time last_op_end;
  // The ops' intervals, and where the pipeline's steady state begins (the first backward or
  // pair starts) and ends (the last forward or pair ends).
  std::vector<std::pair<Time, Time>> intervals;
  Time first_backward = Time::max();
  Time last_forward;
  Time dp_exposed;  // from the last backward's end to the optimizer's start
  Time optimizer;
  Time param_gather;
  Time step_overhead;  // the framework's fixed cost at the step's end
};

// One op of a rank's pipeline, from `start` to `end`, in `pass`.
void add_op(RankTimeline& t, Time start, Time end, work::PhasePass pass) {
  t.ops += end - start;
  t.last_op_end = std::max(t.last_op_end, end);
  t.intervals.emplace_back(start, end);
  (pass == work::PhasePass::Fwd      ? t.forward
   : pass == work::PhasePass::Weight ? t.weight
   : pass == work::PhasePass::Pair   ? t.pair
                                     : t.backward) += end - start;
  if (pass == work::PhasePass::Bwd || pass == work::PhasePass::Pair) {
    t.first_backward = std::min(t.first_backward, start);
  }
  if (pass == work::PhasePass::Fwd || pass == work::PhasePass::Pair) {
    t.last_forward = std::max(t.last_forward, end);
  }
}

// The timeline of the pipeline rank simulated on `gpu`, from its compute and delay tasks (and
// the spans of ops that partial folding ran as real layers).
RankTimeline timeline(const work::CaseResult& c, topo::GpuId gpu) {
  RankTimeline t;
  const auto& tasks = c.plan.tasks();
  for (const work::OpSpan& op : c.step()->op_spans) {
    if (op.gpu == gpu) {
      add_op(t, c.outcome.times[op.first].start, c.outcome.times[op.last].end,
             op.forward ? work::PhasePass::Fwd : work::PhasePass::Bwd);
    }
  }
  Time optimizer_start = Time::max();
  Time optimizer_end;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const work::PlanTask& task = tasks[i];
    if (task.src != gpu || task.kind == work::PlanTaskKind::Flow) {
      continue;
    }
    const sim::TaskTimes& tt = c.outcome.times[i];
    const work::Phase& phase = c.plan.phases()[task.phase];
    if (phase.kind == work::PhaseKind::Pipeline) {
      add_op(t, tt.start, tt.end, phase.when);
    } else if (phase.kind == work::PhaseKind::Optimizer) {  // its parts, first to last
      optimizer_start = std::min(optimizer_start, tt.start);
      optimizer_end = std::max(optimizer_end, tt.end);
    } else if (phase.kind == work::PhaseKind::ParamGather) {
      t.param_gather = tt.end - tt.start;
    } else if (phase.kind == work::PhaseKind::StepOverhead) {
      t.step_overhead = tt.end - tt.start;
    }
  }
  if (optimizer_end > Time{}) {
    t.optimizer = optimizer_end - optimizer_start;
  } else {
    optimizer_start = Time{};
  }
  t.dp_exposed = optimizer_start > t.last_op_end ? optimizer_start - t.last_op_end : Time{};
  return t;
}

// A window of a rank's pipeline: its length and how much of it the rank's ops left idle.
PipelineWindow window(const RankTimeline& t, Time from, Time to) {
  if (to < from) {
    to = from;
  }
  Time busy;
  for (const auto& [start, end] : t.intervals) {
    const Time a = std::max(start, from);
    const Time b = std::min(end, to);
    if (b > a) {
      busy += b - a;
    }
  }
  return {(to - from).seconds(), (to - from - busy).seconds()};
}

// Warm-up (until the first backward), steady state (until the last forward ends), cool-down
// (until the last op ends), each with the time the rank idled in it.
PipelinePhases pipeline_phases(const RankTimeline& t) {
  const Time steady_from = t.first_backward == Time::max() ? t.last_op_end : t.first_backward;
  const Time steady_to = std::max(steady_from, t.last_forward);
  return {window(t, Time{}, steady_from), window(t, steady_from, steady_to),
          window(t, steady_to, t.last_op_end)};
}

// The exposed layer communication inside pipeline rank `rank`'s ops, per kind: per layer and
// micro-batch times its layers of that kind, and ZeRO-3's parameter gathers left unhidden.
std::map<std::string, double> layer_exposed(const work::StepDetails& d, std::size_t rank) {
  std::map<std::string, double> exposed;
  const std::int64_t moe_on_rank = d.rank_moe_layers[rank];
  const std::int64_t layers_of_rank = d.rank_layers[rank];
  for (const work::LayerTiming& lt : d.layers) {
    const std::int64_t count = lt.moe ? moe_on_rank : layers_of_rank - moe_on_rank;
    for (const auto& [kind, time] : lt.exposed) {
      exposed[kind] +=
          time.seconds() * static_cast<double>(count) * static_cast<double>(d.micro_batches);
    }
  }
  if (rank < d.gather_exposed.size() && d.gather_exposed[rank] > Time{}) {
    exposed["param_gather"] += d.gather_exposed[rank].seconds();
  }
  return exposed;
}

// The busiest pipeline rank (the most forward and backward work) of a folded step and where
// its step of `step` seconds went.
StepBreakdown breakdown(const work::CaseResult& c, double step) {
  const work::StepDetails& d = *c.step();
  std::size_t rank = 0;
  std::vector<RankTimeline> lines;
  for (std::size_t r = 0; r < d.representatives.size(); ++r) {
    lines.push_back(timeline(c, d.representatives[r]));
    if (lines.back().ops > lines[rank].ops) {
      rank = r;
    }
  }
  const RankTimeline& t = lines[rank];
  StepBreakdown b;
  b.pipeline_rank = static_cast<int>(rank);
  b.gpu = d.representatives[rank].value();
  b.forward_backward_s = t.ops.seconds();
  b.ops_by_pass_s = {{"forward", t.forward.seconds()},
                     {"backward", t.backward.seconds()},
                     {"backward_weight", t.weight.seconds()},
                     {"pair", t.pair.seconds()}};
  if (!pairs(d)) {  // overlapped pairs hide what a layer alone shows
    b.exposed_layer_comm_s = layer_exposed(d, rank);
    double exposed_in_ops = 0;
    for (const auto& [kind, s] : *b.exposed_layer_comm_s) {
      exposed_in_ops += s;
    }
    b.compute_s = b.forward_backward_s - exposed_in_ops;
  }
  // Summed in picoseconds first: a step with no bubble shows 0, not a rounding residue.
  const Time busy = t.ops + t.dp_exposed + t.optimizer + t.param_gather + t.step_overhead;
  b.bubble_s = std::max(0.0, step - busy.seconds());
  b.bubble_fraction = step > 0 ? b.bubble_s / step : 0.0;
  b.phases = pipeline_phases(t);
  b.dp_exposed_s = t.dp_exposed.seconds();
  b.optimizer_s = t.optimizer.seconds();
  b.param_gather_s = t.param_gather.seconds();
  b.step_overhead_s = t.step_overhead.seconds();
  return b;
}

// The largest pipeline rank's memory per GPU and whether it fits in HBM.
MemoryPeak memory_peak(const work::StepDetails& d) {
  double peak = 0;
  for (const work::StageMemory& m : d.memory) {
    peak = std::max(peak, m.total());
  }
  return {gb(d.hbm_bytes), gb(peak), d.hbm_bytes <= 0 || peak <= d.hbm_bytes};
}

}  // namespace

// Throughput over the GPUs, the breakdown of a folded step, the memory peak, the validation.
StepFigures step_figures(const work::CaseResult& c,
                         const std::optional<work::Validation>& validation) {
  const work::StepDetails& d = *c.step();
  const double step = c.summary.step.seconds();
  StepFigures f;
  if (const std::optional<ThroughputFigures> t = throughput_figures(c)) {
    f.tokens_per_s_per_gpu = t->tokens_per_s_per_gpu;
    f.model_tflops_per_gpu = t->model_tflops_per_gpu;
    f.mfu = t->mfu;
  }
  if (!d.layers.empty()) {
    f.breakdown = breakdown(c, step);
  }
  f.memory = memory_peak(d);
  if (validation) {
    const bool tokens = validation->metric == "tokens_per_s_per_gpu";  // else model TFLOPs
    f.validation =
        validation_figures(*validation, tokens ? f.tokens_per_s_per_gpu : f.model_tflops_per_gpu);
  }
  return f;
}

// The report's names of the two layer kinds.
bool pairs(const work::StepDetails& d) {
  const work::ScheduleRow* row = work::schedule_named(d.schedule);
  return row != nullptr && row->pairs;
}

std::string_view layer_kind(bool moe) {
  return moe ? "moe" : "dense";
}

// Compute over communication of the layer's busiest GPU.
std::optional<double> compute_comm_ratio(const work::LayerTiming& layer) {
  if (layer.comm > Time{}) {
    return layer.compute.seconds() / layer.comm.seconds();
  }
  return std::nullopt;
}

// Decimal gigabytes.
double gb(double bytes) {
  return bytes / 1e9;
}

}  // namespace hopsim::tools
