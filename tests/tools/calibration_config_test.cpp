// Tests of parse_calibration and check_calibration_for: the exact text of their errors, and
// the shipped published H100 table answering through the compute model.
#include "tools/config/calibration_config.hpp"

#include <array>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "tests/approx.hpp"
#include "tools/config/cluster_config.hpp"
#include "tools/config/experiment_file.hpp"
#include "tools/config/measured_table.hpp"
#include "workloads/compute/compute_model.hpp"
#include "workloads/experiment/run.hpp"

namespace hopsim::config {
namespace {

using nlohmann::json;
using work::Dtype;
using work::Pass;
using work::Source;

// A small valid file that each error test breaks in one place.
json base() {
  return json::parse(R"({
    "schema": "hopsim.calibration/1",
    "created_utc": "2026-01-01T00:00:00Z",
    "source": "measured",
    "device": {"name": "NVIDIA H100 80GB HBM3", "cc": "9.0", "sm_count": 132,
               "driver": "580.159", "cuda_runtime": 13000, "cublas": 130100, "cudnn": 91900,
               "clocks_mhz": {"sm_max": 1980}, "hbm_bytes": 85899345920,
               "ceilings": {"copy_GBps": 3000, "bf16_gemm_tflops": 790}},
    "method": {"timer": "cuda_events", "warmup_ms": 25, "l2_flush": true},
    "tables": [
      {"op": "gemm", "pass": "fwd", "impl": "cublaslt", "key": {"dtype": "bf16"},
       "axes": [{"name": "m", "values": [1024, 4096]}, {"name": "n", "values": [1024, 4096]},
                {"name": "k", "values": [1024, 4096]}],
       "flops": "gemm_v1",
       "time_us": [10, 30, 30, 100, 30, 100, 100, null],
       "p10_us": [9, 29, 29, 99, 29, 99, 99, null]},
      {"op": "attn", "pass": "bwd", "impl": "cudnn",
       "key": {"dtype": "bf16", "d_qk": 192, "d_v": 128, "mask": "causal_top_left", "gqa": 8},
       "axes": [{"name": "s_q", "values": [4096]}, {"name": "s_kv", "values": [4096, 8192]},
                {"name": "bh", "values": [64]}],
       "flops": "attn_bwd_v1", "time_us": [1000, 2000]}
    ]
  })");
}

// The message of the ConfigError that parsing `j` throws, or "" when it parses.
std::string error_of(const json& j) {
  try {
    parse_calibration(Node(j, "t.json"));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

json read(const std::string& relative) {
  std::ifstream in(std::string(HOPSIM_SOURCE_DIR) + "/" + relative);
  REQUIRE(in.good());
  return json::parse(in);
}

}  // namespace

TEST_CASE("the base file parses into plain tables") {
  const json j = base();
  const work::Calibration c = parse_calibration(Node(j, "t.json"));
  CHECK(c.source == "measured");
  CHECK(c.device == "NVIDIA H100 80GB HBM3");
  CHECK(c.ceilings.copy_GBps == 3000);
  CHECK(c.ceilings.bf16_tflops == 790);
  CHECK_FALSE(c.ceilings.fp8_tflops.has_value());
  REQUIRE(c.tables.size() == 2);
  const work::CalibrationTable& g = c.tables[0];
  CHECK(g.op == "gemm");
  CHECK(g.impl == "cublaslt");
  CHECK(g.axes[1].name == "n");
  CHECK(g.axes[2].values == std::vector<std::int64_t>{1024, 4096});
  CHECK(g.time_us.size() == 8);
  CHECK(g.time_us[3] == 100.0);
  CHECK_FALSE(g.time_us[7].has_value());
  CHECK_FALSE(g.citation.has_value());
  const work::CalibrationTable& a = c.tables[1];
  CHECK(a.key.at("d_qk") == "192");
  CHECK(a.key.at("gqa") == "8");
  CHECK(a.key.at("mask") == "causal_top_left");
  CHECK(a.flops == "attn_bwd_v1");
}

TEST_CASE("errors name the file, the JSON pointer, what was found and what is expected") {
  json j = base();
  j["schema"] = "llmsim.calibration/1";
  CHECK(error_of(j) ==
        R"(t.json: /schema: expected "hopsim.calibration/1", got "llmsim.calibration/1")");

  j = base();
  j["tables"][0]["axes"][1]["values"] = {4096, 1024};
  CHECK(error_of(j) ==
        "t.json: /tables/0/axes/1/values/1: got 1024 after 4096; axis values "
        "must be strictly ascending");

  j = base();
  j["tables"][0]["axes"][0]["values"] = {0, 1024};
  CHECK(error_of(j) == "t.json: /tables/0/axes/0/values/0: must be in [1, 2147483648], got 0");

  j = base();
  j["tables"][0]["time_us"].erase(7);
  CHECK(error_of(j) ==
        "t.json: /tables/0/time_us: has 7 values, expected 8 (the product of "
        "the axis sizes 2 x 2 x 2)");

  j = base();
  j["tables"][1]["p10_us"] = {1, 2, 3};
  CHECK(error_of(j) ==
        "t.json: /tables/1/p10_us: has 3 values, expected 2 (the product of the "
        "axis sizes 1 x 2 x 1)");

  j = base();
  j["tables"][0]["time_us"][2] = -1;
  CHECK(error_of(j) == "t.json: /tables/0/time_us/2: expected a time > 0 (us) or null, got -1");

  j = base();
  j["tables"][0]["time_ms"] = j["tables"][0]["time_us"];
  CHECK(error_of(j) == R"(t.json: /tables/0: unknown key "time_ms"; did you mean "time_us"?)");

  j = base();
  j["device"]["l2_bytes"] = 52428800;
  CHECK(error_of(j) ==
        R"(t.json: /device: unknown key "l2_bytes"; expected one of "name", "cc", "sm_count", )"
        R"("driver", "cuda_runtime", "cublas", "cudnn", "clocks_mhz", "ceilings", "hbm_bytes", )"
            R"("equivalent_gpus", "peak_bf16_tflops", "peak_fp8_tflops", "peak_fp4_tflops", )"
            R"("hbm_GBps")");
}

TEST_CASE("each op's key, axes and FLOP formula are checked") {
  json j = base();
  j["tables"][0]["op"] = "conv";
  CHECK(error_of(j) ==
        R"(t.json: /tables/0/op: expected one of "gemm", "grouped_gemm", "attn", "memory", )"
        R"(got "conv")");

  j = base();
  j["tables"][0]["flops"] = "attn_fwd_v1";
  CHECK(error_of(j) == R"(t.json: /tables/0/flops: "attn_fwd_v1" is not the work of a gemm fwd )"
                       R"(table; expected "gemm_v1")");

  j = base();
  j["tables"][1]["flops"] = "attn_fwd_v1";
  CHECK(error_of(j) == R"(t.json: /tables/1/flops: "attn_fwd_v1" is not the work of a attn bwd )"
                       R"(table; expected "attn_bwd_v1")");

  j = base();
  std::swap(j["tables"][0]["axes"][0], j["tables"][0]["axes"][1]);
  CHECK(error_of(j) == R"(t.json: /tables/0/axes/0/name: expected "m" (gemm axes are "m", "n", )"
                       R"("k", in this order), got "n")");

  j = base();
  j["tables"][1]["axes"].erase(2);
  CHECK(error_of(j) ==
        R"(t.json: /tables/1/axes: attn tables have 3 axes ("s_q", "s_kv", "bh"), got 2)");

  j = base();
  j["tables"][0]["key"] = json::object();
  CHECK(error_of(j) == R"(t.json: /tables/0/key: missing key "dtype")");

  j = base();
  j["tables"][0]["key"]["role"] = "wgrad";  // a forward table
  CHECK(error_of(j) == R"(t.json: /tables/0/key/role: a role says which backward GEMM a bwd )"
                       R"(table times; this table's pass is "fwd")");
  j["tables"][0]["key"]["role"] = "both";
  CHECK(error_of(j) == R"(t.json: /tables/0/key/role: expected one of "wgrad", "dgrad", got )"
                       R"("both")");

  j = base();
  j["tables"][0]["key"]["layout"] = "XY";
  CHECK(error_of(j) == R"(t.json: /tables/0/key/layout: expected one of "NN", "NT", "TN", )"
                       R"("TT", got "XY")");

  j = base();
  j["tables"][0]["key"]["layout"] = "TN";  // descriptive: accepted, kept apart from the key
  CHECK(error_of(j).empty());

  j = base();
  j["tables"][1]["key"]["mask"] = "causal";
  CHECK(error_of(j) == R"(t.json: /tables/1/key/mask: expected one of "none", )"
                       R"("causal_top_left", "causal_bottom_right", got "causal")");

  j = base();
  j["tables"][1]["key"]["gqa"] = "8";
  CHECK(error_of(j) == R"(t.json: /tables/1/key/gqa: expected an integer, got string "8")");

  j = base();
  j["tables"].push_back(j["tables"][0]);
  CHECK(error_of(j) == "t.json: /tables/2: same op, pass, impl and key as /tables/0");
  j["tables"][2]["impl"] = "cublas";
  CHECK(error_of(j).empty());
}

TEST_CASE("published files cite every table, method holds scalars") {
  json j = base();
  j["source"] = "published";
  CHECK(error_of(j) == R"(t.json: /tables/0: missing key "source"; every table of a published )"
                       R"(file cites where its numbers come from)");
  j["tables"][0]["source"] = "a paper";
  j["tables"][1]["source"] = "another paper";
  const work::Calibration c = parse_calibration(Node(j, "t.json"));
  CHECK(c.tables[1].citation == "another paper");

  j = base();
  j["method"]["grid"] = {1, 2};
  CHECK(error_of(j) == "t.json: /method/grid: expected a string, number or boolean, got array");

  j = base();
  j["tables"] = json::array();
  CHECK(error_of(j) == "t.json: /tables: expected at least one table");
}

TEST_CASE("a table for another GPU is refused, naming both and the way out") {
  const json j = base();
  work::Calibration c = parse_calibration(Node(j, "t.json"));
  CHECK_NOTHROW(check_calibration_for(c, "H100 SXM", "t.json"));
  CHECK_NOTHROW(check_calibration_for(c, "h100", "t.json"));
  c.device = "NVIDIA H200";
  CHECK_THROWS_WITH_AS(check_calibration_for(c, "H100 SXM", "configs/calibration/h200.json"),
                       "configs/calibration/h200.json: /device/name: the table is for \"NVIDIA "
                       "H200\", but the cluster's GPU is \"H100 SXM\"; use a calibration table "
                       "for the H100, \"auto\" (the shipped table for it, or the nearest one "
                       "scaled to it), or none (the roofline)",
                       ConfigError);
  CHECK_THROWS_AS(check_calibration_for(c, "H20", "t.json"), ConfigError);  // a word, not a prefix
  CHECK_NOTHROW(check_calibration_for(c, "H200 SXM", "t.json"));
}

TEST_CASE("the shipped published H100 table answers with the published figures") {
  const std::string file = "configs/calibration/h100-published.json";
  const json j = read(file);
  const work::Calibration cal = parse_calibration(Node(j, file));
  CHECK(cal.source == "published");
  const json cj = read("configs/clusters/h100-dgx.json");
  const ClusterConfig cluster = parse_cluster(Node(cj, "h100-dgx.json"));
  CHECK_NOTHROW(check_calibration_for(cal, cluster.topology.gpu.name, file));
  CHECK_THROWS_AS(check_calibration_for(cal, "H200 SXM", file), ConfigError);
  // H800: the H100's SMs and clocks, listed in device.equivalent_gpus.
  CHECK(cal.equivalent_gpus == std::vector<std::string>{"H800"});
  CHECK_NOTHROW(check_calibration_for(cal, "H800 SXM", file));

  work::Roofline r;
  r.peak_bf16_tflops = cluster.topology.gpu.peak_bf16_tflops;
  r.peak_fp8_tflops = cluster.topology.gpu.peak_fp8_tflops;
  r.hbm_GBps = cluster.topology.gpu.hbm_GBps;
  const work::ComputeModel model(&cal, r);
  const auto tflops = [](const work::ComputeCost& c) {
    return c.flops.n / c.time.seconds() / 1e12;
  };

  const work::ComputeCost g8k = model.gemm(Dtype::Bf16, 8192, 8192, 8192, Pass::Fwd);
  CHECK(g8k.source == Source::Exact);
  CHECK(tflops(g8k) == hopsim::test::approx(798).epsilon(0.01));
  CHECK(tflops(model.gemm(Dtype::Bf16, 4096, 4096, 4096, Pass::Fwd)) ==
        hopsim::test::approx(789).epsilon(1e-6));
  CHECK(tflops(model.gemm(Dtype::Bf16, 1024, 1024, 1024, Pass::Fwd)) ==
        hopsim::test::approx(246.72).epsilon(1e-4));
  const work::ComputeCost g16k = model.gemm(Dtype::Bf16, 16384, 16384, 16384, Pass::Fwd);
  CHECK(g16k.source == Source::Clamped);
  CHECK(tflops(g16k) == hopsim::test::approx(798).epsilon(1e-6));
  const work::ComputeCost mid = model.gemm(Dtype::Bf16, 8192, 1536, 8192, Pass::Fwd);
  CHECK(mid.source == Source::Clamped);  // XLA's grid, clamped at m = k = 4096
  CHECK(model.gemm(Dtype::Bf16, 128, 4096, 4096, Pass::Fwd).source == Source::Roofline);
  CHECK(model.gemm(Dtype::Bf16, 8192, 8192, 8192, Pass::Bwd).time == 2 * g8k.time);

  // Monotone along every axis of XLA's grid wherever the table's own times are.
  const std::vector<std::int64_t> v{256, 512, 1024, 2048, 4096};
  int segments = 0;
  for (std::size_t axis = 0; axis < 3; ++axis) {
    for (std::int64_t a : v) {
      for (std::int64_t b : v) {
        for (std::size_t i = 0; i + 1 < v.size(); ++i) {
          const auto at = [&](std::int64_t x) {
            std::array<std::int64_t, 3> p{};
            p[axis] = x;
            p[(axis + 1) % 3] = a;
            p[(axis + 2) % 3] = b;
            return model.gemm(Dtype::Bf16, p[0], p[1], p[2], Pass::Fwd).time;
          };
          if (at(v[i + 1]) < at(v[i])) {
            continue;  // the published times themselves fall here
          }
          ++segments;
          Time last = at(v[i]);
          for (std::int64_t x = v[i] + v[i] / 16; x <= v[i + 1]; x += v[i] / 16) {
            CHECK(at(x).count_ps() + 1 >= last.count_ps());  // 1 ps: F / theta rounds up
            last = at(x);
          }
        }
      }
    }
  }
  CHECK(segments > 250);

  work::AttentionShape s{128, 128, work::Mask::None, 1, 16384, 16384, 16};
  const work::ComputeCost fa3 = model.attention(Dtype::Bf16, s, Pass::Fwd);
  CHECK(fa3.source == Source::Exact);
  CHECK(tflops(fa3) == hopsim::test::approx(648).epsilon(1e-6));
  CHECK(tflops(model.attention(Dtype::Bf16, s, Pass::Bwd)) ==
        hopsim::test::approx(561).epsilon(1e-6));
  s.s_q = s.s_kv = 8448;
  s.bh = 64;
  CHECK(model.attention(Dtype::Bf16, s, Pass::Fwd).time == Time::us(3538));
  s = {128, 128, work::Mask::CausalBottomRight, 1, 8192, 8192, 32};
  CHECK(tflops(model.attention(Dtype::Bf16, s, Pass::Fwd)) ==
        hopsim::test::approx(602).epsilon(1e-6));
  s.mask = work::Mask::CausalTopLeft;
  CHECK(tflops(model.attention(Dtype::Bf16, s, Pass::Fwd)) ==
        hopsim::test::approx(529).epsilon(1e-6));
  s = {64, 64, work::Mask::None, 1, 16384, 16384, 32};
  CHECK(tflops(model.attention(Dtype::Bf16, s, Pass::Fwd)) ==
        hopsim::test::approx(413).epsilon(1e-6));
  s.bh = 64;  // off the benchmark's diagonal
  CHECK(model.attention(Dtype::Bf16, s, Pass::Fwd).source == Source::Roofline);

  const work::ComputeCost grouped = model.grouped_gemm(Dtype::Fp8, 4, 8192, 4096, 7168, Pass::Fwd);
  CHECK(grouped.source == Source::Exact);
  CHECK(tflops(grouped) == hopsim::test::approx(1346).epsilon(1e-6));
  const work::ComputeCost fp8 = model.gemm(Dtype::Fp8, 1024, 4096, 7168, Pass::Fwd);
  CHECK(fp8.source == Source::Interpolated);  // between DeepGEMM's M = 128 and 4096
  CHECK(tflops(fp8) > 533);
  CHECK(tflops(fp8) < 1410);
}


namespace {

work::GpuFigures h100_figures() {
  topo::GpuSpec gpu;
  gpu.peak_bf16_tflops = 989;
  gpu.peak_fp8_tflops = 1979;
  gpu.hbm_GBps = 3350;
  gpu.hbm_GB = 80;
  gpu.sms = 132;
  return figures_of(gpu);
}

// The message of the ConfigError that the plausibility check throws, or "" when it passes.
std::string implausible(const json& j, const work::GpuFigures& gpu) {
  const work::Calibration c = parse_calibration(Node(j, "t.json"));
  try {
    check_calibration_plausible(c, gpu, "t.json");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("plausibility: no cell faster than the GPU's peak, none slower than a working kernel") {
  CHECK(implausible(base(), h100_figures()).empty());
  json j = base();
  j["tables"][0]["time_us"][0] = 2;  // 1024^3 in 2 us: 1,074 TF, above 989 + 5%
  CHECK(implausible(j, h100_figures()) ==
        "t.json: /tables/0/time_us/0: gemm fwd (cublaslt) at (1024, 1024, 1024): 2 us is 1074 "
        "TFLOP/s, faster than the GPU's peak of 989 TFLOP/s (+5%)");
  j["tables"][0]["time_us"][0] = 2.1;  // 1,023 TF: within the margin
  CHECK(implausible(j, h100_figures()).empty());
  // Slower than at 0.1% of the peak plus 1 ms: 2.17 + 1 ms for 1024^3.
  j["tables"][0]["time_us"][0] = 3100;
  CHECK(implausible(j, h100_figures()).empty());
  j["tables"][0]["time_us"][0] = 3200;
  CHECK(implausible(j, h100_figures()) ==
        "t.json: /tables/0/time_us/0: gemm fwd (cublaslt) at (1024, 1024, 1024): 3200 us is "
        "slower than 3171.37 us, the time at 0.1% of the GPU's peak plus 1 ms: no working "
        "kernel");
  j["tables"][0]["time_us"][0] = 1e9;  // 1,000 s (used to abort the simulator)
  CHECK(implausible(j, h100_figures()).find("slower than") != std::string::npos);
  // Against its own ceilings (lower bounds of the peaks): fast cells pass, slow ones do not.
  j["tables"][0]["time_us"][0] = 0.5;
  const work::Calibration own = parse_calibration(Node(j, "t.json"));
  CHECK(implausible(j, figures_of(own)).empty());
  CHECK_FALSE(implausible(j, h100_figures()).empty());
  j["tables"][0]["time_us"][0] = 1e9;
  CHECK_FALSE(implausible(j, figures_of(own)).empty());
}

TEST_CASE("plausibility: a device block that contradicts the GPU is refused") {
  json j = base();
  j["device"]["sm_count"] = 78;
  CHECK(implausible(j, h100_figures()) ==
        "t.json: /device/sm_count: the table's device has 78 SMs, the GPU 132");
  j = base();
  j["device"]["ceilings"]["bf16_gemm_tflops"] = 5000;
  CHECK(implausible(j, h100_figures()) ==
        "t.json: /device/ceilings/bf16_gemm_tflops: 5000 TFLOP/s measured, above the GPU's peak "
        "of 989 TFLOP/s (+5%)");
  j = base();
  j["device"]["ceilings"]["copy_GBps"] = 9000;
  CHECK(implausible(j, h100_figures()).find("/device/ceilings/copy_GBps") != std::string::npos);
  j = base();
  j["device"]["hbm_bytes"] = 24'000'000'000;
  CHECK(implausible(j, h100_figures()) ==
        "t.json: /device/hbm_bytes: 24 GB on the table's device, 80 GB on the GPU");
}

TEST_CASE("plausibility: times that fall as a shape grows are a warning, with the first") {
  json j = base();
  const work::Calibration ok = parse_calibration(Node(j, "t.json"));
  CHECK(check_calibration_plausible(ok, h100_figures(), "t.json").empty());
  // (1024, 1024, 4096) faster than (1024, 1024, 1024), whose 10 us is the table's fastest
  // cell, its launch floor: libraries switch algorithms there, no warning.
  j["tables"][0]["time_us"][1] = 9;
  CHECK(check_calibration_plausible(parse_calibration(Node(j, "t.json")), h100_figures(),
                                    "t.json")
            .empty());
  // Ten times slower (the floor 90 us): above twice the floor, a fall within 5% (timing
  // spread) is no warning either; 6% is.
  j["tables"][0]["time_us"] = {100, 90, 300, 286, 300, 1000, 1000, nullptr};
  CHECK(check_calibration_plausible(parse_calibration(Node(j, "t.json")), h100_figures(),
                                    "t.json")
            .empty());
  j["tables"][0]["time_us"][3] = 282;  // (1024, 4096, 4096) after 300 us at k = 1024
  const work::Calibration c = parse_calibration(Node(j, "t.json"));
  const std::vector<std::string> w = check_calibration_plausible(c, h100_figures(), "t.json");
  REQUIRE(w.size() == 1);
  CHECK(w.front() ==
        "t.json: /tables/0/time_us: the time falls as a shape grows in 1 place(s), first gemm "
        "fwd (cublaslt): 300 us at k = 1024, 282 us at k = 4096 (cells 2 and 3); a bigger "
        "kernel should not be faster");
}

TEST_CASE("plausibility: every shipped table passes without a warning") {
  for (const char* name : {"h100-published", "h200-published", "h200-measured", "h800-published",
                           "h800-deepseek-profile", "gb200-published", "gb300-published"}) {
    CAPTURE(name);
    const std::string file = std::string("configs/calibration/") + name + ".json";
    const work::Calibration cal = parse_calibration(Node(read(file), file));
    CHECK(check_calibration_plausible(cal, datasheet_figures_of(cal), file).empty());
    CHECK(check_calibration_plausible(cal, figures_of(cal), file).empty());
  }
}

TEST_CASE("plausibility: the shipped H100 table fits the shipped H100 and H800 clusters") {
  const std::string file = "configs/calibration/h100-published.json";
  const work::Calibration cal = parse_calibration(Node(read(file), file));
  for (const char* cluster :
       {"configs/clusters/h100-dgx.json", "configs/clusters/h800-deepseek.json"}) {
    CAPTURE(cluster);
    const ClusterConfig cc = parse_cluster(Node(read(cluster), cluster));
    CHECK_NOTHROW(check_calibration_plausible(cal, figures_of(cc.topology.gpu), file));
  }
}


TEST_CASE("calibration \"auto\": a measured table only when each of its families passes") {
  const std::string file = std::string(HOPSIM_SOURCE_DIR) + "/configs/experiments/default.json";
  const ClusterConfig h200 = parse_cluster(
      Node(read("configs/clusters/h200-hgx.json"), "configs/clusters/h200-hgx.json"));
  const topo::GpuSpec& gpu = h200.topology.gpu;
  const std::string measured_file = "configs/calibration/h200-measured.json";
  const std::string published_file = "configs/calibration/h200-published.json";
  const work::Calibration measured = parse_calibration(Node(read(measured_file), measured_file));
  work::Calibration published = parse_calibration(Node(read(published_file), published_file));
  (void)attach_base(published, published_file, gpu.name);
  // The shipped measurement: its GEMMs and attention within 25% of the published answers,
  // cublasGemmGroupedBatchedEx (2.4x slower than the loops) and most of its plain-CUDA memory
  // kernels not (RMSNorm and the FP8 cast at 0.35 and 0.09 of Liger's and the roofline's rate;
  // the permute is within 3%).
  const std::vector<FamilyVerdict> v = judge_measured(measured, gpu, &published, "h200-published");
  REQUIRE(v.size() == measured.tables.size());
  std::size_t rejected = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    CAPTURE(v[i].family);
    CAPTURE(v[i].rejected);
    const work::CalibrationTable& t = measured.tables[i];
    if (t.op != "memory") {
      CHECK(v[i].rejected.empty() == (t.impl != "cublas_grouped_ex"));
    } else if (t.key.at("kernel") == "norm" || t.key.at("kernel") == "fp8_cast") {
      CHECK_FALSE(v[i].rejected.empty());
    } else if (t.key.at("kernel") == "permute") {
      CHECK(v[i].rejected.empty());
    }
    rejected += v[i].rejected.empty() ? 0U : 1U;
    if (!v[i].rejected.empty()) {
      CHECK(v[i].rejected.find("off what h200-published answers (at most 25%)") !=
            std::string::npos);
    }
  }
  // So "auto" on the H200 takes the published table, and its note says why not the measured.
  const ExperimentFile run = load_experiment(file, {"cluster=\"h200-hgx\""});
  CHECK(run.calibration_file.ends_with("h200-published.json"));
  const std::string& note = run.experiment.calibration_note;
  CHECK(note.starts_with("auto: h200-published (NVIDIA H200), which fits the H200 SXM; the "
                         "measured h200-measured passed over, " +
                         std::to_string(rejected) + " of " + std::to_string(v.size()) +
                         " families rejected: "));
  // A family out of bounds rejects the table: one whose times are doubled, in a table of
  // families that pass.
  work::Calibration good = measured;
  std::erase_if(good.tables, [](const work::CalibrationTable& t) {
    return t.op == "memory" || t.impl == "cublas_grouped_ex";
  });
  CHECK(rejections(judge_measured(good, gpu, &published, "h200-published")).empty());
  for (auto& cell : good.tables[0].time_us) {
    cell = cell ? std::optional<double>(*cell * 2) : std::nullopt;
  }
  const std::string why = rejections(judge_measured(good, gpu, &published, "h200-published"));
  CHECK(why.starts_with("1 of " + std::to_string(good.tables.size()) +
                        " families rejected: gemm fwd cublaslt dtype=bf16 layout=TN: its 16 "
                        "cells are a median "));
}

TEST_CASE("calibration \"auto\": the table for the GPU, else the nearest one scaled, or none") {
  const std::string file = std::string(HOPSIM_SOURCE_DIR) + "/configs/experiments/default.json";
  // On H100s "auto" is the shipped H100 table, as if named.
  const ExperimentFile h100 = load_experiment(file, {});
  const ExperimentFile named = load_experiment(file, {"calibration=\"h100-published\""});
  REQUIRE(h100.experiment.calibration != nullptr);
  CHECK(h100.calibration_file.ends_with("h100-published.json"));
  CHECK_FALSE(h100.experiment.calibration_scaling.has_value());
  CHECK(h100.experiment.calibration_note ==
        "auto: h100-published (NVIDIA H100 80GB HBM3), which fits the H100 SXM");
  const work::ComputeModel a = work::compute_model(h100.experiment);
  const work::ComputeModel b = work::compute_model(named.experiment);
  const auto fwd = [](const work::ComputeModel& m) {
    return m.gemm(work::Dtype::Bf16, 8192, 8192, 8192, work::Pass::Fwd);
  };
  CHECK(fwd(a).time == fwd(b).time);
  CHECK(fwd(a).source == work::Source::Exact);

  // The H200's table answers attention; its GEMMs come from its base, the H100 table, scaled
  // by the datasheet figures in that table's device block. h200-measured.json, a measured table
  // and so first in line, is judged family by family and passed over (the next test case).
  const ExperimentFile h200 = load_experiment(file, {"cluster=\"h200-hgx\""});
  CHECK(h200.calibration_file.ends_with("h200-published.json"));
  CHECK_FALSE(h200.experiment.calibration_scaling.has_value());
  CHECK(h200.experiment.calibration_note.find(
            "the 14 of its base h100-published (NVIDIA H100 80GB HBM3), scaled from that GPU to "
            "the H200 SXM") != std::string::npos);
  // A large BF16 GEMM is compute-bound: its time scales by the peaks (989.4 over 989 TF).
  const work::ComputeCost scaled = fwd(work::compute_model(h200.experiment));
  CHECK(scaled.source == work::Source::Exact);
  CHECK(scaled.from_base);
  CHECK(scaled.time.seconds() ==
        hopsim::test::approx(fwd(a).time.seconds() * 989.4 / 989).epsilon(1e-8));
  // Its own cuDNN table: Llama 3.1's GQA at 8K, exact, as cuDNN 9.19 printed it (1.708 ms).
  const work::ComputeModel on_h200 = work::compute_model(h200.experiment);
  const work::AttentionShape llama{128, 128, work::Mask::CausalTopLeft, 8, 8192, 8192, 64};
  const work::ComputeCost cudnn = on_h200.attention(work::Dtype::Bf16, llama, work::Pass::Fwd);
  CHECK(cudnn.time == Time::us(1708));
  CHECK(cudnn.impl == "cudnn");
  CHECK_FALSE(cudnn.from_base);

  // The H800 takes its own table (DeepGEMM's weight gradients) before the H100 table that
  // lists it as equivalent; that one is its base, unscaled.
  const ExperimentFile h800 = load_experiment(file, {"cluster=\"h800-deepseek\""});
  CHECK(h800.calibration_file.ends_with("h800-published.json"));
  const work::ComputeCost wgrad = work::compute_model(h800.experiment)
                                      .gemm(work::Dtype::Fp8, 4096, 4096, 7168,
                                            work::GemmRole::Wgrad);
  CHECK(wgrad.source == work::Source::Exact);
  CHECK(wgrad.time.seconds() ==
        hopsim::test::approx(2.0 * 7168 * 4096 * 4096 / 942e12).epsilon(1e-6));
  CHECK(h800.experiment.calibration_note.find("scaled") == std::string::npos);

  // A GPU no table names: the nearest table (the H200's, by its figures) scaled to it, and
  // that table's base from its own GPU.
  const ExperimentFile other =
      load_experiment(file, {"cluster=\"h200-hgx\"", "cluster.gpu.name=\"X100 SXM\""});
  REQUIRE(other.experiment.calibration_scaling.has_value());
  CHECK(other.experiment.calibration_scaling->hbm_GBps == 4800);
  CHECK(other.experiment.calibration_note.find("h200-published (NVIDIA H200) scaled") !=
        std::string::npos);
  CHECK(fwd(work::compute_model(other.experiment)).time == scaled.time);

  // Named, another GPU's table is still refused; "none" is the roofline.
  CHECK_THROWS_AS(load_experiment(file, {"cluster=\"h200-hgx\"", "calibration=\"h100-published\""}),
                  ConfigError);
  const ExperimentFile none = load_experiment(file, {"calibration=\"none\""});
  CHECK(none.experiment.calibration == nullptr);
  CHECK(fwd(work::compute_model(none.experiment)).source == work::Source::Roofline);
}

TEST_CASE("calibration \"auto\": the GB200 takes cuDNN's GB200 attention, the B200 it scaled") {
  const std::string dir = std::string(HOPSIM_SOURCE_DIR) + "/configs/experiments/";
  const ExperimentFile gb200 = load_experiment(dir + "llama3-8b-gb200-fp8.json", {});
  CHECK(gb200.calibration_file.ends_with("gb200-published.json"));
  CHECK_FALSE(gb200.experiment.calibration_scaling.has_value());
  const work::ComputeModel on_gb200 = work::compute_model(gb200.experiment);
  // Llama 3.1's GQA at 8K, causal, batch 2 of 64 heads: as cuDNN 9.22 printed it on a GB200.
  const work::AttentionShape llama{128, 128, work::Mask::CausalTopLeft, 8, 8192, 8192, 128};
  const work::ComputeCost bf16_fwd = on_gb200.attention(Dtype::Bf16, llama, Pass::Fwd);
  CHECK(bf16_fwd.time == Time::us(1397));
  CHECK(bf16_fwd.source == Source::Exact);
  CHECK(bf16_fwd.impl == "cudnn");
  CHECK_FALSE(bf16_fwd.from_base);
  // Measured, the FP8 backward is faster than the BF16 one (3.781 against 4.127 ms); the H200's
  // FP8 backward, which answered before, is slower than its BF16 one.
  CHECK(on_gb200.attention(Dtype::Fp8, llama, Pass::Bwd).time == Time::us(3781));
  CHECK(on_gb200.attention(Dtype::Bf16, llama, Pass::Bwd).time == Time::us(4127));
  // What the table lacks, a BF16 GEMM, comes from the chain's end, the H100 table, scaled by
  // the peaks from the H100 to the GB200 and by the GPUs' GEMM shares of peak in a step, the
  // H100's 0.7 (the reference) against the GB200's gpu.gemm_efficiency.
  const ExperimentFile h100 = load_experiment(dir + "default.json", {});
  const auto gemm = [](const work::ComputeModel& m) {
    return m.gemm(Dtype::Bf16, 8192, 8192, 8192, Pass::Fwd);
  };
  const work::ComputeCost base = gemm(on_gb200);
  CHECK(base.from_base);
  CHECK(base.time.seconds() ==
        hopsim::test::approx(gemm(work::compute_model(h100.experiment)).time.seconds() *
                             989.4 / 2500 * 0.7 / 0.512)
            .epsilon(1e-6));
  // The same GEMM's table time, scaled to a GB200 said to reach the H100's share: peaks only.
  const ExperimentFile at_reference = load_experiment(
      dir + "llama3-8b-gb200-fp8.json", {"cluster.gpu.gemm_efficiency=0.7"});
  CHECK(gemm(work::compute_model(at_reference.experiment)).time.seconds() ==
        hopsim::test::approx(gemm(work::compute_model(h100.experiment)).time.seconds() * 989.4 /
                             2500)
            .epsilon(1e-6));

  // The B200 (no table names it) takes the nearest table, the GB200's, scaled by the peaks
  // alone: attention is no GEMM, and the B200's GEMM share is the GB200's anyway.
  const ExperimentFile b200 = load_experiment(dir + "llama3-8b-b200-fp8.json", {});
  REQUIRE(b200.experiment.calibration_scaling.has_value());
  CHECK(b200.experiment.calibration_note.find("gb200-published (NVIDIA GB200) scaled") !=
        std::string::npos);
  CHECK(work::compute_model(b200.experiment)
            .attention(Dtype::Bf16, llama, Pass::Fwd)
            .time.seconds() == hopsim::test::approx(1397e-6 * 2500 / 2250).epsilon(1e-6));
}

TEST_CASE("calibration \"auto\": the GB300 takes its own attention, the B300 the GB300's scaled") {
  const std::string dir = std::string(HOPSIM_SOURCE_DIR) + "/configs/experiments/";
  const work::AttentionShape llama{128, 128, work::Mask::CausalTopLeft, 8, 8192, 8192, 128};
  const ExperimentFile gb300 = load_experiment(dir + "llama3-8b-gb300-fp8.json", {});
  CHECK(gb300.calibration_file.ends_with("gb300-published.json"));
  CHECK_FALSE(gb300.experiment.calibration_scaling.has_value());
  // cuDNN 9.22 on a GB300, the GB200's shape: 1.185 ms forward against the GB200's 1.397.
  const work::ComputeCost fwd =
      work::compute_model(gb300.experiment).attention(Dtype::Bf16, llama, Pass::Fwd);
  CHECK(fwd.time == Time::us(1185));
  CHECK(fwd.source == Source::Exact);

  // The B300 has the B200's BF16 peak and the GB300's and GB200's HBM, so by those two it is as
  // near the GB300 as the GB200; its NVFP4 peak (13,125) is the GB300's side (15,000, the
  // GB200 10,000), and with it the attention its doubled SFU rate runs.
  const ExperimentFile b300 =
      load_experiment(dir + "llama3-8b-b200-fp8.json", {"cluster=\"b300-dgx\""});
  REQUIRE(b300.experiment.calibration_scaling.has_value());
  CHECK(b300.experiment.calibration_note.find("gb300-published (NVIDIA GB300) scaled") !=
        std::string::npos);
  CHECK(work::compute_model(b300.experiment)
            .attention(Dtype::Bf16, llama, Pass::Fwd)
            .time.seconds() == hopsim::test::approx(1185e-6 * 2500 / 2250).epsilon(1e-6));
  // The FP4 peak decides: said to be the GB200's, the GB200's table is the nearest.
  const ExperimentFile as_gb200 = load_experiment(
      dir + "llama3-8b-b200-fp8.json",
      {"cluster=\"b300-dgx\"", "cluster.gpu.peak_fp4_tflops=10000"});
  CHECK(as_gb200.experiment.calibration_note.find("gb200-published (NVIDIA GB200) scaled") !=
        std::string::npos);
  // The B200 stays nearest the GB200 (9,000 against 10,000 and 15,000).
  const ExperimentFile b200 = load_experiment(dir + "llama3-8b-b200-fp8.json", {});
  CHECK(b200.experiment.calibration_note.find("gb200-published (NVIDIA GB200) scaled") !=
        std::string::npos);
}

TEST_CASE("nvfp4: Blackwell's FP4 GEMMs, refused where the GPU has none, its ratio stated") {
  const std::string dir = std::string(HOPSIM_SOURCE_DIR) + "/configs/experiments/";
  const auto refusal = [&](const std::string& file, const std::vector<std::string>& sets) {
    try {
      (void)load_experiment(dir + file, sets);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  // On the GB300 the recipe runs, and its step is shorter than MXFP8's.
  std::map<std::string, double> copies;  // the step's low-precision weight copies, bytes
  const auto step = [&](const std::string& recipe) {
    const ExperimentFile f = load_experiment(
        dir + "llama3-8b-gb300-fp8.json", {"workload.fp8_recipe=\"" + recipe + "\""});
    CHECK(f.experiment.fp8_recipe == work::fp8_recipe_named(recipe));
    const work::RunResult r = work::run(f.experiment);
    REQUIRE(r.ok());
    REQUIRE(r.cases.front().step() != nullptr);
    copies[recipe] = r.cases.front().step()->memory.front().fp8_weights;
    return r.cases.front().summary.step.seconds();
  };
  CHECK(step("nvfp4") * 1.2 < step("mxfp8"));
  // NVFP4's copies: two half bytes with a scale per 16 x 16 block; MXFP8's a byte with one per
  // 32 elements, each twice.
  CHECK(copies.at("nvfp4") / copies.at("mxfp8") ==
        hopsim::test::approx((1 + 2.0 / 256) / (2 + 2.0 / 32)).epsilon(1e-12));
  // Hopper has no FP4 tensor cores: one line naming the key and the GPU.
  CHECK(refusal("default.json", {"workload.fp8_recipe=\"nvfp4\""}) ==
        "--set workload.fp8_recipe=\"nvfp4\": /workload/fp8_recipe: \"nvfp4\" runs its GEMMs on "
        "FP4 tensor cores, and the cluster's GPU \"H100 SXM\" has none (no "
        "gpu.peak_fp4_tflops: Blackwell GPUs have them); use \"mxfp8\" or \"current\", or a "
        "Blackwell cluster");
  // An FP4 peak needs its GEMM ratio, and the ratio needs the peak.
  const std::string no_ratio = refusal("llama3-8b-gb300-fp8.json",
                                       {"cluster.gpu.nvfp4_gemm_ratio=null"});
  CHECK(no_ratio.find("/gpu/nvfp4_gemm_ratio: missing: required with peak_fp4_tflops") !=
        std::string::npos);
  const std::string no_peak =
      refusal("default.json", {"cluster.gpu.nvfp4_gemm_ratio=0.76"});
  CHECK(no_peak.find("/gpu/nvfp4_gemm_ratio: only with peak_fp4_tflops") != std::string::npos);
}

TEST_CASE("calibration: DeepSeek's own FP8 GEMMs and attention from its profile, named only") {
  // h800-deepseek-profile sorts before h800-published, yet "auto" passes it over ("auto": false).
  const std::string file = std::string(HOPSIM_SOURCE_DIR) + "/configs/experiments/default.json";
  const ExperimentFile h800 = load_experiment(file, {"cluster=\"h800-deepseek\""});
  CHECK(h800.calibration_file.ends_with("h800-published.json"));
  const ExperimentFile named = load_experiment(
      file, {"cluster=\"h800-deepseek\"", "calibration=\"h800-deepseek-profile\""});
  CHECK(named.calibration_file.ends_with("h800-deepseek-profile.json"));
  const work::ComputeModel published = work::compute_model(h800.experiment);
  const work::ComputeModel profile = work::compute_model(named.experiment);
  using work::GemmRole;
  // MLA's query up-projection over 4,096 tokens, each role at its own cell: the profile's
  // kernels (x 112/132 to a whole GPU) are slower than DeepGEMM's, at every role.
  for (const GemmRole role : {GemmRole::Fprop, GemmRole::Dgrad, GemmRole::Wgrad}) {
    CAPTURE(static_cast<int>(role));
    const work::ComputeCost own = profile.gemm(work::Dtype::Fp8, 4096, 24576, 1536, role);
    CHECK(own.source == work::Source::Exact);
    CHECK(own.impl == "dpsk_fp8_ptp128c");
    CHECK_FALSE(own.from_base);
    CHECK(own.time > published.gemm(work::Dtype::Fp8, 4096, 24576, 1536, role).time);
  }
  // The routed experts' grouped GEMMs at the balanced point, 4 experts x 8,192 rows.
  const work::ComputeCost experts =
      profile.grouped_gemm(work::Dtype::Fp8, 4, 8192, 4096, 7168, GemmRole::Fprop);
  CHECK(experts.source == work::Source::Exact);
  CHECK(experts.impl == "dpsk_fp8_ptp128c");
  // Between its cells it interpolates DeepSeek's kernels (2,112 wide: between the query's
  // down-projection and the shared expert's gate+up); outside them (64 tokens, below its 4,096)
  // its base answers: DeepGEMM's published forward, the same time either way.
  const work::ComputeCost between =
      profile.gemm(work::Dtype::Fp8, 4096, 2112, 7168, GemmRole::Fprop);
  CHECK(between.source == work::Source::Interpolated);
  CHECK_FALSE(between.from_base);
  const work::ComputeCost other = profile.gemm(work::Dtype::Fp8, 64, 2112, 7168, GemmRole::Fprop);
  CHECK(other.from_base);
  CHECK(other.source == work::Source::Exact);
  CHECK(other.time == published.gemm(work::Dtype::Fp8, 64, 2112, 7168, GemmRole::Fprop).time);
  // MLA's attention call (4,096 causal tokens, 128 heads, head dims 192 and 128): the trace's
  // FlashAttention-3 kernels on a whole GPU (less 20/132 of their time beside DeepEP), faster
  // than the roofline's curve, which answers with DeepGEMM's table (no attention there at MLA's
  // head dims). Longer calls keep the cell's rate (clamped), shorter ones fall to the roofline.
  const work::AttentionShape mla{192, 128, work::Mask::CausalTopLeft, 1, 4096, 4096, 128};
  for (const work::Pass pass : {work::Pass::Fwd, work::Pass::Bwd}) {
    const work::ComputeCost own = profile.attention(work::Dtype::Bf16, mla, pass);
    CHECK(own.source == work::Source::Exact);
    CHECK(own.impl == "fa3");
    CHECK(own.time == (pass == work::Pass::Fwd ? Time::ps(1'049'800'000)
                                               : Time::ps(3'207'800'000)));
    const work::ComputeCost roofline = published.attention(work::Dtype::Bf16, mla, pass);
    CHECK(roofline.source == work::Source::Roofline);
    CHECK(own.time < roofline.time);
  }
  work::AttentionShape longer = mla;
  longer.s_q = longer.s_kv = 8192;
  const work::ComputeCost clamped = profile.attention(work::Dtype::Bf16, longer, work::Pass::Fwd);
  CHECK(clamped.source == work::Source::Clamped);
  const double pairs = static_cast<double>(work::attention_pairs(work::Mask::CausalTopLeft, 8192,
                                                                 8192)) /
                       static_cast<double>(work::attention_pairs(work::Mask::CausalTopLeft, 4096,
                                                                 4096));
  CHECK(clamped.time.seconds() == hopsim::test::approx(1049.8e-6 * pairs).epsilon(1e-6));
  work::AttentionShape shorter = mla;
  shorter.s_q = shorter.s_kv = 2048;
  CHECK(profile.attention(work::Dtype::Bf16, shorter, work::Pass::Fwd).source ==
        work::Source::Roofline);
}

TEST_CASE("memory tables: a memory-bound kernel's time by the bytes it moves, held to HBM") {
  json j = base();
  j["tables"].push_back(json::parse(R"({
    "op": "memory", "pass": "fwd", "impl": "te", "key": {"dtype": "bf16", "kernel": "norm"},
    "axes": [{"name": "bytes", "values": [1048576, 268435456]}],
    "flops": "bytes_v1", "time_us": [6, 100]})"));
  CHECK(error_of(j).empty());
  CHECK(implausible(j, h100_figures()).empty());
  const work::Calibration cal = parse_calibration(Node(j, "t.json"));
  work::Roofline r;
  r.peak_bf16_tflops = 989;
  r.peak_fp8_tflops = 1979;
  r.hbm_GBps = 3350;
  const work::ComputeModel model(&cal, r);
  const work::ComputeCost at = model.memory(work::KernelClass::Norm, Bytes{268435456});
  CHECK(at.source == Source::Exact);
  CHECK(at.time == Time::us(100));
  CHECK(at.kind == work::KernelClass::Norm);
  CHECK(model.memory(work::KernelClass::Norm, Bytes{16777216}).source == Source::Interpolated);
  // Another kernel or pass: the roofline, 4 us + bytes / (3350 GB/s x 0.8).
  const work::ComputeCost cast = model.memory(work::KernelClass::Fp8Cast, Bytes{268435456});
  CHECK(cast.source == Source::Roofline);
  CHECK(cast.time == Time::us(4) + Time::from_seconds_ceil(268435456.0 / (3350e9 * 0.8)));
  CHECK(model.memory(work::KernelClass::Norm, Bytes{268435456}, work::Pass::Bwd).source ==
        Source::Roofline);

  j["tables"][2]["time_us"][1] = 70;  // 268 MB in 70 us: 3,835 GB/s
  CHECK(implausible(j, h100_figures()) ==
        "t.json: /tables/2/time_us/1: memory fwd (norm, te) at 268435456 bytes: 70 us is 3835 "
        "GB/s, faster than the GPU's HBM at 3350 GB/s (+5%)");
  j["tables"][2]["key"]["kernel"] = "softmax";
  CHECK(error_of(j) == R"(t.json: /tables/2/key/kernel: expected one of "attention_bwd_prep", )"
                       R"("fp8_cast", "norm", "rotary", "swiglu", "residual", "router", )"
                       R"("permute", "cross_entropy", got "softmax")");
  j["tables"][2]["key"]["kernel"] = "norm";
  j["tables"][2]["flops"] = "gemm_v1";
  CHECK(error_of(j) == R"(t.json: /tables/2/flops: "gemm_v1" is not the work of a memory fwd )"
                       R"(table; expected "bytes_v1")");
}


TEST_CASE("a calibration's base: a shipped table, whose own base answers one tier deeper") {
  json j = base();
  j["base"] = "h200-published";  // whose base is h100-published
  work::Calibration cal = parse_calibration(Node(j, "t.json"));
  CHECK(cal.base == "h200-published");
  const std::size_t own = cal.tables.size();
  const std::string note = attach_base(cal, "t.json", "H200 SXM");
  CHECK(note.find("the 10 of its base h200-published (NVIDIA H200); h200-published: where its "
                  "own 10 tables have no answer, the 14 of its base h100-published") !=
        std::string::npos);
  REQUIRE(cal.tables.size() == own + 24);
  CHECK(cal.tables[own].tier == 1);
  CHECK_FALSE(cal.tables[own].scaling.has_value());  // the H200 table fits the H200
  CHECK(cal.tables[own + 10].tier == 2);
  REQUIRE(cal.tables[own + 10].scaling.has_value());  // the H100 table is scaled to the H200
  CHECK(cal.tables[own + 10].scaling->hbm_GBps == 3350);
  const auto message = [&](const std::string& name, const std::string& gpu) {
    try {
      work::Calibration c = cal;
      c.tables.resize(own);
      c.base = name;
      attach_base(c, "t.json", gpu);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(message("no-such-table", "H100 SXM").find("t.json: /base") != std::string::npos);
  CHECK(message("h100-published", "H100 SXM").empty());
  j["base"] = "";
  CHECK(error_of(j).find("/base") != std::string::npos);
}

TEST_CASE("a calibration's bases may not lead back to themselves") {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / "hopsim-calibration-cycle";
  std::filesystem::create_directories(root / "calibration");
  for (const auto& [name, next] : {std::pair{"cycle-a", "cycle-b"}, {"cycle-b", "cycle-a"}}) {
    json t = base();
    t["base"] = next;
    std::ofstream(root / "calibration" / (std::string(name) + ".json")) << t.dump();
  }
  REQUIRE(setenv("HOPSIM_PRESETS", root.c_str(), 1) == 0);
  json j = base();
  j["base"] = "cycle-a";
  work::Calibration cal = parse_calibration(Node(j, "t.json"));
  std::string error;
  try {
    attach_base(cal, "t.json", "H100 SXM");
  } catch (const ConfigError& e) {
    error = e.what();
  }
  unsetenv("HOPSIM_PRESETS");
  std::filesystem::remove_all(root);
  // Named where the chain closes: cycle-b's base.
  CHECK(error.find("cycle-b.json: /base: the chain of bases cycle-a -> cycle-b -> cycle-a leads "
                   "back to itself") != std::string::npos);
}

}  // namespace hopsim::config
