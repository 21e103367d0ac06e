// Tests of load_experiment: files, overrides, the resolved copy, and the exact text of its errors.
#include "tools/config/experiment_file.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <cmath>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/approx.hpp"
#include "tests/temp_dir.hpp"
#include "workloads/compute/compute_speeds.hpp"
#include "workloads/experiment/run.hpp"

namespace hopsim::config {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kCluster = std::string(HOPSIM_SOURCE_DIR) + "/configs/clusters/h100-dgx.json";

// A scratch directory per test case.
class TempDir : public test::TempDir {
 public:
  TempDir() : test::TempDir("experiment_test") {}
};

// An experiment on h100-dgx (by path) with the given flows array.
json experiment(const json& flows) {
  return {{"cluster", kCluster}, {"workload", {{"kind", "flows"}, {"flows", flows}}}};
}

json read(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  return json::parse(in);
}

const json kTwoFlows = json::parse(R"([
  {"id": "a", "src": 0, "dst": 1, "bytes": 1000},
  {"id": "b", "src": 0, "dst": 9, "bytes": 2000, "after": ["a"]}
])");

}  // namespace

TEST_CASE("files that cannot be read") {
  const TempDir dir;
  const std::string missing = dir.path("missing.json");
  CHECK_THROWS_WITH_AS(load_experiment(missing, {}), (missing + ": no such file").c_str(),
                       ConfigError);
  const std::string sub = dir.write("sub/x.json", "{}");
  const std::string sub_dir = fs::path(sub).parent_path().string();
  CHECK_THROWS_WITH_AS(load_experiment(sub_dir, {}),
                       (sub_dir + ": is a directory, expected a JSON file").c_str(), ConfigError);
}

TEST_CASE("invalid JSON names the line and column") {
  const TempDir dir;
  const std::string p = dir.write("bad.json", "{\n  \"cluster\": \"x\",\n  \"workload\": {,\n}");
  CHECK_THROWS_WITH_AS(load_experiment(p, {}),
                       (p + ": invalid JSON at line 3, column 16: syntax error while parsing "
                            "object key - unexpected ','; expected string literal")
                           .c_str(),
                       ConfigError);
  const std::string empty = dir.write("empty.json", "");
  CHECK_THROWS_WITH_AS(load_experiment(empty, {}),
                       (empty + ": invalid JSON at line 1, column 1: syntax error while parsing "
                                "value - unexpected end of input; expected '[', '{', or a literal")
                           .c_str(),
                       ConfigError);
}

TEST_CASE("a cluster path that names no file is an error naming the experiment and that path") {
  const TempDir dir;
  const std::string p = dir.write("e.json", R"({"cluster": "nope.json",
      "workload": {"kind": "flows", "flows": []}})");
  CHECK_THROWS_WITH_AS(
      load_experiment(p, {}),
      (p + ": /cluster: cluster file \"" + dir.path("nope.json") + "\": no such file").c_str(),
      ConfigError);
}

TEST_CASE("bad flows: sizes, keys, ranks") {
  const TempDir dir;
  json j = experiment(kTwoFlows);
  j["workload"]["flows"][1]["bytes"] = -5;
  std::string p = dir.write("neg.json", j.dump());
  CHECK_THROWS_WITH_AS(load_experiment(p, {}),
                       (p + ": /workload/flows/1/bytes: must be >= 0, got -5").c_str(),
                       ConfigError);

  j = experiment(kTwoFlows);
  j["workload"]["flows"][0]["byte"] = 5;
  p = dir.write("key.json", j.dump());
  CHECK_THROWS_WITH_AS(
      load_experiment(p, {}),
      (p + R"(: /workload/flows/0: unknown key "byte"; did you mean "bytes"?)").c_str(),
      ConfigError);

  j = experiment(kTwoFlows);
  j["colour"] = "green";
  p = dir.write("top.json", j.dump());
  CHECK_THROWS_WITH_AS(load_experiment(p, {}),
                       (p + R"(: /: unknown key "colour"; expected one of "name", "description", )"
                            R"("cluster", "model", "calibration", "parallel", "workload", "seed", )"
                            R"("validation", "solver", "perturbations")")
                           .c_str(),
                       ConfigError);
  j.erase("colour");
  j["workloads"] = j["workload"];
  p = dir.write("top2.json", j.dump());
  CHECK_THROWS_WITH_AS(load_experiment(p, {}),
                       (p + R"(: /: unknown key "workloads"; did you mean "workload"?)").c_str(),
                       ConfigError);

  j = experiment(kTwoFlows);
  j["workload"]["flows"][1]["dst"] = 128;  // h100-dgx has ranks 0..127
  p = dir.write("rank.json", j.dump());
  CHECK_THROWS_WITH_AS(
      load_experiment(p, {}),
      (p + ": /workload/flows/1/dst: GPU 128 is not in the cluster (GPUs 0 to 127)").c_str(),
      ConfigError);

  j = experiment(kTwoFlows);
  j["workload"]["flows"][1]["dst"] = 0;
  p = dir.write("self.json", j.dump());
  CHECK_THROWS_WITH_AS(
      load_experiment(p, {}),
      (p + ": /workload/flows/1/dst: a flow from GPU 0 to itself moves nothing over any link")
          .c_str(),
      ConfigError);

  j = experiment(json::array());
  p = dir.write("none.json", j.dump());
  CHECK_THROWS_WITH_AS(load_experiment(p, {}),
                       (p + ": /workload/flows: expected at least one flow").c_str(), ConfigError);

  j = experiment(kTwoFlows);
  j["workload"]["flows"][0]["bytes"] = 1e30;
  p = dir.write("huge.json", j.dump());
  CHECK_THROWS_WITH_AS(load_experiment(p, {}),
                       (p + ": /workload/flows/0/bytes: expected an integer, got 1e+30; written "
                            "with an exponent or a fraction, an integer must be below 9e15 "
                            "(write larger ones in full)")
                           .c_str(),
                       ConfigError);
}

