// Memory-bound kernels' rows: names as the simulator spells its classes, bytes rules as its
// closed forms count them, every rule against the buffers its row declares at the grids' points,
// the widths each runs at, and the rows the harness times for a table's bytes.
#include "calibrate/memory/memory_kernel.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include <doctest/doctest.h>

#include "calibrate/core/grid.hpp"

namespace hopsim::calib {
namespace {

double rule(std::string_view kernel, Pass pass, std::int64_t width) {
  return memory_kernel(kernel).pass(pass).bytes.at(width);
}

// Empty when the pass's rule equals the bytes of the buffers the closed form counts and the
// others stay within 2% of it, at `rows` rows of `width`; else what is wrong.
std::string bytes_problem(const MemoryPass& pass, std::int64_t rows, std::int64_t width) {
  const double declared = rule_bytes(pass, rows, width);
  const double counted = buffer_bytes(pass, rows, width, true);
  const double side = buffer_bytes(pass, rows, width, false);
  if (counted != declared) {
    return "rule " + std::to_string(declared) + " B, buffers " + std::to_string(counted) + " B";
  }
  if (side > 0.02 * declared) {
    return "side traffic " + std::to_string(side) + " B of " + std::to_string(declared) + " B";
  }
  return "";
}

constexpr MemoryBuffer kX[] = {{.name = "x", .count = per_element}};

}  // namespace

TEST_CASE("memory kernels: names are found, unique, others refused") {
  std::set<std::string_view> names;
  for (const MemoryKernelRow* k : memory_kernel_rows()) {
    CHECK(&memory_kernel(k->name) == k);
    names.insert(k->name);
  }
  CHECK(names.size() == memory_kernel_rows().size());
  CHECK_THROWS_WITH_AS(memory_kernel("softmax"),
                       "unknown memory kernel \"softmax\" (expected norm, residual, rotary, "
                       "swiglu, fp8_cast, router, permute, attention_bwd_prep or cross_entropy)",
                       CalibError);
}

TEST_CASE("memory kernels: bytes per row as the simulator counts them") {
  // workloads/costs/layer_kernels.hpp, one token of DeepSeek-V3's hidden 7168.
  CHECK(rule("norm", Pass::Fwd, 7168) == 4 * 7168 + 4);
  CHECK(rule("norm", Pass::Bwd, 7168) == 6 * 7168 + 4);
  CHECK(rule("residual", Pass::Bwd, 7168) == 6 * 7168);
  CHECK(rule("rotary", Pass::Fwd, 8192) == 4 * 8192);
  CHECK(rule("swiglu", Pass::Fwd, 2048) == 6 * 2048);
  CHECK(rule("swiglu", Pass::Bwd, 2048) == 10 * 2048);
  CHECK(rule("fp8_cast", Pass::Fwd, 7168) == 4 * 7168);
  CHECK(rule("router", Pass::Fwd, 256) == 8 * 256 + 8 * 8);
  CHECK(rule("router", Pass::Bwd, 256) == 12 * 256);
  CHECK(rule("permute", Pass::Fwd, 7168) == 2 * 7168);
  CHECK(rule("permute", Pass::Bwd, 7168) == 4 * 7168);
  CHECK(rule("attention_bwd_prep", Pass::Bwd, 128) == 128 * (4 * 128 + 4 + 6 * 128));
  CHECK_FALSE(memory_kernel("attention_bwd_prep").fwd.exists());
  // workloads/costs/layer_kernels.hpp's online cross-entropy, one token of 16,032 logits.
  CHECK(memory_kernel("cross_entropy").width == 16032);
  CHECK(rule("cross_entropy", Pass::Fwd, 16032) == 6 * 16032 + 8);
  CHECK(rule("cross_entropy", Pass::Bwd, 16032) == 4 * 16032 + 4);
}

TEST_CASE("memory kernels: the grids' tables are the rows' passes, each rule its buffers' bytes") {
  std::set<std::pair<std::string_view, Pass>> named;
  for (const char* name : {"smoke", "full"}) {
    const Grid g = make_grid(name);
    for (const GridPoint& p : grid_points(g, Suite::Memory)) {
      const TableSpec& t = g.tables[p.table];
      const MemoryKernelRow& kernel = memory_kernel(key_string(t.key, "kernel"));
      REQUIRE(kernel.pass(t.pass).exists());
      const std::int64_t rows = memory_rows(kernel, t.pass, p.values[0]);
      CAPTURE(kernel.name);
      CAPTURE(to_string(t.pass));
      CAPTURE(rows);
      CHECK(bytes_problem(kernel.pass(t.pass), rows, kernel.width) == "");
      named.insert({kernel.name, t.pass});
    }
  }
  std::set<std::pair<std::string_view, Pass>> passes;  // and every row's pass is in the grids
  for (const MemoryKernelRow* k : memory_kernel_rows()) {
    for (Pass pass : {Pass::Fwd, Pass::Bwd}) {
      if (k->pass(pass).exists()) {
        passes.insert({k->name, pass});
        // The check's shape too.
        CHECK(rule_bytes(k->pass(pass), kMemoryCheckRows, k->check_width) ==
              buffer_bytes(k->pass(pass), kMemoryCheckRows, k->check_width, true));
      }
    }
  }
  CHECK(named == passes);
}

TEST_CASE("memory kernels: a rule that disagrees with its buffers is caught") {
  const MemoryPass copy{.in = kX, .out = kX, .bytes = {.per_element = 4}};
  CHECK(bytes_problem(copy, 100, 512) == "");
  MemoryPass short_rule = copy;
  short_rule.bytes = {.per_element = 2};
  CHECK(bytes_problem(short_rule, 100, 512) == "rule 102400.000000 B, buffers 204800.000000 B");
  const MemoryBuffer side[] = {{.name = "weight", .count = per_element, .counted = false}};
  MemoryPass heavy_side = copy;
  heavy_side.out = side;
  heavy_side.bytes = {.per_element = 2};
  CHECK(bytes_problem(heavy_side, 100, 512) == "side traffic 102400.000000 B of 102400.000000 B");
}

TEST_CASE("memory kernels: the widths timed and checked are widths they run at") {
  for (const MemoryKernelRow* k : memory_kernel_rows()) {
    for (Pass pass : {Pass::Fwd, Pass::Bwd}) {
      if (k->pass(pass).exists()) {
        CAPTURE(k->name);
        CHECK_NOTHROW(runnable_pass(*k, pass, k->width));
        CHECK_NOTHROW(runnable_pass(*k, pass, k->check_width));
      }
    }
  }
  CHECK_THROWS_WITH_AS(runnable_pass(memory_kernel("router"), Pass::Fwd, 257),
                       "memory kernel router cannot run 257 wide", CalibError);
  CHECK_THROWS_AS(runnable_pass(memory_kernel("fp8_cast"), Pass::Bwd, 7000), CalibError);
  CHECK_THROWS_AS(runnable_pass(memory_kernel("rotary"), Pass::Fwd, 96), CalibError);
  CHECK_THROWS_AS(runnable_pass(memory_kernel("permute"), Pass::Fwd, 8), CalibError);
  CHECK_NOTHROW(runnable_pass(memory_kernel("permute"), Pass::Bwd, 8));  // 16 bytes of BF16
  // 128-bit groups of 8 BF16 values; RMSNorm keeps a row in 128 threads' registers.
  CHECK_THROWS_AS(runnable_pass(memory_kernel("residual"), Pass::Fwd, 7164), CalibError);
  CHECK_THROWS_AS(runnable_pass(memory_kernel("swiglu"), Pass::Bwd, 2044), CalibError);
  CHECK_THROWS_AS(runnable_pass(memory_kernel("norm"), Pass::Fwd, 8200), CalibError);
  CHECK_NOTHROW(runnable_pass(memory_kernel("norm"), Pass::Bwd, 8192));
  // One warp per router token, 8 experts a lane; the cross-entropy's rows in 128-bit groups.
  CHECK_THROWS_AS(runnable_pass(memory_kernel("router"), Pass::Bwd, 252), CalibError);
  CHECK_THROWS_AS(runnable_pass(memory_kernel("cross_entropy"), Pass::Fwd, 16036), CalibError);
  CHECK_NOTHROW(runnable_pass(memory_kernel("cross_entropy"), Pass::Bwd, 16032));
  CHECK_THROWS_WITH_AS(runnable_pass(memory_kernel("attention_bwd_prep"), Pass::Fwd, 128),
                       "memory kernel attention_bwd_prep has no fwd pass", CalibError);
}

TEST_CASE("memory kernels: the rows timed for a table's bytes") {
  // 256 MiB of RMSNorm forward at 7168 wide: 268435456 / 28676 = 9360.9 rows.
  CHECK(memory_rows(memory_kernel("norm"), Pass::Fwd, 268435456.0) == 9361);
  CHECK(memory_rows(memory_kernel("residual"), Pass::Fwd, 1.0) == 1);  // at least one row
  // The FP8 cast times whole 64-row tiles (its transposed rows in 16-byte stores): 256 MiB at
  // 4 x 7168 bytes a row is 9362.3 rows, 146.3 tiles.
  CHECK(memory_rows(memory_kernel("fp8_cast"), Pass::Fwd, 268435456.0) == 146 * 64);
  CHECK(memory_rows(memory_kernel("fp8_cast"), Pass::Bwd, 1.0) == 64);
  CHECK_THROWS_AS(memory_rows(memory_kernel("attention_bwd_prep"), Pass::Fwd, 1e6), CalibError);
}

TEST_CASE("memory kernels: row ids are a permutation, class ids within the width") {
  std::vector<std::int32_t> ids = memory_ids(Fill::RowShuffle, 1000, 7168);
  std::sort(ids.begin(), ids.end());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    CHECK(ids[i] == static_cast<std::int32_t>(i));
  }
  for (std::int32_t t : memory_ids(Fill::Targets, 1000, 50)) {
    CHECK(t >= 0);
    CHECK(t < 50);
  }
  CHECK_THROWS_AS(memory_ids(Fill::Random, 10, 10), CalibError);
}

}  // namespace hopsim::calib
