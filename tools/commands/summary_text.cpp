// The terminal summary of a run: what ran on what, the kind's table, and per-case lines. It
// formats the run's typed results and the figures the JSON report is written from
// (*_figures.hpp, workloads/plan/time_shares.hpp); it never reads the report.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tools/commands/chakra_figures.hpp"
#include "tools/commands/collective_figures.hpp"
#include "tools/commands/cp_figures.hpp"
#include "tools/commands/ep_figures.hpp"
#include "tools/commands/report.hpp"
#include "tools/commands/sim_totals.hpp"
#include "tools/commands/step_figures.hpp"
#include "tools/commands/units.hpp"
#include "tools/commands/validation_figures.hpp"
#include "topology/failures.hpp"
#include "workloads/compute/gpu_type_speed.hpp"
#include "workloads/plan/time_shares.hpp"

namespace hopsim::tools {
namespace {

// "node 3", "nodes 3, 4" (the first eight and how many in all), for GPUs, nodes, rails, leaves.
std::string index_list(const char* one, const char* many, const std::vector<int>& list) {
  const std::vector<int> head(list.begin(),
                              list.begin() + std::min<std::ptrdiff_t>(std::ssize(list), 8));
  const std::string out =
      fmt::format("{} {}", list.size() == 1 ? one : many, fmt::join(head, ", "));
  return list.size() > head.size() ? out + fmt::format(", ... ({} in all)", list.size()) : out;
}

// "GPU 5", "GPUs 0, 1, 2", or the first eight and how many in all.
std::string gpu_list(const std::vector<int>& gpus) {
  return index_list("GPU", "GPUs", gpus);
}

// What a perturbation applies to: GPUs, nodes, rails, or the links between leaves and spines.
std::string target_words(const topo::Perturbation& p) {
  if (p.part == topo::PerturbedPart::Spine) {
    return fmt::format("between {} and {}",
                       p.leaves.empty() ? "every leaf" : index_list("leaf", "leaves", p.leaves),
                       p.spines.empty() ? "every spine" : index_list("spine", "spines", p.spines));
  }
  if (!p.nodes.empty()) {
    return index_list("node", "nodes", p.nodes);
  }
  if (!p.rails.empty()) {
    return index_list("rail", "rails", p.rails) + " (every node's GPU of that index)";
  }
  return gpu_list(p.gpus);
}

// Where a failed NIC's traffic goes: its GPUs' carriers, the first eight.
std::string carrier_words(const topo::Perturbation& p, const topo::Failures& failures) {
  std::vector<int> carriers;
  for (const int g : p.gpus) {
    const int c = failures.nic_carrier[static_cast<std::size_t>(g)];
    if (std::ranges::find(carriers, c) == carriers.end()) {
      carriers.push_back(c);
    }
  }
  return fmt::format("; {} traffic crosses NVLink to the NIC of {}",
                     p.gpus.size() == 1 ? "its" : "their", gpu_list(carriers));
}

// Another GPU model on some nodes: which, and its rates against the cluster's, as the
// experiment priced them.
std::string type_words(const topo::Perturbation& p, const work::Experiment& e) {
  const work::KernelSpeeds speeds = work::type_speeds(e.cluster.gpu, p, e.gpu_types);
  const auto ratio = [&](work::KernelClass k) { return speeds[static_cast<std::size_t>(k)]; };
  const work::PricedGpuType* priced = work::priced_type(e.gpu_types, p.entry);
  return fmt::format(
      "the GPUs of {} are {} ({}, calibration {}): GEMMs at {:.3g}, attention "
      "at {:.3g} forward and {:.3g} backward, norms at {:.3g} of the {}'s rate",
      target_words(p), p.gpu->name, p.gpu_source, priced != nullptr ? priced->calibration : "none",
      ratio(work::KernelClass::GemmFprop), ratio(work::KernelClass::AttentionFwd),
      ratio(work::KernelClass::AttentionBwd), ratio(work::KernelClass::Norm), e.cluster.gpu.name);
}

// A speed drawn per kernel, when the perturbation draws one.
std::string kernel_draw_words(const topo::Perturbation& p) {
  if (!p.kernel_draw) {
    return "";
  }
  const topo::KernelDraw& d = *p.kernel_draw;
  return fmt::format(
      ", each kernel also at {:.3g} to {:.3g} drawn with seed {} ({:.3g} on "
      "average)",
      d.speed_min, d.speed_max, d.seed, d.mean_speed());
}

// One what-if, as the summary's header lists it.
std::string perturbation_words(const topo::Perturbation& p, const topo::Failures& failures) {
  if (p.part == topo::PerturbedPart::Compute) {
    if (p.kernel_draw && p.compute_speed == 1.0) {
      const topo::KernelDraw& d = *p.kernel_draw;
      return fmt::format(
          "{} compute: each kernel at {:.3g} to {:.3g} of the model's rate, "
          "drawn with seed {} ({:.3g} on average)",
          target_words(p), d.speed_min, d.speed_max, d.seed, d.mean_speed());
    }
    return fmt::format("{} compute at {:.3g} of the model's rate{}", target_words(p),
                       p.compute_speed, kernel_draw_words(p));
  }
  const char* kind = p.part == topo::PerturbedPart::Nic      ? "NIC links"
                     : p.part == topo::PerturbedPart::NvLink ? "NVLink links"
                                                             : "spine links";
  if (p.failed) {
    const std::string detour = p.part == topo::PerturbedPart::Nic ? carrier_words(p, failures)
                               : p.part == topo::PerturbedPart::NvLink
                                   ? "; traffic inside the node goes through the NICs"
                                   : "; ECMP hashes over the spines both leaves still reach";
    return p.part == topo::PerturbedPart::Spine
               ? fmt::format("{} {} failed{}", kind, target_words(p), detour)
               : fmt::format("{} {} failed{}", target_words(p),
                             p.part == topo::PerturbedPart::Nic ? "NIC" : "NVLink", detour);
  }
  std::string out = p.part == topo::PerturbedPart::Spine
                        ? fmt::format("{} {}", kind, target_words(p))
                        : fmt::format("{} {}", target_words(p), kind);
  out += fmt::format(" at {:.3g} of their rate", p.bandwidth);
  if (p.extra_latency > Time{}) {
    out += fmt::format(", {:.3g} us slower", p.extra_latency.seconds() * 1e6);
  }
  return out;
}

// A straggler draw, its GPUs list[first...] (each its own perturbation): how many of how many,
// from what range, and the GPUs with their speeds (the eight slowest when there are more).
std::string draw_words(const std::vector<topo::Perturbation>& list, std::size_t first,
                       std::uint64_t seed) {
  const topo::StragglerDraw& d = *list[first].drawn;
  std::vector<std::pair<double, int>> drawn;  // (speed, GPU)
  for (std::size_t i = first; i < list.size() && list[i].entry == list[first].entry; ++i) {
    drawn.emplace_back(list[i].compute_speed, list[i].gpus.front());
  }
  std::sort(drawn.begin(), drawn.end());
  std::string gpus;
  for (std::size_t i = 0; i < std::min<std::size_t>(drawn.size(), 8); ++i) {
    gpus += fmt::format("{}{} at {:.3f}", i == 0 ? "" : ", ", drawn[i].second, drawn[i].first);
  }
  return fmt::format(
      "stragglers: {} of {} GPUs drawn with seed {}, compute at {:.3g} to {:.3g} of "
      "the model's rate{}; {}GPU {}{}",
      drawn.size(), d.population, seed, d.speed_min, d.speed_max, kernel_draw_words(list[first]),
      drawn.size() > 8 ? "the slowest: " : "", gpus, drawn.size() > 8 ? ", ..." : "");
}

// The experiment, its kind, and the cluster (and model) it ran on.
std::string header(const work::Experiment& e) {
  std::string out = fmt::format("experiment {}  (workload {})\n", e.name, work::kind_name(e.job));
  out += fmt::format("cluster        {}: {} nodes x {} {}", e.cluster.name, e.cluster.nodes,
                     e.cluster.gpus_per_node, e.cluster.gpu.name);
  if (e.model) {
    out += fmt::format(", model {}", e.model->name);
  }
  if (!e.calibration_note.empty() &&
      (e.calibration_scaling || !e.calibration || !e.calibration->base.empty())) {
    out += fmt::format("\ncalibration    {}", e.calibration_note);  // scaled, none, or a base
  }
  const auto& list = e.cluster.perturbations;
  const topo::Failures failures = topo::failures_of(e.cluster);
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i].part == topo::PerturbedPart::GpuType) {
      out += fmt::format("\nwhat-if        {}", type_words(list[i], e));
    } else if (!list[i].drawn) {
      out += fmt::format("\nwhat-if        {}", perturbation_words(list[i], failures));
    } else if (i == 0 || list[i - 1].entry != list[i].entry) {  // a draw's GPUs follow each other
      out += fmt::format("\nwhat-if        {}", draw_words(list, i, e.seed));
    }
  }
  return out + "\n";
}