TEST_CASE("flows whose times or byte totals could not be represented are rejected") {
  const TempDir dir;
  json j = experiment(kTwoFlows);
  j["workload"]["flows"][0]["bytes"] = 2'000'000'000'000'000'000;  // 2e18 B at 47 GB/s: 1.3 years
  std::string p = dir.write("long.json", j.dump());
  CHECK_THROWS_WITH_AS(load_experiment(p, {}),
                       (p + ": /workload/flows: these flows may need up to 4.26e+07 s of "
                            "simulated time (2e+18 bytes at the slowest link's 4.7e+10 B/s, plus "
                            "start times and latencies); at most 4.61e+06 s can be simulated")
                           .c_str(),
                       ConfigError);
  j["workload"]["flows"][0]["bytes"] = INT64_MAX;
  p = dir.write("many.json", j.dump());
  CHECK_THROWS_WITH_AS(load_experiment(p, {}),
                       (p + ": /workload/flows: these flows would move 9.22e+18 bytes in all; at most "
                            "4e+18 can be counted")
                           .c_str(),
                       ConfigError);
}

TEST_CASE("bad `after`: cycles, self-loops, unknown and duplicate ids") {
  const TempDir dir;
  json j = experiment(kTwoFlows);
  j["workload"]["flows"][0]["after"] = {"b"};
  std::string p = dir.write("cycle.json", j.dump());
  CHECK_THROWS_WITH_AS(load_experiment(p, {}),
                       (p + R"(: /workload/flows/1/after: dependency cycle: "a" -> "b" -> "a" )"
                            R"((each waits for the next))")
                           .c_str(),
                       ConfigError);

  j = experiment(kTwoFlows);
  j["workload"]["flows"][0]["after"] = {"a"};
  p = dir.write("self.json", j.dump());
  CHECK_THROWS_WITH_AS(
      load_experiment(p, {}),
      (p + R"(: /workload/flows/0/after: dependency cycle: "a" -> "a" (each waits for the next))")
          .c_str(),
      ConfigError);

  j = experiment(kTwoFlows);
  j["workload"]["flows"][1]["after"] = {"a", "zz"};
  p = dir.write("unknown.json", j.dump());
  CHECK_THROWS_WITH_AS(load_experiment(p, {}),
                       (p + R"(: /workload/flows/1/after/1: no flow has id "zz")").c_str(),
                       ConfigError);

  j = experiment(kTwoFlows);
  j["workload"]["flows"][1]["id"] = "a";
  p = dir.write("dup.json", j.dump());
  CHECK_THROWS_WITH_AS(load_experiment(p, {}),
                       (p + R"(: /workload/flows/1/id: duplicate flow id "a" (flow 0 has it too))")
                           .c_str(),
                       ConfigError);
}

TEST_CASE("zero NVLink bandwidth, inline and by --set on a cluster file") {
  const TempDir dir;
  json j = experiment(kTwoFlows);
  j["cluster"] = read(kCluster);
  j["cluster"]["nvlink"]["peak_GBps"] = 0;
  std::string p = dir.write("inline.json", j.dump());
  CHECK_THROWS_WITH_AS(load_experiment(p, {}),
                       (p + ": /cluster/nvlink/peak_GBps: must be > 0, got 0").c_str(),
                       ConfigError);

  p = dir.write("path.json", experiment(kTwoFlows).dump());
  // A bad value that came from --set names the argument, not the file it went into.
  CHECK_THROWS_WITH_AS(load_experiment(p, {"cluster.nvlink.peak_GBps=0"}),
                       "--set cluster.nvlink.peak_GBps=0: /nvlink/peak_GBps: must be > 0, got 0",
                       ConfigError);
  CHECK_THROWS_WITH_AS(load_experiment(p, {"workload.flows.1.dst=1000"}),
                       "--set workload.flows.1.dst=1000: /workload/flows/1/dst: GPU 1000 is not "
                       "in the cluster (GPUs 0 to 127)",
                       ConfigError);
}

TEST_CASE("bad --set and workload kinds") {
  const TempDir dir;
  const std::string p = dir.write("e.json", experiment(kTwoFlows).dump());
  CHECK_THROWS_WITH_AS(load_experiment(p, {"seed"}), R"(--set: expected KEY=VALUE, got "seed")",
                       ConfigError);
  CHECK_THROWS_WITH_AS(load_experiment(p, {"=3"}), R"(--set: expected KEY=VALUE, got "=3")",
                       ConfigError);
  CHECK_THROWS_WITH_AS(load_experiment(p, {"workload.kind=training"}),
                       R"(--set workload.kind=training: /workload/kind: expected one of "flows", )"
                       R"("collective", "attention_layer", "moe_layer", "transformer_layer", )"
                       R"("training_step", "chakra", got "training")",
                       ConfigError);
}

TEST_CASE("overrides: a number, a nested cluster key, another cluster file") {
  const TempDir dir;
  const std::string p = dir.write("e.json", experiment(kTwoFlows).dump());
  const ExperimentFile plain = load_experiment(p, {});
  CHECK(plain.experiment.name == "e");
  CHECK(plain.experiment.seed == 1);
  CHECK(plain.cluster_file == kCluster);
  const auto& flows = std::get<work::FlowsJob>(plain.experiment.job).flows;
  REQUIRE(flows.size() == 2);
  CHECK(flows[0].bytes.n == 1000);
  CHECK(flows[1].after == std::vector<std::size_t>{0});
  CHECK(plain.experiment.cluster.nvlink.bandwidth.bytes_per_s == 370e9);
  CHECK(plain.experiment.cluster.nvlink.peak.bytes_per_s == 450e9);
  CHECK(plain.experiment.cluster.gpu.name == "H100 SXM");
  CHECK(plain.experiment.cluster.gpu.sms == 132);

  const ExperimentFile e = load_experiment(
      p, {"workload.flows.1.bytes=4096", "seed=7", "cluster.nvlink.achievable_GBps=100"});
  CHECK(std::get<work::FlowsJob>(e.experiment.job).flows[1].bytes.n == 4096);
  CHECK(e.experiment.seed == 7);
  CHECK(e.experiment.cluster.nvlink.bandwidth.bytes_per_s == 100e9);
  CHECK(e.resolved["workload"]["flows"][1]["bytes"] == 4096);
  CHECK(e.resolved["cluster"]["nvlink"]["achievable_GBps"] == 100);

  // `--set cluster=FILE` replaces the cluster file, and cluster.* keys then apply to it.
  const std::string other = std::string(HOPSIM_SOURCE_DIR) + "/configs/clusters/h800-deepseek.json";
  const ExperimentFile h800 = load_experiment(p, {"cluster.nodes=64", "cluster=" + other});
  CHECK(h800.cluster_file == other);
  CHECK(h800.experiment.cluster.name == "h800-deepseek");
  CHECK(h800.experiment.cluster.nodes == 64);
  CHECK(h800.resolved["cluster"]["name"] == "h800-deepseek");
}

