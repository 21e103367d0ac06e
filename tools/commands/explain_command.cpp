// hopsim explain: closed forms from the model, the parallel degrees and the workload.
#include "tools/commands/explain_command.hpp"

#include <algorithm>
#include <array>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "tools/commands/command.hpp"
#include "tools/commands/cp_crossover.hpp"
#include "tools/commands/dispatcher_parts.hpp"
#include "tools/commands/ep_overlap_figures.hpp"
#include "tools/commands/exchange_costs.hpp"
#include "tools/commands/idle_perturbations.hpp"
#include "tools/commands/routing_section.hpp"
#include "tools/commands/step_section.hpp"
#include "workloads/collectives/ep_algorithms.hpp"
#include "workloads/cp/attention_closed_forms.hpp"
#include "workloads/ep/moe_closed_forms.hpp"
#include "workloads/step/megatron_estimate.hpp"
#include "workloads/step/schedule_choice.hpp"

namespace hopsim::tools {
namespace {

using Json = nlohmann::ordered_json;

Json flops_json(const work::LayerFlops& f) {
  Json out;
  double fwd = 0;
  double bwd = 0;
  for (const auto& [name, flops] : f.fwd) {
    out["fwd"][name] = flops;
    fwd += flops;
  }
  for (const auto& [name, flops] : f.bwd) {
    out["bwd"][name] = flops;
    bwd += flops;
  }
  out["fwd_total"] = fwd;
  out["bwd_total"] = bwd;
  return out;
}

// The FLOPs of two parts of a layer, kernel by kernel (a name in both adds up).
Json merged_flops(const Json& a, const Json& b) {
  Json out = a;
  for (const char* pass : {"fwd", "bwd"}) {
    for (const auto& [name, flops] : b[pass].items()) {
      const double before = out[pass].contains(name) ? out[pass][name].get<double>() : 0.0;
      out[pass][name] = before + flops.get<double>();
    }
    const std::string total = std::string(pass) + "_total";
    out[total] = a[total].get<double>() + b[total].get<double>();
  }
  return out;
}

// The simulated side of pass-KV against pass-Q: where one layer of each takes as long, and
// each one's parts at this experiment's miss rate (cp_crossover.hpp).
Json simulated_passes(const work::Experiment& exp, const work::AttentionLayerJob& job) {
  const std::optional<SimulatedCrossover> x = simulated_crossover(exp);
  if (!x) {
    return Json();
  }
  Json out = {{"crossover_miss_rate", x->miss_rate},
              {"grid_tokens", x->grid_tokens},
              {"simulations", x->simulations}};
  for (const work::CpAlgorithm a : {work::CpAlgorithm::Ring, work::CpAlgorithm::RingPassQ}) {
    const std::optional<PrefillParts> p = prefill_parts(exp, a, job.seq_len);
    if (p) {
      out["layer_at_this_miss_rate"][std::string(work::cp_algorithm_name(a))] = {
          {"layer_s", p->layer_s},
          {"attention_compute_s", p->attention_compute_s},
          {"exposed_ring_comm_s", p->exposed_ring_comm_s},
          {"output_all_to_all_s", p->output_all_to_all_s}};
    }
  }
  return out;
}

void cp_section(const work::Experiment& exp, const work::AttentionLayerJob& job, Json& r) {
  const work::CpNumbers cp = work::cp_numbers(exp.parallel, exp.cluster);
  r["per_layer_flops_per_gpu"] =
      flops_json(work::attention_layer_flops(*exp.model, exp.parallel, job));
  r["cp"] = {{"degree", exp.parallel.cp},
             {"tokens_per_rank", job.seq_len / exp.parallel.cp},
             {"block_threshold_nvlink_tokens", cp.block_threshold_nvlink_tokens},
             {"block_threshold_network_tokens", cp.block_threshold_network_tokens},
             {"min_seq_per_rank_nvlink", cp.min_seq_per_rank_nvlink},
             {"min_seq_per_rank_network", cp.min_seq_per_rank_network},
             {"contiguous_work_ratio", cp.contiguous_work_ratio},
             {"contiguous_flops_ratio", cp.contiguous_flops_ratio},
             {"zigzag_units_per_rank", cp.zigzag_units_per_rank}};
  // This experiment's threshold: its GPU, dtype, K/V share and the link its ring uses.
  const work::Mesh mesh(exp.parallel);
  const std::vector<topo::GpuId> group = mesh.group(work::Dim::Cp, 0);
  const int per_node = exp.cluster.gpus_per_node;
  const bool network = std::any_of(group.begin(), group.end(), [&](topo::GpuId g) {
    return g.value() / per_node != group.front().value() / per_node;
  });
  r["cp"]["overlap_threshold_tokens"] = job.overlap_threshold_tokens(
      *exp.model, exp.parallel, exp.cluster, network, exp.nccl.p2p_net_efficiency);
  r["cp"]["ring_link"] = network ? "network" : "nvlink";
  if (job.mode == work::LayerMode::Prefill && exp.parallel.cp > 1) {
    const work::AttentionLayerJob::PassChoice c = job.pass_choice(
        *exp.model, exp.parallel, exp.cluster, network, exp.nccl.p2p_net_efficiency);
    r["cp"]["pass_kv_or_pass_q"] = {
        {"message_rule_miss_rate", c.message_rule_miss_rate},
        {"hidden_kv_tokens", c.hidden_kv_tokens},
        {"crossover_miss_rate", c.crossover_miss_rate},
        {"miss_rate", c.miss_rate},
        {"rule_picks",
         c.pass_kv ? fmt::format("{} (pass-KV)", work::cp_algorithm_name(work::CpAlgorithm::Ring))
                   : std::string(work::cp_algorithm_name(work::CpAlgorithm::RingPassQ))}};
    if (Json sim = simulated_passes(exp, job); !sim.is_null()) {
      r["cp"]["pass_kv_or_pass_q"]["simulated"] = std::move(sim);
    }
  }
}

// What the layer's EP library reaches as the SMs it holds grow: the share of NVLink its
// forwarding (across nodes) and its intranode kernels (within one node) move at, at 4 to 32
// SMs and at the layer's comm_sms (0: the library's own count); for a library whose data file
// states what its SMs move on the layer's path, the rate per GPU they handle (token, node)
// bytes at, each op at its bytes per token (ep_library_rates.hpp): past the links' rate the
// links bind and more SMs change nothing.
Json sm_curve(const work::Experiment& exp, const work::MoeLayerJob& job) {
  const work::EpAlgorithmRow& row = work::ep_algorithm_row(job.algorithm);
  Json curve = {{"library", row.library.empty() ? "none (the links' rate)" : row.library}};
  const bool across = exp.parallel.ep > exp.cluster.gpus_per_node;
  const auto sm_rate = [&](const work::KernelReach& k, work::ExchangeOp op, std::int64_t sms) {
    const double token = static_cast<double>(exp.model->hidden) *
                         (op == work::ExchangeOp::Dispatch ? job.dispatch_bytes_per_element
                                                           : job.combine_bytes_per_element);
    const double per_byte =
        k.rates->cost(across, static_cast<std::size_t>(op)).sm_seconds_per_byte(token);
    const auto held = static_cast<double>(k.rates->held_sms(sms));
    return per_byte > 0 ? Json(held / per_byte / 1e9) : Json("none: its SMs bind nothing");
  };
  const std::array<std::int64_t, 6> points{4, 8, 16, 24, 32, job.comm_sms};
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::int64_t sms = points[i];
    const work::KernelReach k = row.reach(exp.ep_libraries, work::ExchangeOp::Dispatch, sms);
    // The layer's own comm_sms last, under its own key even where it is one of the others.
    const std::string at = i + 1 == points.size() ? fmt::format("comm_sms {}", sms)
                                                  : fmt::format("{} SMs", sms);
    curve[at] = {{"forwarding_nvlink_share", k.nvlink_share},
                 {"intranode_nvlink_share", k.intranode_share}};
    if (k.rates != nullptr) {
      curve[at]["sm_bound_dispatch_GBps"] = sm_rate(k, work::ExchangeOp::Dispatch, sms);
      curve[at]["sm_bound_combine_GBps"] = sm_rate(k, work::ExchangeOp::Combine, sms);
    }
  }
  return curve;
}

// The layer's EP library's fixed costs before each forward dispatch, per rank (their own tasks,
// deepep_layout and deepep_notify, in `hopsim run`); the notify only where EP crosses nodes.
// Megatron's dispatchers: the parts of each call, as `hopsim run` builds them.
Json per_call(const work::Experiment& exp, const work::MoeLayerJob& job,
              const work::ComputeModel& compute) {
  const work::EpAlgorithmRow& row = work::ep_algorithm_row(job.algorithm);
  if (row.permutes_locally || row.gathers_all) {
    return megatron_parts(exp, job, compute);
  }
  const work::KernelReach k = row.reach(exp.ep_libraries, work::ExchangeOp::Dispatch, job.comm_sms);
  const bool across = exp.parallel.ep > exp.cluster.gpus_per_node;
  return {{"layout_s", k.layout.seconds()},
          {"notify_s", across ? k.notify.seconds() : 0.0},
          {"note", "before each forward dispatch; backward reuses its layout and pays neither"}};
}

void ep_section(const work::Experiment& exp, const work::MoeLayerJob& job,
                const work::ComputeModel& compute, Json& r) {
  const work::EpNumbers ep = work::ep_numbers(*exp.model, job, exp.cluster);
  r["per_layer_flops_per_gpu"] = flops_json(work::moe_layer_flops(*exp.model, exp.parallel, job));
  r["ep"] = {{"degree", exp.parallel.ep},
             {"tokens_per_gpu", job.routing.tokens_per_gpu},
             {"dispatch_bytes_ib", ep.dispatch_bytes_ib},
             {"combine_bytes_ib", ep.combine_bytes_ib},
             {"fwd_bwd_bytes_ib", ep.fwd_bwd_bytes_ib},
             {"layer_flops_per_gpu", ep.layer_flops_per_gpu},
             {"compute_s_at_peak", ep.compute_s_at_peak},
             {"comm_s_at_nic", ep.comm_s_at_nic},
             {"compute_comm_ratio_at_peak",
              ep.comm_s_at_nic > 0 ? Json(ep.compute_s_at_peak / ep.comm_s_at_nic) : Json()},
             {"sm_curve", sm_curve(exp, job)},
             {"per_call", per_call(exp, job, compute)},
             {"ratio_note",
              "compute at peak FLOPs over the InfiniBand bytes at the NIC's line rate; `hopsim "
              "run`'s compute_comm_ratio is the busiest GPU's kernel time (calibrated, or the "
              "roofline's efficiency) over its communication as simulated (InfiniBand and "
              "NVLink, overlapped as the exchanges ran), so the two differ"}};
  r["routing"] = routing_section(job, exp.parallel, exp.cluster.gpus_per_node);
}

Json pass_json(const work::KernelCosts& costs, work::ComputeTally& tally,
               work::KernelTally& kinds) {
  Json out = Json::object();
  Time total;
  for (const auto& [name, cost] : costs) {
    out[name] = {{"class", work::kernel_class_name(cost.kind)},
                 {"time_s", cost.time.seconds()},
                 {"flops", cost.flops.n},
                 {"hbm_bytes", cost.bytes.n},
                 {"tflops_per_s", cost.flops.n / cost.time.seconds() / 1e12},
                 {"hbm_GBps", static_cast<double>(cost.bytes.n) / cost.time.seconds() / 1e9},
                 {"source", work::source_name(cost.source)}};
    if (!cost.impl.empty()) {  // the table that answered: its kernel, and whether from a base
      out[name]["impl"] = cost.impl;
    }
    if (cost.from_base) {
      out[name]["from_base"] = true;
    }
    total += cost.time;
    tally.add(cost.source, cost.time);
    kinds.add(cost.kind, cost.time);
  }
  out["total_s"] = total.seconds();
  return out;
}

// Kernel times of one layer from the calibration table (or the roofline), and their sources.
void time_section(const config::ExperimentFile& file, const work::LayerCosts& costs, Json& r) {
  work::ComputeTally tally;
  work::KernelTally kinds;
  r["per_layer_time_per_gpu"] = {{"fwd", pass_json(costs.fwd, tally, kinds)},
                                 {"bwd", pass_json(costs.bwd, tally, kinds)}};
  Json by_class = Json::object();
  for (const auto& [kind, time] : kinds.nonzero()) {
    by_class[std::string(work::kernel_class_name(kind))] = time.seconds();
  }
  r["per_layer_time_by_class"] = std::move(by_class);
  r["calibration"] = file.experiment.calibration ? file.calibration_file : "none (roofline only)";
  if (!file.experiment.calibration_note.empty()) {
    r["calibration_choice"] = file.experiment.calibration_note;
  }
  Json sources = Json::object();
  for (work::Source s : work::kSources) {
    if (s != work::Source::Recorded) {  // layer kinds price every kernel
      sources[std::string(work::source_name(s))] = tally.share(s);
    }
  }
  r["compute_sources"] = std::move(sources);
  const bool experts = r.contains("ep");  // ep_section ran first
  r["compute_sources_note"] = fmt::format(
      "shares of the kernel time above: one GPU, one layer, forward and backward{}; `hopsim "
      "run`'s compute_sources weigh every GPU's kernels as simulated ({}only the passes the "
      "experiment runs), so they differ",
      experts ? ", each expert at the mean rows" : "",
      experts ? "the rows each expert received, " : "");
}

// The model's closed forms at a sequence length and micro-batch.
void model_section(const work::Experiment& exp, std::int64_t seq, std::int64_t batch, Json& r) {
  const work::ModelSpec& m = *exp.model;
  r["model"] = m.name;
  r["parallel"] = {{"tp", exp.parallel.tp},
                   {"cp", exp.parallel.cp},
                   {"ep", exp.parallel.ep},
                   {"pp", exp.parallel.pp},
                   {"dp", exp.parallel.dp}};
  r["seq_len"] = seq;
  r["layers"] = m.layers;
  r["moe_layers"] = work::moe_layers(m);
  if (m.mtp_depth > 0) {
    r["mtp_depth"] = m.mtp_depth;  // blocks a training step runs after the last layer
  }
  r["params"] = work::total_params(m);
  r["active_params"] = work::active_params(m);
  r["activation_bytes_per_gpu"] =
      work::activation_bytes_per_gpu(m, seq, batch, exp.parallel.tp, exp.parallel.cp);
  r["attention_flops_per_token"] = work::attention_flops_per_token(m, seq);
  r["dense_flops_per_token"] = 6 * work::active_params(m);
}

// Memory per pipeline rank, and the rank that needs the most, term by term
// (docs/training-step.md#memory).
std::pair<Json, Json> memory_figures(const work::TrainingStepJob& job,
                                     const work::StepShape& shape) {
  Json memory = Json::array();
  const std::vector<work::StageMemory> per_rank = work::stage_memory(shape);
  std::size_t worst = 0;
  for (std::size_t rank = 0; rank < per_rank.size(); ++rank) {
    const work::StageMemory& mem = per_rank[rank];
    memory.push_back(memory_terms(mem));
    if (mem.total() > per_rank[worst].total()) {
      worst = rank;
    }
  }
  const work::StageMemory& most = per_rank[worst];
  Json peak = {
      {"pipeline_rank", worst},
      {"schedule", job.schedule_auto ? std::string("1f1b (schedule auto: see schedule_candidates)")
                                     : work::schedule_label(job)},
      {"recompute", work::recompute_label(job.recompute)},
      {"activation_dtype", job.gemm_input_bytes < 2 ? "fp8" : "bf16"}};
  peak.update(memory_terms(most));
  return {std::move(memory), std::move(peak)};
}

// Megatron's own estimate of the most loaded GPU beside hopsim's count of the same GPU (its
// first pipeline rank), or why Megatron's formula does not describe the step.
Json megatron_figures(const work::StepShape& shape) {
  std::string why_not;
  const std::optional<work::MegatronEstimate> e = work::megatron_estimate(shape, why_not);
  if (!e) {
    return {{"not_estimated", why_not}};
  }
  const work::StageMemory first = work::stage_memory(shape).front();
  const double h = static_cast<double>(shape.model->hidden);
  return {{"weights_and_optimizer_GB", e->weights_and_optimizer / 1e9},
          {"activations_GB", e->activations / 1e9},
          {"total_GB", e->total() / 1e9},
          {"layer_bytes_per_token_h", e->layer_bytes_per_token_h},
          {"hopsim_rank0_weights_and_optimizer_GB",
           (first.params + first.grads + first.optimizer) / 1e9},
          {"hopsim_rank0_activations_GB", first.activations / 1e9},
          {"hopsim_layer_bytes_per_token_h", work::layer_bytes_per_token(shape, false) / h}};
}

// Schedule auto: each schedule it would try, its peak memory per GPU, or why it cannot run.
Json candidate_figures(const work::TrainingStepJob& job, const work::JobEnv& env) {
  Json candidates = Json::array();
  for (const work::TrainingStepJob& c : work::schedule_candidates(job, env)) {
    Problems problems;
    c.check(env, problems);
    double most_bytes = 0;
    if (problems.empty() || problems.front().message.starts_with("does not fit in memory")) {
      for (const work::StageMemory& mem : work::stage_memory(c.shape(env))) {
        most_bytes = std::max(most_bytes, mem.total());
      }
    }
    candidates.push_back(
        {{"schedule", work::schedule_label(c)},
         {"peak_GB", most_bytes > 0 ? Json(most_bytes / 1e9) : Json(nullptr)},
         {"runs", problems.empty()},
         {"problem", problems.empty() ? std::string() : problems.front().message}});
  }
  return candidates;
}

// The share of the step an ideal pipeline of the job's schedule idles (equal stages, no
// communication), from its closed form with a backward twice a forward and its weight part one
// forward, a pair a forward and a backward; null where the schedule has none.
Json ideal_bubble(const work::TrainingStepJob& job, const work::StepShape& shape) {
  const std::optional<double> f =
      work::ideal_bubble_fraction(*job.schedule, work::pipe_shape(shape));
  return f ? Json(*f) : Json(nullptr);
}

// A training step in closed form: layout, memory per GPU, model FLOPs, the time at peak, and
// the bubble of an ideal pipeline (equal stages, no communication).
void step_section(const work::Experiment& exp, const work::TrainingStepJob& job, Json& r) {
  const work::Mesh mesh(exp.parallel);
  const work::JobEnv env = work::job_env(exp, mesh);
  const work::StepShape shape = job.shape(env);
  const double gpus = static_cast<double>(mesh.size());
  const double tokens = static_cast<double>(job.global_batch * job.layer.attention.seq_len);
  const work::AttentionLayerJob& attention = job.layer.attention;
  const double per_token = work::model_flops_per_token(*exp.model, attention.seq_len,
                                                       attention.attended_pairs(exp.seed));
  auto [memory, peak] = memory_figures(job, shape);
  r["step"] = {
      {"gpus", mesh.size()},
      {"micro_batches", shape.micro_batches},
      {"layers_per_stage", work::stage_split(shape)},
      {"tokens_per_step", tokens},
      {"model_flops_per_token", per_token},
      {"model_flops_per_step", tokens * per_token},
      {"time_at_peak_s", tokens * per_token / (gpus * exp.cluster.gpu.peak_bf16_tflops * 1e12)},
      {"ideal_bubble_fraction", ideal_bubble(job, shape)},
      {"step_overhead_s", job.step_overhead.seconds()},
      {"hbm_GB", exp.cluster.gpu.hbm_GB},
      {"memory_peak", std::move(peak)},
      {"memory_per_rank", std::move(memory)},
      {"megatron_estimate", megatron_figures(shape)}};
  if (job.schedule_auto) {
    r["step"]["schedule_candidates"] = candidate_figures(job, env);
  }
  if (job.layer.moe) {  // the routing of one layer group's EP group 0, as the step's probes
    const work::ParallelSpec lp = work::TrainingStepJob::layer_spec(exp.parallel);
    r["routing"] = routing_section(job.layer.moe_part(lp), lp, exp.cluster.gpus_per_node);
  }
}

// The last stage's output layer on one GPU, one micro-batch: each kernel as the layers'.
Json output_layer_json(const work::Experiment& exp, const work::TrainingStepJob& job,
                       const work::ComputeModel& compute) {
  const work::AttentionLayerJob& a = job.layer.attention;
  const work::LayerCosts head =
      work::output_layer_costs(*exp.model, a.seq_len * a.micro_batch / exp.parallel.cp,
                               exp.parallel.tp, job.cross_entropy, compute);
  work::ComputeTally tally;
  work::KernelTally kinds;
  return {{"cross_entropy", work::cross_entropy_kernel_name(job.cross_entropy)},
          {"fwd", pass_json(head.fwd, tally, kinds)},
          {"bwd", pass_json(head.bwd, tally, kinds)}};
}

// Megatron's EP overlap in a MoE step under the interleaved schedule (or 1F1B at pp 1),
// simulated with and without it (ep_overlap_figures.hpp); null for any other step.
Json ep_overlap_json(const work::Experiment& exp, const work::TrainingStepJob& job) {
  const std::optional<EpOverlapFigures> f = ep_overlap_figures(exp, job);
  if (!f) {
    return nullptr;
  }
  const double hidden = f->step_without_s - f->step_with_s;
  Json out = {{"schedule_without_overlap", f->schedule_without},
              {"schedule_with_overlap", f->schedule_with},
              {"step_without_overlap_s", f->step_without_s},
              {"step_with_overlap_s", f->step_with_s},
              {"hidden_s", hidden},
              {"hidden_percent_of_step", 100 * hidden / f->step_without_s},
              {"moe_pair_s", f->moe_pair_s},
              {"moe_forward_plus_backward_s", f->moe_forward_backward_s},
              {"moe_pair_hidden_s", f->moe_pair_hidden_s},
              {"moe_ep_exposed_forward_s", f->ep_exposed_forward_s},
              {"moe_ep_exposed_backward_s", f->ep_exposed_backward_s},
              {"pair_simulated", f->pair_simulated}};
  if (!f->note.empty()) {
    out["note"] = f->note;
  }
  return out;
}

// A training step: its model, layout and memory in closed form, its output layer, and what
// the EP overlap hides where it applies.
void step_explanation(const work::Experiment& exp, const work::TrainingStepJob& job,
                      const work::ComputeModel& compute, Json& r) {
  model_section(exp, job.layer.attention.seq_len, job.layer.attention.micro_batch, r);
  step_section(exp, job, r);
  r["step"]["output_layer_time_per_gpu"] = output_layer_json(exp, job, compute);
  if (Json o = ep_overlap_json(exp, job); !o.is_null()) {
    r["ep_overlap"] = std::move(o);
  }
}

// The kinds without closed forms (no model, a flow list, a collective) get a note, and an
// all-to-all whose EP library a data file prices its costs; true for them.
bool without_closed_forms(const work::Experiment& exp, Json& r) {
  if (const auto* collective = std::get_if<work::CollectiveJob>(&exp.job)) {
    if (Json costs = exchange_costs(exp, *collective); !costs.is_null()) {
      r["exchange"] = std::move(costs);
    }
  }
  if (exp.model && !std::holds_alternative<work::FlowsJob>(exp.job) &&
      !std::holds_alternative<work::CollectiveJob>(exp.job)) {
    return false;
  }
  r["note"] =
      "closed forms are given for the layer kinds (with a model); `hopsim run` simulates this "
      "one";
  return true;
}

}  // namespace

