// Tests of parse_cluster: the shipped cluster configs, and the exact text of its errors.
#include "tools/config/cluster_config.hpp"

#include <fstream>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "topology/cluster.hpp"

namespace hopsim::config {
namespace {

using nlohmann::json;

// A small valid cluster that each error test breaks in one place.
json base() {
  return json::parse(R"({
    "name": "test",
    "nodes": 16,
    "gpu": {"name": "H100 SXM", "peak_bf16_tflops": 989, "peak_fp8_tflops": 1979,
            "hbm_GB": 80, "hbm_GBps": 3350, "sms": 132},
    "nvlink": {"peak_GBps": 450, "achievable_GBps": 370, "latency_us": 0.715},
    "nic": {"peak_GBps": 50, "achievable_GBps": 47, "latency_us": 0.45},
    "fabric": {"kind": "rail_optimized"},
    "sources": {"/nvlink/peak_GBps": "NVIDIA H100 datasheet"}
  })");
}

// The message of the ConfigError that parsing `j` throws, or "" when it parses.
std::string error_of(const json& j) {
  try {
    parse_cluster(Node(j, "test.json"));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

ClusterConfig load(const std::string& relative) {
  std::ifstream in(std::string(HOPSIM_SOURCE_DIR) + "/" + relative);
  REQUIRE(in.good());
  const json j = json::parse(in);
  return parse_cluster(Node(j, relative));
}

}  // namespace

TEST_CASE("the base document parses, with defaults from topo::Spec") {
  const json j = base();
  const ClusterConfig c = parse_cluster(Node(j, "test.json"));
  const topo::Spec defaults;
  CHECK(c.topology.name == "test");
  CHECK(c.topology.nodes == 16);
  CHECK(c.topology.gpus_per_node == defaults.gpus_per_node);
  CHECK(c.topology.nvlink.bandwidth.bytes_per_s == 370e9);  // achievable by default
  CHECK(c.topology.nvlink.latency == Time::ps(715'000));
  CHECK(c.topology.nic.bandwidth.bytes_per_s == 47e9);
  CHECK(c.topology.software_overhead == defaults.software_overhead);
  CHECK(c.topology.spines == defaults.spines);
  CHECK(c.topology.cross_rail == defaults.cross_rail);
  CHECK(c.topology.gpu.name == "H100 SXM");
  CHECK(c.topology.gpu.hbm_GBps == 3350);
}

TEST_CASE("\"bandwidth\": \"peak\" selects the peak figures, achievable defaults to peak") {
  json j = base();
  j["bandwidth"] = "peak";
  j["nic"].erase("achievable_GBps");
  const ClusterConfig peak = parse_cluster(Node(j, "test.json"));
  CHECK(peak.topology.nvlink.bandwidth.bytes_per_s == 450e9);
  CHECK(peak.topology.nic.bandwidth.bytes_per_s == 50e9);
  j["bandwidth"] = "achievable";
  const ClusterConfig achievable = parse_cluster(Node(j, "test.json"));
  CHECK(achievable.topology.nic.bandwidth.bytes_per_s == 50e9);
}

TEST_CASE("fabric keys fill the Spec") {
  json j = base();
  j["fabric"] = json::parse(R"({"kind": "fat_tree", "nodes_per_leaf": 4, "spines": 2,
      "oversubscription": 1.5, "spine_latency_us": 0.5, "cross_rail": "spine"})");
  j["software_overhead_us"] = 2;
  const topo::Spec s = parse_cluster(Node(j, "test.json")).topology;
  CHECK(s.fabric == topo::FabricKind::FatTree);
  CHECK(s.nodes_per_leaf == 4);
  CHECK(s.spines == 2);
  CHECK(s.oversubscription == 1.5);
  CHECK(s.spine_latency == Time::ns(500));
  CHECK(s.cross_rail == topo::CrossRail::Spine);
  CHECK(s.software_overhead == Time::us(2));
}

TEST_CASE("every shipped cluster config parses and builds") {
  struct Expected {
    const char* path;
    int gpus;
    double nvlink_Bps;
    double hbm_GB;
  };

  // HBM a process can allocate: 81,089 MiB for an "80 GB" part, 143,156 MiB for 141 GB.
  for (const Expected& e : {Expected{"configs/clusters/h100-dgx.json", 128, 370e9, 85.03},
                            Expected{"configs/clusters/h800-deepseek.json", 2048, 160e9, 85.03},
                            Expected{"configs/clusters/h200-hgx.json", 128, 370e9, 150.11}}) {
    CAPTURE(e.path);
    const ClusterConfig c = load(e.path);
    CHECK(c.topology.nvlink.bandwidth.bytes_per_s == e.nvlink_Bps);
    CHECK(c.topology.nic.bandwidth.bytes_per_s == 47e9);
    CHECK(c.topology.gpu.hbm_GB == e.hbm_GB);
    // The latencies reproduce DeepSeek ISCA'25 Table 5 (64 B): NVLink 3.33 us, IB 2.8 us.
    CHECK(2 * c.topology.nvlink.latency + c.topology.software_overhead == Time::ps(3'330'000));
    CHECK(2 * c.topology.nic.latency + c.topology.software_overhead == Time::ps(2'800'000));
    const topo::Cluster cluster(c.topology);
    CHECK(cluster.gpu_count() == e.gpus);
  }
}

TEST_CASE("an unknown key is an error that suggests the closest known key") {
  json j = base();
  j["nic"]["peek_GBps"] = 50;
  CHECK(error_of(j) == R"(test.json: /nic: unknown key "peek_GBps"; did you mean "peak_GBps"?)");
  j = base();
  j["colour"] = "green";
  CHECK(error_of(j) ==
        R"(test.json: /: unknown key "colour"; expected one of "name", "description", "nodes", )"
        R"("gpus_per_node", "gpu", "nvlink", "nic", "fabric", "software_overhead_us", )"
        R"("bandwidth", "nccl", "deepep", "sources")");
}

TEST_CASE("a key in Gb/s is rejected with the GB/s spelling") {
  json j = base();
  j["nic"].erase("peak_GBps");
  j["nic"]["peak_Gbps"] = 400;
  CHECK(
      error_of(j) ==
      R"(test.json: /nic: unknown key "peak_Gbps"; use "peak_GBps" (bytes/s): 400 Gb/s = 50 GBps)");
}

TEST_CASE("bandwidths must be positive, and achievable at most peak") {
  json j = base();
  j["nvlink"]["peak_GBps"] = -450;
  CHECK(error_of(j) == "test.json: /nvlink/peak_GBps: must be > 0, got -450");
  j = base();
  j["nic"]["achievable_GBps"] = 51;
  CHECK(error_of(j) == "test.json: /nic/achievable_GBps: must be <= peak_GBps (50), got 51");
  j = base();
  j["nic"]["latency_us"] = -1;
  CHECK(error_of(j) == "test.json: /nic/latency_us: must be >= 0, got -1");
}

TEST_CASE("fabric values are checked") {
  json j = base();
  j["fabric"]["nodes_per_leaf"] = 5;
  CHECK(error_of(j) == "test.json: /fabric/nodes_per_leaf: must divide nodes (16), got 5");
  j["fabric"]["nodes_per_leaf"] = 32;
  CHECK(error_of(j) == "test.json: /fabric/nodes_per_leaf: must divide nodes (16), got 32");
  j["fabric"]["nodes_per_leaf"] = 1;
  j["fabric"]["spines"] = 65536;
  CHECK(error_of(j) == "test.json: /fabric/spines: 128 leaves x 65536 spines make 16777728 links "
                       "with the GPUs' own; at most 4000000 are supported");
  j = base();
  j["fabric"]["oversubscription"] = 0.5;
  CHECK(
      error_of(j) ==
      "test.json: /fabric/oversubscription: must be >= 1 (downlink over uplink capacity), got 0.5");
  j = base();
  j["fabric"]["spines"] = 0;
  CHECK(error_of(j) == "test.json: /fabric/spines: must be in [1, 65536], got 0");
  j = base();
  j["fabric"]["kind"] = "torus";
  CHECK(error_of(j) ==
        R"(test.json: /fabric/kind: expected one of "rail_optimized", "fat_tree", got "torus")");
  j = base();
  j["fabric"]["cross_rail"] = "pxn";
  CHECK(error_of(j) ==
        R"(test.json: /fabric/cross_rail: expected one of "nvlink", "spine", got "pxn")");
}

TEST_CASE("sizes are integers in range") {
  json j = base();
  j["nodes"] = 0;
  CHECK(error_of(j) == "test.json: /nodes: must be in [1, 1000000], got 0");
  j["nodes"] = 2.5;
  CHECK(error_of(j) == "test.json: /nodes: expected an integer, got 2.5");
  j = base();
  j.erase("nodes");
  CHECK(error_of(j) == R"(test.json: /: missing key "nodes")");
  j = base();
  j["nodes"] = 1'000'000;
  j["gpus_per_node"] = 1'000;
  CHECK(error_of(j) ==
        "test.json: /nodes: 1000000 nodes x 1000 GPUs = 1000000000 GPUs; at most 16777216 are "
        "supported");
}

TEST_CASE("every key of sources must point at a value of the file") {
  json j = base();
  j["sources"]["/nvlink/peak_GBpz"] = "typo";
  CHECK(error_of(j) == R"(test.json: /sources/~1nvlink~1peak_GBpz: )"
                       R"("/nvlink/peak_GBpz" points to nothing in this file)");
  j = base();
  j["sources"]["nvlink"] = "not a pointer";
  CHECK(error_of(j) == R"(test.json: /sources/nvlink: key "nvlink" is not a JSON pointer; )"
                       R"(expected one like "/nic/peak_GBps")");
  j = base();
  j["sources"]["/gpu/name"] = 3;
  CHECK(error_of(j) == "test.json: /sources/~1gpu~1name: expected a string, got 3");
}

}  // namespace hopsim::config