// The first 20 flows of a flows run: ends, bytes and times.
std::string flows_table(const work::CaseResult& c) {
  std::string out = fmt::format("{:<12} {:>5} {:>5} {:>14} {:>12} {:>12} {:>12}\n", "flow", "src",
                                "dst", "bytes", "start_us", "latency_us", "finish_us");
  const auto& tasks = c.plan.tasks();
  const std::size_t shown = std::min<std::size_t>(tasks.size(), 20);
  for (std::size_t i = 0; i < shown; ++i) {
    const work::PlanTask& t = tasks[i];
    const sim::TaskTimes& tt = c.outcome.times[i];
    out += fmt::format("{:<12.40} {:>5} {:>5} {:>14} {:>12.3f} {:>12.3f} {:>12.3f}\n",
                       c.plan.label(t), t.src, t.dst, t.bytes.n, tt.start.seconds() * 1e6,
                       c.outcome.latency[i].seconds() * 1e6, tt.end.seconds() * 1e6);
  }
  if (tasks.size() > shown) {
    out += fmt::format("... {} more flows (see --json)\n", tasks.size() - shown);
  }
  return out;
}

// What the replayed trace held: ranks, kernels, host ops, pairs, collectives by op.
std::string chakra_text(const ChakraFigures& f) {
  std::string out = fmt::format(
      "chakra trace {} (schema {}): {} ranks, {} kernels ({} time), "
      "{} host ops, {} send/recv pairs ({} B)\n",
      f.source, f.version.empty() ? "unnamed" : f.version, f.ranks, f.kernels, f.compute,
      f.host_ops, f.sends, f.send_bytes);
  for (const auto& [op, counted] : f.collectives) {
    out += fmt::format("  {:<15} {:>6} nodes {:>16} B\n", op, counted.first, counted.second);
  }
  if (f.dropped_deps > 0) {
    out += fmt::format("  {} dependencies on nodes not in their file dropped (the first: {})\n",
                       f.dropped_deps, f.first_dropped);
  }
  return out;
}

