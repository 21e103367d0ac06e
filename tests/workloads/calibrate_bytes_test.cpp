// The calibration harness's memory-bound kernels against the simulator's byte counts: every
// kernel row (calibrate/memory/<kernel>.cu) declares its bytes rule next to its launch, and the
// compute model prices the same class by workloads/costs/layer_kernels.hpp's closed forms. A
// table's `bytes` axis is only meaningful when the two agree, so this test calls the simulator's
// functions (not a copy of their numbers) for every row, pass and a range of row counts.
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include <doctest/doctest.h>

#include "calibrate/memory/memory_kernel.hpp"
#include "workloads/costs/layer_kernels.hpp"

namespace hopsim::work {
namespace {

using Rule = std::function<MemoryBytes(std::int64_t rows, std::int64_t width)>;

// Each kernel class as the simulator counts it over `rows` rows of the row's width: tokens for
// the per-token kernels, heads of d = 128 for the attention pre/post-pass (its row is a token of
// `width` heads), the vocabulary shard for the online cross-entropy, experts for the router
// (top-8, DeepSeek-V3), FP8 rows as dispatched for the permute.
const std::map<std::string, Rule, std::less<>>& simulator_rules() {
  static const std::map<std::string, Rule, std::less<>> rules{
      {"norm", [](auto r, auto w) { return norm_bytes(r, w); }},
      {"residual", [](auto r, auto w) { return residual_bytes(r, w); }},
      {"rotary", [](auto r, auto w) { return rotary_bytes(r, w); }},
      {"swiglu", [](auto r, auto w) { return swiglu_bytes(r, w); }},
      {"fp8_cast", [](auto r, auto w) { return fp8_cast_bytes(r, w, w); }},
      {"router", [](auto r, auto w) { return router_bytes(r, w, 8); }},
      {"permute", [](auto r, auto w) { return permute_bytes(r, w, /*fp8_rows=*/true); }},
      {"attention_bwd_prep", [](auto r, auto w) { return attention_bwd_prep_bytes(r, w, 128, 128); }},
      {"cross_entropy",
       [](auto r, auto w) { return cross_entropy_bytes(r, w, CrossEntropyKernel::Online); }},
  };
  return rules;
}

}  // namespace

TEST_CASE("every calibration memory kernel declares the simulator's bytes for its class") {
  const auto& rules = simulator_rules();
  std::size_t rows_checked = 0;
  for (const calib::MemoryKernelRow* kernel : calib::memory_kernel_rows()) {
    CAPTURE(kernel->name);
    const auto rule = rules.find(kernel->name);
    REQUIRE_MESSAGE(rule != rules.end(), "no simulator byte rule for this kernel class");
    for (const std::int64_t rows : {1, 64, 1000, 18725}) {
      for (const std::int64_t width : {kernel->width, kernel->check_width}) {
        CAPTURE(rows);
        CAPTURE(width);
        const MemoryBytes sim = rule->second(rows, width);
        CHECK(calib::rule_bytes(kernel->fwd, rows, width) == static_cast<double>(sim.fwd.n));
        CHECK(calib::rule_bytes(kernel->bwd, rows, width) == static_cast<double>(sim.bwd.n));
      }
    }
    ++rows_checked;
  }
  CHECK(rows_checked == rules.size());  // and no simulator class without a kernel
}

}  // namespace hopsim::work
