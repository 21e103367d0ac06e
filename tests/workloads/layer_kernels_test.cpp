// Memory-bound layer kernels: their bytes in closed form for one shape, their time as bytes
// over achievable HBM bandwidth plus the launch, and the H200 faster than the H100 exactly on
// them.
#include "workloads/costs/layer_kernels.hpp"

#include <cstdint>
#include <vector>

#include "doctest_time.hpp"
#include "tests/approx.hpp"

using hopsim::Bytes;
using hopsim::Time;
using namespace hopsim::work;

namespace {

Roofline gpu(double hbm_GBps) {  // NOLINT(readability-identifier-naming): unit in the name
  Roofline r;
  r.peak_bf16_tflops = 989;
  r.peak_fp8_tflops = 1979;
  r.hbm_GBps = hbm_GBps;
  return r;
}

}  // namespace

TEST_CASE("memory-bound kernels: bytes in closed form, 1,024 tokens of 4,096") {
  // t h = 4,194,304.
  CHECK(norm_bytes(1024, 4096).fwd.n == 4 * 4194304 + 4 * 1024);
  CHECK(norm_bytes(1024, 4096).bwd.n == 6 * 4194304 + 4 * 1024);
  CHECK(residual_bytes(1024, 4096).fwd.n == 25165824);
  CHECK(residual_bytes(1024, 4096).bwd.n == 25165824);
  // Llama 3 8B's queries and keys on one GPU: (32 + 8) heads x 128 = 5,120 wide.
  CHECK(rotary_bytes(1024, 5120).fwd.n == 4 * 1024 * 5120);
  CHECK(swiglu_bytes(1024, 14336).fwd.n == 88080384);   // 6 x 1024 x 14336
  CHECK(swiglu_bytes(1024, 14336).bwd.n == 146800640);  // 10 x 1024 x 14336
  CHECK(fp8_cast_bytes(1024, 4096, 6144).fwd.n == 16777216);
  CHECK(fp8_cast_bytes(1024, 4096, 6144).bwd.n == 25165824);
  // DeepSeek's recipe: 3 B per input element forward, 6 + 6 before the weight gradient.
  CHECK(fp8_cast_bytes(1024, 4096, 6144, Fp8Recipe::DeepSeek).fwd.n == 3 * 1024 * 4096);
  CHECK(fp8_cast_bytes(1024, 4096, 6144, Fp8Recipe::DeepSeek).bwd.n ==
        6 * 1024 * 4096 + 6 * 1024 * 6144);
  // DeepSeek-V3's router: 256 experts, top 8.
  CHECK(router_bytes(1024, 256, 8).fwd.n == 8 * 262144 + 8 * 1024 * 8);
  CHECK(router_bytes(1024, 256, 8).bwd.n == 12 * 262144);
  CHECK(permute_bytes(8192, 7168, true).fwd.n == 117440512);    // 2 x 8192 x 7168
  CHECK(permute_bytes(8192, 7168, false).fwd.n == 234881024);   // 4 x ...
  CHECK(permute_bytes(8192, 7168, true).bwd.n == 234881024);
  CHECK(attention_bwd_prep_bytes(1024, 8, 128, 128).fwd.n == 0);
  CHECK(attention_bwd_prep_bytes(1024, 8, 128, 128).bwd.n == 8192 * (4 * 128 + 4 + 6 * 128));
}

TEST_CASE("memory-bound kernels: bytes over HBM x efficiency plus the launch, H200 faster there") {
  const ComputeModel h100(nullptr, gpu(3350));
  const ComputeModel h200(nullptr, gpu(4800));
  const Bytes b{268435456};
  const ComputeCost norm = h100.memory(KernelClass::Norm, b);
  CHECK(norm.kind == KernelClass::Norm);
  CHECK(norm.source == Source::Roofline);
  CHECK(norm.flops.n == 0);
  CHECK(norm.time == Time::us(4) + Time::from_seconds_ceil(268435456.0 / (3350e9 * 0.8)));
  const Time t100 = norm.time - Time::us(4);
  const Time t200 = h200.memory(KernelClass::Norm, b).time - Time::us(4);
  CHECK(t200.seconds() / t100.seconds() == hopsim::test::approx(3350.0 / 4800).epsilon(1e-9));
  // A compute-bound GEMM takes the same time on both: the peaks are the same.
  for (const GemmRole role : {GemmRole::Fprop, GemmRole::Dgrad, GemmRole::Wgrad}) {
    CHECK(h100.gemm(Dtype::Bf16, 8192, 8192, 8192, role).time ==
          h200.gemm(Dtype::Bf16, 8192, 8192, 8192, role).time);
  }
}