// The nccl-tests-like table of a collective run, with the InfiniBand saving of two-tier.
std::string collective_table(const work::CollectiveJob& job, const CollectiveFigures& f) {
  std::string out = fmt::format("{} {} over {} ranks", work::op_name(job.op),
                                work::algorithm_name(job.algorithm), f.ranks);
  if (job.group) {
    out += fmt::format(" in each of {} {} groups", f.groups, work::dim_name(*job.group));
  }
  out +=
      job.chunks > 0 ? fmt::format(", {} chunk(s)\n", job.chunks) : std::string(", chunks auto\n");
  out += fmt::format("{:>14} {:>14} {:>12} {:>12} {:>16}  {}\n", "size(B)", "time(us)",
                     "algbw(GB/s)", "busbw(GB/s)", "IB bytes", "algorithm");
  for (const CollectiveRow& row : f.rows) {
    const std::string algo = row.protocol ? row.algorithm + "/" + *row.protocol : row.algorithm;
    out += fmt::format("{:>14} {:>14.2f} {:>12.2f} {:>12.2f} {:>16}  {}\n", row.bytes,
                       row.time_s * 1e6, row.algbw_GBps, row.busbw_GBps, row.ib_bytes, algo);
  }
  const CollectiveRow& last = f.rows.back();
  if (last.ib_bytes_flat) {
    const std::int64_t flat = *last.ib_bytes_flat;
    const std::int64_t ib = last.ib_bytes;
    out += fmt::format(
        "InfiniBand bytes {} vs {} if flat ({:+.1f}%)\n", ib, flat,
        flat > 0 ? 100.0 * static_cast<double>(ib - flat) / static_cast<double>(flat) : 0.0);
  }
  return out;
}

// Compute, communication and exposed time per phase and pass, of the busiest rank.
std::string phase_table(const work::CaseResult& c) {
  std::string out = fmt::format("{:<14} {:<5} {:>12} {:>12} {:>12}\n", "phase", "pass",
                                "compute_us", "comm_us", "exposed_us");
  for (std::size_t p = 0; p < c.summary.phases.size(); ++p) {
    const work::PhaseTime& ph = c.summary.phases[p];
    out += fmt::format("{:<14} {:<5} {:>12.1f} {:>12.1f} {:>12.1f}\n", c.plan.phases()[p].name(),
                       c.plan.phases()[p].pass(), ph.compute.seconds() * 1e6,
                       ph.comm.seconds() * 1e6, ph.exposed.seconds() * 1e6);
  }
  return out;
}

