// Model closed forms against the seed articles' numbers and brute-force sums.
#include "workloads/model/model.hpp"

#include "doctest_time.hpp"
#include "tests/approx.hpp"
#include "workloads/compute/compute_model.hpp"
#include "workloads/cp/attention_closed_forms.hpp"
#include "workloads/ep/moe_closed_forms.hpp"

using namespace hopsim::work;

namespace {

ModelSpec llama3_70b() {
  ModelSpec m;
  m.name = "llama3-70b";
  m.layers = 80;
  m.hidden = 8192;
  m.ffn_hidden = 28672;
  m.heads = 64;
  m.kv_heads = 8;
  m.head_dim = 128;
  m.vocab = 128256;
  return m;
}

ModelSpec deepseek_v3() {
  ModelSpec m;
  m.name = "deepseek-v3";
  m.layers = 61;
  m.hidden = 7168;
  m.ffn_hidden = 18432;
  m.heads = 128;
  m.head_dim = 128;
  m.vocab = 129280;
  m.mla = true;
  m.mla_shape = {1536, 512, 128, 64, 128};
  m.moe = {256, 1, 8, 2048, 4, 3};
  return m;
}

}  // namespace

TEST_CASE("Llama 3 70B: saved activations 22.8 GB -> 365.1 GB per GPU at TP8 from 8K to 128K") {
  const ModelSpec m = llama3_70b();
  CHECK(activation_bytes_per_gpu(m, 8192, 1, 8, 1) == hopsim::test::approx(22.8e9).epsilon(0.005));
  CHECK(activation_bytes_per_gpu(m, 131072, 1, 8, 1) ==
        hopsim::test::approx(365.1e9).epsilon(0.001));
  // CP divides it back: 128K over CP 16 is 8K's memory.
  CHECK(activation_bytes_per_gpu(m, 131072, 1, 8, 16) ==
        hopsim::test::approx(activation_bytes_per_gpu(m, 8192, 1, 8, 1)));
}

TEST_CASE("Llama 3 70B: attention 1031 GFLOP per token at 128K against 6N = 423 GFLOP") {
  const ModelSpec m = llama3_70b();
  CHECK(attention_flops_per_token(m, 131072) == hopsim::test::approx(1031e9).epsilon(0.001));
  CHECK(6 * active_params(m) == hopsim::test::approx(423e9).epsilon(0.002));
  CHECK(total_params(m) == hopsim::test::approx(70.55e9).epsilon(0.001));
}

TEST_CASE("DeepSeek-V3: 671B parameters, about 37B active") {
  const ModelSpec m = deepseek_v3();
  CHECK(total_params(m) == hopsim::test::approx(671e9).epsilon(0.002));
  CHECK(active_params(m) == hopsim::test::approx(37e9).epsilon(0.02));
  CHECK(moe_layers(m) == 58);
}

// The figures the seeds divide by: 989 TF BF16, 450 GB/s NVLink, 50 GB/s NIC (H100 SXM).
hopsim::topo::Spec h100_peaks() {
  hopsim::topo::Spec spec;
  spec.gpu.peak_bf16_tflops = 989;
  spec.nvlink.peak = hopsim::Bandwidth::gigabytes_per_s(450);
  spec.nic.peak = hopsim::Bandwidth::gigabytes_per_s(50);
  spec.nvlink.bandwidth = hopsim::Bandwidth::gigabytes_per_s(370);  // achievable: not quoted
  return spec;
}

TEST_CASE("DeepSeek-V3 EP traffic: 117.4 MB out in FP8, 234.9 MB back in BF16, 704.6 MB in all") {
  MoeLayerJob job;  // 4096 tokens, top-8, 4 nodes, FP8 out, BF16 back
  const EpNumbers ep = ep_numbers(deepseek_v3(), job, h100_peaks());
  CHECK(ep.dispatch_bytes_ib == hopsim::test::approx(117.4e6).epsilon(0.001));
  CHECK(ep.combine_bytes_ib == hopsim::test::approx(234.9e6).epsilon(0.001));
  CHECK(ep.fwd_bwd_bytes_ib == hopsim::test::approx(704.6e6).epsilon(0.001));
  CHECK(ep.comm_s_at_nic == hopsim::test::approx(7.0e-3).epsilon(0.01));
  // 2 x 37B / 61 x 4096 = 4.97 TFLOP, 5.0 ms at 989 TF; our 37.6B active gives 1.5% more.
  CHECK(ep.layer_flops_per_gpu == hopsim::test::approx(4.97e12).epsilon(0.02));
  CHECK(ep.compute_s_at_peak == hopsim::test::approx(5.0e-3).epsilon(0.025));
}

TEST_CASE("CP thresholds and load balance: 2198 / 19,780 tokens, 8x, 2c+1") {
  ParallelSpec p;
  p.cp = 8;
  const CpNumbers cp = cp_numbers(p, h100_peaks());
  CHECK(cp.block_threshold_nvlink_tokens == hopsim::test::approx(2198).epsilon(0.001));
  CHECK(cp.block_threshold_network_tokens == hopsim::test::approx(19780));
  CHECK(cp.min_seq_per_rank_nvlink == hopsim::test::approx(13'000).epsilon(0.02));
  CHECK(cp.min_seq_per_rank_network == hopsim::test::approx(119'000).epsilon(0.01));
  CHECK(cp.contiguous_work_ratio == 8);
  CHECK(cp.zigzag_units_per_rank == 17);
  p.cp = 1;  // one position: one chunk, its diagonal the one unit (as CpLayout cuts it)
  CHECK(cp_numbers(p, h100_peaks()).zigzag_units_per_rank == 1);
}

TEST_CASE("zigzag chunks give every CP rank the same attention work") {
  // 2c chunks of size k, causal over the whole sequence: chunk i sees i full chunks plus its
  // own diagonal; rank r holds chunks r and 2c-1-r, so every rank has 1/c of the work.
  const std::int64_t c = 4;
  const std::int64_t k = 8;
  const auto diagonal = static_cast<double>(attention_pairs(Mask::CausalTopLeft, k, k));
  const auto full = static_cast<double>(k * k);
  const auto all = static_cast<double>(attention_pairs(Mask::CausalTopLeft, 2 * c * k, 2 * c * k));
  for (std::int64_t r = 0; r < c; ++r) {
    const double work = (static_cast<double>(r) * full + diagonal) +
                        (static_cast<double>(2 * c - 1 - r) * full + diagonal);
    CHECK(work == hopsim::test::approx(all / static_cast<double>(c)));
  }
}
