// The terminal summary of a report: what ran on what, the kind's table, and per-case lines.
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tools/commands/report.hpp"

namespace hopsim::tools {
namespace {

using Json = nlohmann::ordered_json;

std::string header(const Json& r) {
  const Json& c = r["cluster"];
  std::string out = fmt::format("experiment {}  (workload {})\n", r["experiment"].get<std::string>(),
                                r["workload"].get<std::string>());
  out += fmt::format("cluster        {}: {} nodes x {} {}", c["name"].get<std::string>(),
                     c["nodes"].get<int>(), c["gpus_per_node"].get<int>(),
                     c["gpu"].get<std::string>());
  if (!r["model"].is_null()) {
    out += fmt::format(", model {}", r["model"].get<std::string>());
  }
  return out + "\n";
}

std::string flows_table(const Json& flows) {
  std::string out = fmt::format("{:<12} {:>5} {:>5} {:>14} {:>12} {:>12} {:>12}\n", "flow", "src",
                                "dst", "bytes", "start_us", "latency_us", "finish_us");
  const std::size_t shown = std::min<std::size_t>(flows.size(), 20);
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& f = flows[i];
    out += fmt::format("{:<12.40} {:>5} {:>5} {:>14} {:>12.3f} {:>12.3f} {:>12.3f}\n",
                       f["id"].get<std::string>(), f["src"].get<int>(), f["dst"].get<int>(),
                       f["bytes"].get<std::int64_t>(), f["start_s"].get<double>() * 1e6,
                       f["latency_s"].get<double>() * 1e6, f["finish_s"].get<double>() * 1e6);
  }
  if (flows.size() > shown) {
    out += fmt::format("... {} more flows (see --json)\n", flows.size() - shown);
  }
  return out;
}

// The nccl-tests-like table of a collective run, with the InfiniBand saving of two-tier.
std::string collective_table(const Json& c) {
  std::string out = fmt::format("{} {} over {} ranks", c["op"].get<std::string>(),
                                c["algorithm"].get<std::string>(), c["ranks"].get<int>());
  if (!c["group"].is_null()) {
    out += fmt::format(" in each of {} {} groups", c["groups"].get<std::size_t>(),
                       c["group"].get<std::string>());
  }
  const int chunks = c["chunks"].get<int>();
  out += chunks > 0 ? fmt::format(", {} chunk(s)\n", chunks) : std::string(", chunks auto\n");
  out += fmt::format("{:>14} {:>14} {:>12} {:>12} {:>16}  {}\n", "size(B)", "time(us)",
                     "algbw(GB/s)", "busbw(GB/s)", "IB bytes", "algorithm");
  for (const auto& row : c["rows"]) {
    const std::string algo = row["protocol"].is_null()
                                 ? row["algorithm"].get<std::string>()
                                 : row["algorithm"].get<std::string>() + "/" +
                                       row["protocol"].get<std::string>();
    out += fmt::format("{:>14} {:>14.2f} {:>12.2f} {:>12.2f} {:>16}  {}\n",
                       row["bytes"].get<std::int64_t>(), row["time_s"].get<double>() * 1e6,
                       row["algbw_GBps"].get<double>(), row["busbw_GBps"].get<double>(),
                       row["ib_bytes"].get<std::int64_t>(), algo);
  }
  const auto& last = c["rows"].back();
  if (last.contains("ib_bytes_flat")) {
    const auto flat = last["ib_bytes_flat"].get<std::int64_t>();
    const auto ib = last["ib_bytes"].get<std::int64_t>();
    out += fmt::format("InfiniBand bytes {} vs {} if flat ({:+.1f}%)\n", ib, flat,
                       flat > 0 ? 100.0 * static_cast<double>(ib - flat) /
                                      static_cast<double>(flat)
                                : 0.0);
  }
  return out;
}

// Compute, communication and exposed time per phase and pass, of the busiest rank.
std::string phase_table(const Json& one) {
  std::string out = fmt::format("{:<14} {:<5} {:>12} {:>12} {:>12}\n", "phase", "pass",
                                "compute_us", "comm_us", "exposed_us");
  for (const auto& ph : one["phases"]) {
    out += fmt::format("{:<14} {:<5} {:>12.1f} {:>12.1f} {:>12.1f}\n",
                       ph["name"].get<std::string>(), ph["pass"].get<std::string>(),
                       ph["compute_s"].get<double>() * 1e6, ph["comm_s"].get<double>() * 1e6,
                       ph["exposed_comm_s"].get<double>() * 1e6);
  }
  return out;
}

// The CP layer: balance, threshold, the critical rank's ring steps.
std::string cp_lines(const Json& cp) {
  const auto units = cp["work_units_per_rank"].get<std::vector<int>>();
  const auto [lo, hi] = std::minmax_element(units.begin(), units.end());
  std::string out = fmt::format(
      "attention      {} over cp {} ({}, {} x ring {}), {}, {} layer(s), {}\n",
      cp["algorithm"].get<std::string>(), cp["degree"].get<int>(),
      cp["balance"].get<std::string>(), cp["ulysses_degree"].get<int>(),
      cp["ring_degree"].get<int>(), cp["mode"].get<std::string>(), cp["layers"].get<int>(),
      cp["passes"].get<std::string>());
  out += fmt::format("balance        {}-token chunks; work units per rank {}..{}, attention FLOPs "
                     "max/min {:.3f}\n",
                     cp["block_tokens"].get<std::int64_t>(), *lo, *hi,
                     cp["flops_max_over_min"].get<double>());
  out += fmt::format("overlap        threshold {:.0f} tokens per block over {}; minimum sequence "
                     "per rank {:.0f}\n",
                     cp["overlap_threshold_tokens"].get<double>(),
                     cp["ring_link"].get<std::string>(), cp["min_seq_per_rank"].get<double>());
  const auto& steps = cp["steps"];
  if (steps.size() > 1) {
    out += fmt::format("ring steps     rank {}, layer 0 forward: step, compute_us, transfer_us, "
                       "wait_us\n",
                       cp["steps_rank"].get<int>());
    for (const auto& st : steps) {
      out += fmt::format("  {:>4} {:>12.2f} {:>12} {:>10.2f}\n", st["step"].get<int>(),
                         st["compute_s"].get<double>() * 1e6,
                         st["transfer_s"].is_null()
                             ? std::string("-")
                             : fmt::format("{:.2f}", st["transfer_s"].get<double>() * 1e6),
                         st["wait_s"].get<double>() * 1e6);
    }
  }
  return out;
}

std::string cp_tail(const Json& cp) {
  return fmt::format("attention      exposed communication {:.3f} us of {:.3f} us attention "
                     "compute\n",
                     cp["attention_exposed_comm_s"].get<double>() * 1e6,
                     cp["attention_compute_s"].get<double>() * 1e6);
}

// The MoE layer: routing, load, balancer, capacity, the bytes of each exchange.
std::string ep_lines(const Json& ep) {
  const std::string pieces =
      ep.contains("pieces") ? fmt::format(" ({} pieces)", ep["pieces"].get<std::string>()) : "";
  std::string out = fmt::format(
      "moe layer      {}{} over ep {} ({} group(s)), {} layer(s), {}, overlap {}, {} "
      "micro-batch(es), {} communication SMs\n",
      ep["algorithm"].get<std::string>(), pieces, ep["degree"].get<int>(), ep["groups"].get<int>(),
      ep["layers"].get<int>(), ep["passes"].get<std::string>(), ep["overlap"].get<std::string>(),
      ep["micro_batches"].get<int>(), ep["comm_sms"].get<int>());
  std::string skew;
  if (!ep["zipf_s"].is_null()) {
    skew = fmt::format(" s={:g}", ep["zipf_s"].get<double>());
  } else if (!ep["dirichlet_alpha"].is_null()) {
    skew = fmt::format(" alpha={:g}", ep["dirichlet_alpha"].get<double>());
  }
  if (!ep["aux_loss_weight"].is_null()) {
    skew += fmt::format(", aux loss weight {:g}", ep["aux_loss_weight"].get<double>());
  }
  out += fmt::format(
      "routing        {} tokens/GPU, top-{}, at most {} node(s); {}{}: {:.2f} nodes and {:.2f} "
      "GPUs per token\n",
      ep["tokens_per_gpu"].get<std::int64_t>(), ep["top_k"].get<int>(),
      ep["max_nodes_per_token"].get<int>(), ep["distribution"].get<std::string>(), skew,
      ep["nodes_per_token_mean"].get<double>(), ep["gpus_per_token_mean"].get<double>());
  out += fmt::format(
      "expert load    max/mean {:.3f} over ranks ({:.3f} over experts): {:.1f}% of expert "
      "compute idle\n",
      ep["max_over_mean"].get<double>(), ep["expert_max_over_mean"].get<double>(),
      100 * ep["idle_expert_fraction"].get<double>());
  if (ep["placement"].get<std::string>() != "even") {
    const auto slots = ep["slots_per_rank"].get<std::vector<std::int64_t>>();
    const auto [lo, hi] = std::minmax_element(slots.begin(), slots.end());
    out += fmt::format("placement      {}: {} to {} expert slots per GPU{}\n",
                       ep["placement"].get<std::string>(), *lo, *hi,
                       ep["redundant_experts"].get<std::int64_t>() > 0
                           ? fmt::format(", {} redundant copies",
                                         ep["redundant_experts"].get<std::int64_t>())
                           : std::string());
  }
  if (!ep["balance_steps"].empty()) {
    const auto& steps = ep["balance_steps"];
    out += fmt::format("balancer       bias over {} steps: max/mean over ranks {:.3f} at the first, "
                       "{:.3f} at the last\n",
                       steps.size(), steps.front().get<double>(), steps.back().get<double>());
  }
  if (!ep["capacity_factor"].is_null()) {
    out += fmt::format("capacity       factor {:g}: {} of {} selections dropped ({:.2f}%)\n",
                       ep["capacity_factor"].get<double>(), ep["dropped_tokens"].get<std::int64_t>(),
                       ep["selections"].get<std::int64_t>(),
                       100 * ep["dropped_fraction"].get<double>());
  }
  out += fmt::format("{:<14} {:<5} {:>16} {:>16}\n", "exchange", "pass", "IB bytes",
                     "NVLink bytes");
  for (const auto& [pass, phases] : ep["bytes"].items()) {
    for (const auto& [name, bytes] : phases.items()) {
      out += fmt::format("{:<14} {:<5} {:>16} {:>16}\n", name, pass,
                         bytes["ib"].get<std::int64_t>(), bytes["nvlink"].get<std::int64_t>());
    }
  }
  return out;
}

// The busiest rank's streams; `step` is the run's step time, of which exposed is a share.
std::string ep_tail(const Json& ep, double step) {
  const double exposed = ep["exposed_comm_s"].get<double>();
  return fmt::format(
      "busiest rank   {}: compute stream {:.1f} us, communication {:.1f} us ({:.1f} us "
      "exposed: {:.1f}% of the time, {:.0f}% hidden); compute/communication {:.2f}\n",
      ep["busiest_rank"].get<int>(), ep["compute_s"].get<double>() * 1e6,
      ep["comm_s"].get<double>() * 1e6, exposed * 1e6, step > 0 ? 100 * exposed / step : 0.0,
      100 * ep["hidden_comm_share"].get<double>(), ep["compute_comm_ratio"].get<double>());
}

// Where the busiest rank's step goes, in words: each phase's compute and exposed
// communication (both passes together) as a share of the step, largest first, and the rest:
// time it waits with nothing of its own running (for another GPU, or a dependency).
std::string time_words(const Json& one) {
  const double step = one["step_time_s"].get<double>();
  if (step <= 0) {
    return {};
  }
  std::vector<std::pair<double, std::string>> parts;
  std::map<std::string, std::pair<double, double>> by_name;  // compute, exposed
  std::vector<std::string> order;
  for (const auto& ph : one["phases"]) {
    const std::string name = ph["name"].get<std::string>();
    if (by_name.find(name) == by_name.end()) {
      order.push_back(name);
    }
    auto& [compute, exposed] = by_name[name];
    compute += ph["compute_s"].get<double>();
    exposed += ph["exposed_comm_s"].get<double>();
  }
  double busy = 0;
  for (const std::string& name : order) {
    const auto& [compute, exposed] = by_name[name];
    if (compute > 0) {
      parts.emplace_back(compute, fmt::format("{} computing", name));
    }
    if (exposed > 0) {
      parts.emplace_back(exposed, fmt::format("{} waiting on the network", name));
    }
    busy += compute + exposed;
  }
  std::stable_sort(parts.begin(), parts.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out = fmt::format("where it goes  of {:.3f} ms on the busiest GPU:", step * 1e3);
  const char* sep = " ";
  double shown = 0;
  for (const auto& [time, what] : parts) {
    if (time / step < 0.01) {
      break;
    }
    out += fmt::format("{}{} {:.0f}%", sep, what, 100 * time / step);
    shown += time;
    sep = ", ";
  }
  if (busy - shown >= 0.005 * step) {
    out += fmt::format("{}smaller phases {:.0f}%", sep, 100 * (busy - shown) / step);
  }
  if (step - busy >= 0.005 * step) {
    out += fmt::format("; idle, waiting for other GPUs, {:.0f}%", 100 * (step - busy) / step);
  }
  return out + "\n";
}

// Step time, bytes and the busiest rank of one case.
std::string case_lines(const Json& c) {
  std::string out = fmt::format("step time      {:.3f} us\n", c["step_time_s"].get<double>() * 1e6);
  out += fmt::format("bytes          {} over NVLink, {} over InfiniBand\n",
                     c["bytes"]["nvlink"].get<std::int64_t>(), c["bytes"]["ib"].get<std::int64_t>());
  const auto& ranks = c["ranks"];
  out += fmt::format("busiest rank   {} busy {:.3f} us (mean {:.3f} us)\n",
                     ranks["critical"].get<int>(), ranks["max_s"].get<double>() * 1e6,
                     ranks["mean_s"].get<double>() * 1e6);
  if (c["flops"].get<double>() > 0) {
    out += fmt::format("compute        {:.4g} TFLOP\n", c["flops"].get<double>() / 1e12);
  }
  return out;
}

// A training step: throughput, where the busiest pipeline rank's time went, memory, folding.
std::string step_lines(const Json& s) {
  std::string out = fmt::format(
      "throughput     {:.1f} tokens/s per GPU, {:.1f} model TFLOPs per GPU, MFU {:.1f}%\n",
      s["tokens_per_s_per_gpu"].get<double>(), s["model_tflops_per_gpu"].get<double>(),
      100 * s["mfu"].get<double>());
  const Json& b = s["breakdown"];
  const Json& m = s["memory"];
  const std::string memory = fmt::format("memory         peak {:.1f} GB per GPU of {:.0f} GB\n",
                                         m["peak_GB"].get<double>(), m["hbm_GB"].get<double>());
  const std::string folding = fmt::format("folding        {}\n", s["folding"].get<std::string>());
  if (b.is_null()) {  // unfolded: no per-rank split
    return out + memory + folding;
  }
  std::string exposed;
  if (b["exposed_layer_comm_s"].is_object()) {
    for (const auto& [kind, t] : b["exposed_layer_comm_s"].items()) {
      exposed += fmt::format(", exposed {} {:.3f} s", kind, t.get<double>());
    }
  }
  const double compute = b["compute_s"].is_null() ? b["forward_backward_s"].get<double>()
                                                  : b["compute_s"].get<double>();
  out += fmt::format(
      "pipeline rank  {} ({} {}, {} micro-batches): {} {:.3f} s{}, bubble {:.3f} s ({:.1f}%), "
      "DP sync exposed {:.3f} s, optimizer {:.3f} s, parameter gather {:.3f} s\n",
      b["pipeline_rank"].get<int>(), s["schedule"].get<std::string>(),
      s["virtual_stages"].get<int>() > 1
          ? fmt::format("x{}", s["virtual_stages"].get<int>())
          : std::string("pp") + std::to_string(s["pp"].get<int>()),
      s["micro_batches"].get<std::int64_t>(),
      b["compute_s"].is_null() ? "forward and backward" : "compute", compute, exposed,
      b["bubble_s"].get<double>(), 100 * b["bubble_fraction"].get<double>(),
      b["dp_exposed_s"].get<double>(), b["optimizer_s"].get<double>(),
      b["param_gather_s"].get<double>());
  const Json& ph = b["pipeline_phases"];
  out += fmt::format("pipeline       warm-up {:.3f} s ({:.3f} idle), steady {:.3f} s ({:.3f} idle), "
                     "cool-down {:.3f} s ({:.3f} idle)\n",
                     ph["warm_up"]["s"].get<double>(), ph["warm_up"]["idle_s"].get<double>(),
                     ph["steady"]["s"].get<double>(), ph["steady"]["idle_s"].get<double>(),
                     ph["cool_down"]["s"].get<double>(), ph["cool_down"]["idle_s"].get<double>());
  for (const Json& l : s["layers"]) {
    out += fmt::format("{:<14} forward {:.3f} ms, backward {:.3f} ms{}, compute/communication {}\n",
                       l["kind"].get<std::string>() + " layer", l["forward_s"].get<double>() * 1e3,
                       l["backward_s"].get<double>() * 1e3,
                       s["schedule"] == "dualpipe"
                           ? fmt::format(", overlapped pair {:.3f} ms", l["pair_s"].get<double>() * 1e3)
                           : std::string(),
                       l["compute_comm_ratio"].is_null()
                           ? std::string("(no communication)")
                           : fmt::format("{:.2f}", l["compute_comm_ratio"].get<double>()));
  }
  return out + memory + folding;
}

}  // namespace

std::string format_summary(const Json& r) {
  std::string out = header(r);
  if (r.contains("flows")) {
    out += flows_table(r["flows"]);
  }
  if (r.contains("collective")) {
    out += collective_table(r["collective"]);
  }
  const bool layer = r.contains("cp") || r.contains("ep");
  if (r.contains("cp")) {
    out += cp_lines(r["cp"]);
  }
  if (r.contains("ep")) {
    out += ep_lines(r["ep"]);
  }
  if (layer) {
    const Json& one = r["results"].front();
    out += phase_table(one);
    if (r.contains("cp")) {
      out += cp_tail(r["cp"]);
    }
    if (r.contains("ep")) {
      out += ep_tail(r["ep"], one["step_time_s"].get<double>());
    }
    const Json& section = r.contains("cp") ? r["cp"] : r["ep"];
    const auto layers = section["layers"].get<std::int64_t>();
    out += fmt::format("layer time     {:.3f} us{}\n", section["layer_time_s"].get<double>() * 1e6,
                       layers > 1 ? fmt::format(" (the step over {} layers; the phases above are "
                                                "their sums)",
                                                layers)
                                  : std::string());
    out += time_words(one);
  }
  if (r.contains("step")) {
    out += step_lines(r["step"]);
  }
  if (r.contains("validation")) {
    const auto& v = r["validation"];
    const std::string at =
        v["bytes"].is_null() ? std::string() : fmt::format(" at {} B", v["bytes"].get<std::int64_t>());
    out += fmt::format("validation     {}{}: predicted {:.4g}, published {:.4g}, error "
                       "{:+.1f}%  ({})\n",
                       v["metric"].get<std::string>(), at, v["predicted"].get<double>(),
                       v["published"].get<double>(), 100 * v["error"].get<double>(),
                       v["source"].get<std::string>());
  }
  if (r["results"].size() == 1) {
    out += case_lines(r["results"].front());
  }
  const Json& sim = r["sim"];
  out += fmt::format("simulated      {} events, {} flows", sim["events"].get<std::uint64_t>(),
                     sim["flows"].get<std::uint64_t>());
  if (sim["cases"].get<std::size_t>() > 1) {
    out += fmt::format(" over {} cases", sim["cases"].get<std::size_t>());
  }
  if (sim["probes"].get<std::size_t>() > 0) {
    out += fmt::format(" (with {} probes the fold measured)", sim["probes"].get<std::size_t>());
  }
  if (sim.contains("wall_s")) {
    out += fmt::format(" in {:.3f} s", sim["wall_s"].get<double>());
  }
  if (sim.value("solver", "exact") == "approximate") {
    out += fmt::format("; approximate solver, tolerance {:g} ({} flows moved)",
                       sim["tolerance"].get<double>(), sim["flows_snapped"].get<std::uint64_t>());
  }
  return out + "\n";
}

}  // namespace hopsim::tools
