// hopsim explain: closed forms from the model, the parallel degrees and the workload.
#include "tools/commands/explain_command.hpp"

#include <fmt/format.h>

#include "workloads/model/explain.hpp"
#include "workloads/model/layer_compute.hpp"

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

work::Peaks peaks_of(const config::Experiment& exp) {
  work::Peaks p;
  p.bf16_flops_per_s = exp.cluster.gpu.peak_bf16_tflops * 1e12;
  p.nvlink_Bps = exp.cluster.nvlink_peak.bytes_per_s;
  p.nic_Bps = exp.cluster.nic_peak.bytes_per_s;
  return p;
}

void cp_section(const config::Experiment& exp, Json& r) {
  const work::CpNumbers cp = work::cp_numbers(exp.parallel, peaks_of(exp));
  r["per_layer_flops_per_gpu"] =
      flops_json(work::attention_layer_flops(*exp.model, exp.parallel, exp.attention));
  r["cp"] = {{"degree", exp.parallel.cp},
             {"tokens_per_rank", exp.attention.seq_len / exp.parallel.cp},
             {"block_threshold_nvlink_tokens", cp.block_threshold_nvlink_tokens},
             {"block_threshold_network_tokens", cp.block_threshold_network_tokens},
             {"min_seq_per_rank_nvlink", cp.min_seq_per_rank_nvlink},
             {"min_seq_per_rank_network", cp.min_seq_per_rank_network},
             {"contiguous_work_ratio", cp.contiguous_work_ratio},
             {"contiguous_flops_ratio", cp.contiguous_flops_ratio},
             {"zigzag_units_per_rank", cp.zigzag_units_per_rank}};
}

void ep_section(const config::Experiment& exp, Json& r) {
  const work::EpNumbers ep = work::ep_numbers(*exp.model, exp.moe, peaks_of(exp));
  r["per_layer_flops_per_gpu"] =
      flops_json(work::moe_layer_flops(*exp.model, exp.parallel, exp.moe));
  r["ep"] = {{"degree", exp.parallel.ep},
             {"tokens_per_gpu", exp.moe.tokens_per_gpu},
             {"dispatch_bytes_per_gpu", ep.dispatch_bytes_per_gpu},
             {"combine_bytes_per_gpu", ep.combine_bytes_per_gpu},
             {"fwd_bwd_bytes_per_gpu", ep.fwd_bwd_bytes_per_gpu},
             {"layer_flops_per_gpu", ep.layer_flops_per_gpu},
             {"compute_s_at_peak", ep.compute_s_at_peak},
             {"comm_s_at_nic", ep.comm_s_at_nic}};
}

work::ComputeModel compute_model(const config::Experiment& exp) {
  work::Roofline roofline;
  roofline.peak_bf16_tflops = exp.cluster.gpu.peak_bf16_tflops;
  roofline.peak_fp8_tflops = exp.cluster.gpu.peak_fp8_tflops;
  roofline.hbm_GBps = exp.cluster.gpu.hbm_GBps;
  return work::ComputeModel(exp.calibration ? &*exp.calibration : nullptr, roofline);
}

Json pass_json(const work::KernelCosts& costs, work::ComputeTally& tally) {
  Json out = Json::object();
  Time total;
  for (const auto& [name, cost] : costs) {
    out[name] = {{"time_s", cost.time.seconds()},
                 {"flops", cost.flops.n},
                 {"hbm_bytes", cost.bytes.n},
                 {"tflops_per_s", cost.flops.n / cost.time.seconds() / 1e12},
                 {"source", work::source_name(cost.source)}};
    total += cost.time;
    tally.add(cost);
  }
  out["total_s"] = total.seconds();
  return out;
}

// Kernel times of one layer from the calibration table (or the roofline), and their sources.
void time_section(const config::Experiment& exp, Json& r) {
  const work::ComputeModel model = compute_model(exp);
  const work::LayerCosts costs =
      exp.kind == "moe_layer"
          ? work::moe_layer_costs(*exp.model, exp.parallel, exp.moe, model)
          : work::attention_layer_costs(*exp.model, exp.parallel, exp.attention, model);
  work::ComputeTally tally;
  r["per_layer_time_per_gpu"] = {{"fwd", pass_json(costs.fwd, tally)},
                                 {"bwd", pass_json(costs.bwd, tally)}};
  r["calibration"] = exp.calibration ? exp.calibration_file : "none (roofline only)";
  Json sources = Json::object();
  for (work::Source s : work::kSources) {
    sources[std::string(work::source_name(s))] = tally.share(s);
  }
  r["compute_sources"] = std::move(sources);
}

}  // namespace

Json explain(const config::Experiment& exp) {
  Json r;
  r["experiment"] = exp.name;
  r["workload"] = exp.kind;
  if (!exp.model) {
    r["note"] = "no model: the closed forms need one";
    return r;
  }
  const work::ModelSpec& m = *exp.model;
  const bool moe = exp.kind == "moe_layer";
  const std::int64_t seq = moe ? exp.moe.tokens_per_gpu : exp.attention.seq_len;
  const std::int64_t batch = moe ? 1 : exp.attention.micro_batch;
  r["model"] = m.name;
  r["parallel"] = {{"tp", exp.parallel.tp}, {"cp", exp.parallel.cp}, {"ep", exp.parallel.ep},
                   {"pp", exp.parallel.pp}, {"dp", exp.parallel.dp}};
  r["seq_len"] = seq;
  r["layers"] = m.layers;
  r["moe_layers"] = work::moe_layers(m);
  r["params"] = work::total_params(m);
  r["active_params"] = work::active_params(m);
  r["activation_bytes_per_gpu"] =
      work::activation_bytes_per_gpu(m, seq, batch, exp.parallel.tp, exp.parallel.cp);
  r["attention_flops_per_token"] = work::attention_flops_per_token(m, seq);
  r["dense_flops_per_token"] = 6 * work::active_params(m);
  if (exp.kind == "attention_layer") {
    cp_section(exp, r);
    time_section(exp, r);
  } else if (moe) {
    ep_section(exp, r);
    time_section(exp, r);
  }
  return r;
}

int explain_command(const RunOptions& o) {
  const config::Experiment exp = config::load_experiment(o.experiment, o.overrides);
  const Json r = explain(exp);
  if (o.json) {
    fmt::print("{}\n", r.dump(2));
    return 0;
  }
  for (const auto& [key, value] : r.items()) {
    if (value.is_object()) {
      fmt::print("{}:\n", key);
      for (const auto& [k, v] : value.items()) {
        fmt::print("  {:<32} {}\n", k, v.dump());
      }
    } else {
      fmt::print("{:<34} {}\n", key, value.is_number_float() ? fmt::format("{:.6g}", value.get<double>()) : value.dump());
    }
  }
  return 0;
}

}  // namespace hopsim::tools