TEST_CASE("resolved inlines the cluster file, a relative cluster path is from the experiment") {
  const TempDir dir;
  const json cluster = read(kCluster);
  dir.write("clusters/c.json", cluster.dump(2));
  json j = experiment(kTwoFlows);
  j["cluster"] = "clusters/c.json";
  j["name"] = "named";
  const std::string p = dir.write("e.json", j.dump());
  const ExperimentFile e = load_experiment(p, {});
  CHECK(e.experiment.name == "named");
  CHECK(e.cluster_file == dir.path("clusters/c.json"));
  CHECK(e.resolved["cluster"].is_object());
  CHECK(json::parse(e.resolved["cluster"].dump()) == cluster);
  CHECK(e.resolved["workload"]["flows"].size() == 2);
  // Inline clusters stay as written, overrides included.
  j["cluster"] = cluster;
  const std::string q = dir.write("inline.json", j.dump());
  const ExperimentFile inl = load_experiment(q, {"cluster.nodes=2"});
  CHECK(inl.cluster_file == q);
  CHECK(inl.experiment.cluster.nodes == 2);
  CHECK(inl.resolved["cluster"]["nodes"] == 2);
  CHECK(inl.resolved["cluster"]["name"] == "h100-dgx");
}

TEST_CASE("collectives: algorithms that do not fit the op, impossible MoE routing, CP chunks") {
  const TempDir dir;
  json j = {{"cluster", kCluster},
            {"workload", {{"kind", "collective"}, {"op", "all_reduce"}, {"bytes", 1024}}}};
  std::string p = dir.write("c.json", j.dump());
  CHECK_THROWS_WITH_AS(load_experiment(p, {"workload.algorithm=two_tier"}),
                       R"(--set workload.algorithm=two_tier: /workload/algorithm: algorithm )"
                       R"("two_tier" does not implement all_reduce; all_reduce takes "ring", "tree", )"
                       R"("nvls" or "auto")",
                       ConfigError);
  j["workload"] = {{"kind", "collective"}, {"op", "all_to_all"}, {"algorithm", "two_tier"},
                   {"ranks", {0, 1, 2, 3, 8, 9, 10, 11}},
                   {"moe", {{"tokens_per_gpu", 16}, {"experts", 16}, {"top_k", 9},
                            {"max_nodes_per_token", 1}, {"hidden", 64}}}};
  p = dir.write("m.json", j.dump());
  CHECK_THROWS_WITH_AS(load_experiment(p, {}),
                       (p + R"(: /workload/moe/top_k: 9 experts per token, but a token limited )"
                            R"(to 1 node(s) may see only 8 experts)")
                           .c_str(),
                       ConfigError);
  CHECK_NOTHROW(load_experiment(p, {"workload.moe.top_k=8"}));
  j["workload"] = {{"kind", "collective"}, {"op", "all_reduce"}, {"bytes", 1024}, {"chunks", 1024}};
  p = dir.write("big.json", j.dump());
  CHECK_THROWS_WITH_AS(load_experiment(p, {}),
                       (p + ": /workload: ring all_reduce over 128 ranks in 1024 chunk(s) makes "
                            "2.66e+08 flows per collective; at most 1e+07 are supported")
                           .c_str(),
                       ConfigError);
  const std::string cp = std::string(HOPSIM_SOURCE_DIR) + "/configs/experiments/llama3-70b-cp.json";
  CHECK_THROWS_WITH_AS(load_experiment(cp, {"parallel.cp=3", "cluster.nodes=3"}),
                       (cp + " (with --set parallel.cp=3): /workload/seq_len: 131072 tokens do "
                             "not split into 6 equal "
                             "chunks (2 x cp, cp = 3); zigzag balance needs 2 x cp to divide "
                             "seq_len")
                           .c_str(),
                       ConfigError);
  CHECK_THROWS_WITH_AS(
      load_experiment(cp, {"parallel.tp=6", "cluster.nodes=1", "cluster.gpus_per_node=6"}),
      "--set parallel.tp=6: /parallel/tp: 6 does not split the model's 64 heads (8 KV heads)",
      ConfigError);
}

TEST_CASE("the rank mesh: degrees that do not divide the cluster, TP across nodes, EP from DP") {
  const std::string cp = std::string(HOPSIM_SOURCE_DIR) + "/configs/experiments/llama3-70b-cp.json";
  CHECK_THROWS_WITH_AS(load_experiment(cp, {"parallel.cp=3"}),
                       "--set parallel.cp=3: /parallel: tp x cp x pp x dp = 8 x 3 x 1 x 1 = 24 "
                       "does not divide the cluster's 128 GPUs (16 nodes of 8); set "
                       "cluster.nodes to a multiple of 3",
                       ConfigError);
  CHECK_THROWS_WITH_AS(load_experiment(cp, {"parallel.tp=16"}),
                       "--set parallel.tp=16: /parallel/tp: the TP group of GPU 0 spans GPUs 0 "
                       "to 15, across nodes of 8 GPUs; tensor parallelism must stay inside a "
                       "node (set parallel.tp_across_nodes to allow it)",
                       ConfigError);
  CHECK_NOTHROW(load_experiment(cp, {"parallel.tp=16", "parallel.tp_across_nodes=true"}));
  // With tp outermost, a TP group of 8 strides over 8 nodes.
  CHECK_THROWS_AS(load_experiment(cp, {"parallel.order=[\"cp\", \"pp\", \"dp\", \"tp\"]",
                                       "parallel.dp=16"}),
                  ConfigError);
  const std::string ep =
      std::string(HOPSIM_SOURCE_DIR) + "/configs/experiments/deepseek-v3-moe-ep64.json";
  // A problem of one key that another key's --set caused names the file, either may be at
  // fault, and the --set that changed it.
  CHECK_THROWS_WITH_AS(load_experiment(ep, {"parallel.dp=32"}),
                       (ep + " (with --set parallel.dp=32): /parallel/ep: 64 does not divide "
                             "tp x cp x dp = 32: expert parallelism takes its ranks from the "
                             "tensor-, context- and data-parallel ones")
                           .c_str(),
                       ConfigError);
}

