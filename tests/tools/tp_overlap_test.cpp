// TP overlap (workloads/cp/tp_overlap.hpp) end to end: a dense Llama 3 70B layer under TP 4 in
// one node, its TP all-gathers and reduce-scatters exposed, beside their GEMMs as userbuffers
// runs them, or as AsyncTP does.
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "tools/config/experiment_file.hpp"
#include "workloads/experiment/run.hpp"

namespace hopsim::config {
namespace {

const std::string kConfig =
    std::string(HOPSIM_SOURCE_DIR) + "/configs/experiments/llama31-70b-nemo-64gpu.json";

// One dense layer, forward and backward, 8K tokens, on the TP 4 group of GPUs 0-3.
work::RunResult layer(const std::string& overlap, int tp = 4) {
  const ExperimentFile file = load_experiment(
      kConfig, {"validation=null", "parallel.tp=" + std::to_string(tp), "parallel.cp=1", "parallel.pp=1",
                "parallel.dp=1",
                "workload={\"kind\": \"attention_layer\", \"seq_len\": 8192, \"mlp\": true, "
                "\"tp_overlap\": \"" +
                    overlap + "\"}"});
  work::RunResult r = work::run(file.experiment);
  REQUIRE(r.ok());
  REQUIRE(r.cases.size() == 1);
  return r;
}

const work::RankTime& gpu0(const work::RunResult& r) { return r.cases[0].summary.ranks[0]; }

}  // namespace

TEST_CASE("tp overlap: userbuffers hides most TP communication, its SMs slow the GEMMs") {
  const work::RunResult none = layer("none");
  const work::RunResult ub = layer("userbuffers");
  // Exposed: four collectives per pass, 64 MiB each over NVLink, about 1.3 ms of a 10 ms layer.
  CHECK(gpu0(none).exposed > Time::us(1000));
  // Beside the GEMMs: what stays exposed is the pipelined reduce-scatters' last pieces and the
  // ring steps' launches, under a quarter of it.
  CHECK(gpu0(ub).exposed.count_ps() * 4 < gpu0(none).exposed.count_ps());
  CHECK(ub.cases[0].summary.step < none.cases[0].summary.step);
  // The same bytes move, in more pieces.
  CHECK(ub.cases[0].summary.nvlink_bytes == none.cases[0].summary.nvlink_bytes);
  // The pipelined and bulk collectives hold 4-24 SMs of 132 and the ring exchanges 1: the GEMMs
  // beside them take longer, about 0.46 ms in all (the output projection 24/108 of its 0.37 ms,
  // the MLP's down projection 16/116 of 1.22 ms, QKV's and gate/up's weight gradients 24/108
  // of 0.45 ms and 4/128 of 2.45 ms, the ring-exchanged GEMMs' 4.5 ms 1/131).
  CHECK(gpu0(ub).compute > gpu0(none).compute + Time::us(350));
  CHECK(gpu0(ub).compute < gpu0(none).compute + Time::us(600));
}

TEST_CASE("tp overlap: AsyncTP holds no SMs, so the compute is the same, in pieces") {
  const work::RunResult none = layer("none");
  const work::RunResult async = layer("async_tp");
  CHECK(gpu0(async).exposed.count_ps() * 4 < gpu0(none).exposed.count_ps());
  // Each GEMM in 4 pieces of a quarter of its time, rounded to the picosecond.
  CHECK(gpu0(async).compute <= gpu0(none).compute + Time::ps(1000));
  CHECK(gpu0(async).compute + Time::ps(1000) >= gpu0(none).compute);
}

TEST_CASE("tp overlap: nothing to overlap at TP 1") {
  CHECK(layer("userbuffers", 1).cases[0].summary.step == layer("none", 1).cases[0].summary.step);
}

TEST_CASE("tp overlap: an unknown method names the key") {
  std::string message = "no error";
  try {
    load_experiment(kConfig, {"workload.tp_overlap=\"ring\""});
  } catch (const ConfigError& e) {
    message = e.what();
  }
  CHECK(message.find("/workload/tp_overlap") != std::string::npos);
}

}  // namespace hopsim::config
