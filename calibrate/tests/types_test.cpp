// Spellings of ops, passes, dtypes, masks and suites round-trip; unknown ones are rejected.
#include "calibrate/core/types.hpp"

#include <doctest/doctest.h>

namespace hopsim::calib {

TEST_CASE("enum spellings round-trip") {
  for (Op op : {Op::Gemm, Op::GroupedGemm, Op::Attn}) {
    CHECK(parse_op(to_string(op)) == op);
  }
  for (Mask m : {Mask::None, Mask::CausalTopLeft, Mask::CausalBottomRight}) {
    CHECK(parse_mask(to_string(m)) == m);
  }
  CHECK(parse_dtype("fp8") == Dtype::Fp8);
  CHECK(parse_suite("experts") == Suite::Experts);
  CHECK(parse_pass("bwd") == Pass::Bwd);
}

TEST_CASE("unknown spellings name the expected ones") {
  CHECK_THROWS_WITH_AS(
      parse_mask("causal"),
      "unknown mask \"causal\" (expected none|causal_top_left|causal_bottom_right)", CalibError);
  CHECK_THROWS_AS(parse_op("GEMM"), CalibError);
}

TEST_CASE("flops formulas and suites") {
  CHECK(flops_formula(Op::Attn, Pass::Bwd) == "attn_bwd_v1");
  CHECK(flops_formula(Op::GroupedGemm, Pass::Bwd) == "grouped_gemm_v1");
  CHECK(suite_includes(Suite::All, Op::Attn));
  CHECK_FALSE(suite_includes(Suite::Gemm, Op::GroupedGemm));
}

TEST_CASE("key lookups check kinds") {
  const KeyMap key{{"dtype", std::string("bf16")}, {"gqa", std::int64_t{8}}};
  CHECK(key_string(key, "dtype") == "bf16");
  CHECK(key_int(key, "gqa") == 8);
  CHECK_THROWS_AS(key_int(key, "dtype"), CalibError);
  CHECK_THROWS_AS(key_string(key, "mask"), CalibError);
  CHECK(key_to_string(key) == "dtype=bf16 gqa=8");
}

}  // namespace hopsim::calib
