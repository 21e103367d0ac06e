// Attention implementations as rows: each row's bars from its source in closed form, the
// curve through them, and the names a workload may give.
#include "workloads/compute/attention_rows.hpp"

#include <cstdint>

#include "doctest_time.hpp"
#include "tests/approx.hpp"

using namespace hopsim::work;

namespace {

// The curve's rate (TFLOP/s) at the published benchmarks' grid: 16 heads x 16K tokens.
double bar(AttentionKernel k, bool bwd, double s) {
  const double blocks = 16 * (16384 / s) * (s / 128);
  return attention_efficiency(k, {bwd, false, s, 128, static_cast<std::int64_t>(blocks)},
                              kAttentionReference, 132) *
         989.4;
}

}  // namespace

TEST_CASE("rows measured beside FlashAttention-2 take its paper bars times their speed there") {
  // pytorch/benchmark #2443's forward latencies (ms): FA2 0.236768 and 6.14246, SDPA 0.24512
  // and 6.55098, FlexAttention 0.257984 and 5.38931, at 512 and 16K tokens.
  const AttentionRow& sdpa = attention_row(AttentionKernel::SdpaFlash);
  CHECK(sdpa.fwd_512 == hopsim::test::approx(309 * 0.236768 / 0.24512));
  CHECK(sdpa.fwd_16k == hopsim::test::approx(370 * 6.14246 / 6.55098));
  const AttentionRow& flex = attention_row(AttentionKernel::Flex);
  CHECK(flex.fwd_512 == hopsim::test::approx(309 * 0.236768 / 0.257984));
  CHECK(flex.fwd_16k == hopsim::test::approx(370 * 6.14246 / 5.38931));
  // Backward borrowed from FA2, and said so.
  CHECK(flex.bwd_16k == 322);
  CHECK_FALSE(flex.borrowed.empty());
  CHECK(attention_row(AttentionKernel::Fa3).borrowed.empty());
  // FlexAttention is slower than FA2 on short sequences and faster on long ones, as measured.
  CHECK(flex.fwd_512 < 309);
  CHECK(flex.fwd_16k > 370);
}

TEST_CASE("each row's curve passes through its own bars") {
  for (const AttentionRow& row : attention_rows()) {
    CAPTURE(row.name);
    CHECK(bar(row.kernel, false, 512) == hopsim::test::approx(row.fwd_512));
    CHECK(bar(row.kernel, false, 16384) == hopsim::test::approx(row.fwd_16k));
    CHECK(bar(row.kernel, true, 512) == hopsim::test::approx(row.bwd_512));
    CHECK(bar(row.kernel, true, 16384) == hopsim::test::approx(row.bwd_16k));
    CHECK(attention_kernel_named(row.name) == row.kernel);
    CHECK(attention_kernel_name(row.kernel) == row.name);
    CHECK_FALSE(row.source.empty());
    CHECK_FALSE(row.default_of.empty());
  }
  CHECK(&attention_row(AttentionKernel::Auto) == &attention_row(AttentionKernel::Fa3));
  CHECK_FALSE(attention_kernel_named("sdpa_efficient").has_value());
}
