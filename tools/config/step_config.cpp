// The training-step workload parser: a transformer layer's keys plus the step's own.
#include <string>

#include <fmt/format.h>

#include "tools/config/keys/step_keys.hpp"
#include "tools/config/layer_config.hpp"

namespace hopsim::config {
namespace {

namespace sk = keys::step;

}  // namespace

namespace keys::step {

std::span<const std::string_view> schedule_choices() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const work::ScheduleRow* row : work::pipe_schedules()) {
      out.push_back(row->name);
    }
    out.emplace_back("auto");
    return out;
  }();
  return names;
}

std::string schedule_doc() {
  std::string out = "the pipeline schedule: ";
  for (const work::ScheduleRow* row : work::pipe_schedules()) {
    out += fmt::format("{}: {}; ", row->name, row->note);
  }
  return out +
         "auto simulates every schedule (interleaved with 2 to 8 virtual stages) that its "
         "shape allows, keeps the fastest whose memory fits and reports every one tried "
         "(`schedules_tried`) with its step time or why it was rejected";
}

}  // namespace keys::step

namespace {

// The pipeline schedule ("auto": every one tried), its virtual stages and micro-batch groups.
void parse_schedule(const Node& n, work::TrainingStepJob& job) {
  const std::size_t k = n.read(sk::kSchedule);
  const auto rows = work::pipe_schedules();
  job.schedule_auto = k == rows.size();  // the choice after the table's rows
  job.schedule = job.schedule_auto ? &work::default_schedule() : rows[k];
  if (job.schedule_auto && n.has(sk::kVirtualStages)) {
    n.at(sk::kVirtualStages)
        .fail(
            "schedule \"auto\" tries every schedule (interleaved with 2 to 8 virtual stages) "
            "itself; remove virtual_stages (--set workload.virtual_stages=null) or name a "
            "schedule");
  }
  if (n.has(sk::kVirtualStages)) {
    job.virtual_stages = static_cast<int>(n.read(sk::kVirtualStages));
  } else if (job.schedule->takes_chunks) {
    job.virtual_stages = 2;
  }
  if (n.has(sk::kMicrobatchGroup)) {
    job.microbatch_group = static_cast<int>(n.read(sk::kMicrobatchGroup));
  }
}

// Activation recomputation: its granularity, selective's modules, full's method and layers.
void parse_recompute(const Node& n, work::RecomputeSpec& recompute) {
  recompute.granularity = n.read_as<work::Recompute>(sk::kRecompute);
  if (n.has(sk::kRecomputeModules)) {
    const Node list = n.at(sk::kRecomputeModules);
    if (recompute.granularity != work::Recompute::Selective) {
      list.fail(
          "recompute_modules are what selective recomputation runs again; set recompute "
          "to \"selective\" or remove them (--set workload.recompute_modules=null)");
    }
    recompute.modules = parse_recompute_modules(list, sk::kRecomputeModules);
  }
  for (const std::string_view key : {sk::kRecomputeMethod.name, sk::kRecomputeNumLayers.name}) {
    if (n.has(key) && recompute.granularity != work::Recompute::Full) {
      n.at(key).fail(
          fmt::format("{} says which layers full recomputation runs again; set "
                      "recompute to \"full\" or remove it (--set workload.{}=null)",
                      key, key));
    }
  }
  recompute.method = n.read_as<work::RecomputeMethod>(sk::kRecomputeMethod);
  recompute.layers = static_cast<int>(n.read(sk::kRecomputeNumLayers));
}

std::vector<std::int64_t> parse_stage_layers(const Node& list) {
  list.expect_array();
  if (list.size() == 0) {
    list.fail("needs one entry per model stage (or remove it for the even split)");
  }
  std::vector<std::int64_t> layers;
  for (std::size_t i = 0; i < list.size(); ++i) {
    layers.push_back(list.at(i).read_item(sk::kStageLayers));
  }
  return layers;
}

// 2 bytes for bf16, else 4 (fp32) or 1 (fp8).
double bytes_of(std::string_view dtype) {
  return dtype == "bf16" ? 2.0 : dtype == "fp32" ? 4.0 : 1.0;
}

int parse_zero(const Node& n) {
  const auto zero = static_cast<int>(n.read(sk::kZero));
  if (zero == 2) {
    n.at(sk::kZero).fail(
        "ZeRO stage 2 (sharded gradients, whole parameters) is not simulated; "
        "0 (all-reduce), 1 (sharded optimizer states, Megatron's distributed "
        "optimizer) or 3 (parameters and gradients sharded too, FSDP)");
  }
  return zero;
}

// The step's other numbers: activation and moment dtypes, fixed cost, offload, loss kernel, fold.
void parse_step_settings(const Node& n, work::TrainingStepJob& job) {
  job.gemm_input_bytes = bytes_of(sk::kActivationDtype.choices[n.read(sk::kActivationDtype)]);
  job.fold = n.read(sk::kFold);
  job.moment_bytes =
      bytes_of(sk::kOptimizerMomentsDtype.choices[n.read(sk::kOptimizerMomentsDtype)]);
  job.step_overhead = Time::from_seconds(n.read(sk::kStepOverheadMs) * 1e-3);
  job.cpu_offload_layers =
      static_cast<int>(n.read_if(sk::kCpuOffloadLayers).value_or(job.cpu_offload_layers));
  job.cross_entropy =
      *work::cross_entropy_kernel_named(sk::kCrossEntropy.choices[n.read(sk::kCrossEntropy)]);
}

}  // namespace

template <>
work::TrainingStepJob parse_job<work::TrainingStepJob>(const Node& workload,
                                                       const JobParseContext& ctx) {
  const Node& n = workload;
  n.allow_only(sk::kSection);
  work::TrainingStepJob job;
  job.layer = parse_transformer_layer(n, ctx, work::TrainingStepJob::kKind);
  job.global_batch = n.read(sk::kGlobalBatch);
  parse_schedule(n, job);
  job.zero = parse_zero(n);
  parse_recompute(n, job.recompute);
  parse_step_settings(n, job);
  if (n.has(sk::kStageLayers)) {
    job.stage_layers = parse_stage_layers(n.at(sk::kStageLayers));
  }
  job.grad_bytes = bytes_of(sk::kGradDtype.choices[n.read(sk::kGradDtype)]);
  return job;
}

}  // namespace hopsim::config