Json explain(const config::ExperimentFile& file) {
  const work::Experiment& exp = file.experiment;
  Json r;
  r["experiment"] = exp.name;
  r["workload"] = work::kind_name(exp.job);
  r["cluster"] = fmt::format("{}: {} nodes x {} {}", exp.cluster.name, exp.cluster.nodes,
                             exp.cluster.gpus_per_node, exp.cluster.gpu.name);
  if (without_closed_forms(exp, r)) {
    return r;
  }
  const work::ComputeModel compute = work::compute_model(exp);
  std::visit(
      work::Overloaded{
          [&](const work::AttentionLayerJob& job) {
            model_section(exp, job.seq_len, job.micro_batch, r);
            cp_section(exp, job, r);
            time_section(
                file, work::attention_layer_costs(*exp.model, exp.parallel, job, compute, exp.seed),
                r);
          },
          [&](const work::MoeLayerJob& job) {
            model_section(exp, job.routing.tokens_per_gpu, 1, r);
            ep_section(exp, job, compute, r);
            time_section(file, work::moe_layer_costs(*exp.model, exp.parallel, job, compute), r);
          },
          [&](const work::TransformerLayerJob& job) {
            const work::AttentionLayerJob& a = job.attention;
            model_section(exp, a.seq_len, a.micro_batch, r);
            cp_section(exp, a, r);
            work::LayerCosts costs =
                work::attention_layer_costs(*exp.model, exp.parallel, a, compute, exp.seed);
            if (job.moe) {
              const work::MoeLayerJob moe = job.moe_part(exp.parallel);
              const Json attention_flops = r["per_layer_flops_per_gpu"];
              ep_section(exp, moe, compute, r);
              r["per_layer_flops_per_gpu"] =
                  merged_flops(attention_flops, r["per_layer_flops_per_gpu"]);
              const work::LayerCosts ffn =
                  work::moe_layer_costs(*exp.model, exp.parallel, moe, compute);
              costs.fwd.insert(costs.fwd.end(), ffn.fwd.begin(), ffn.fwd.end());
              costs.bwd.insert(costs.bwd.begin(), ffn.bwd.begin(), ffn.bwd.end());
            }
            time_section(file, costs, r);
          },
          [&](const work::TrainingStepJob& job) { step_explanation(exp, job, compute, r); },
          [&](const work::FlowsJob& /*job*/) {},
          [&](const work::ChakraJob& /*job*/) {},
          [&](const work::CollectiveJob& /*job*/) {},
      },
      exp.job);
  return r;
}