TEST_CASE("collectives: send_recv takes two ranks and no chunks, a 1-GPU cluster has no pairs") {
  const TempDir dir;
  const json j = {{"cluster", kCluster},
                  {"workload", {{"kind", "collective"}, {"op", "send_recv"}, {"bytes", 1024},
                                {"ranks", {0, 1, 2}}}}};
  const std::string p = dir.write("s.json", j.dump());
  CHECK_THROWS_WITH_AS(load_experiment(p, {}),
                       (p + ": /workload/ranks: send_recv goes from one rank to another: it "
                            "takes exactly 2 ranks, got 3")
                           .c_str(),
                       ConfigError);
  CHECK_THROWS_WITH_AS(load_experiment(p, {"workload.ranks=[0, 8]", "workload.chunks=4"}),
                       "--set workload.chunks=4: /workload/chunks: chunks apply to ring, tree "
                       "and auto algorithms and to two_tier all-to-all; ring send_recv sends "
                       "each pair's data as one flow",
                       ConfigError);
  CHECK_NOTHROW(load_experiment(p, {"workload.ranks=[0, 8]"}));
  const json all = {{"cluster", kCluster},
                    {"workload", {{"kind", "collective"}, {"op", "all_gather"}, {"bytes", 1024}}}};
  const std::string q = dir.write("a.json", all.dump());
  CHECK_THROWS_WITH_AS(
      load_experiment(q, {"cluster.nodes=1", "cluster.gpus_per_node=1"}),
      (q + ": /workload: a collective needs at least 2 ranks, got 1").c_str(), ConfigError);
  const ExperimentFile groups = load_experiment(q, {"workload.group=tp", "parallel.tp=8",
                                                    "parallel.dp=16"});
  const auto& job = std::get<work::CollectiveJob>(groups.experiment.job);
  CHECK(job.rank_sets(groups.experiment.cluster, work::Mesh(groups.experiment.parallel)).size() ==
        16);
}

TEST_CASE("attention layers: invalid CP settings are clear errors naming the key") {
  const std::string cp = std::string(HOPSIM_SOURCE_DIR) + "/configs/experiments/llama3-70b-cp.json";
  const auto fails_with = [&](std::vector<std::string> sets, const std::string& message) {
    CHECK_THROWS_WITH_AS(load_experiment(cp, sets), message.c_str(), ConfigError);
  };
  fails_with({"workload.cp.algorithm=ringg"},
             R"(--set workload.cp.algorithm=ringg: /workload/cp/algorithm: expected one of )"
             R"("ring", "ring_pass_q", "allgather", "ulysses", got "ringg")");
  fails_with({"parallel.cp=8", "workload.cp.algorithm=ulysses", "workload.cp.ulysses_degree=16"},
             "--set workload.cp.ulysses_degree=16: /workload/cp/ulysses_degree: 16 does not "
             "divide cp = 8");
  // 64 heads over TP 8: 8 query heads and 1 KV head per TP rank. A key the file does not
  // have is blamed on the file.
  fails_with({"parallel.cp=16", "workload.cp.algorithm=ulysses"},
             cp + " (with --set parallel.cp=16, --set workload.cp.algorithm=ulysses): "
                  "/workload/cp/ulysses_degree: Ulysses degree "
             "16 must divide the 8 query heads of a TP rank (64 heads / tp 8)");
  fails_with({"parallel.cp=8", "workload.cp.algorithm=ulysses"},
             cp + " (with --set parallel.cp=8, --set workload.cp.algorithm=ulysses): "
                  "/workload/cp/ulysses_degree: Ulysses degree 8 "
             "exceeds or does not split the 1 KV heads of a TP rank; set cp.replicate_kv to give "
             "each rank a copy of the KV head it needs (when 8 is a multiple of 1)");
  CHECK_NOTHROW(load_experiment(
      cp, {"parallel.cp=8", "workload.cp.algorithm=ulysses", "workload.cp.replicate_kv=true"}));
  fails_with({"parallel.cp=8", "workload.cp.algorithm=ring_pass_q"},
             "--set workload.cp.algorithm=ring_pass_q: /workload/cp/algorithm: ring_pass_q is an "
             "inference algorithm (forward only): set mode \"prefill\"");
  fails_with({"workload.request_overhead_ms=100"},
             "--set workload.request_overhead_ms=100: /workload/request_overhead_ms: "
             "request_overhead_ms is a prefill request's fixed cost; set mode to \"prefill\" or "
             "remove it (--set workload.request_overhead_ms=null)");
  fails_with({"workload.mode=prefill", "workload.passes=both"},
             "--set workload.passes=both: /workload/passes: mode \"prefill\" runs forward only, "
             "not \"both\"");
  fails_with({"workload.mask=document"},
             "--set workload.mask=document: /workload/mask: mask \"document\" needs either "
             "documents (lengths) or document_mean_tokens");
  fails_with({"workload.mask=document", "workload.documents=[100, 200]"},
             "--set workload.documents=[100, 200]: /workload/documents: document lengths sum to "
             "300 tokens, not seq_len 131072");
  fails_with({"workload.cp.ulysses_degree=2"},
             "--set workload.cp.ulysses_degree=2: /workload/cp/ulysses_degree: only for "
             "cp.algorithm \"ulysses\", not \"ring\"");
  // PyTorch's CP (cp.impl torch): its own keys, its ring only.
  fails_with({"workload.cp.impl=pytorch"},
             R"(--set workload.cp.impl=pytorch: /workload/cp/impl: expected one of "megatron", )"
             R"("torch", got "pytorch")");
  fails_with({"workload.cp.rotate_method=alltoall"},
             "--set workload.cp.rotate_method=alltoall: /workload/cp/rotate_method: only with impl "
             "\"torch\" (PyTorch's rotate method)");
  fails_with({"workload.cp.impl=torch", "workload.cp.rotate_method=ring"},
             R"(--set workload.cp.rotate_method=ring: /workload/cp/rotate_method: expected one of )"
             R"("allgather", "alltoall", got "ring")");
  fails_with({"parallel.cp=8", "workload.cp.impl=torch", "workload.cp.algorithm=ulysses",
              "workload.cp.replicate_kv=true"},
             "--set workload.cp.impl=torch: /workload/cp/impl: \"torch\" runs PyTorch's pass-KV "
             "ring: cp.algorithm \"ring\", not \"ulysses\"");
  fails_with({"workload.cp.impl=torch", "workload.mask=full"},
             "--set workload.cp.impl=torch: /workload/cp/impl: \"torch\" takes mask \"causal\" (or "
             "\"full\" with balance \"contiguous\": its load balance needs is_causal), not mask "
             "\"full\" with balance \"zigzag\"");
  CHECK_NOTHROW(load_experiment(cp, {"parallel.cp=8", "workload.cp.impl=torch",
                                     "workload.cp.rotate_method=alltoall"}));
  fails_with({"workload.layers=1000000"},
             "--set workload.layers=1000000: /workload/layers: 1000000 layers over 8 GPUs make a "
             "plan of ~1.3e+09 tasks, more than 5e+07; simulate fewer layers");
  // Simulated time stays far inside 64-bit picoseconds: a billion-token context is refused up
  // front, not an overflow in the middle of the run.
  fails_with({"workload.seq_len=1073741824"},
             "--set workload.seq_len=1073741824: /workload/seq_len: 1 layer(s) of 1073741824 "
             "tokens take ~2.79e+07 s of compute per GPU (roofline); at most 1e+05 s are "
             "simulated: fewer tokens or layers, or more cp");
  fails_with({"workload.seq_len=67108864", "workload.layers=4"},
             "--set workload.layers=4: /workload/layers: 4 layer(s) of 67108864 tokens take "
             "~4.35e+05 s of compute per GPU (roofline); at most 1e+05 s are simulated: fewer "
             "tokens or layers, or more cp");
}