// The CP layer: balance, threshold, the critical rank's ring steps.
std::string cp_lines(const work::AttentionLayerJob& job, const work::CpDetails& cp,
                     const CpFigures& f) {
  std::string out =
      fmt::format("attention      {} over cp {} ({}, {} x ring {}), {}, {} layer(s), {}\n",
                  cp.algorithm, cp.degree, cp.balance, cp.ulysses_degree, cp.ring_degree,
                  work::mode_name(job.mode), job.layers, work::passes_name(job.passes));
  out += fmt::format(
      "balance        {}-token chunks; work units per rank {}..{}, attention FLOPs "
      "max/min {:.3f}\n",
      cp.block_tokens, f.min_work_units, f.max_work_units, f.flops_max_over_min);
  out += fmt::format(
      "overlap        threshold {:.0f} tokens per block over {}; minimum sequence "
      "per rank {:.0f}\n",
      cp.overlap_threshold_tokens, cp.ring_link, cp.min_seq_per_rank);
  if (f.steps.size() > 1) {
    out += fmt::format(
        "ring steps     rank {}, layer 0 forward: step, compute_us, transfer_us, "
        "wait_us\n",
        cp.steps_gpu);
    for (std::size_t j = 0; j < f.steps.size(); ++j) {
      const CpRingStep& st = f.steps[j];
      out += fmt::format(
          "  {:>4} {:>12.2f} {:>12} {:>10.2f}\n", j, st.compute_s * 1e6,
          st.transfer_s ? fmt::format("{:.2f}", *st.transfer_s * 1e6) : std::string("-"),
          st.wait_s * 1e6);
    }
  }
  return out;
}

// What the attention phase left exposed of its communication.
std::string cp_tail(const CpFigures& f) {
  return fmt::format(
      "attention      exposed communication {:.3f} us of {:.3f} us attention "
      "compute\n",
      f.attention_exposed_comm_s * 1e6, f.attention_compute_s * 1e6);
}

// The MoE layer's exchange, how tokens are routed, and how evenly they land.
std::string ep_setup_lines(const work::MoeLayerJob& job, const work::EpDetails& ep,
                           const EpFigures& f) {
  const std::string pieces = f.pieces ? fmt::format(" ({} pieces)", *f.pieces) : "";
  std::string out = fmt::format(
      "moe layer      {}{} over ep {} ({} group(s)), {} layer(s), {}, overlap {}, {} "
      "micro-batch(es), {} communication SMs\n",
      work::ep_algorithm_name(job.algorithm), pieces, ep.degree, ep.groups, job.layers,
      work::passes_name(job.passes), work::ep_overlap_name(job.overlap), ep.micro_batches,
      job.comm_sms);
  if (ep.hbm_share > 0) {
    out += fmt::format(
        "hbm shared     the exchanges draw {:.1f}% of a GPU's HBM while it computes: its "
        "memory-bound kernels take {:.3f}x as long\n",
        100 * ep.hbm_share, 1 / (1 - ep.hbm_share));
  }
  if (job.comm_sms > 0) {
    out += fmt::format(
        "sms held       the exchanges' kernels hold {} SMs for {:.3f} ms on the busiest GPU: "
        "the kernels beside them {:.3f} ms slower (at most {:.3f}x while beside one)\n",
        job.comm_sms, f.sm_held_s * 1e3, f.sm_tax_s * 1e3, ep.compute_slowdown);
  }
  std::string skew;
  if (f.zipf_s) {
    skew = fmt::format(" s={:g}", *f.zipf_s);
  } else if (f.dirichlet_alpha) {
    skew = fmt::format(" alpha={:g}", *f.dirichlet_alpha);
  }
  if (f.aux_loss_weight) {
    skew += fmt::format(", aux loss weight {:g}", *f.aux_loss_weight);
  }
  const work::MoeRouting& r = job.routing;
  out += fmt::format(
      "routing        {} tokens/GPU, top-{}, at most {} node(s); {}{}: {:.2f} nodes and {:.2f} "
      "GPUs per token\n",
      r.tokens_per_gpu, r.top_k, r.max_nodes_per_token, work::distribution_name(r.distribution),
      skew, ep.nodes_per_token_mean, ep.gpus_per_token_mean);
  out += fmt::format(
      "expert load    max/mean {:.3f} over ranks ({:.3f} over experts): {:.1f}% of expert "
      "compute idle\n",
      f.max_over_mean, f.expert_max_over_mean, 100 * f.idle_expert_fraction);
  return out;
}

