// The training step's report section.
#include "tools/commands/step_section.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace hopsim::tools {
namespace {

using Json = nlohmann::ordered_json;

// Where one pipeline rank's step went. Its ops' times include each layer's own exposed TP, CP
// and EP communication (split out below from the simulated layers); the rest is what the
// step plan shows: waiting on the pipeline (bubble, activation transfers), gradient sync not
// hidden under the backward, the optimizer, the parameter all-gather.
struct RankTimeline {
  Time ops;             // forward and backward ops
  Time last_op_end;
  // The ops' intervals, and where the pipeline's steady state begins (the first backward or
  // pair starts) and ends (the last forward or pair ends).
  std::vector<std::pair<Time, Time>> intervals;
  Time first_backward = Time::max();
  Time last_forward;
  Time dp_exposed;      // from the last backward's end to the optimizer's start
  Time optimizer;
  Time param_gather;
};

RankTimeline timeline(const work::CaseResult& c, int gpu) {
  RankTimeline t;
  const auto& tasks = c.plan.tasks();
  Time optimizer_start;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const work::PlanTask& task = tasks[i];
    if (task.src != gpu || task.kind == work::PlanTaskKind::Flow) {
      continue;
    }
    const sim::TaskTimes& tt = c.outcome.times[i];
    const std::string& phase = c.plan.phases()[task.phase].name;
    if (phase == "pipeline") {
      t.ops += tt.end - tt.start;
      t.last_op_end = std::max(t.last_op_end, tt.end);
      t.intervals.emplace_back(tt.start, tt.end);
      const std::string& pass = c.plan.phases()[task.phase].pass;
      if (pass == "bwd" || pass == "pair") {
        t.first_backward = std::min(t.first_backward, tt.start);
      }
      if (pass == "fwd" || pass == "pair") {
        t.last_forward = std::max(t.last_forward, tt.end);
      }
    } else if (phase == "optimizer") {
      t.optimizer = tt.end - tt.start;
      optimizer_start = tt.start;
    } else if (phase == "param_gather") {
      t.param_gather = tt.end - tt.start;
    }
  }
  t.dp_exposed = optimizer_start > t.last_op_end ? optimizer_start - t.last_op_end : Time{};
  return t;
}

double gb(double bytes) { return bytes / 1e9; }

// A window of a rank's pipeline: its length and how much of it the rank's ops left idle.
Json window(const RankTimeline& t, Time from, Time to) {
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
  return {{"s", (to - from).seconds()}, {"idle_s", (to - from - busy).seconds()}};
}

// Warm-up (until the first backward), steady state (until the last forward ends), cool-down
// (until the last op ends), each with the time the rank idled in it.
Json pipeline_phases(const RankTimeline& t) {
  const Time steady_from = t.first_backward == Time::max() ? t.last_op_end : t.first_backward;
  const Time steady_to = std::max(steady_from, t.last_forward);
  return {{"warm_up", window(t, Time{}, steady_from)},
          {"steady", window(t, steady_from, steady_to)},
          {"cool_down", window(t, steady_to, t.last_op_end)}};
}

// The busiest pipeline rank (the most forward and backward work) of a folded step and where
// its step went.
Json breakdown(const work::CaseResult& c, double step) {
  const work::StepDetails& d = *c.step();
  int rank = 0;
  std::vector<RankTimeline> lines;
  for (std::size_t r = 0; r < d.representatives.size(); ++r) {
    lines.push_back(timeline(c, d.representatives[r]));
    if (lines.back().ops > lines[static_cast<std::size_t>(rank)].ops) {
      rank = static_cast<int>(r);
    }
  }
  const RankTimeline& t = lines[static_cast<std::size_t>(rank)];
  // The exposed layer communication inside its ops: per layer kind, per layer and micro-batch.
  std::map<std::string, double> layer_exposed;
  const auto ri = static_cast<std::size_t>(rank);
  const std::int64_t moe_on_rank = d.rank_moe_layers[ri];
  const std::int64_t layers_of_rank = d.rank_layers[ri];
  for (const work::LayerTiming& lt : d.layers) {
    const std::int64_t count = lt.moe ? moe_on_rank : layers_of_rank - moe_on_rank;
    for (const auto& [kind, time] : lt.exposed) {
      layer_exposed[kind] +=
          time.seconds() * static_cast<double>(count) * static_cast<double>(d.micro_batches);
    }
  }
  if (ri < d.gather_exposed.size() && d.gather_exposed[ri] > Time{}) {
    layer_exposed["param_gather"] += d.gather_exposed[ri].seconds();  // ZeRO-3's, unhidden
  }
  double exposed_in_ops = 0;
  Json exposed = Json::object();
  for (const auto& [kind, s] : layer_exposed) {
    exposed[kind] = s;
    exposed_in_ops += s;
  }
  const bool pairs = d.schedule == "dualpipe";  // overlapped pairs hide what a layer alone shows
  if (pairs) {
    exposed = nullptr;
  }
  const double ops = t.ops.seconds();
  // Summed in picoseconds first: a step with no bubble shows 0, not a rounding residue.
  const Time busy = t.ops + t.dp_exposed + t.optimizer + t.param_gather;
  const double bubble = std::max(0.0, step - busy.seconds());
  return {{"pipeline_rank", rank},
          {"gpu", d.representatives[static_cast<std::size_t>(rank)]},
          {"forward_backward_s", ops},
          {"compute_s", pairs ? Json(nullptr) : Json(ops - exposed_in_ops)},
          {"exposed_layer_comm_s", std::move(exposed)},
          {"bubble_s", bubble},
          {"bubble_fraction", step > 0 ? bubble / step : 0.0},
          {"pipeline_phases", pipeline_phases(t)},
          {"dp_exposed_s", t.dp_exposed.seconds()},
          {"optimizer_s", t.optimizer.seconds()},
          {"param_gather_s", t.param_gather.seconds()}};
}