namespace {

// The two-flow experiment with `list` as its perturbations fails with `message`, named by its
// file.
void perturbations_fail(const TempDir& dir, const char* list, const std::string& message) {
  json bad = experiment(kTwoFlows);
  bad["perturbations"] = json::parse(list);
  const std::string path = dir.write("bad.json", bad.dump());
  CHECK_THROWS_WITH_AS(load_experiment(path, {}), (path + ": " + message).c_str(), ConfigError);
}

}  // namespace

TEST_CASE("perturbations: read as given, and every bad one named by its key") {
  const TempDir dir;
  json j = experiment(kTwoFlows);
  j["perturbations"] = json::parse(R"([
    {"gpus": [3, 5], "compute_speed": 0.95},
    {"gpus": [9], "links": "nic", "bandwidth": 0.5, "extra_latency_us": 2}
  ])");
  std::string p = dir.write("ok.json", j.dump());
  const std::vector<hopsim::topo::Perturbation>& got =
      load_experiment(p, {}).experiment.cluster.perturbations;
  REQUIRE(got.size() == 2);
  CHECK(got[0].gpus == std::vector<int>{3, 5});
  CHECK(got[0].part == hopsim::topo::PerturbedPart::Compute);
  CHECK(got[0].compute_speed == 0.95);
  CHECK(got[1].part == hopsim::topo::PerturbedPart::Nic);
  CHECK(got[1].bandwidth == 0.5);
  CHECK(got[1].extra_latency == hopsim::Time::us(2));

  const auto fails = [&](const char* list, const std::string& message) {
    perturbations_fail(dir, list, message);
  };
  fails(R"([{"gpus": [1, 128], "compute_speed": 0.9}])",
        "/perturbations/0/gpus/1: GPU 128 is not in the cluster's 128");
  fails(R"([{"gpus": [1], "links": "nic", "compute_speed": 0.9}])",
        "/perturbations/0/compute_speed: a link perturbation changes bandwidth and latency; a "
        "GPU's compute_speed goes in a perturbation without links");
  fails(R"([{"gpus": [1], "bandwidth": 0.5}])",
        "/perturbations/0/bandwidth: changes links: name them with \"links\": \"nvlink\", "
        "\"nic\" or \"spine\"");
  fails(R"([{"gpus": [1]}])",
        "/perturbations/0: a perturbation needs compute_speed or kernel_speed, or links with "
        "bandwidth, extra_latency_us or failed");
  fails(R"([{"gpus": [], "compute_speed": 0.9}])",
        "/perturbations/0/gpus: names 0 GPUs; a perturbation takes 1 to 1048576");
  fails(R"([{"gpus": [1], "compute_speed": 0}])",
        "/perturbations/0/compute_speed: must be in [0.1, 10], got 0");
  fails(R"([{"gpus": [1], "compute_speed": 0.2}, {"gpus": [2, 1], "compute_speed": 0.4}])",
        "/perturbations/1/compute_speed: GPU 1 computes 0.08 of the rate with the perturbations "
        "before this one; together they must stay in [0.1, 10]");
  fails(R"([{"gpus": [1], "links": "nic", "bandwidth": 0.05},
            {"gpus": [1], "links": "nic", "bandwidth": 0.05}])",
        "/perturbations/1/bandwidth: GPU 1's NIC links carry 0.0025 of the rate with the "
        "perturbations before this one; together they must stay in [0.01, 10]");
  fails(R"([{"gpus": [1], "links": "pcie", "bandwidth": 0.5}])",
        "/perturbations/0/links: expected one of \"nvlink\", \"nic\", \"spine\", got \"pcie\"");
  fails(R"([{"gpus": [1, 1], "compute_speed": 0.9}])",
        "/perturbations/0/gpus/1: GPU 1 is listed twice");
  fails(R"([{"nodes": [16], "compute_speed": 0.9}])",
        "/perturbations/0/nodes/0: must be in [0, 15], got 16");
  fails(R"([{"rails": [1], "gpus": [2], "compute_speed": 0.9}])",
        "/perturbations/0: names its GPUs one way: gpus, nodes or rails");
  fails(R"([{"compute_speed": 0.9}])",
        "/perturbations/0: a perturbation needs gpus, nodes or rails (or, with \"links\": "
        "\"spine\", leaves or spines)");
  fails(R"([{"gpus": [1], "links": "nic", "failed": true, "bandwidth": 0.5}])",
        "/perturbations/0/bandwidth: a failed link carries nothing; leave out bandwidth and "
        "extra_latency_us");
  fails(R"([{"gpus": [1], "failed": true}])",
        "/perturbations/0/failed: changes links: name them with \"links\": \"nvlink\", "
        "\"nic\" or \"spine\"");
  fails(R"([{"links": "spine", "gpus": [1], "failed": true}])",
        "/perturbations/0/gpus: spine links are named by leaves and spines, not by GPUs");
  fails(R"([{"links": "spine", "failed": true}])",
        "/perturbations/0: spine links need leaves, spines or both (every spine link of the "
        "fabric at once is /cluster/fabric/oversubscription)");
  fails(R"([{"leaves": [0], "bandwidth": 0.5}])",
        "/perturbations/0/leaves: names spine links; it goes with \"links\": \"spine\"");
  fails(R"([{"links": "spine", "leaves": [0], "spines": [1], "failed": true}])",
        "/perturbations/0/spines/0: must be in [0, 0], got 1");
  fails(R"([{"nodes": [3], "links": "nic", "failed": true}])",
        "/perturbations/0: GPU 24's NIC failed and no other GPU of node 3 has a NIC and an "
        "NVLink that work to carry its traffic");
}