// Where the experts are placed, what the balancer and the capacity did, the bytes of each
// exchange.
std::string ep_load_lines(const work::MoeLayerJob& job, const work::EpDetails& ep,
                          const EpFigures& f) {
  std::string out;
  if (f.placement != "even") {
    const auto [lo, hi] = std::minmax_element(f.slots_per_rank.begin(), f.slots_per_rank.end());
    out += fmt::format(
        "placement      {}: {} to {} expert slots per GPU{}\n", f.placement, *lo, *hi,
        job.redundant_experts > 0 ? fmt::format(", {} redundant copies", job.redundant_experts)
                                  : std::string());
  }
  if (!ep.balance_steps.empty()) {
    out += fmt::format(
        "balancer       bias over {} steps: max/mean over ranks {:.3f} at the "
        "first, {:.3f} at the last\n",
        ep.balance_steps.size(), ep.balance_steps.front(), ep.balance_steps.back());
  }
  if (f.capacity_factor) {
    out += fmt::format("capacity       factor {:g}: {} of {} selections dropped ({:.2f}%)\n",
                       *f.capacity_factor, ep.dropped, ep.selections, 100 * f.dropped_fraction);
  }
  out +=
      fmt::format("{:<14} {:<5} {:>16} {:>16}\n", "exchange", "pass", "IB bytes", "NVLink bytes");
  for (const auto& [key, bytes] : f.bytes) {
    out +=
        fmt::format("{:<14} {:<5} {:>16} {:>16}\n", key.second, key.first, bytes.ib, bytes.nvlink);
  }
  for (const auto& [label, call] : f.per_call) {
    out += fmt::format("per call       {}: {:.2f} us x {:g} on the busiest rank, before each "
                       "forward dispatch (in its comm_us)\n",
                       label, call.each_s * 1e6, call.calls);
  }
  return out;
}

// The busiest rank's streams; `step` is the run's step time, of which exposed is a share.
std::string ep_tail(const EpFigures& f, double step) {
  const double exposed = f.exposed_comm_s;
  return fmt::format(
      "busiest rank   {}: compute stream {:.1f} us, communication {:.1f} us ({:.1f} us "
      "exposed: {:.1f}% of the time, {:.0f}% hidden); compute/communication {:.2f}\n",
      f.busiest_rank, f.compute_s * 1e6, f.comm_s * 1e6, exposed * 1e6,
      step > 0 ? 100 * exposed / step : 0.0, 100 * f.hidden_comm_share, f.compute_comm_ratio);
}

// Where the busiest rank's step goes, in words: the shares of at least 1% of the step,
// largest first, the smaller ones together, and the time it idles.
std::string time_words(const work::TimeShares& shares) {
  const double step = shares.step_s;
  if (step <= 0) {
    return {};
  }
  std::string out = fmt::format("where it goes  of {:.3f} ms on the busiest GPU:", step * 1e3);
  const char* sep = " ";
  double shown = 0;
  for (const work::TimeShare& part : shares.parts) {
    if (part.seconds / step < 0.01) {
      break;
    }
    const char* what =
        part.kind == work::ShareKind::Computing ? "computing" : "waiting on the network";
    out += fmt::format("{}{} {} {:.0f}%", sep, part.phase, what, 100 * part.seconds / step);
    shown += part.seconds;
    sep = ", ";
  }
  const double busy = shares.busy_s;
  if (busy - shown >= 0.005 * step) {
    out += fmt::format("{}smaller phases {:.0f}%", sep, 100 * (busy - shown) / step);
  }
  if (shares.idle_s >= 0.005 * step) {
    out += fmt::format("; idle, waiting for other GPUs, {:.0f}%", 100 * shares.idle_s / step);
  }
  return out + "\n";
}

// A validation figure as the line prints it: four significant digits, and whole numbers
// (not 1.205e+04) from ten thousand up.
std::string figure(double v) {
  return std::abs(v) >= 1e4 ? fmt::format("{:.0f}", v) : fmt::format("{:.4g}", v);
}

