// hopsim's memory count against Megatron-LM's own estimate (its theoretical_memory_usage
// formula) on two shipped layouts, reconciled term by term: where they differ, by exactly what
// the formula counts and hopsim's model does not have (dropout masks, MHA's keys and values,
// a GeLU MLP's two tensors where SwiGLU keeps three), or the reverse.
#include <string>
#include <variant>
#include <vector>

#include <doctest/doctest.h>

#include "tests/approx.hpp"
#include "tools/config/experiment_file.hpp"
#include "workloads/step/megatron_estimate.hpp"

namespace hopsim::config {
namespace {

const std::string kExperiments = std::string(HOPSIM_SOURCE_DIR) + "/configs/experiments/";

struct Layout {
  work::StepShape shape;
  work::MegatronEstimate megatron;
  work::StageMemory rank0;
};

Layout layout_of(const std::string& file, const std::vector<std::string>& sets) {
  static std::vector<ExperimentFile> keep;  // the shapes point at their models
  keep.push_back(load_experiment(kExperiments + file, sets));
  const ExperimentFile& f = keep.back();
  const auto& job = std::get<work::TrainingStepJob>(f.experiment.job);
  const work::Mesh mesh(f.experiment.parallel);
  const work::JobEnv env{f.experiment.cluster, f.experiment.nccl, mesh, &*f.experiment.model,
                         f.experiment.seed, nullptr};
  Layout out;
  out.shape = job.shape(env);
  std::string why_not;
  const auto e = work::megatron_estimate(out.shape, why_not);
  REQUIRE(e.has_value());
  out.megatron = *e;
  out.rank0 = work::stage_memory(out.shape).front();
  return out;
}

// hopsim's bytes per token and hidden unit of one dense layer, from Megatron's 18 + 4 ffn / h:
// less the two 1-byte dropout masks (Llama has no dropout), less MHA's keys and values (4 h)
// for GQA's (4 kv_heads head_dim), plus SwiGLU's third ffn-wide tensor (2 ffn).
double reconciled_layer(const work::ModelSpec& m, double megatron) {
  const double h = static_cast<double>(m.hidden);
  return megatron - 2 - 4 + 4 * static_cast<double>(m.kv_heads * m.head_dim) / h +
         2 * static_cast<double>(m.ffn_hidden) / h;
}

}  // namespace

TEST_CASE("memory: hopsim beside Megatron's estimate, reconciled term by term") {
  // Llama 3 8B on 32 GPUs: TP 2, PP 4 x 2 chunks (4 layers each: rank 0 holds 8 of 32, as
  // Megatron's even split), DP 4, 8 micro-batches; and its 1F1B. FP32 main gradients are
  // Megatron's 6 bytes per parameter beside the distributed optimizer's 12 / dp.
  for (const char* schedule : {"\"interleaved\"", "\"1f1b\""}) {
    CAPTURE(schedule);
    std::vector<std::string> sets = {"workload.grad_dtype=\"fp32\"",
                                     std::string("workload.schedule=") + schedule};
    if (std::string(schedule) == "\"1f1b\"") {
      sets.emplace_back("workload.virtual_stages=1");
    }
    const Layout l = layout_of("llama3-8b-step-32gpu.json", sets);
    const work::ModelSpec& m = *l.shape.model;
    CHECK(l.megatron.layer_bytes_per_token_h == 32);  // 18 + 4 x 3.5
    CHECK(reconciled_layer(m, l.megatron.layer_bytes_per_token_h) == 34);
    // Weights and optimizer: the same parameters, less Megatron's final norm over pp.
    const double final_norm = 4096.0 / 4 / 2 * (6 + 12.0 / 4);
    CHECK(l.rank0.params + l.rank0.grads + l.rank0.optimizer ==
          hopsim::test::approx(l.megatron.weights_and_optimizer - final_norm));
    // Activations: the same micro-batches in flight (interleaved: 11 chunks of 4 layers = 32
    // x (1 + 3 / 8) layers; 1F1B: 4 micro-batches of 8 layers), each layer reconciled, less
    // the embedding's input and dropout Megatron keeps (Llama's embedding has no dropout).
    const double sb = 8192;
    const double penalty = std::string(schedule) == "\"1f1b\"" ? 1.0 : 1.0 + 3.0 / 8;
    const double embedding = (8 * sb * 4 + sb * 4096 * 4) * penalty / 2;
    CHECK(l.rank0.activations ==
          hopsim::test::approx((l.megatron.activations - embedding) * 34 / 32));
  }
}

TEST_CASE("memory: Megatron's interleaved penalty counts micro-batches that do not exist") {
  // Llama 3 405B at 16,384 GPUs: 16 micro-batches, PP 16 x 2 chunks. Megatron's formula holds
  // pp x (1 + 15 / 32) micro-batches' worth of layers in flight on the first stage, but only 16
  // exist: hopsim holds all 16 of rank 0's 7 layers (3 + 4 of its two chunks), and Megatron's
  // formula asks for 1.47 x 126 layers, 60% more, and a step that does not fit 80 GB.
  const Layout l = layout_of("llama3-405b-8k-16384gpu.json", {});
  const work::ModelSpec& m = *l.shape.model;
  CHECK(reconciled_layer(m, l.megatron.layer_bytes_per_token_h) == 31.75);
  const double per_layer = 8192.0 * 16384 * 31.75 / 8;
  CHECK(l.rank0.activations == hopsim::test::approx(16 * 7 * per_layer));
  CHECK(l.megatron.activations / 1e9 == hopsim::test::approx(96.64).epsilon(0.001));
  CHECK(l.megatron.total() > 85.03e9);
  // The formula declines what it does not describe.
  std::string why_not;
  const ExperimentFile ds = load_experiment(kExperiments + "deepseek-v3-step.json", {});
  const auto& job = std::get<work::TrainingStepJob>(ds.experiment.job);
  const work::Mesh mesh(ds.experiment.parallel);
  const work::JobEnv env{ds.experiment.cluster, ds.experiment.nccl, mesh, &*ds.experiment.model,
                         ds.experiment.seed, nullptr};
  CHECK_FALSE(work::megatron_estimate(job.shape(env), why_not).has_value());
  CHECK(why_not.find("no expert rows, no MLA latents") != std::string::npos);
}

}  // namespace hopsim::config