TEST_CASE("perturbations: a speed drawn per kernel, with the experiment's seed") {
  const TempDir dir;
  json j = experiment(kTwoFlows);
  j["seed"] = 7;
  j["perturbations"] = json::parse(R"([
    {"gpus": [3], "kernel_speed": [0.8, 1.0]},
    {"gpus": [4], "compute_speed": 0.9, "kernel_speed": [0.9, 0.9]}
  ])");
  const std::vector<hopsim::topo::Perturbation> got =
      load_experiment(dir.write("draws.json", j.dump()), {}).experiment.cluster.perturbations;
  REQUIRE(got.size() == 2);
  REQUIRE(got[0].kernel_draw.has_value());
  CHECK(got[0].compute_speed == 1.0);
  CHECK(got[0].kernel_draw->speed_min == 0.8);
  CHECK(got[0].kernel_draw->seed == 7);
  // The harmonic mean: a kernel's expected time is its time / 0.8963 ((1 - 0.8) / ln 1.25).
  CHECK(got[0].kernel_draw->mean_speed() == hopsim::test::approx(0.2 / std::log(1.25)));
  CHECK(got[1].kernel_draw->mean_speed() == 0.9);

  const auto fails = [&](const char* list, const std::string& message) {
    perturbations_fail(dir, list, message);
  };
  fails(R"([{"gpus": [1], "kernel_speed": [0.9]}])",
        "/perturbations/0/kernel_speed: has 1 values; kernel_speed takes [min, max]");
  fails(R"([{"gpus": [1], "kernel_speed": [1.0, 0.9]}])",
        "/perturbations/0/kernel_speed: [1, 0.9]: min above max");
  fails(R"([{"gpus": [1], "links": "nic", "kernel_speed": [0.9, 1]}])",
        "/perturbations/0/kernel_speed: a link perturbation changes bandwidth and latency; a "
        "GPU's kernel_speed goes in a perturbation without links");
  fails(R"([{"gpus": [1], "compute_speed": 0.2, "kernel_speed": [0.3, 1]}])",
        "/perturbations/0/kernel_speed: at compute_speed 0.2, GPU 1's kernels would run at 0.06 "
        "to 0.2 of the rate; they must stay in [0.1, 10]");
  fails(R"([{"gpus": [1, 2], "kernel_speed": [0.9, 1]}, {"nodes": [0], "kernel_speed": [0.8, 1]}])",
        "/perturbations/1/kernel_speed: GPU 1 already draws its kernels' speeds "
        "(/perturbations/0); give it one kernel_speed range");
}

TEST_CASE("perturbations: nodes and rails spelled out into GPUs, spine links by leaf and spine") {
  const TempDir dir;
  json j = experiment(kTwoFlows);
  j["perturbations"] = json::parse(R"([
    {"nodes": [2], "compute_speed": 0.9},
    {"rails": [5], "links": "nic", "bandwidth": 0.5},
    {"gpus": [9], "links": "nic", "failed": true},
    {"links": "spine", "leaves": [3, 4], "bandwidth": 0.5}
  ])");
  const std::vector<hopsim::topo::Perturbation> got =
      load_experiment(dir.write("sets.json", j.dump()), {}).experiment.cluster.perturbations;
  REQUIRE(got.size() == 4);
  CHECK(got[0].nodes == std::vector<int>{2});
  CHECK(got[0].gpus == std::vector<int>{16, 17, 18, 19, 20, 21, 22, 23});
  std::vector<int> rail5;
  for (int node = 0; node < 16; ++node) {
    rail5.push_back(node * 8 + 5);
  }
  CHECK(got[1].gpus == rail5);
  CHECK(got[2].failed);
  CHECK(got[2].part == hopsim::topo::PerturbedPart::Nic);
  CHECK(got[3].part == hopsim::topo::PerturbedPart::Spine);
  CHECK(got[3].leaves == std::vector<int>{3, 4});
  CHECK(got[3].spines.empty());
  CHECK(got[3].gpus.empty());
}