// A published figure beside the prediction; in a what-if (what_ifs(file) not empty), labelled
// as the figure of the cluster or experiment that the published run had.
std::string validation_line(const std::optional<ValidationFigures>& f,
                            const std::vector<WhatIf>& what_ifs) {
  if (!f) {
    return {};
  }
  const work::Validation& v = f->validation;
  const std::string at = v.bytes ? fmt::format(" at {} B", v.bytes->n) : std::string();
  if (what_ifs.empty()) {
    return fmt::format("validation     {}{}: predicted {}, published {}, error {:+.1f}%  ({})\n",
                       v.metric, at, figure(f->predicted), figure(v.published),
                       100 * f->error, v.source);
  }
  if (std::ranges::all_of(what_ifs, &WhatIf::perturbation)) {
    return fmt::format(
        "validation     {}{}: predicted {} with the what-ifs above, healthy published "
        "figure {} ({:+.1f}%: the what-ifs' effect and the model's error together; "
        "run with --set perturbations=[] to validate)  ({})\n",
        v.metric, at, figure(f->predicted), figure(v.published), 100 * f->error, v.source);
  }
  return fmt::format(
      "validation     {}{}: predicted {} with {}, published figure {} for the experiment "
      "without them ({:+.1f}%: their effect and the model's error together; run without them "
      "to validate)  ({})\n",
      v.metric, at, figure(f->predicted), fmt::join(what_if_texts(what_ifs), ", "),
      figure(v.published), 100 * f->error, v.source);
}

// A CP layer, a MoE layer or both (a transformer layer): their settings and figures, the
// phases of the busiest rank, the time per layer and where it goes.
std::string layer_text(const ReportInput& in, const work::AttentionLayerJob* attention,
                       const work::MoeLayerJob* moe) {
  const work::CaseResult& c = in.result.cases.front();
  std::optional<CpFigures> cp;
  std::optional<EpFigures> ep;
  std::string out;
  if (attention != nullptr) {
    cp = cp_figures(c, *c.cp(), attention->layers, in.file.experiment.validation);
    out += cp_lines(*attention, *c.cp(), *cp);
  }
  if (moe != nullptr) {
    ep = ep_figures(c, *moe, *c.ep(), *in.result.cluster,
                    cp ? std::nullopt : in.file.experiment.validation);
    out += ep_setup_lines(*moe, *c.ep(), *ep) + ep_load_lines(*moe, *c.ep(), *ep);
  }
  out += phase_table(c);
  if (cp) {
    out += cp_tail(*cp);
  }
  if (ep) {
    out += ep_tail(*ep, c.summary.step.seconds());
  }
  const std::int64_t layers = cp ? attention->layers : moe->layers;
  const std::int64_t simulated = cp ? layers : c.ep()->layers_simulated;
  out += fmt::format(
      "layer time     {}{}\n", human_time(cp ? cp->layer_time_s : ep->layer_time_s),
      layers > 1 ? fmt::format(" (the step over {} layers{}; the phases above are "
                               "their sums)",
                               layers,
                               simulated < layers ? fmt::format(", {} simulated and the rest "
                                                                "repeated: a steady schedule",
                                                                simulated)
                                                  : std::string())
                 : std::string());
  out += time_words(work::time_shares(c.plan, c.summary));
  return out + validation_line(cp ? cp->validation : ep->validation, what_ifs(in.file));
}

// Schedule auto: what it tried, each step time or why it was rejected; empty otherwise.
std::string schedules_line(const work::StepDetails& d) {
  if (d.schedules_tried.empty()) {
    return {};
  }
  std::vector<std::string> ran;
  std::vector<std::string> rejected;
  for (const work::ScheduleTried& t : d.schedules_tried) {
    if (t.rejected.empty()) {
      ran.push_back(fmt::format("{} {:.3f} s", t.schedule, t.step_s));
    } else {
      // The problem's first clause: "/parallel: does not fit in memory: ... of HBM".
      const std::string_view why =
          std::string_view(t.rejected)
              .substr(0, std::min(t.rejected.find(" ("), t.rejected.find(';')));
      rejected.push_back(fmt::format("{} ({})", t.schedule, why));
    }
  }
  return fmt::format(
      "schedule       auto kept the fastest that fits of {}{}\n", fmt::join(ran, ", "),
      rejected.empty() ? std::string() : fmt::format("; rejected {}", fmt::join(rejected, "; ")));
}

