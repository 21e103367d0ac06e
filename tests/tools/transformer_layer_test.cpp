// The transformer layer end to end, from the default experiment scaled down: a dense layer is
// the attention layer with its MLP; a MoE layer is its attention part, then its MoE part, on
// the same GPUs; problems of the MoE part point at its keys.
#include <stdexcept>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "tests/approx.hpp"
#include "tools/config/experiment_file.hpp"
#include "workloads/cp/attention_closed_forms.hpp"
#include "workloads/experiment/run.hpp"

namespace hopsim::config {
namespace {

const std::string kDefault = std::string(HOPSIM_SOURCE_DIR) + "/configs/experiments/default.json";

// 16 H100 of the default, 4096-token sequences: CP 4 in each node, EP 16 over both nodes.
std::vector<std::string> small(std::vector<std::string> sets) {
  sets.insert(sets.begin(), "workload.seq_len=4096");
  return sets;
}

work::RunResult run_with(std::vector<std::string> sets) {
  const ExperimentFile file = load_experiment(kDefault, small(std::move(sets)));
  work::RunResult r = work::run(file.experiment);
  REQUIRE(r.ok());
  REQUIRE(r.cases.size() == 1);
  return r;
}

Time step(const work::RunResult& r) { return r.cases[0].summary.step; }

std::string error_of(const std::vector<std::string>& sets) {
  try {
    load_experiment(kDefault, small(sets));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("transformer layer: dense is the attention layer with its MLP, to the picosecond") {
  const work::RunResult dense = run_with({"workload.ffn=\"dense\""});
  CHECK_FALSE(dense.cases[0].ep() != nullptr);
  REQUIRE(dense.cases[0].cp() != nullptr);
  const work::RunResult attention = run_with(
      {"workload={\"kind\": \"attention_layer\", \"seq_len\": 4096, \"mlp\": true}"});
  CHECK(step(dense) == step(attention));
  CHECK(dense.cases[0].summary.nvlink_bytes == attention.cases[0].summary.nvlink_bytes);
}

TEST_CASE("transformer layer: forward is the attention part, then the MoE part") {
  // CP 1: the attention part is the same compute on every GPU, so the MoE part starts on all of
  // them at once and the layer's time is the sum of the parts'.
  const std::vector<std::string> mesh = {"parallel.cp=1", "parallel.dp=16",
                                         "workload.passes=\"forward\""};
  std::vector<std::string> sets = mesh;
  const work::RunResult layer = run_with(sets);
  REQUIRE(layer.cases[0].ep() != nullptr);
  sets.push_back("workload={\"kind\": \"attention_layer\", \"seq_len\": 4096, "
                 "\"passes\": \"forward\"}");
  const work::RunResult attention = run_with(sets);
  // The MoE part alone: the same tokens per GPU (4096 / (cp 1 x tp 1)), routing and seed.
  const ExperimentFile moe_file = load_experiment(
      std::string(HOPSIM_SOURCE_DIR) + "/configs/experiments/default.json",
      {"parallel.cp=1", "parallel.dp=16", "workload={\"kind\": \"moe_layer\", \"tokens_per_gpu\": "
                                          "4096, \"attention\": false, \"max_nodes_per_token\": 2}"});
  const work::RunResult moe = work::run(moe_file.experiment);
  REQUIRE(moe.ok());
  CHECK(step(layer) == step(attention) + step(moe));
  CHECK(layer.cases[0].summary.ib_bytes == moe.cases[0].summary.ib_bytes);
  CHECK(layer.cases[0].ep()->tokens_per_expert == moe.cases[0].ep()->tokens_per_expert);
}

TEST_CASE("transformer layer: CP and EP vary together, more CP, fewer tokens per GPU to route") {
  const work::RunResult cp4 = run_with({});
  const work::RunResult cp2 = run_with({"parallel.cp=2", "parallel.dp=8"});
  std::int64_t rows4 = 0;
  std::int64_t rows2 = 0;
  for (std::int64_t t : cp4.cases[0].ep()->tokens_per_rank) {
    rows4 += t;
  }
  for (std::int64_t t : cp2.cases[0].ep()->tokens_per_rank) {
    rows2 += t;
  }
  // Each GPU routes seq_len / cp tokens, top-8, twice (forward and backward each count once).
  CHECK(rows4 == 16 * 4096 / 4 * 8);
  CHECK(rows2 == 16 * 4096 / 2 * 8);
  // Half the tokens, about half the InfiniBand bytes (each its own routing draw).
  CHECK(static_cast<double>(cp4.cases[0].summary.ib_bytes.n) * 2 ==
        hopsim::test::approx(static_cast<double>(cp2.cases[0].summary.ib_bytes.n)).epsilon(0.01));
  CHECK(step(cp4) < step(cp2));
}

TEST_CASE("transformer layer: problems name the key") {
  CHECK(error_of({"workload.moe.top_k=300"}).find("/workload/moe/top_k") != std::string::npos);
  CHECK(error_of({"workload.moe.chunk_tokens=64", "workload.moe.algorithm=\"flat\""})
            .find("/workload/moe/chunk_tokens") != std::string::npos);
  CHECK(error_of({"workload.moe.bogus=1"}).find("/workload/moe") != std::string::npos);
  CHECK(error_of({"workload.ffn=\"dense\"", "workload.moe.algorithm=\"ring\""})
            .find("/workload/moe/algorithm") != std::string::npos);
  CHECK(error_of({"workload.ffn=\"dense\""}) == "no error");
  // 4100 tokens split over cp 4 (zigzag needs 8 | seq_len): the attention part says so first.
  CHECK(error_of({"workload.seq_len=4100"}).find("/workload/seq_len") != std::string::npos);
  // 4098 tokens, contiguous over cp 2: attention is fine, but 2049 per CP rank do not split
  // over tp 2 for routing.
  const std::string odd =
      error_of({"workload.seq_len=4098", "parallel.cp=2", "parallel.tp=2", "parallel.dp=4",
                "workload.cp.balance=\"contiguous\""});
  CHECK(odd.find("/workload/seq_len") != std::string::npos);
  const std::string llama = error_of(
      {"model=\"" + std::string(HOPSIM_SOURCE_DIR) + "/configs/models/llama3-8b.json\"",
       "workload.ffn=\"moe\""});
  CHECK(llama.find("no routed experts") != std::string::npos);
}

TEST_CASE("a dense layer's compute is the sum of its kernels, class by class") {
  // CP 1, DP 16: every GPU runs the same layer, forward and backward.
  const ExperimentFile file = load_experiment(
      kDefault, {"parallel.cp=1", "parallel.dp=16",
                 "workload={\"kind\": \"attention_layer\", \"seq_len\": 4096, \"mlp\": "
                 "true}"});
  const work::RunResult r = work::run(file.experiment);
  REQUIRE(r.ok());
  const auto& job = std::get<work::AttentionLayerJob>(file.experiment.job);
  const work::LayerCosts costs =
      work::attention_layer_costs(*file.experiment.model, file.experiment.parallel, job,
                                  work::compute_model(file.experiment), file.experiment.seed);
  work::KernelTally kernels;
  for (const work::KernelCosts* pass : {&costs.fwd, &costs.bwd}) {
    for (const auto& [name, cost] : *pass) {
      kernels.add(cost.kind, cost.time);
    }
  }
  const work::KernelTally& simulated = r.cases[0].summary.compute_kernels;
  for (std::size_t k = 0; k < work::kKernelClasses; ++k) {
    const auto kind = static_cast<work::KernelClass>(k);
    CAPTURE(work::kernel_class_name(kind));
    if (kind == work::KernelClass::AttentionFwd || kind == work::KernelClass::AttentionBwd) {
      // The builder calls attention per chunk of its layout; the closed form in one call.
      CHECK(simulated.time(kind).seconds() ==
            hopsim::test::approx(16 * kernels.time(kind).seconds()).epsilon(0.02));
    } else {
      CHECK(simulated.time(kind) == 16 * kernels.time(kind));
    }
  }
  CHECK(kernels.time(work::KernelClass::Norm) > Time{});
  CHECK(kernels.time(work::KernelClass::SwiGlu) > Time{});
  CHECK(kernels.time(work::KernelClass::Rotary) > Time{});
  CHECK(kernels.time(work::KernelClass::GemmWgrad) > Time{});
}

TEST_CASE("dtype fp8: BF16 attention and K/V between FP8 projections unless fp8 DPA is asked") {
  // The default's CP 4 ring inside a node: its K/V travel over NVLink.
  const std::string layer =
      "workload={\"kind\": \"attention_layer\", \"seq_len\": 4096, \"passes\": \"forward\"";
  const auto run_layer = [&](const std::string& keys) { return run_with({layer + keys + "}"}); };
  const work::RunResult bf16 = run_layer("");
  const work::RunResult fp8 = run_layer(", \"dtype\": \"fp8\"");
  const work::RunResult fp8_dpa =
      run_layer(", \"dtype\": \"fp8\", \"fp8_dot_product_attention\": true");
  const auto time_of = [](const work::RunResult& r, work::KernelClass k) {
    return r.cases[0].summary.compute_kernels.time(k);
  };
  const auto attention = work::KernelClass::AttentionFwd;
  const auto gemm = work::KernelClass::GemmFprop;
  // dtype fp8 alone: FP8 projections, the same attention kernel and ring traffic as BF16.
  CHECK(time_of(fp8, attention) == time_of(bf16, attention));
  CHECK(time_of(fp8, gemm) < time_of(bf16, gemm));
  CHECK(fp8.cases[0].summary.nvlink_bytes == bf16.cases[0].summary.nvlink_bytes);
  // With FP8 attention: the kernel takes the FP8 rate, and each K/V block half the bytes.
  CHECK(time_of(fp8_dpa, attention) != time_of(fp8, attention));
  CHECK(time_of(fp8_dpa, gemm) == time_of(fp8, gemm));
  CHECK(fp8_dpa.cases[0].summary.nvlink_bytes < fp8.cases[0].summary.nvlink_bytes);

  const std::string bf16_error = error_of({layer + ", \"fp8_dot_product_attention\": true}"});
  CHECK(bf16_error.find("/workload/fp8_dot_product_attention") != std::string::npos);
  CHECK(bf16_error.find("needs dtype \"fp8\"") != std::string::npos);
  const std::string torch_error =
      error_of({layer + ", \"dtype\": \"fp8\", \"fp8_dot_product_attention\": true, "
                        "\"cp\": {\"impl\": \"torch\"}}"});
  CHECK(torch_error.find("SDPA in BF16") != std::string::npos);
}

}  // namespace hopsim::config