TEST_CASE("a mixed cluster: nodes of another GPU model, and the model that sets the pace") {
  const std::string file =
      std::string(HOPSIM_SOURCE_DIR) + "/configs/experiments/mixed-h100-h200-moe-layer.json";
  const ExperimentFile f = load_experiment(file, {"cluster.nodes=2"});
  const std::vector<hopsim::topo::Perturbation>& got = f.experiment.cluster.perturbations;
  REQUIRE(got.size() == 1);
  CHECK(got[0].part == hopsim::topo::PerturbedPart::GpuType);
  CHECK(got[0].gpu->name == "H200 SXM");
  CHECK(got[0].gpu_source.ends_with("configs/clusters/h200-hgx.json"));  // relative under the cwd
  CHECK(got[0].gpus == std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15});
  const auto run = [&](const std::vector<std::string>& sets) {
    const hopsim::work::RunResult r = hopsim::work::run(load_experiment(file, sets).experiment);
    REQUIRE(r.ok());
    return r.cases.front().summary;
  };
  const hopsim::work::Summary mixed = run({"cluster.nodes=2"});
  CHECK(mixed.critical_gpu == "H100 SXM");  // memory-bound kernels 1.43x faster on the H200s
  CHECK(mixed.critical_rank.value() < 8);
  const hopsim::work::Summary flipped =
      run({"cluster.nodes=2", R"(perturbations=[{"nodes": [0], "gpu": "h200-hgx"}])"});
  CHECK(flipped.critical_gpu == "H100 SXM");
  CHECK(flipped.critical_rank.value() >= 8);
  const hopsim::work::Summary h100 = run({"cluster.nodes=2", "perturbations=[]"});
  const hopsim::work::Summary h200 =
      run({"cluster.nodes=2", R"(perturbations=[{"nodes": [0, 1], "gpu": "h200-hgx"}])"});
  CHECK(h100.critical_gpu.empty());  // not mixed
  CHECK(h200.step < mixed.step);
  CHECK(mixed.step <= h100.step);

  const auto fails = [&](const std::string& list, const std::string& message) {
    try {
      (void)load_experiment(file, {"perturbations=" + list});
      FAIL("loaded");
    } catch (const ConfigError& e) {  // after the --set it came from, shortened when long
      CHECK_MESSAGE(std::string(e.what()).ends_with(message), e.what());
    }
  };
  fails(R"([{"gpus": [1], "gpu": "h200-hgx"}])",
        "/perturbations/0/gpus: a GPU type applies to whole nodes (\"nodes\") and takes nothing "
        "else");
  fails(R"([{"nodes": [1], "gpu": "h200-hgx"}, {"nodes": [2, 1], "gpu": "h100-dgx"}])",
        "/perturbations/1/nodes/1: node 1 already has a GPU model (/perturbations/0)");
  CHECK_THROWS_AS(load_experiment(file, {R"(perturbations=[{"nodes": [1], "gpu": "h300"}])"}),
                  ConfigError);
  fails(R"([{"nodes": [1], "compute_speed": 0.9, "calibration": "auto"}])",
        "/perturbations/0/calibration: is the calibration of another GPU model's nodes; it goes "
        "with \"gpu\"");
  fails(R"([{"nodes": [1], "gpu": "h200-hgx", "calibration": "h100-published"}])",
        "h100-published.json: /device/name: the table is for \"NVIDIA "
        "H100 80GB HBM3\", but the cluster's GPU is \"H200 SXM\"; use a calibration table for "
        "the H200, \"auto\" (the shipped table for it, or the nearest one scaled to it), or none "
        "(the roofline)");
}

TEST_CASE("a mixed cluster: each GPU model priced by its own calibration table") {
  const std::string file =
      std::string(HOPSIM_SOURCE_DIR) + "/configs/experiments/mixed-h100-h200-moe-layer.json";
  // The experiment holds the prices (the cluster keeps the perturbation as written); a GPU of
  // node 1 computes at them.
  const auto speeds = [&](const std::string& list) {
    const ExperimentFile f = load_experiment(file, {"cluster.nodes=2", "perturbations=" + list});
    const hopsim::work::Experiment& e = f.experiment;
    REQUIRE(e.gpu_types.size() == 1);
    CHECK(e.gpu_types.front().entry == 0);
    const hopsim::work::ComputeSpeeds on(e.cluster, e.gpu_types);
    CHECK(on.speeds(hopsim::topo::GpuId{9}) == e.gpu_types.front().speed);
    CHECK(on.speeds(hopsim::topo::GpuId{0}) == hopsim::work::speeds_at(1.0));
    return e.gpu_types.front();
  };
  using hopsim::work::KernelClass;
  const auto at = [](const hopsim::work::PricedGpuType& p, KernelClass k) {
    return p.speed.at(static_cast<std::size_t>(k));
  };
  // "auto": the H200's shipped table (cuDNN attention measured on an H200) against the H100's.
  const hopsim::work::PricedGpuType own = speeds(R"([{"nodes": [1], "gpu": "h200-hgx"}])");
  CHECK(own.calibration.ends_with("h200-published.json"));
  CHECK(at(own, KernelClass::AttentionFwd) != hopsim::test::approx(1.0).epsilon(0.02));
  CHECK(at(own, KernelClass::Norm) > 1.3);  // memory-bound: 4.8 against 3.35 TB/s
  // "none": the H200's roofline against the H100's table. These FP8 GEMMs fill whole waves,
  // where the roofline's shape curve (DeepGEMM's best FP8 rate, gemm_shape.hpp) beats the
  // table's DeepGEMM cells at their shapes: neither the table's speed nor 1.
  const hopsim::work::PricedGpuType roof =
      speeds(R"([{"nodes": [1], "gpu": "h200-hgx", "calibration": "none"}])");
  CHECK(roof.calibration == "none");
  CHECK(at(roof, KernelClass::GemmFprop) > 1.03);
  CHECK(at(roof, KernelClass::GemmFprop) != hopsim::test::approx(at(own, KernelClass::GemmFprop)));
  // A class the layer does not run (a step's optimizer) takes the datasheets' roofline ratio.
  CHECK(at(own, KernelClass::Other) == hopsim::test::approx(4.8 / 3.35).epsilon(0.01));
}

TEST_CASE("a mixed cluster: every node of the other model runs as that model's own cluster") {
  // The 32-GPU Llama 3 8B step on H100s with all four nodes H200s, against the H200 preset:
  // each model's own table prices its kernels, so only the links differ (the same here).
  const std::string step =
      std::string(HOPSIM_SOURCE_DIR) + "/configs/experiments/llama3-8b-step-32gpu.json";
  const auto seconds = [&](const std::vector<std::string>& sets) {
    const hopsim::work::RunResult r = hopsim::work::run(load_experiment(step, sets).experiment);
    REQUIRE(r.ok());
    return r.cases.front().outcome.makespan.seconds();
  };
  const double mixed = seconds({R"(perturbations=[{"nodes": [0, 1, 2, 3], "gpu": "h200-hgx"}])"});
  const double h200 = seconds({"cluster=h200-hgx"});
  const double h100 = seconds({});
  CHECK(mixed == hopsim::test::approx(h200).epsilon(0.005));
  CHECK(mixed < h100 * 0.97);
}