int explain_command(const RunOptions& o) {
  const config::ExperimentFile file = config::load_experiment(o.experiment, o.overrides);
  for (const std::string& w : file.warnings) {
    fmt::print(stderr, "warning: {}\n", w);
  }
  for (const std::string& idle : idle_perturbations(file, nullptr)) {  // as run checks them
    fmt::print(stderr, "warning: {}\n", idle);
  }
  if (const auto& what_ifs = file.experiment.cluster.perturbations; !what_ifs.empty()) {
    const std::size_t entries = what_ifs.back().entry + 1;  // a draw's GPUs share their entry
    fmt::print(stderr,
               "warning: /perturbations: explain's closed forms are the healthy cluster's; "
               "`hopsim run` simulates the {} perturbation(s)\n",
               entries);
  }
  const Json r = explain(file);
  if (o.json) {
    fmt::print("{}\n", r.dump(2));
  } else {
    fmt::print("{}", format_explanation(r));
  }
  return 0;
}

Command declare_explain_command(CLI::App& program) {
  auto s = std::make_shared<WithUnsets<RunOptions>>();
  RunOptions& x = s->options;
  CLI::App* app =
      program.add_subcommand("explain", "print the closed-form numbers of an experiment");
  app->add_option("experiment", x.experiment, "experiment JSON file")->required();
  app->add_option("--set", x.overrides,
                  "override a config key: KEY=VALUE (dotted path; VALUE null removes it)");
  app->add_option("--unset", s->unset, "remove an optional key: --set KEY=null");
  app->add_flag("--json", x.json, "print JSON instead of a summary");
  return {app,
          [s](const std::string& /*command_line*/) { return explain_command(s->resolved()); }};
}

}  // namespace hopsim::tools