// The busiest pipeline rank's step: its parts, the pipeline's phases, and each simulated
// layer's passes.
std::string pipeline_lines(const work::StepDetails& d, const StepBreakdown& b) {
  std::string exposed;
  if (b.exposed_layer_comm_s) {
    for (const auto& [kind, t] : *b.exposed_layer_comm_s) {
      exposed += fmt::format(", exposed {} {:.3f} s", kind, t);
    }
  }
  // The schedule's closed-form bubble share with the stages' times; none for Meta's
  // micro-batch groups.
  std::string ideal;
  if (d.bubble_closed_form) {
    ideal = fmt::format(", closed form {:.1f}%", 100 * *d.bubble_closed_form);
  }
  std::string out = fmt::format(
      "pipeline rank  {} ({} {}, {} micro-batches): {} {:.3f} s{}, bubble {:.3f} s ({:.1f}%{}), "
      "DP sync exposed {:.3f} s, optimizer {:.3f} s, parameter gather {:.3f} s, step overhead "
      "{:.3f} s\n",
      b.pipeline_rank, d.schedule,
      d.chunks > 1 ? fmt::format("x{}{}", d.chunks,
                                 d.group > 0 ? fmt::format(" in groups of {}", d.group) : "")
                   : std::string("pp") + std::to_string(d.stages),
      d.micro_batches, b.compute_s ? "compute" : "forward and backward",
      b.compute_s.value_or(b.forward_backward_s), exposed, b.bubble_s, 100 * b.bubble_fraction,
      ideal, b.dp_exposed_s, b.optimizer_s, b.param_gather_s, b.step_overhead_s);
  out += schedules_line(d);
  const PipelinePhases& ph = b.phases;
  out += fmt::format(
      "pipeline       warm-up {:.3f} s ({:.3f} idle), steady {:.3f} s ({:.3f} "
      "idle), cool-down {:.3f} s ({:.3f} idle)\n",
      ph.warm_up.s, ph.warm_up.idle_s, ph.steady.s, ph.steady.idle_s, ph.cool_down.s,
      ph.cool_down.idle_s);
  for (const work::LayerTiming& l : d.layers) {
    const std::optional<double> ratio = compute_comm_ratio(l);
    out += fmt::format("{:<14} forward {:.3f} ms, backward {:.3f} ms{}, compute/communication {}\n",
                       std::string(layer_kind(l.moe)) + " layer", l.forward.seconds() * 1e3,
                       l.backward.seconds() * 1e3,
                       pairs(d) ? fmt::format(", overlapped pair {:.3f} ms", l.pair.seconds() * 1e3)
                                : std::string(),
                       ratio ? fmt::format("{:.2f}", *ratio) : std::string("(no communication)"));
  }
  return out;
}

// A training step: throughput, where the busiest pipeline rank's time went, memory, folding.
std::string step_text(const work::StepDetails& d, const StepFigures& f,
                      const std::vector<WhatIf>& what_if) {
  std::string out = fmt::format(
      "throughput     {:.1f} tokens/s per GPU, {:.1f} model TFLOPs per GPU, MFU {:.1f}%\n",
      f.tokens_per_s_per_gpu, f.model_tflops_per_gpu, 100 * f.mfu);
  if (f.breakdown) {  // folded: split per pipeline rank
    out += pipeline_lines(d, *f.breakdown);
  }
  out += fmt::format("memory         peak {:.1f} GB per GPU of {:.1f} GB\n", f.memory.peak_GB,
                     f.memory.hbm_GB);
  out += fmt::format("folding        {}\n", d.folding);
  return out + validation_line(f.validation, what_if);
}