TEST_CASE("perturbations on a layer name only GPUs its mesh runs on") {
  const std::string layer =
      std::string(HOPSIM_SOURCE_DIR) + "/configs/experiments/moe-layer-ep16-what-if.json";
  const std::string set = R"(perturbations=[{"gpus": [100], "compute_speed": 0.9}])";
  CHECK_THROWS_WITH_AS(load_experiment(layer, {set}),
                       ("--set " + set + ": "
                        "/perturbations/0/gpus/0: GPU 100 runs nothing here (the parallel mesh "
                        "uses GPUs 0 to 15), so the perturbation would change nothing")
                           .c_str(),
                       ConfigError);
  // Nodes or rails the mesh does not reach: the refusal names the ones it does.
  const std::string nodes = R"(perturbations=[{"nodes": [5], "compute_speed": 0.9}])";
  CHECK_THROWS_WITH_AS(load_experiment(layer, {nodes}),
                       ("--set " + nodes + ": "
                        "/perturbations/0/nodes: none of its GPUs runs anything here (the "
                        "parallel mesh uses GPUs 0 to 15), so the perturbation would change "
                        "nothing; name node 0 to 1")
                           .c_str(),
                       ConfigError);
  const std::string rails =
      R"(perturbations=[{"rails": [3], "links": "nic", "bandwidth": 0.5}])";
  CHECK_NOTHROW(load_experiment(layer, {rails}));
  CHECK(load_experiment(layer, {}).experiment.cluster.perturbations.size() == 2);
}

TEST_CASE("stragglers: a share of the mesh's GPUs drawn with the seed, each at its own speed") {
  const std::string layer =
      std::string(HOPSIM_SOURCE_DIR) + "/configs/experiments/moe-layer-ep16-what-if.json";
  const auto drawn = [&](const std::string& list, const std::string& seed) {
    return load_experiment(layer, {"perturbations=" + list, "seed=" + seed})
        .experiment.cluster.perturbations;
  };
  const std::string quarter =
      R"([{"gpus": [2], "compute_speed": 0.9}, {"stragglers": 0.25, "compute_speed": [0.8, 0.9]}])";
  const std::vector<hopsim::topo::Perturbation> a = drawn(quarter, "1");
  REQUIRE(a.size() == 5);  // GPU 2, then 0.25 of the mesh's 16 GPUs
  CHECK_FALSE(a[0].drawn.has_value());
  std::vector<int> gpus;
  for (std::size_t i = 1; i < a.size(); ++i) {
    REQUIRE(a[i].drawn.has_value());
    CHECK(a[i].entry == 1);
    CHECK(a[i].drawn->population == 16);
    CHECK(a[i].gpus.size() == 1);
    CHECK(a[i].compute_speed >= 0.8);
    CHECK(a[i].compute_speed <= 0.9);
    gpus.push_back(a[i].gpus.front());
  }
  CHECK(std::is_sorted(gpus.begin(), gpus.end()));
  CHECK(std::adjacent_find(gpus.begin(), gpus.end()) == gpus.end());  // distinct
  CHECK(gpus.back() < 16);
  // The same seed draws the same; another seed, other GPUs or speeds.
  const std::vector<hopsim::topo::Perturbation> again = drawn(quarter, "1");
  const std::vector<hopsim::topo::Perturbation> other = drawn(quarter, "2");
  bool same = true;
  bool differs = false;
  for (std::size_t i = 1; i < a.size(); ++i) {
    same = same && again[i].gpus == a[i].gpus && again[i].compute_speed == a[i].compute_speed;
    differs = differs || other[i].gpus != a[i].gpus || other[i].compute_speed != a[i].compute_speed;
  }
  CHECK(same);
  CHECK(differs);
  // A share too small for one GPU still draws one; a range of one speed gives that speed.
  const auto one = drawn(R"([{"stragglers": 0.001, "compute_speed": [0.95, 0.95]}])", "7");
  REQUIRE(one.size() == 1);
  CHECK(one[0].compute_speed == 0.95);

  // The message after the --set it names (which a long value shortens).
  const auto fails = [&](const std::string& list, const std::string& message) {
    std::string error;
    try {
      load_experiment(layer, {"perturbations=" + list});
    } catch (const ConfigError& e) {
      error = e.what();
    }
    CAPTURE(error);
    CHECK(error.starts_with("--set perturbations=[{\"stragglers\""));
    CHECK(error.ends_with(": " + message));
  };
  fails(R"([{"stragglers": 0.1, "gpus": [1], "compute_speed": [0.8, 0.9]}])",
        "/perturbations/0/gpus: a straggler draw picks its GPUs and slows their compute; it "
        "takes stragglers and compute_speed only");
  fails(R"([{"stragglers": 0.1, "compute_speed": 0.9}])",
        "/perturbations/0/compute_speed: expected an array, got 0.9");
  fails(R"([{"stragglers": 0.1, "compute_speed": [0.9, 0.8]}])",
        "/perturbations/0/compute_speed: [0.9, 0.8]: min above max");
  fails(R"([{"stragglers": 0.1}])",
        "/perturbations/0: a straggler draw needs compute_speed: [min, max], the range its "
        "speeds are drawn from");
  fails(R"([{"stragglers": 2, "compute_speed": [0.8, 0.9]}])",
        "/perturbations/0/stragglers: must be in [1e-06, 1], got 2");
  // A drawn GPU's speed counts with the perturbations after its draw.
  const std::string all = R"([{"stragglers": 1, "compute_speed": [0.8, 0.9]}, )"
                          R"({"gpus": [3], "compute_speed": 0.1}])";
  std::string error;
  try {
    load_experiment(layer, {"perturbations=" + all});
  } catch (const ConfigError& e) {
    error = e.what();
  }
  CHECK(error.find(": /perturbations/1/compute_speed: GPU 3 computes 0.0") != std::string::npos);
}

}  // namespace hopsim::config
