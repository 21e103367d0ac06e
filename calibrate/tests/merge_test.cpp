// Merging shards: union of cells, conflicts resolved by noise, incompatible inputs rejected.
#include "calibrate/core/merge.hpp"

#include <doctest/doctest.h>

#include "calibrate/core/grid.hpp"
#include "calibrate/core/table_json.hpp"

namespace hopsim::calib {
namespace {

CalibrationFile file_with(std::vector<Table> tables) {
  CalibrationFile f;
  f.created_utc = "2026-02-01T00:00:00Z";
  f.device = {{"name", "NVIDIA H200"}};
  f.method = default_method();
  f.tables = std::move(tables);
  return f;
}

/// A shard's output: the smoke grid's tables with the shard's cells set to 1000·table + cell.
CalibrationFile shard_file(const Grid& g, Shard shard) {
  std::vector<Table> tables;
  for (const TableSpec& spec : g.tables) {
    tables.push_back(empty_table(spec));
  }
  for (const GridPoint& p : shard_points(grid_points(g, Suite::All), shard)) {
    const double v = 1000.0 * static_cast<double>(p.table) + static_cast<double>(p.cell);
    tables[p.table].time_us[p.cell] = v;
    tables[p.table].p10_us[p.cell] = v;
    tables[p.table].p90_us[p.cell] = v;
  }
  return file_with(tables);
}

}  // namespace

TEST_CASE("merging all shards gives every point exactly once") {
  const Grid g = make_grid("smoke");
  std::vector<CalibrationFile> shards;
  for (std::size_t i = 0; i < 3; ++i) {
    shards.push_back(shard_file(g, Shard{i, 3}));
  }
  const MergeResult r = merge_files(shards, "2026-02-02T00:00:00Z");
  CHECK(r.notes.empty());
  CHECK(r.file.created_utc == "2026-02-02T00:00:00Z");
  REQUIRE(r.file.tables.size() == g.tables.size());
  std::size_t measured = 0;
  for (const Table& t : r.file.tables) {
    measured += t.measured_cells();
  }
  CHECK(measured == grid_points(g, Suite::All).size());
  CHECK(to_json(r.file)["tables"] == to_json(shard_file(g, Shard{0, 1}))["tables"]);
  CHECK_NOTHROW(validate(r.file));
}

TEST_CASE("axes are united, a cell measured twice keeps the quieter sample") {
  Table a;
  a.op = Op::Gemm;
  a.impl = "cublaslt";
  a.key = {{"dtype", std::string("bf16")}};
  a.flops = "gemm_v1";
  a.axes = {{"m", {128, 256}}, {"n", {1024}}, {"k", {1024}}};
  a.time_us = {10.0, 20.0};
  a.p10_us = {9.0, 19.0};
  a.p90_us = {11.0, 21.0};  // 10 % spread at m = 256
  Table b = a;
  b.axes = {{"m", {256, 512}}, {"n", {1024}}, {"k", {1024}}};
  b.time_us = {19.5, 40.0};
  b.p10_us = {19.4, 39.0};
  b.p90_us = {19.6, 41.0};  // 1 % spread at m = 256: wins
  const MergeResult r = merge_files({file_with({a}), file_with({b})}, "now");
  REQUIRE(r.file.tables.size() == 1);
  const Table& t = r.file.tables[0];
  CHECK(t.axes[0].values == std::vector<double>{128, 256, 512});
  CHECK(t.time_us[0] == 10.0);
  CHECK(t.time_us[1] == 19.5);
  CHECK(t.time_us[2] == 40.0);
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0].find("measured twice") != std::string::npos);
  CHECK(r.notes[0].find("kept the second") != std::string::npos);
}

TEST_CASE("incompatible inputs") {
  CalibrationFile other = file_with({});
  other.device["name"] = "NVIDIA H100 80GB HBM3";
  CHECK_THROWS_AS(merge_files({file_with({}), other}, "now"), CalibError);
  CalibrationFile published = file_with({});
  published.source = "published";
  CHECK_THROWS_AS(merge_files({file_with({}), published}, "now"), CalibError);
  CHECK_THROWS_AS(merge_files({}, "now"), CalibError);
  CalibrationFile clocks = file_with({});
  clocks.device["clocks_mhz"] = {{"sm_max", 1980}};
  const MergeResult r = merge_files({file_with({}), clocks}, "now");
  CHECK(r.notes.size() == 1);
}

}  // namespace hopsim::calib