TEST_CASE("layer kernels: FP8 GEMMs bring their casts, BF16 ones none") {
  const ComputeModel model(nullptr, gpu(3350));
  LayerCosts bf16;
  add_gemms({{"mlp_down", 4096, 4096, 14336}}, Dtype::Bf16, model, bf16);
  REQUIRE(bf16.fwd.size() == 1);
  REQUIRE(bf16.bwd.size() == 2);
  CHECK(bf16.fwd[0].second.kind == KernelClass::GemmFprop);
  CHECK(bf16.bwd[0].second.kind == KernelClass::GemmDgrad);
  CHECK(bf16.bwd[1].second.kind == KernelClass::GemmWgrad);
  LayerCosts fp8;
  add_gemms({{"mlp_down", 4096, 4096, 14336}}, Dtype::Fp8, model, fp8);
  REQUIRE(fp8.fwd.size() == 2);
  REQUIRE(fp8.bwd.size() == 3);
  CHECK(fp8.fwd[0].second.kind == KernelClass::Fp8Cast);  // before the forward GEMM
  CHECK(fp8.fwd[0].second.bytes.n == 4 * 4096 * 14336);   // its input, 4096 x 14336
  CHECK(fp8.bwd[2].second.kind == KernelClass::Fp8Cast);  // runs first: backward is reversed
  CHECK(fp8.bwd[2].second.bytes.n == 4 * 4096 * 4096);    // the output gradient
  // The compute model carries the workload's recipe to every FP8 GEMM's casts.
  const ComputeModel deepseek(nullptr, gpu(3350), std::nullopt, AttentionKernel::Auto,
                              Fp8Recipe::DeepSeek);
  LayerCosts ds;
  add_gemms({{"mlp_down", 4096, 4096, 14336}}, Dtype::Fp8, deepseek, ds);
  CHECK(ds.fwd[0].second.bytes.n == 3 * 4096 * 14336);
  CHECK(ds.bwd[2].second.bytes.n == 6 * 4096 * 14336 + 6 * 4096 * 4096);
  CHECK(fp8_recipe_named("deepseek") == Fp8Recipe::DeepSeek);
  CHECK(fp8_recipe_name(Fp8Recipe::CastTranspose) == "cast_transpose");
  CHECK(fp8_recipe_named("mxfp8") == Fp8Recipe::Mxfp8);
  CHECK(fp8_recipe_named("nvfp4") == Fp8Recipe::Nvfp4);
  CHECK(fp8_recipe_runs_fp4(Fp8Recipe::Nvfp4));
  CHECK_FALSE(fp8_recipe_runs_fp4(Fp8Recipe::Mxfp8));
  CHECK_FALSE(fp8_recipe_named("nvfp8").has_value());
}

