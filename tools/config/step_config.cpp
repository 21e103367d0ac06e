// The training-step workload parser: a transformer layer's keys plus the step's own.
#include <array>
#include <string>

#include <fmt/format.h>

#include "tools/config/layer_config.hpp"

namespace hopsim::config {
namespace {

constexpr std::array<std::string_view, 3> kRecomputes{"none", "selective", "full"};
constexpr std::array<std::string_view, 2> kRecomputeMethods{"uniform", "block"};
constexpr std::array<std::string_view, 2> kGradDtypes{"bf16", "fp32"};
constexpr std::array<std::string_view, 2> kActivationDtypes{"bf16", "fp8"};

}  // namespace

template <>
work::TrainingStepJob parse_job<work::TrainingStepJob>(const Node& workload,
                                                       const JobParseContext& ctx) {
  const Node& n = workload;
  n.allow_only(Section::TrainingStepWorkload);
  work::TrainingStepJob job;
  job.layer = parse_transformer_layer(n, ctx, work::TrainingStepJob::kKind);
  job.global_batch = n.at("global_batch").integer_in(1, std::int64_t{1} << 31);
  if (n.has("schedule")) {
    std::vector<std::string_view> names;
    for (const work::ScheduleRow* row : work::pipe_schedules()) {
      names.push_back(row->name);
    }
    names.emplace_back("auto");
    const std::size_t k = n.at("schedule").index_of(names);
    job.schedule_auto = k + 1 == names.size();
    job.schedule = job.schedule_auto ? &work::default_schedule() : work::pipe_schedules()[k];
  }
  if (job.schedule_auto && n.has("virtual_stages")) {
    n.at("virtual_stages")
        .fail(
            "schedule \"auto\" tries every schedule (interleaved with 2 to "
            "8 virtual stages) itself; remove virtual_stages "
            "(--set workload.virtual_stages=null) or name a schedule");
  }
  if (n.has("virtual_stages")) {
    job.virtual_stages = static_cast<int>(n.at("virtual_stages").integer_in(1, 1024));
  } else if (job.schedule->takes_chunks) {
    job.virtual_stages = 2;
  }
  if (n.has("microbatch_group")) {
    job.microbatch_group = static_cast<int>(n.at("microbatch_group").integer_in(1, 100'000));
  }
  if (n.has("zero")) {
    job.zero = static_cast<int>(n.at("zero").integer_in(0, 3));
    if (job.zero == 2) {
      n.at("zero").fail(
          "ZeRO stage 2 (sharded gradients, whole parameters) is not simulated; "
          "0 (all-reduce), 1 (sharded optimizer states, Megatron's distributed "
          "optimizer) or 3 (parameters and gradients sharded too, FSDP)");
    }
  }
  if (n.has("recompute")) {
    job.recompute.granularity =
        static_cast<work::Recompute>(n.at("recompute").index_of(kRecomputes));
  }
  if (n.has("recompute_modules")) {
    const Node& list = n.at("recompute_modules");
    if (job.recompute.granularity != work::Recompute::Selective) {
      list.fail(
          "recompute_modules are what selective recomputation runs again; set recompute "
          "to \"selective\" or remove them (--set workload.recompute_modules=null)");
    }
    job.recompute.modules = parse_recompute_modules(list);
  }
  for (const char* key : {"recompute_method", "recompute_num_layers"}) {
    if (n.has(key) && job.recompute.granularity != work::Recompute::Full) {
      n.at(key).fail(
          fmt::format("{} says which layers full recomputation runs again; set "
                      "recompute to \"full\" or remove it (--set workload.{}=null)",
                      key, key));
    }
  }
  if (n.has("recompute_method")) {
    job.recompute.method =
        static_cast<work::RecomputeMethod>(n.at("recompute_method").index_of(kRecomputeMethods));
  }
  if (n.has("recompute_num_layers")) {
    job.recompute.layers = static_cast<int>(n.at("recompute_num_layers").integer_in(1, 100'000));
  }
  if (n.has("activation_dtype")) {
    job.gemm_input_bytes = n.at("activation_dtype").index_of(kActivationDtypes) == 0 ? 2.0 : 1.0;
  }
  if (n.has("fold")) {
    job.fold = n.at("fold").boolean();
  }
  if (n.has("optimizer_moments_dtype")) {
    job.moment_bytes = n.at("optimizer_moments_dtype").index_of(kGradDtypes) == 0 ? 2.0 : 4.0;
  }
  if (n.has("step_overhead_ms")) {
    job.step_overhead = Time::from_seconds(n.at("step_overhead_ms").number_in(0, 1e6) * 1e-3);
  }
  if (n.has("cpu_offload_layers")) {
    job.cpu_offload_layers = static_cast<int>(n.at("cpu_offload_layers").integer_in(1, 100'000));
  }
  if (n.has("cross_entropy")) {
    const std::string name = n.at("cross_entropy").one_of({"unfused", "fused", "online"});
    job.cross_entropy = *work::cross_entropy_kernel_named(name);
  }
  if (n.has("stage_layers")) {
    const Node& list = n.at("stage_layers");
    list.expect_array();
    if (list.size() == 0) {
      list.fail("needs one entry per model stage (or remove it for the even split)");
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      job.stage_layers.push_back(list.at(i).integer_in(1, 100'000));
    }
  }
  if (n.has("grad_dtype")) {
    job.grad_bytes = n.at("grad_dtype").index_of(kGradDtypes) == 0 ? 2.0 : 4.0;
  }
  return job;
}

}  // namespace hopsim::config
