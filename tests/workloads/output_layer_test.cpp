// The output layer of a step: the loss's bytes in closed form for each implementation, the
// layer's kernels (final norm, head GEMM by role, cross-entropy) with their classes, and its
// time as the sum of its kernels.
#include "workloads/costs/output_layer.hpp"

#include <cstdint>

#include "doctest_time.hpp"
#include "tests/approx.hpp"

using hopsim::Time;
using namespace hopsim::work;

namespace {

ComputeModel h100() {
  Roofline r;
  r.peak_bf16_tflops = 989;
  r.peak_fp8_tflops = 1979;
  r.hbm_GBps = 3350;
  return ComputeModel(nullptr, r);
}

ModelSpec llama3_8b() {
  ModelSpec m;
  m.layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 8;
  m.head_dim = 128;
  m.ffn_hidden = 14336;
  m.vocab = 128256;
  return m;
}

}  // namespace

TEST_CASE("cross-entropy: bytes in closed form, 8,192 tokens of 16,032 logits") {
  const double tv = 8192.0 * 16032.0;
  const MemoryBytes unfused = cross_entropy_bytes(8192, 16032, CrossEntropyKernel::Unfused);
  CHECK(unfused.fwd.n == static_cast<std::int64_t>(38 * tv + 16 * 8192));
  CHECK(unfused.bwd.n == static_cast<std::int64_t>(14 * tv));
  const MemoryBytes fused = cross_entropy_bytes(8192, 16032, CrossEntropyKernel::Fused);
  CHECK(fused.fwd.n == static_cast<std::int64_t>(22 * tv + 16 * 8192));
  CHECK(fused.bwd.n == static_cast<std::int64_t>(14 * tv));
  const MemoryBytes online = cross_entropy_bytes(8192, 16032, CrossEntropyKernel::Online);
  CHECK(online.fwd.n == static_cast<std::int64_t>(6 * tv + 8 * 8192));
  CHECK(online.bwd.n == static_cast<std::int64_t>(4 * tv + 4 * 8192));
  CHECK(cross_entropy_kernel_named("fused") == CrossEntropyKernel::Fused);
  CHECK(cross_entropy_kernel_named("online") == CrossEntropyKernel::Online);
  CHECK(cross_entropy_kernel_name(CrossEntropyKernel::Unfused) == "unfused");
  CHECK_FALSE(cross_entropy_kernel_named("liger").has_value());
}

TEST_CASE("output layer: final norm, head GEMM by role and the loss, TP 8 over 8,192 tokens") {
  const ComputeModel model = h100();
  const LayerCosts head = output_layer_costs(llama3_8b(), 8192, 8, CrossEntropyKernel::Unfused,
                                             model);
  REQUIRE(head.fwd.size() == 3);
  CHECK(head.fwd[0].first == "final_norm");
  CHECK(head.fwd[0].second.kind == KernelClass::Norm);
  CHECK(head.fwd[0].second.bytes.n == norm_bytes(1024, 4096).fwd.n);  // sequence parallel: 8192/8
  CHECK(head.fwd[1].first == "head");
  CHECK(head.fwd[1].second.kind == KernelClass::GemmFprop);
  CHECK(head.fwd[1].second.flops.n == hopsim::test::approx(2.0 * 8192 * 16032 * 4096));
  CHECK(head.fwd[2].first == "cross_entropy");
  CHECK(head.fwd[2].second.kind == KernelClass::CrossEntropy);
  CHECK(head.fwd[2].second.bytes.n ==
        cross_entropy_bytes(8192, 16032, CrossEntropyKernel::Unfused).fwd.n);
  // Roofline: the launch and the bytes over HBM at 0.8.
  CHECK(head.fwd[2].second.time ==
        Time::us(4) + Time::from_seconds_ceil((38.0 * 8192 * 16032 + 16 * 8192) /
                                              (3350e9 * 0.8)));
  REQUIRE(head.bwd.size() == 4);  // in forward order; the loss's backward runs first
  CHECK(head.bwd[1].second.kind == KernelClass::GemmDgrad);
  CHECK(head.bwd[2].second.kind == KernelClass::GemmWgrad);
  CHECK(run_order(head.bwd).front().first == "cross_entropy");
  // The online loss moves about 6/38 and 4/14 of the bytes; nothing else changes.
  const LayerCosts online = output_layer_costs(llama3_8b(), 8192, 8, CrossEntropyKernel::Online,
                                              model);
  CHECK(online.fwd[1].second.time == head.fwd[1].second.time);
  CHECK(online.fwd[2].second.time < head.fwd[2].second.time);
  CHECK(online.bwd[3].second.bytes.n - 4 * 8192 == head.bwd[3].second.bytes.n * 4 / 14);
}

TEST_CASE("output layer: an MTP module adds two norms, its projection, the head and loss again") {
  const ComputeModel model = h100();
  ModelSpec m = llama3_8b();
  const LayerCosts plain = output_layer_costs(m, 8192, 8, CrossEntropyKernel::Unfused, model);
  m.mtp_depth = 1;
  const LayerCosts mtp = output_layer_costs(m, 8192, 8, CrossEntropyKernel::Unfused, model);
  REQUIRE(mtp.fwd.size() == plain.fwd.size() + 6);
  CHECK(mtp.fwd[3].first == "mtp1.hnorm");
  CHECK(mtp.fwd[4].first == "mtp1.enorm");
  CHECK(mtp.fwd[4].second.bytes.n == plain.fwd[0].second.bytes.n);  // the final norm's
  // The projection of [norm(h); norm(embedding)], 2 x 4096 wide, to 4096 / TP 8 columns.
  CHECK(mtp.fwd[5].first == "mtp1.proj");
  CHECK(mtp.fwd[5].second.flops.n == hopsim::test::approx(2.0 * 8192 * 512 * 8192));
  // The head and the loss again, as long as the model's own.
  CHECK(mtp.fwd[7].first == "mtp1.head");
  CHECK(mtp.fwd[7].second.time == plain.fwd[1].second.time);
  CHECK(mtp.fwd[8].second.time == plain.fwd[2].second.time);
  Time plain_bwd;
  Time mtp_bwd;
  for (const auto& [name, cost] : plain.bwd) {
    plain_bwd += cost.time;
  }
  for (const auto& [name, cost] : mtp.bwd) {
    mtp_bwd += cost.time;
  }
  CHECK(mtp.bwd.size() == plain.bwd.size() + 8);  // the projection's and head's two roles
  CHECK(mtp_bwd > 2 * plain_bwd);
}