TEST_CASE("layer kernels: MLA's latent norms and layout copies, in closed form") {
  ModelSpec m;
  m.hidden = 7168;
  m.heads = 128;
  m.mla = true;
  m.mla_shape = {1536, 512, 128, 64, 128};  // DeepSeek-V3's
  // 4,096 tokens, 128 heads: t H = 524,288. Forward: the keys' plain parts read (2 t H 128),
  // the shared rotary key read once (2 t 64), whole keys written (2 t H 192), the values
  // read and written (4 t H 128); backward: the rotary key gradient read per head (2 t H 64)
  // and written once (2 t 64), plain key and value gradients read and written (4 t H 256).
  const std::int64_t th = 4096 * 128;
  const MemoryBytes layout = mla_layout_bytes(m, 4096, 128);
  CHECK(layout.fwd.n == 256 * th + 2 * 4096 * 64 + 384 * th + 512 * th);
  CHECK(layout.bwd.n == 128 * th + 2 * 4096 * 64 + 1024 * th);
  const ComputeModel model(nullptr, gpu(3350));
  LayerCosts out;
  add_mla_kernels(m, 4096, 128, model, out);
  REQUIRE(out.fwd.size() == 3);
  REQUIRE(out.bwd.size() == 3);
  CHECK(out.fwd[0].first == "q_latent_norm");
  CHECK(out.fwd[0].second.bytes.n == norm_bytes(4096, 1536).fwd.n);
  CHECK(out.fwd[1].first == "kv_latent_norm");
  CHECK(out.fwd[1].second.bytes.n == norm_bytes(4096, 512).fwd.n);
  CHECK(out.fwd[2].first == "mla_layout");
  CHECK(out.fwd[2].second.kind == KernelClass::Copy);
  CHECK(out.bwd[2].second.bytes.n == layout.bwd.n);
  CHECK(kernel_class_name(KernelClass::Copy) == "copy");
  CHECK(memory_bound(KernelClass::Copy));
  // Queries projected directly (no q_lora_rank) have no latent norm; other models none of these.
  m.mla_shape.q_lora_rank = 0;
  LayerCosts direct;
  add_mla_kernels(m, 4096, 128, model, direct);
  CHECK(direct.fwd.size() == 2);
  m.mla = false;
  LayerCosts gqa;
  add_mla_kernels(m, 4096, 128, model, gqa);
  CHECK(gqa.fwd.empty());
  CHECK(mla_layout_bytes(m, 4096, 128).fwd.n == 0);
}

TEST_CASE("layer kernels: MLA's projections as their own GEMMs, DeepSeek-V3's shapes") {
  ModelSpec m;
  m.hidden = 7168;
  m.heads = 128;
  m.mla = true;
  m.mla_shape = {1536, 512, 128, 64, 128};
  // q_down 7,168 -> 1,536; q_up 1,536 -> 128 x 192; kv_down 7,168 -> 512 + 64; kv_up 512 ->
  // 128 x 256; out 128 x 128 -> 7,168.
  const MlaProjections p = mla_projections(m, 4096, 1);
  REQUIRE(p.before.size() == 4);
  REQUIRE(p.after.size() == 1);
  CHECK(p.before[0].name == "q_down_projection");
  CHECK((p.before[0].n == 1536 && p.before[0].k == 7168));
  CHECK(p.before[1].name == "q_up_projection");
  CHECK((p.before[1].n == 24576 && p.before[1].k == 1536));
  CHECK(p.before[2].name == "kv_down_projection");
  CHECK((p.before[2].n == 576 && p.before[2].k == 7168));
  CHECK(p.before[3].name == "kv_up_projection");
  CHECK((p.before[3].n == 32768 && p.before[3].k == 512));
  CHECK(p.after[0].name == "output_projection");
  CHECK((p.after[0].m == 4096 && p.after[0].n == 7168 && p.after[0].k == 16384));
  // Their weights are the layer's attention parameters less the two latent norms' 1,536 + 512.
  double weights = 0;
  for (const std::vector<Gemm>* list : {&p.before, &p.after}) {
    for (const Gemm& g : *list) {
      weights += static_cast<double>(g.n * g.k);
    }
  }
  CHECK(weights + 1536 + 512 == layer_params(m, true).attention);
  // Split over TP 8 by heads; without a query latent the query projects from the hidden.
  const MlaProjections tp8 = mla_projections(m, 4096, 8);
  CHECK(tp8.before[1].n == 24576 / 8);
  CHECK(tp8.after[0].k == 16384 / 8);
  m.mla_shape.q_lora_rank = 0;
  const MlaProjections direct = mla_projections(m, 4096, 1);
  REQUIRE(direct.before.size() == 3);
  CHECK(direct.before[0].name == "q_projection");
  CHECK((direct.before[0].n == 24576 && direct.before[0].k == 7168));
  CHECK(direct.before[1].n == 512 + 64);
  // In FP8 under DeepSeek's recipe only, and for MLA models only.
  const ComputeModel plain(nullptr, gpu(3350));
  const ComputeModel deepseek(nullptr, gpu(3350), std::nullopt, AttentionKernel::Auto,
                              Fp8Recipe::DeepSeek);
  CHECK(mla_projections_in_fp8(m, deepseek));
  CHECK_FALSE(mla_projections_in_fp8(m, plain));
  m.mla = false;
  CHECK_FALSE(mla_projections_in_fp8(m, deepseek));
}
