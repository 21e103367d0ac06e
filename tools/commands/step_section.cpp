// The training step's report section.
#include "tools/commands/step_section.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hopsim::tools {
namespace {

using Json = nlohmann::ordered_json;

// A window of the pipeline: its length and the rank's idle time in it.
Json window(const PipelineWindow& w) {
  return {{"s", w.s}, {"idle_s", w.idle_s}};
}

// Warm-up, steady state and cool-down.
Json pipeline_phases(const PipelinePhases& p) {
  return {{"warm_up", window(p.warm_up)},
          {"steady", window(p.steady)},
          {"cool_down", window(p.cool_down)}};
}

// Where the busiest pipeline rank's step went (StepBreakdown).
Json breakdown(const StepBreakdown& b) {
  Json by_pass = Json::object();
  for (const auto& [pass, s] : b.ops_by_pass_s) {
    by_pass[pass] = s;
  }
  Json exposed = nullptr;
  if (b.exposed_layer_comm_s) {
    exposed = Json::object();
    for (const auto& [kind, s] : *b.exposed_layer_comm_s) {
      exposed[kind] = s;
    }
  }
  return {{"pipeline_rank", b.pipeline_rank},
          {"gpu", b.gpu},
          {"forward_backward_s", b.forward_backward_s},
          {"ops_by_pass_s", by_pass},
          {"compute_s", b.compute_s ? Json(*b.compute_s) : Json(nullptr)},
          {"exposed_layer_comm_s", std::move(exposed)},
          {"bubble_s", b.bubble_s},
          {"bubble_fraction", b.bubble_fraction},
          {"pipeline_phases", pipeline_phases(b.phases)},
          {"dp_exposed_s", b.dp_exposed_s},
          {"optimizer_s", b.optimizer_s},
          {"param_gather_s", b.param_gather_s},
          {"step_overhead_s", b.step_overhead_s}};
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
    const std::optional<double> ratio = compute_comm_ratio(lt);
    layers.push_back({{"kind", layer_kind(lt.moe)},
                      {"gpus", lt.gpus},
                      {"forward_s", lt.forward.seconds()},
                      {"backward_s", lt.backward.seconds()},
                      {"weight_s", lt.weight.seconds()},
                      {"backward_input_s", lt.backward_input.seconds()},
                      {"recompute_s", lt.recomputed.seconds()},
                      {"pair_s", lt.pair.seconds()},
                      {"compute_s", lt.compute.seconds()},
                      {"comm_s", lt.comm.seconds()},
                      {"compute_comm_ratio", ratio ? Json(*ratio) : Json(nullptr)},
                      {"exposed_comm_s", std::move(e)}});
  }
  return layers;
}

// The gradient sync of one layer of each kind: bytes and time per GPU, and ZeRO-3's parameter
// all-gather.
Json grad_sync_rows(const work::StepDetails& d) {
  Json sync = Json::array();
  for (const work::GradSync& g : d.grad_sync) {
    sync.push_back({{"kind", layer_kind(g.moe)},
                    {"bytes_per_gpu", g.bytes_per_gpu},
                    {"time_s", g.time.seconds()}});
    if (d.zero >= 3) {
      sync.back()["param_gather_s"] = g.gather.seconds();
    }
  }
  return sync;
}

// Memory per GPU on each pipeline rank, the peak over them and whether it fits in HBM.
Json memory_per_gpu(const work::StepDetails& d, const MemoryPeak& peak) {
  Json ranks = Json::array();
  for (std::size_t r = 0; r < d.memory.size(); ++r) {
    Json rank = {{"pipeline_rank", r}};
    rank.update(memory_terms(d.memory[r]));
    ranks.push_back(std::move(rank));
  }
  return {{"hbm_GB", peak.hbm_GB},
          {"peak_GB", peak.peak_GB},
          {"fits", peak.fits},
          {"ranks", std::move(ranks)}};
}

