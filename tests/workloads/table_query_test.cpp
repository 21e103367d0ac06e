// model_answer: each cell of a table, asked of a model over that same table, is answered by the
// cell itself (Exact), for every op and the weight gradient's axis order; unknown names are
// refused with a reason.
#include "workloads/compute/table_query.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "tests/approx.hpp"

using namespace hopsim::work;

namespace {

Roofline h200() {
  Roofline r;
  r.peak_bf16_tflops = 989;
  r.peak_fp8_tflops = 1979;
  r.hbm_GBps = 4800;
  return r;
}

// A table whose cell times all differ (so that a cell read at another point would show).
CalibrationTable table(std::string op, std::string pass, std::map<std::string, std::string> key,
                       std::vector<CalibrationAxis> axes, std::string flops) {
  CalibrationTable t;
  t.op = std::move(op);
  t.pass = std::move(pass);
  t.impl = "test";
  t.key = std::move(key);
  t.axes = std::move(axes);
  t.flops = std::move(flops);
  for (std::size_t c = 0; c < t.cell_count(); ++c) {
    t.time_us.emplace_back(100.0 + 37.0 * static_cast<double>(c));
  }
  return t;
}

// Every cell of every table of `cal`, asked of a model over `cal`, is that cell, Exact.
void check_self_answers(const Calibration& cal) {
  const ComputeModel model(&cal, h200());
  for (const CalibrationTable& t : cal.tables) {
    for (std::size_t c = 0; c < t.cell_count(); ++c) {
      CAPTURE(t.op);
      CAPTURE(t.pass);
      CAPTURE(c);
      std::string why;
      const auto answer = model_answer(model, t, t.cell_point(c), why);
      REQUIRE(answer.has_value());
      CHECK(answer->source == Source::Exact);
      CHECK(answer->time.seconds() * 1e6 == hopsim::test::approx(*t.time_us[c]).epsilon(1e-7));
    }
  }
}

}  // namespace

TEST_CASE("model_answer: every cell of a table is answered by itself, for every op") {
  Calibration cal;
  cal.source = "measured";
  cal.device = "test GPU";
  cal.tables = {
      table("gemm", "fwd", {{"dtype", "bf16"}},
            {{"m", {128, 4096}}, {"n", {4096, 8192}}, {"k", {1024, 7168}}}, "gemm_v1"),
      table("gemm", "bwd", {{"dtype", "fp8"}},
            {{"m", {4096, 7168}}, {"n", {2048, 4096}}, {"k", {1024, 4096}}}, "gemm_v1"),
      table("grouped_gemm", "fwd", {{"dtype", "bf16"}, {"n", "4096"}, {"k", "7168"}},
            {{"experts", {8, 32}}, {"tokens_per_expert", {128, 512, 2048}}}, "grouped_gemm_v1"),
      table("attn", "bwd",
            {{"dtype", "bf16"},
             {"d_qk", "128"},
             {"d_v", "128"},
             {"mask", "causal_top_left"},
             {"gqa", "8"}},
            {{"s_q", {1024, 4096}}, {"s_kv", {1024, 4096}}, {"bh", {16, 64}}}, "attn_bwd_v1"),
      table("memory", "bwd", {{"dtype", "bf16"}, {"kernel", "norm"}},
            {{"bytes", {1 << 24, 1 << 28}}}, "bytes_v1")};
  // The weight gradient's table: (m, n, k) = the weight's input features, its outputs, tokens.
  cal.tables[1].variant = {{"role", "wgrad"}};
  check_self_answers(cal);
}

TEST_CASE("model_answer: names the model has no query for are refused with the reason") {
  Calibration cal;
  cal.source = "measured";
  cal.device = "test GPU";
  cal.tables = {table("memory", "fwd", {{"dtype", "bf16"}, {"kernel", "gemm_fprop"}},
                      {{"bytes", {1 << 24}}}, "bytes_v1"),
                table("gemm", "fwd", {{"dtype", "fp16"}},
                      {{"m", {128}}, {"n", {128}}, {"k", {128}}}, "gemm_v1")};
  const ComputeModel model(&cal, h200());
  std::string why;
  CHECK_FALSE(model_answer(model, cal.tables[0], cal.tables[0].cell_point(0), why).has_value());
  CHECK(why == "memory kernel \"gemm_fprop\" is no memory-bound kernel class");
  CHECK_FALSE(model_answer(model, cal.tables[1], cal.tables[1].cell_point(0), why).has_value());
  CHECK(why == "dtype \"fp16\" or pass \"fwd\" has no query");
}
