// The composite SDPA graphs of every smoke-grid shape (and samples of the full grid) finalize
// without a GPU; their op counts match the documented expansion.
#include "calibrate/backend/sdpa_graph.hpp"

#include <cmath>
#include <set>

#include <doctest/doctest.h>

#include "calibrate/backend/checks.hpp"
#include "calibrate/backend/cuda_check.hpp"
#include "calibrate/core/grid.hpp"

namespace hopsim::calib {
namespace {

SdpaShape shape_of(const TableSpec& spec, const GridPoint& p) {
  const auto bh = static_cast<std::int64_t>(p.values[2]);
  const std::int64_t d_qk = key_int(spec.key, "d_qk");
  return SdpaShape{1,
                   bh,
                   bh / key_int(spec.key, "gqa"),
                   static_cast<std::int64_t>(p.values[0]),
                   static_cast<std::int64_t>(p.values[1]),
                   d_qk,
                   key_int(spec.key, "d_v"),
                   parse_mask(key_string(spec.key, "mask")),
                   static_cast<float>(1.0 / std::sqrt(static_cast<double>(d_qk)))};
}

std::size_t mask_ops(Mask m) {
  return m == Mask::None ? 0 : m == Mask::CausalTopLeft ? 4 : 6;
}

void check_graphs(const SdpaShape& s) {
  CAPTURE(s.describe());
  const SdpaFwdGraph fwd = build_sdpa_fwd(s, nullptr);
  CHECK(fwd.graph.get() != nullptr);
  // matmul, scale, [mask], max, sub, exp, sum, log, add, div, matmul
  CHECK(fwd.builder.op_count() == 10 + mask_ops(s.mask));
  const SdpaBwdGraph bwd = build_sdpa_bwd(s, nullptr);
  CHECK(bwd.graph.get() != nullptr);
  // 3 (Σ) + 3 (S, scale, −Stats) + [mask] + exp + 2 (dV) + 4 (dS) + 2 (dK) + 3 (dQ), +2 for GQA
  const std::size_t gqa_ops = s.h_q == s.h_k ? 0 : 2;
  CHECK(bwd.builder.op_count() == 18 + mask_ops(s.mask) + gqa_ops);
  // Workspace tensors and outputs are real (non-virtual) tensors with distinct UIDs.
  const std::set<std::int64_t> uids{bwd.q,  bwd.k,  bwd.v,  bwd.o,           bwd.d_o,     bwd.stats,
                                    bwd.dq, bwd.dk, bwd.dv, bwd.softmax_sum, bwd.dq_accum};
  CHECK(uids.size() == 11);
}

}  // namespace

TEST_CASE("every smoke-grid attention shape builds and finalizes its fwd and bwd graphs (no GPU)") {
  const Grid g = make_grid("smoke");
  std::size_t shapes = 0;
  for (const GridPoint& p : grid_points(g, Suite::Attn)) {
    check_graphs(shape_of(g.tables[p.table], p));
    ++shapes;
  }
  CHECK(shapes == 44);
}

TEST_CASE("the correctness-check shapes finalize too") {
  for (const SdpaShape& s : attention_check_shapes()) {
    check_graphs(s);
  }
}

TEST_CASE("one shape per full-grid attention family finalizes (head dims 64..256, GQA 1..16)") {
  const Grid g = make_grid("full");
  std::set<std::size_t> seen;
  for (const GridPoint& p : grid_points(g, Suite::Attn)) {
    if (g.tables[p.table].pass == Pass::Fwd && seen.insert(p.table).second) {
      check_graphs(shape_of(g.tables[p.table], p));
    }
  }
  CHECK(seen.size() == 27);  // 9 (head dims, gqa) families x 3 masks
}

TEST_CASE("invalid shapes are rejected before cuDNN sees them") {
  SdpaShape s;
  s.h_q = 6;
  s.h_k = 4;
  CHECK_THROWS_AS(build_sdpa_fwd(s, nullptr), CalibError);
  s.h_k = 3;
  s.d_qk = 512;
  CHECK_THROWS_AS(build_sdpa_bwd(s, nullptr), CalibError);
}

TEST_CASE("graph finalize validates: a matmul with mismatched inner dims is refused") {
  GraphBuilder g;
  const std::int64_t a =
      g.tensor({1, 1, 64, 32}, packed_strides({1, 1, 64, 32}), CUDNN_DATA_BFLOAT16);
  const std::int64_t b =
      g.tensor({1, 1, 16, 64}, packed_strides({1, 1, 16, 64}), CUDNN_DATA_BFLOAT16);
  const std::int64_t c = g.tensor({1, 1, 64, 64}, packed_strides({1, 1, 64, 64}), CUDNN_DATA_FLOAT);
  CHECK_THROWS_AS(
      {
        g.matmul(a, b, c);
        g.build(nullptr);
      },
      CudaError);
}

}  // namespace hopsim::calib