// The output layer's kernels on one GPU, one micro-batch, each pass in the order it runs.
Json head_kernels(const work::LayerCosts& head) {
  Json out = {{"fwd", Json::object()}, {"bwd", Json::object()}};
  for (const auto& [name, cost] : head.fwd) {
    out["fwd"][name] = cost.time.seconds();
  }
  for (const auto& [name, cost] : work::run_order(head.bwd)) {
    out["bwd"][name] = cost.time.seconds();
  }
  return out;
}

// Activation offload: its layers, the longest copy each way, and one micro-batch's waits.
Json offload(const work::StepDetails& d) {
  const auto sum = [](const std::vector<Time>& v) {
    return std::accumulate(v.begin(), v.end(), Time{}).seconds();
  };
  return {{"layers", d.offload_copy.size()},
          {"copy_s", std::max_element(d.offload_copy.begin(), d.offload_copy.end())->seconds()},
          {"forward_wait_s", sum(d.offload_wait_forward)},
          {"backward_wait_s", sum(d.offload_wait_backward)}};
}

}  // namespace

Json memory_terms(const work::StageMemory& m) {
  return {{"params_GB", gb(m.params)},       {"grads_GB", gb(m.grads)},
          {"optimizer_GB", gb(m.optimizer)}, {"activations_GB", gb(m.activations)},
          {"buffers_GB", gb(m.buffers)},     {"fp8_weights_GB", gb(m.fp8_weights)},
          {"reserve_GB", gb(m.reserve)},     {"total_GB", gb(m.total())}};
}

// The step's settings, throughput, breakdown, layers, syncs and memory, in report order.
Json step_section(const work::CaseResult& c, const StepFigures& f) {
  const work::StepDetails& d = *c.step();
  Json out;
  out["folding"] = d.folding;
  out["gpus"] = d.gpus;
  out["schedule"] = d.schedule;
  out["pp"] = d.stages;
  out["virtual_stages"] = d.chunks;
  if (d.group > 0) {
    out["microbatch_group"] = d.group;
  }
  out["micro_batches"] = d.micro_batches;
  out["zero"] = d.zero;
  out["recompute"] = d.recompute;
  out["tokens_per_step"] = d.tokens;
  out["tokens_per_s_per_gpu"] = f.tokens_per_s_per_gpu;
  out["model_tflops_per_gpu"] = f.model_tflops_per_gpu;
  out["mfu"] = f.mfu;
  out["breakdown"] = f.breakdown ? breakdown(*f.breakdown) : Json(nullptr);
  out["bubble_closed_form"] = d.bubble_closed_form ? Json(*d.bubble_closed_form) : Json(nullptr);
  out["layers"] = layer_rows(d);
  out["grad_sync_per_layer"] = grad_sync_rows(d);
  if (!d.schedules_tried.empty()) {
    Json tried = Json::array();
    for (const work::ScheduleTried& t : d.schedules_tried) {
      tried.push_back(t.rejected.empty()
                          ? Json{{"schedule", t.schedule}, {"step_s", t.step_s}}
                          : Json{{"schedule", t.schedule}, {"rejected", t.rejected}});
    }
    out["schedules_tried"] = std::move(tried);
  }
  out["optimizer_parts_s"] = {{"grad_norm", d.optimizer.grad_norm.seconds()},
                              {"norm_all_reduce", d.optimizer.norm_all_reduce.seconds()},
                              {"adam", d.optimizer.adam.seconds()}};
  out["head_forward_s"] = d.head_forward.seconds();
  out["head_backward_s"] = d.head_backward.seconds();
  out["head_kernels_s"] = head_kernels(d.head);
  if (!d.offload_copy.empty()) {
    out["cpu_offload"] = offload(d);
  }
  out["layers_per_stage"] = d.layers_per_stage;
  out["memory"] = memory_per_gpu(d, f.memory);
  return out;
}

}  // namespace hopsim::tools
