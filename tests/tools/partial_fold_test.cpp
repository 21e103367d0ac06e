// Partial folding: a folded step with perturbations measures the layer groups and stages they
// touch and agrees with the unfolded step, perturbation kind by perturbation kind.
#include <algorithm>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "tests/approx.hpp"
#include "tools/config/experiment_file.hpp"
#include "workloads/experiment/run.hpp"

namespace hopsim::config {
namespace {

const std::string kExperiments = std::string(HOPSIM_SOURCE_DIR) + "/configs/experiments/";
const std::string kSmall = kExperiments + "llama3-8b-step-32gpu.json";

double step_s(const std::string& file, const std::vector<std::string>& sets) {
  const work::RunResult r = work::run(load_experiment(file, sets).experiment);
  REQUIRE(r.ok());
  return r.cases.front().outcome.makespan.seconds();
}

// The folded and the unfolded step with `perturbations`, and the healthy folded one.
struct Three {
  double folded;
  double unfolded;
  double healthy;
};

Three both(const std::string& perturbations, const std::vector<std::string>& more = {}) {
  std::vector<std::string> sets = more;
  sets.push_back("perturbations=" + perturbations);
  std::vector<std::string> unfolded = sets;
  unfolded.emplace_back("workload.fold=false");
  return {step_s(kSmall, sets), step_s(kSmall, unfolded), step_s(kSmall, more)};
}

}  // namespace

TEST_CASE("partial folding agrees with the unfolded step within 1%, perturbation by kind") {
  // Llama 3 8B on 32 GPUs: TP 2, PP 4 (a node holds one replica's 4 stages), DP 4, interleaved.
  const std::vector<std::string> kinds = {
      R"([{"gpus": [3], "compute_speed": 0.95}])",    // a middle stage's GPU
      R"([{"gpus": [23], "compute_speed": 0.862}])",  // the last stage's: the output layer too
      R"([{"gpus": [7], "compute_speed": 0.7}])",
      R"([{"stragglers": 0.1, "compute_speed": [0.85, 0.97]}])",
      R"([{"gpus": [1, 10, 20, 30], "compute_speed": 0.85}])",  // four stages, four columns
      R"([{"nodes": [1], "links": "nic", "bandwidth": 0.25}])",
      R"([{"gpus": [3], "links": "nic", "failed": true}])",
      R"([{"gpus": [3], "links": "nvlink", "bandwidth": 0.5}])",
      R"([{"gpus": [12], "compute_speed": 0.9}, {"rails": [4], "links": "nic", "bandwidth": 0.5}])",
      R"([{"gpus": [3], "kernel_speed": [0.8, 1.0]}])",  // each kernel at its own speed
      R"([{"gpus": [1, 10, 20, 30], "compute_speed": 0.95, "kernel_speed": [0.85, 1.0]}])",
      R"([{"stragglers": 0.1, "compute_speed": [0.85, 0.97], "kernel_speed": [0.9, 1.0]}])",
  };
  for (const std::string& kind : kinds) {
    CAPTURE(kind);
    const Three t = both(kind);
    CHECK(t.folded == hopsim::test::approx(t.unfolded).epsilon(0.01));
    CHECK(t.folded >= t.healthy);
  }
}

TEST_CASE("partial folding: nodes of another GPU model, some or all") {
  // An H200 cluster with node 1 of H100s: their memory-bound kernels are 1.43x slower.
  const Three h100 = both(R"([{"nodes": [1], "gpu": "h100-dgx"}])", {"cluster=h200-hgx"});
  CHECK(h100.folded == hopsim::test::approx(h100.unfolded).epsilon(0.01));
  CHECK(h100.folded > h100.healthy);
  // Every node an H200 on the H100 cluster: no healthy group is left to pace a stage.
  const Three h200 = both(R"([{"nodes": [0, 1, 2, 3], "gpu": "h200-hgx"}])");
  CHECK(h200.folded == hopsim::test::approx(h200.unfolded).epsilon(0.01));
  CHECK(h200.folded < h200.healthy);
}

TEST_CASE("partial folding: spine links, each stage's DP syncs measured across them") {
  // Two pods of two nodes, two spines: each DP ring crosses the spine tier.
  const std::vector<std::string> pods = {"cluster.fabric.nodes_per_leaf=2",
                                         "cluster.fabric.spines=2"};
  const std::vector<std::string> kinds = {
      R"([{"links": "spine", "leaves": [0], "bandwidth": 0.25}])",
      R"([{"links": "spine", "spines": [0], "failed": true}])",
      R"([{"links": "spine", "leaves": [0, 1, 2, 3, 4, 5, 6, 7], "bandwidth": 0.1}])",
      R"([{"links": "spine", "spines": [1], "bandwidth": 0.2, "extra_latency_us": 5}])",
  };
  for (const std::string& kind : kinds) {
    CAPTURE(kind);
    const Three t = both(kind, pods);
    CHECK(t.folded == hopsim::test::approx(t.unfolded).epsilon(0.01));
    CHECK(t.folded >= t.healthy);
  }
  CHECK(both(kinds[0], pods).folded > 1.1 * both(kinds[0], pods).healthy);  // leaf 0 at 0.25
}

TEST_CASE("folding places the layer probes where the mesh's order puts the first group") {
  // CP 2 across pods (order tp, pp, dp, cp: a CP pair is GPUs 16 apart). Measured on GPUs
  // 0 to 3 its CP traffic stayed in one node (1.020 s); at its place it crosses the fabric.
  // Unfolded, the CP exchanges also share each NIC with the DP syncs, which a healthy folded
  // step measures apart (only a rank that a perturbed link touches runs its layers and syncs
  // together): 2.6% short.
  const std::vector<std::string> cp_across = {"cluster.fabric.nodes_per_leaf=2", "parallel.cp=2",
                                              "parallel.dp=2",
                                              R"(parallel.order=["tp", "pp", "dp", "cp"])"};
  const Three t = both("[]", cp_across);
  CHECK(t.folded < t.unfolded);
  CHECK(t.folded == hopsim::test::approx(t.unfolded).epsilon(0.03));
  CHECK(t.folded > 1.03);
}

namespace {

// DeepSeek-V3 cut to 8 layers on 4 H800 nodes in two pods: PP 2 (a pod each), EP 16 over a
// stage's two nodes, 1F1B, no recomputation (selective runs folded only).
const std::vector<std::string> kSmallMoe = {"cluster=h800-deepseek",
                                            "cluster.nodes=4",
                                            "cluster.fabric.nodes_per_leaf=2",
                                            "model.layers=8",
                                            "parallel.pp=2",
                                            "parallel.dp=16",
                                            "parallel.ep=16",
                                            "workload.global_batch=64",
                                            "workload.schedule=1f1b",
                                            "workload.recompute=none",
                                            "workload.recompute_modules=null",
                                            "validation=null"};

Three moe_both(const std::string& perturbations, const std::string& algorithm) {
  std::vector<std::string> sets = kSmallMoe;
  sets.push_back("workload.moe.algorithm=" + algorithm);
  sets.push_back("perturbations=" + perturbations);
  std::vector<std::string> unfolded = sets;
  unfolded.emplace_back("workload.fold=false");
  std::vector<std::string> healthy = sets;
  healthy.back() = "perturbations=[]";
  const std::string file = kExperiments + "deepseek-v3-step.json";
  return {step_s(file, sets), step_s(file, unfolded), step_s(file, healthy)};
}

}  // namespace

TEST_CASE("partial folding of a MoE step, DeepEP's normal and low-latency exchanges") {
  // Low-latency flows go through the NICs alone, as a kind of route, so a layer group moves to
  // its place (and unfolds) like any other.
  const std::vector<std::string> kinds = {
      "[]",
      R"([{"gpus": [3], "links": "nic", "bandwidth": 0.5}])",
      R"([{"gpus": [5], "compute_speed": 0.9}])",
      R"([{"gpus": [3], "links": "nic", "failed": true}])",
      R"([{"gpus": [3], "links": "nvlink", "bandwidth": 0.5}])",
  };
  for (const char* algorithm : {"two_tier", "low_latency"}) {
    for (const std::string& kind : kinds) {
      CAPTURE(algorithm);
      CAPTURE(kind);
      const Three t = moe_both(kind, algorithm);
      CHECK(t.folded == hopsim::test::approx(t.unfolded).epsilon(0.01));
      CHECK(t.folded >= t.healthy);
    }
  }
  // Spine links between the pods: every pipeline column whose activations cross the changed
  // links runs beside the first (one column alone came out 1.8% short). Low-latency
  // exchanges also cross them, inside a node too, and meet the activations there: the touched
  // stage runs as its layer group's real layers, which the columns beside the first share (the
  // group measured apart came out 3.6% short).
  for (const char* leaf : {"0", "5"}) {
    CAPTURE(leaf);
    const std::string spine =
        fmt::format(R"([{{"links": "spine", "leaves": [{}], "bandwidth": 0.1}}])", leaf);
    const Three normal = moe_both(spine, "two_tier");
    CHECK(normal.folded == hopsim::test::approx(normal.unfolded).epsilon(0.01));
    CHECK(normal.folded > normal.healthy);
    const Three low = moe_both(spine, "low_latency");
    CHECK(low.folded == hopsim::test::approx(low.unfolded).epsilon(0.01));
    CHECK(low.folded > 1.3 * low.healthy);
  }
}

TEST_CASE("partial folding under DualPipe: a rank's two stages at its own times") {
  // DualPipe runs folded only, so no unfolded step to agree with: each rank holds stages r
  // and p - 1 - r, and a touched rank runs both at its own measured times (its MoE pair
  // measured on its group too). Six layers (three dense, three MoE) on PP 2 fit 80 GB.
  std::vector<std::string> dual = kSmallMoe;
  dual.emplace_back("model.layers=6");
  dual.emplace_back("workload.schedule=dualpipe");
  const std::string file = kExperiments + "deepseek-v3-step.json";
  const auto with = [&](const std::string& perturbations) {
    std::vector<std::string> sets = dual;
    sets.push_back("perturbations=" + perturbations);
    return step_s(file, sets);
  };
  const double healthy = with("[]");
  const double one = with(R"([{"gpus": [3], "compute_speed": 0.8}])");
  const double other = with(R"([{"gpus": [19], "compute_speed": 0.8}])");  // rank 1
  const double all = with(R"([{"nodes": [0, 1, 2, 3], "compute_speed": 0.8}])");
  CHECK(one > healthy * 1.1);
  CHECK(one == hopsim::test::approx(other).epsilon(1e-9));  // the ranks mirror each other
  CHECK(one <= all);
  CHECK(all < healthy / 0.8);  // communication does not slow
  CHECK(with(R"([{"gpus": [3], "links": "nic", "failed": true}])") > healthy);
  // Spine links that the pipeline's activations cross: two columns, side by side.
  CHECK(with(R"([{"links": "spine", "leaves": [0], "bandwidth": 0.1}])") > healthy);
  const ExperimentFile f = load_experiment(file, [&] {
    std::vector<std::string> sets = dual;
    sets.emplace_back(R"(perturbations=[{"gpus": [3], "compute_speed": 0.8}])");
    return sets;
  }());
  const work::RunResult r = work::run(f.experiment);
  REQUIRE(r.ok());
  CHECK(std::ranges::count_if(r.probes, [](const work::ProbeResult& p) {
          return p.name.starts_with("moe layer dualpipe pair @ stage 0 GPUs 0, 1");
        }) == 1);
}

TEST_CASE("partial folding: GPUs of one group that draw per kernel wait for each other") {
  // Each TP sync waits for the slower of the pair's draws, so a group whose GPUs draw is
  // measured with its draws, over 16 layers in a row (at each GPU's mean speed it came out
  // 0.7% short for a TP pair, 2.2% for a whole node). Left: unfolded, a stage's time varies
  // from micro-batch to micro-batch and the pipeline waits on the slower ones, which the mean
  // layer does not (a whole node, four stages of one column: 0.3% to 1.0% short over seeds).
  const Three pair = both(R"([{"gpus": [2, 3], "kernel_speed": [0.8, 1.0]}])");
  CHECK(pair.folded == hopsim::test::approx(pair.unfolded).epsilon(0.005));
  const Three node = both(R"([{"nodes": [0], "kernel_speed": [0.8, 1.0]}])");
  CHECK(node.folded < node.unfolded);
  CHECK(node.folded == hopsim::test::approx(node.unfolded).epsilon(0.015));
  CHECK(node.folded > node.healthy * 1.1);
  const ExperimentFile f =
      load_experiment(kSmall, {R"(perturbations=[{"gpus": [3], "kernel_speed": [0.8, 1.0]}])"});
  const work::RunResult r = work::run(f.experiment);
  REQUIRE(r.ok());
  CHECK(std::ranges::count_if(r.probes, [](const work::ProbeResult& p) {
          return p.name == "dense layer bwd @ stage 1 GPUs 2, 3 x16";
        }) == 1);
}

TEST_CASE("partial folding: a failed NVLink's TP traffic meets its DP syncs on one NIC") {
  // The layer group measured alone is 48% slower; its TP all-reduces also share the NIC with
  // the stage's gradient buckets, so the touched ranks run as their group's real layers and
  // DP collectives. Measured apart, the step came out 3.6% short, and 10.7% short with PP 1
  // and DP 16, where the buckets overlap every layer's backward.
  const std::string failed = R"([{"gpus": [3], "links": "nvlink", "failed": true}])";
  const Three t = both(failed);
  CHECK(t.folded == hopsim::test::approx(t.unfolded).epsilon(0.005));
  CHECK(t.folded > t.healthy * 1.1);
  const Three flat = both(failed, {"parallel.pp=1", "parallel.dp=16", "workload.schedule=1f1b",
                                   "workload.virtual_stages=1"});
  CHECK(flat.folded == hopsim::test::approx(flat.unfolded).epsilon(0.005));
  CHECK(flat.folded > flat.healthy * 1.1);
  const ExperimentFile f = load_experiment(kSmall, {"perturbations=" + failed});
  const work::RunResult r = work::run(f.experiment);
  REQUIRE(r.ok());
  const std::string& folding = r.cases.front().step()->folding;
  CHECK(folding.find("pipeline ranks 0, 1, 2, 3 run as their layer group's real layers") !=
        std::string::npos);
  // The bytes as the unfolded step moves them: the detoured TP traffic on InfiniBand (the
  // touched groups' own probes), the pipeline's detoured activations in one column only.
  const work::RunResult unfolded = work::run(
      load_experiment(kSmall, {"perturbations=" + failed, "workload.fold=false"}).experiment);
  REQUIRE(unfolded.ok());
  const work::Summary& a = r.cases.front().summary;
  const work::Summary& b = unfolded.cases.front().summary;
  CHECK(a.nvlink_bytes.n == b.nvlink_bytes.n);
  CHECK(a.ib_bytes.n == b.ib_bytes.n);
  CHECK(a.ib_bytes.n > r.cases.front().summary.nvlink_bytes.n / 5);
}

TEST_CASE("partial folding measures the touched groups as probes of their own") {
  const ExperimentFile f =
      load_experiment(kSmall, {R"(perturbations=[{"gpus": [12], "compute_speed": 0.9}])"});
  const work::RunResult r = work::run(f.experiment);
  REQUIRE(r.ok());
  std::vector<std::string> touched;
  for (const work::ProbeResult& p : r.probes) {
    if (p.name.find(" @ ") != std::string::npos) {
      touched.push_back(p.name);
    }
  }
  // GPU 12: node 1, local 4: pipeline rank 2, DP 1; its TP pair is GPUs 12 and 13.
  CHECK(touched == std::vector<std::string>{"dense layer fwd @ stage 2 GPUs 12, 13",
                                            "dense layer bwd @ stage 2 GPUs 12, 13"});
  const std::string& folding = r.cases.front().step()->folding;
  CHECK(folding.find("pipeline rank 2 touched: dense layers +") != std::string::npos);
  CHECK(folding.find("optimizer at 0.9") != std::string::npos);
}

TEST_CASE("partial folding: one slow GPU of 16,384 costs Llama 3 405B's step, folded") {
  const std::string big = kExperiments + "llama3-405b-8k-16384gpu.json";
  const double healthy = step_s(big, {});
  const double slow = step_s(big, {R"(perturbations=[{"gpus": [5000], "compute_speed": 0.95}])"});
  const double nic =
      step_s(big, {R"(perturbations=[{"gpus": [5000], "links": "nic", "failed": true}])"});
  CHECK(slow > healthy);
  CHECK(slow < healthy / 0.95);  // only stage 1 of 16 is slower
  CHECK(nic > healthy);
}

TEST_CASE("partial folding refuses what it cannot fold") {
  const auto fails = [](const std::string& file, const std::vector<std::string>& sets,
                        const std::string& message) {
    try {
      (void)load_experiment(file, sets);
      FAIL("loaded");
    } catch (const ConfigError& e) {
      CHECK(std::string(e.what()).ends_with(message));
    }
  };
  fails(kExperiments + "deepseek-v3-step.json",
        {"cluster.fabric.nodes_per_leaf=8",
         R"(perturbations=[{"links": "spine", "spines": [0], "bandwidth": 0.5}])"},
        "/perturbations: the perturbed spine links carry the activations of 128 pipeline "
        "columns; a folded step runs a pipeline for each and takes at most 64; unfold it "
        "(\"fold\": false in the workload, or --no-fold)");
  fails(kSmall,
        {"workload.zero=3", R"(perturbations=[{"gpus": [3], "links": "nic", "failed": true}])"},
        "/perturbations: a folded ZeRO-3 step cannot place link perturbations: its per-layer "
        "parameter gathers and gradient reductions run on every stage at once and share the "
        "perturbed NICs across stages and with the layers' own traffic, which folding measures "
        "apart; unfold it (\"fold\": false in the workload, or --no-fold), or use ZeRO-1");
  // Compute alone still folds under ZeRO-3 (1.213 s against 1.222 s unfolded).
  const Three slow = both(R"([{"gpus": [3], "compute_speed": 0.9}])", {"workload.zero=3"});
  CHECK(slow.folded == hopsim::test::approx(slow.unfolded).epsilon(0.01));
  fails(kExperiments + "llama3-405b-8k-16384gpu.json",
        {R"(perturbations=[{"stragglers": 0.05, "compute_speed": [0.85, 0.97]}])"},
        "/perturbations: the perturbations touch 692 layer groups that run differently; a folded "
        "step simulates each on its own and takes at most 256; unfold it (\"fold\": false in "
        "the workload, or --no-fold)");
}

}  // namespace hopsim::config
