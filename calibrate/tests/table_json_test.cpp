// JSON tables: round trip, and rejection of malformed files with a JSON pointer to the problem.
#include "calibrate/core/table_json.hpp"

#include <filesystem>

#include <doctest/doctest.h>

namespace hopsim::calib {
namespace {

using nlohmann::json;

json valid_json() {
  return json::parse(R"({
    "schema": "hopsim.calibration/1", "created_utc": "2026-02-01T00:00:00Z", "source": "measured",
    "device": {"name": "NVIDIA H200", "sm_count": 132},
    "method": {"timer": "cuda_events", "l2_flush": "memset_256MB", "warmup_ms": 25,
               "min_samples": 10, "statistic": "median"},
    "tables": [
      {"op": "attn", "pass": "fwd", "impl": "cudnn_composite",
       "key": {"dtype": "bf16", "d_qk": 128, "d_v": 128, "mask": "causal_top_left", "gqa": 8},
       "axes": [{"name": "s_q", "values": [1024, 2048]}, {"name": "s_kv", "values": [1024, 2048]},
                {"name": "bh", "values": [64]}],
       "flops": "attn_fwd_v1",
       "time_us": [41.5, null, null, 142.0], "p10_us": [41.0, null, null, 140.5],
       "p90_us": [42.0, null, null, 143.0]},
      {"op": "gemm", "pass": "fwd", "impl": "cublaslt", "key": {"dtype": "fp8", "layout": "TN"},
       "axes": [{"name": "m", "values": [128]}, {"name": "n", "values": [4096]},
                {"name": "k", "values": [4096, 8192]}],
       "flops": "gemm_v1", "time_us": [9.25, 16]}
    ]})");
}

std::string error_of(const json& j) {
  try {
    from_json(j, "t.json");
  } catch (const CalibError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("a valid file reads, and writes back identically") {
  const CalibrationFile f = from_json(valid_json(), "t.json");
  REQUIRE(f.tables.size() == 2);
  const Table& attn = f.tables[0];
  CHECK(attn.op == Op::Attn);
  CHECK(key_int(attn.key, "gqa") == 8);
  CHECK(attn.axes[2].name == "bh");
  CHECK(attn.time_us[0] == 41.5);
  CHECK_FALSE(attn.time_us[1].has_value());
  CHECK(f.tables[1].p10_us.empty());
  CHECK(to_json(f) == valid_json());
}

TEST_CASE("file round trip through disk") {
  const auto path = std::filesystem::temp_directory_path() / "hopsim_calib_roundtrip.json";
  const CalibrationFile f = from_json(valid_json(), "t.json");
  write_calibration_file(path, f);
  CHECK(to_json(read_calibration_file(path)) == valid_json());
  std::filesystem::remove(path);
  CHECK_THROWS_AS(read_calibration_file(path), CalibError);
}

TEST_CASE("malformed files are rejected with a JSON pointer") {
  json j = valid_json();
  j["tables"][0]["axes"][0]["values"] = {2048, 1024};
  CHECK(error_of(j) ==
        "t.json: /tables/0/axes/0/values/1: must be sorted ascending without repeats, got 1024 "
        "after 2048");

  j = valid_json();
  j["tables"][0]["axes"][1]["values"] = {1024, 1024};
  CHECK(error_of(j).find("/tables/0/axes/1/values/1: must be sorted") != std::string::npos);

  j = valid_json();
  j["tables"][0]["axes"][2]["values"] = {0};
  CHECK(error_of(j) ==
        "t.json: /tables/0/axes/2/values/0: axis values must be positive numbers, got 0");

  j = valid_json();
  j["tables"][1]["time_us"] = {9.25};
  CHECK(error_of(j) == "t.json: /tables/1/time_us: has 1 cells, the axes make 2");

  j = valid_json();
  j["tables"][0]["p90_us"] = {1, 2, 3};
  CHECK(error_of(j) == "t.json: /tables/0/p90_us: has 3 cells, the axes make 4");

  j = valid_json();
  j["tables"][0]["axes"] = json::array({json::object({{"name", "s_q"}, {"values", {1024}}})});
  CHECK(error_of(j).find("/tables/0/axes: attn table needs 3 axes") != std::string::npos);

  j = valid_json();
  j["tables"][0]["axes"] = json::object({{"s_q", {1024}}, {"s_kv", {1024}}, {"bh", {64}}});
  CHECK(error_of(j).find("/tables/0/axes: must be an array") != std::string::npos);

  j = valid_json();
  j["tables"][0]["axes"][0]["name"] = "seq";
  CHECK(error_of(j) == "t.json: /tables/0/axes/0/name: expected axis \"s_q\", got \"seq\"");
}

TEST_CASE("schema, keys and formulas are checked") {
  json j = valid_json();
  j["schema"] = "llmsim.calibration/1";
  CHECK(error_of(j).find("/schema: expected \"hopsim.calibration/1\"") != std::string::npos);

  j = valid_json();
  j["source"] = "guessed";
  CHECK(error_of(j).find("/source: must be") != std::string::npos);

  j = valid_json();
  j["tables"][0]["flops"] = "attn_bwd_v1";
  CHECK(error_of(j).find("/tables/0/flops: attn fwd tables use \"attn_fwd_v1\"") !=
        std::string::npos);

  j = valid_json();
  j["tables"][0]["key"]["gqa"] = 8.5;
  CHECK(error_of(j).find("/tables/0/key/gqa: key values must be strings or integers") !=
        std::string::npos);

  j = valid_json();
  j["tables"][0]["key"].erase("mask");
  CHECK(error_of(j).find("/tables/0/key: attn table needs key \"mask\"") != std::string::npos);

  j = valid_json();
  j["tables"][0]["key"]["mask"] = "sliding";
  CHECK(error_of(j).find("/tables/0/key/mask: unknown mask") != std::string::npos);

  j = valid_json();
  j["tables"][1]["time_us"][0] = -1;
  CHECK(error_of(j).find("/tables/1/time_us/0: must be a non-negative number or null") !=
        std::string::npos);

  j = valid_json();
  j["tables"][1]["kernel"] = "x";
  CHECK(error_of(j) == "t.json: /tables/1: unknown key \"kernel\"");

  j = valid_json();
  j["tables"].push_back(j["tables"][1]);
  CHECK(error_of(j).find("/tables/2: duplicate table gemm/fwd/cublaslt") != std::string::npos);

  j = valid_json();
  j["device"].erase("name");
  CHECK(error_of(j) == "t.json: /device: missing key \"name\"");
}

TEST_CASE("integral values are written as integers") {
  const json j = to_json(from_json(valid_json(), "t.json"));
  CHECK(j["tables"][1]["time_us"][1].is_number_integer());
  CHECK(j["tables"][1]["axes"][2]["values"][0].is_number_integer());
  CHECK(j["tables"][1]["time_us"][0].is_number_float());
}

}  // namespace hopsim::calib