// Each simulated layer the step was folded from: its passes' times, its compute and
// communication, and the communication it left exposed, per kind.
Json layer_rows(const work::StepDetails& d) {
  Json layers = Json::array();
  for (const work::LayerTiming& lt : d.layers) {
    Json e = Json::object();
    for (const auto& [kind, time] : lt.exposed) {
      e[kind] = time.seconds();
    }
    layers.push_back({{"kind", lt.moe ? "moe" : "dense"},
                      {"gpus", lt.gpus},
                      {"forward_s", lt.forward.seconds()},
                      {"backward_s", lt.backward.seconds()},
                      {"weight_s", lt.weight.seconds()},
                      {"pair_s", lt.pair.seconds()},
                      {"compute_s", lt.compute.seconds()},
                      {"comm_s", lt.comm.seconds()},
                      {"compute_comm_ratio", lt.comm > Time{} ? Json(lt.compute.seconds() /
                                                                     lt.comm.seconds())
                                                              : Json(nullptr)},
                      {"exposed_comm_s", std::move(e)}});
  }
  return layers;
}

// The gradient sync of one layer of each kind: bytes and time per GPU, and ZeRO-3's parameter
// all-gather.
Json grad_sync_rows(const work::StepDetails& d) {
  Json sync = Json::array();
  for (const work::GradSync& g : d.grad_sync) {
    sync.push_back({{"kind", g.moe ? "moe" : "dense"},
                    {"bytes_per_gpu", g.bytes_per_gpu},
                    {"time_s", g.time.seconds()}});
    if (d.zero >= 3) {
      sync.back()["param_gather_s"] = g.gather.seconds();
    }
  }
  return sync;
}

// Memory per GPU on each pipeline rank, the peak over them and whether it fits in HBM.
Json memory_per_gpu(const work::StepDetails& d) {
  Json ranks = Json::array();
  double peak = 0;
  for (std::size_t r = 0; r < d.memory.size(); ++r) {
    const work::StageMemory& m = d.memory[r];
    peak = std::max(peak, m.total());
    ranks.push_back({{"pipeline_rank", r},
                     {"params_GB", gb(m.params)},
                     {"grads_GB", gb(m.grads)},
                     {"optimizer_GB", gb(m.optimizer)},
                     {"activations_GB", gb(m.activations)},
                     {"buffers_GB", gb(m.buffers)},
                     {"total_GB", gb(m.total())}});
  }
  return {{"hbm_GB", gb(d.hbm_bytes)},
          {"peak_GB", gb(peak)},
          {"fits", d.hbm_bytes <= 0 || peak <= d.hbm_bytes},
          {"ranks", std::move(ranks)}};
}

}  // namespace

Json step_section(const work::CaseResult& c) {
  const work::StepDetails& d = *c.step();
  const double step = c.summary.step.seconds();
  Json out;
  out["folding"] = d.folding;
  out["gpus"] = d.gpus;
  out["schedule"] = d.schedule;
  out["pp"] = d.stages;
  out["virtual_stages"] = d.chunks;
  out["micro_batches"] = d.micro_batches;
  out["zero"] = d.zero;
  out["recompute"] = d.recompute;
  out["tokens_per_step"] = d.tokens;
  out["tokens_per_s_per_gpu"] = step > 0 ? d.tokens / step / static_cast<double>(d.gpus) : 0.0;
  const double tflops = step > 0 ? d.model_flops / step / static_cast<double>(d.gpus) / 1e12 : 0.0;
  out["model_tflops_per_gpu"] = tflops;
  out["mfu"] = d.peak_tflops > 0 ? tflops / d.peak_tflops : 0.0;

  out["breakdown"] = d.layers.empty() ? Json(nullptr) : breakdown(c, step);

  out["layers"] = layer_rows(d);
  out["grad_sync_per_layer"] = grad_sync_rows(d);
  out["head_forward_s"] = d.head_forward.seconds();
  out["head_backward_s"] = d.head_backward.seconds();
  out["layers_per_stage"] = d.layers_per_stage;
  out["memory"] = memory_per_gpu(d);
  return out;
}

}  // namespace hopsim::tools