// Compute time by kernel class, largest first: the first six and the rest together.
std::string kernel_line(const work::KernelTally& tally) {
  const Time all = tally.total();
  if (all == Time{}) {
    return "";
  }
  std::vector<std::pair<work::KernelClass, Time>> shares = tally.nonzero();
  std::stable_sort(shares.begin(), shares.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  constexpr std::size_t kShown = 6;
  std::string out = "kernels        ";
  Time rest;
  for (std::size_t i = 0; i < shares.size(); ++i) {
    if (i < kShown) {
      out +=
          fmt::format("{}{} {:.1f}%", i == 0 ? "" : ", ", work::kernel_class_name(shares[i].first),
                      100 * shares[i].second.seconds() / all.seconds());
    } else {
      rest += shares[i].second;
    }
  }
  if (rest > Time{}) {
    out += fmt::format(", {} more {:.1f}%", shares.size() - kShown,
                       100 * rest.seconds() / all.seconds());
  }
  return out + " of compute time\n";
}

// Step time, bytes and the busiest rank of one case (a folded step's bytes are the whole
// cluster's: its probes' counted as often as the step runs them, CaseTraffic).
std::string case_lines(const work::CaseResult& c) {
  const work::Summary& s = c.summary;
  std::string out = fmt::format("step time      {}\n", human_time(s.step.seconds()));
  const bool folded = c.step() != nullptr && !c.step()->layers.empty();
  out += fmt::format("bytes          {} over NVLink, {} over InfiniBand{}\n",
                     human_bytes(static_cast<double>(s.nvlink_bytes.n)),
                     human_bytes(static_cast<double>(s.ib_bytes.n)),
                     folded ? " (every GPU's: the measured layer groups and DP syncs, counted "
                              "as often as the step runs them)"
                            : "");
  if (s.failed_links) {
    out += fmt::format("rerouted       {} flows, {} around the failed links{}\n", s.rerouted_flows,
                       human_bytes(static_cast<double>(s.rerouted_bytes.n)),
                       !folded ? ""
                       : c.step()->op_spans.empty()
                           ? " (the pipeline's activations; the measured layer groups' and DP "
                             "syncs' detours are in their times)"
                           : " (the pipeline's activations, and the layers and DP syncs of the "
                             "pipeline ranks run as real traffic; the other measured groups' and "
                             "DP syncs' detours are in their times)");
  }
  out += fmt::format("busiest rank   {} busy {} (mean {}){}\n", s.critical_rank,
                     human_time(s.ranks[s.critical_rank.index()].busy.seconds()),
                     human_time(s.mean_busy_s),
                     s.critical_gpu.empty() ? "" : fmt::format(", GPU model {}", s.critical_gpu));
  if (s.flops.n > 0) {
    out += fmt::format("compute        {:.4g} TFLOP\n", s.flops.n / 1e12);
  }
  return out + kernel_line(s.compute_kernels);
}

// What the engine did; the wall time and the events per wall second only when asked for.
std::string sim_line(const SimTotals& t, bool wall_time) {
  std::string out = fmt::format("simulated      {} events, {} flows", t.events, t.flows);
  if (t.cases > 1) {
    out += fmt::format(" over {} cases", t.cases);
  }
  if (t.probes > 0) {
    out += fmt::format(" (with {} probes measured before the case)", t.probes);
  }
  if (wall_time) {
    out += fmt::format(" in {:.3f} s", t.wall_s);
    if (t.wall_s > 0) {  // the engine's speed: events per wall-clock second of simulation
      const double rate = static_cast<double>(t.events) / t.wall_s;
      out += rate >= 1e5 ? fmt::format(" ({:.2f} M events/s)", rate / 1e6)
                         : fmt::format(" ({:.0f} events/s)", rate);
    }
  }
  if (t.approximate()) {
    out += fmt::format("; approximate solver, tolerance {:g} ({} flows moved)", t.tolerance,
                       t.flows_snapped);
  }
  return out + "\n";
}

// The lines of the workload's kind, with its validation; std::visit makes a new kind's lines
// required.
std::string kind_text(const ReportInput& in) {
  const work::Experiment& e = in.file.experiment;
  const work::CaseResult& c = in.result.cases.front();
  return std::visit(
      work::Overloaded{
          [&](const work::FlowsJob& /*job*/) { return flows_table(c); },
          [&](const work::ChakraJob& job) {
            return chakra_text(chakra_figures(job)) + phase_table(c) +
                   time_words(work::time_shares(c.plan, c.summary));
          },
          [&](const work::CollectiveJob& job) {
            const CollectiveFigures f = collective_figures(e, in.result, job);
            return collective_table(job, f) + validation_line(f.validation, what_ifs(in.file));
          },
          [&](const work::AttentionLayerJob& job) { return layer_text(in, &job, nullptr); },
          [&](const work::MoeLayerJob& job) { return layer_text(in, nullptr, &job); },
          [&](const work::TransformerLayerJob& job) {
            if (!job.moe) {
              return layer_text(in, &job.attention, nullptr);
            }
            const work::MoeLayerJob moe = job.moe_part(e.parallel);
            return layer_text(in, &job.attention, &moe);
          },
          [&](const work::TrainingStepJob& /*job*/) {
            return step_text(*c.step(), step_figures(c, e.validation), what_ifs(in.file));
          },
      },
      e.job);
}

}  // namespace

// The header, the kind's lines, a single case's lines, and the engine's totals.
std::string format_summary(const ReportInput& in) {
  std::string out = header(in.file.experiment) + kind_text(in);
  if (in.result.cases.size() == 1) {
    out += case_lines(in.result.cases.front());
  }
  return out + sim_line(sim_totals(in.file.experiment, in.result), in.wall_time);
}

}  // namespace hopsim::tools
