// Tests of the flows CSV (tools/config/flows_csv.hpp): the same flows as the JSON list, the
// defaults, and the exact one-line error of each malformed file, naming the file and line.
#include "tools/config/flows_csv.hpp"

#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "tests/temp_dir.hpp"
#include "tools/config/experiment_file.hpp"
#include "tools/config/node.hpp"

namespace hopsim::config {
namespace {

using nlohmann::json;

const std::string kCluster = std::string(HOPSIM_SOURCE_DIR) + "/configs/clusters/h100-dgx.json";

// The error parse_flows_csv throws for `text`, or "" when it parses.
std::string error_of(const std::string& text) {
  try {
    parse_flows_csv(text, "f.csv");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a flows CSV gives the flows of the same JSON list") {
  const test::TempDir s("flows_csv_test");
  const json flows = json::parse(R"([
    {"id": "a", "src": 0, "dst": 1, "bytes": 1000},
    {"id": "b", "src": 0, "dst": 9, "bytes": 2000, "start_us": 2.5, "after": ["a"]},
    {"id": "c", "src": 3, "dst": 17, "bytes": 0, "after": ["a", "b"]}
  ])");
  const json from_json = {{"cluster", kCluster},
                          {"workload", {{"kind", "flows"}, {"flows", flows}}}};
  // Columns in another order, spaces around fields, CRLF line ends, an empty after.
  s.write("f.csv",
          "bytes, id,src ,dst,after,start_us\r\n1000,a,0,1,,0\r\n2000,b,0,9,a,2.5\r\n"
          "0,c,3,17,a b,0\r\n");
  const json from_csv = {{"cluster", kCluster},
                         {"workload", {{"kind", "flows"}, {"flows_file", "f.csv"}}}};
  s.write("j.json", from_json.dump());
  s.write("c.json", from_csv.dump());
  const auto a = std::get<work::FlowsJob>(load_experiment(s.path("j.json"), {}).experiment.job);
  const ExperimentFile c = load_experiment(s.path("c.json"), {});
  const auto& b = std::get<work::FlowsJob>(c.experiment.job);
  REQUIRE(a.flows.size() == 3);
  REQUIRE(b.flows.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(a.flows[i].id == b.flows[i].id);
    CHECK(a.flows[i].src == b.flows[i].src);
    CHECK(a.flows[i].dst == b.flows[i].dst);
    CHECK(a.flows[i].bytes == b.flows[i].bytes);
    CHECK(a.flows[i].start == b.flows[i].start);
    CHECK(a.flows[i].after == b.flows[i].after);
  }
  CHECK(b.flows[2].after == std::vector<std::size_t>{0, 1});
  CHECK(b.source == s.path("f.csv"));
  CHECK(std::ranges::count(c.inputs, s.path("f.csv")) == 1);  // no output replaces it
}

TEST_CASE("a flows CSV without id names flows by their index, start 0") {
  const auto flows = parse_flows_csv("src,dst,bytes,after\n0,1,5,\n1,2,7,0\n2,3,9,1 0\n", "f.csv");
  REQUIRE(flows.size() == 3);
  CHECK(flows[1].id == "1");
  CHECK(flows[2].after == std::vector<std::size_t>{1, 0});
  CHECK(flows[2].start == Time{});
  CHECK(flows[2].bytes == Bytes{9});
}

TEST_CASE("flows CSV errors name the file, the line and the value") {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"", "f.csv:1: no flows: a header line, then one flow a line"},
      {"src,dst,bytes\n", "f.csv:1: no flows: a header line, then one flow a line"},
      {"src,dst,size\n0,1,2\n",
       "f.csv:1: unknown column \"size\" in the header (columns: id, src, dst, bytes, start_us, "
       "after)"},
      {"src,dst,src,bytes\n", "f.csv:1: column \"src\" named twice in the header"},
      {"src,bytes\n0,1\n",
       "f.csv:1: the header has no \"dst\" column (the first line names the columns: src, dst "
       "and bytes, and optionally id, start_us and after)"},
      {"src,dst,bytes\n0,1,2\n0,1\n", "f.csv:3: 2 fields, expected 3 as the header names"},
      {"src,dst,bytes\n0,1,2\n\n", "f.csv:3: 1 fields, expected 3 as the header names"},
      {"src,dst,bytes\n0,1,-2\n",
       "f.csv:2: bytes \"-2\": expected a whole number from 0 to "
       "9223372036854775807"},
      {"src,dst,bytes\n0,1,1e9\n",
       "f.csv:2: bytes \"1e9\": expected a whole number from 0 to "
       "9223372036854775807"},
      {"src,dst,bytes\n0,16777217,2\n",
       "f.csv:2: dst \"16777217\": expected a whole number from 0 to 16777216"},
      {"src,dst,bytes,start_us\n0,1,2,nan\n",
       "f.csv:2: start_us \"nan\": expected a number from 0 to 1e+12"},
      {"src,dst,bytes,start_us\n0,1,2,\n",
       "f.csv:2: start_us \"\": expected a number from 0 to 1e+12"},
      {"id,src,dst,bytes\n\"a\",0,1,2\n",
       "f.csv:2: quoted fields are not read (ids may not hold commas, quotes or spaces)"},
      {"id,src,dst,bytes\n,0,1,2\n",
       "f.csv:2: empty id (leave the id column out to name flows by their index)"},
      {"id,src,dst,bytes\na,0,1,2\nb,0,1,2\na,0,1,2\n",
       "f.csv:4: duplicate flow id \"a\" (line 2 has it too)"},
      {"id,src,dst,bytes,after\na,0,1,2,\nb,0,1,2,a c\n", "f.csv:3: after: no flow has id \"c\""},
  };
  for (const auto& [text, message] : cases) {
    CAPTURE(text);
    CHECK(error_of(text) == message);
  }
}

TEST_CASE("a flows CSV's flows are checked against the cluster at their line") {
  const test::TempDir s("flows_csv_test");
  s.write("f.csv", "src,dst,bytes\n0,1,2\n0,200,2\n");
  s.write("bad.csv", "src,dst,bytes\n0,1,2\n");
  const std::string e = s.write(
      "e.json",
      json{{"cluster", kCluster}, {"workload", {{"kind", "flows"}, {"flows_file", "f.csv"}}}}
          .dump());
  CHECK_THROWS_WITH_AS(
      load_experiment(e, {}),
      (s.path("f.csv") + ":3: dst: GPU 200 is not in the cluster (GPUs 0 to 127)").c_str(),
      ConfigError);
  const std::string both = s.write(
      "both.json",
      json{{"cluster", kCluster},
           {"workload", {{"kind", "flows"}, {"flows_file", "bad.csv"}, {"flows", json::array()}}}}
          .dump());
  CHECK_THROWS_WITH_AS(
      load_experiment(both, {}),
      (both + ": /workload/flows_file: give \"flows\" or \"flows_file\", not both").c_str(),
      ConfigError);
  const std::string missing = s.write(
      "missing.json",
      json{{"cluster", kCluster}, {"workload", {{"kind", "flows"}, {"flows_file", "none.csv"}}}}
          .dump());
  CHECK_THROWS_WITH_AS(load_experiment(missing, {}),
                       (s.path("none.csv") + ": no such file").c_str(), ConfigError);
}

}  // namespace hopsim::config
