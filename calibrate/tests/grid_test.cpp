// Grids: sizes, wanted cells, suites, and shards that partition the points exactly once.
#include "calibrate/core/grid.hpp"

#include <algorithm>
#include <set>

#include <doctest/doctest.h>

#include "calibrate/core/table_json.hpp"

namespace hopsim::calib {
namespace {

std::size_t count_op(const Grid& g, const std::vector<GridPoint>& pts, Op op) {
  return static_cast<std::size_t>(std::count_if(
      pts.begin(), pts.end(), [&](const GridPoint& p) { return g.tables[p.table].op == op; }));
}

}  // namespace

TEST_CASE("smoke grid: contents") {
  const Grid g = make_grid("smoke");
  const std::vector<GridPoint> pts = grid_points(g, Suite::All);
  CHECK(count_op(g, pts, Op::Gemm) == 56);  // bf16, fp8, fp8 blk128: 4 x 2 x 2 fprop; 2 x 2 x 1 wgrad
  CHECK(count_op(g, pts, Op::GroupedGemm) == 30);  // 5 implementations x 2 x 3
  CHECK(count_op(g, pts, Op::Attn) == 44);         // 22 shapes, fwd and bwd
  CHECK(count_op(g, pts, Op::Memory) == 34);       // 9 kernels, 17 passes, 2 sizes
  CHECK(pts.size() == 164);
  // The weight gradients: bwd gemm tables of role wgrad, as the simulator's tables name them.
  std::size_t wgrad = 0;
  for (const TableSpec& t : g.tables) {
    if (t.op == Op::Gemm && t.pass == Pass::Bwd) {
      CHECK(key_string(t.key, "role") == "wgrad");
      ++wgrad;
    }
  }
  CHECK(wgrad == 2);
  std::set<std::string> masks;
  for (const TableSpec& t : g.tables) {
    if (t.op == Op::Attn) {
      CHECK(key_int(t.key, "d_qk") == 128);
      CHECK(key_int(t.key, "gqa") == 8);
      masks.insert(key_string(t.key, "mask"));
    }
  }
  CHECK(masks == std::set<std::string>{"none", "causal_top_left", "causal_bottom_right"});
}

TEST_CASE("smoke grid: attention cells are the listed pairs only") {
  const Grid g = make_grid("smoke");
  for (const GridPoint& p : grid_points(g, Suite::Attn)) {
    const TableSpec& t = g.tables[p.table];
    const std::string mask = key_string(t.key, "mask");
    const double s_q = p.values[0];
    const double s_kv = p.values[1];
    if (mask == "causal_top_left") {
      CHECK(s_q == s_kv);
    } else if (mask == "causal_bottom_right") {
      CHECK(s_kv == 2 * s_q);
    } else {
      CHECK((s_q == s_kv || s_q == 2 * s_kv || s_kv == 2 * s_q));
    }
    CHECK(static_cast<std::int64_t>(p.values[2]) % 8 == 0);  // bh divisible by the GQA group
  }
}

TEST_CASE("suites select their ops") {
  const Grid g = make_grid("smoke");
  CHECK(grid_points(g, Suite::Gemm).size() == 56);
  CHECK(grid_points(g, Suite::Experts).size() == 30);
  CHECK(grid_points(g, Suite::Attn).size() == 44);
  CHECK(grid_points(g, Suite::Memory).size() == 34);
}

TEST_CASE("shards partition the grid exactly once") {
  for (const char* name : {"smoke", "full"}) {
    const Grid g = make_grid(name);
    const std::vector<GridPoint> all = grid_points(g, Suite::All);
    for (std::size_t n : {1U, 2U, 3U, 7U, 16U}) {
      std::vector<std::pair<std::size_t, std::size_t>> seen;
      for (std::size_t i = 0; i < n; ++i) {
        for (const GridPoint& p : shard_points(all, Shard{i, n})) {
          seen.emplace_back(p.table, p.cell);
        }
      }
      CHECK(seen.size() == all.size());
      std::sort(seen.begin(), seen.end());
      CHECK(std::adjacent_find(seen.begin(), seen.end()) == seen.end());
    }
  }
}

TEST_CASE("parse_shard") {
  const Shard s = parse_shard("3/8");
  CHECK(s.index == 3);
  CHECK(s.count == 8);
  for (const char* bad : {"8/8", "1/0", "x/2", "1", "1/2/3", "-1/2", "/2", "1/"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_shard(bad), CalibError);
  }
}

TEST_CASE("full grid: large, valid, and capped") {
  const Grid g = make_grid("full");
  const std::vector<GridPoint> pts = grid_points(g, Suite::All);
  CHECK(count_op(g, pts, Op::Gemm) == 3 * 18 * 8 * 8 + 2 * 7 * 9 * 4);  // fprop (fp8 twice), wgrad
  CHECK(count_op(g, pts, Op::GroupedGemm) > 10000);
  CHECK(count_op(g, pts, Op::Attn) > 1000);
  CHECK(count_op(g, pts, Op::Memory) == 17 * 6);  // 1 MiB to 1 GiB, by 4
  for (const GridPoint& p : pts) {
    const TableSpec& t = g.tables[p.table];
    if (t.op == Op::GroupedGemm) {
      CHECK(p.values[0] * p.values[1] <= 131072.0);
    }
  }
  CalibrationFile f;
  f.created_utc = "2026-01-01T00:00:00Z";
  f.device = {{"name", "test"}};
  f.method = default_method();
  for (const TableSpec& t : g.tables) {
    f.tables.push_back(empty_table(t));
  }
  CHECK_NOTHROW(validate(f));  // no duplicate families, sorted axes, consistent lengths
}

TEST_CASE("unknown grid") {
  CHECK_THROWS_AS(make_grid("tiny"), CalibError);
}

}  // namespace hopsim::calib
