// The `smoke` and `full` grids (calibrate/README.md, "Build and run").
//
// smoke: a few minutes of device time. Dense BF16/FP8 GEMMs (FP8 per tensor and blockwise,
// 1x128/128x128 scales) and weight gradients (FP32
// accumulated, DeepSeek-V3's and Llama's widths over 4K tokens); grouped expert GEMMs (ramp1.5
// uneven tokens) in every implementation; attention d=128, GQA 8, BF16, fwd and bwd: causal
// squares, full squares and the rectangular (s, s/2) / (s/2, s) blocks of zigzag CP, and
// bottom-right causal (s/2, s) blocks of all-gather CP; every memory-bound kernel class at 16 and
// 256 MiB, each pass it has.
// full: hours of device time, meant to be sharded (`--shard i/n`) and merged.
#include <cmath>

#include "calibrate/core/flops.hpp"
#include "calibrate/core/grid.hpp"
#include "calibrate/core/lt_spec.hpp"
#include "calibrate/memory/memory_kernel.hpp"

namespace hopsim::calib {
namespace {

using Pairs = std::vector<std::pair<double, double>>;

/// (s, s), (s, s/2), (s/2, s) for each s: the blocks of zigzag CP plus the square.
Pairs square_and_halves(const std::vector<double>& seqs) {
  Pairs p;
  for (double s : seqs) {
    p.push_back({s, s});
    p.push_back({s, s / 2});
    p.push_back({s / 2, s});
  }
  return p;
}

Pairs squares(const std::vector<double>& seqs) {
  Pairs p;
  for (double s : seqs) {
    p.push_back({s, s});
  }
  return p;
}

Pairs half_queries(const std::vector<double>& seqs) {
  Pairs p;
  for (double s : seqs) {
    p.push_back({s / 2, s});
  }
  return p;
}

void add_attn(Grid& g, AttnFamily f, const Pairs& pairs, const std::vector<double>& bh) {
  for (Pass pass : {Pass::Fwd, Pass::Bwd}) {
    f.pass = pass;
    g.tables.push_back(attn_spec(f, pairs, bh));
  }
}

/// Every implementation of `family` (its dtype and impl are overridden): three in BF16, the two
/// cuBLASLt loops in FP8.
void add_experts(Grid& g, GroupedFamily family, const std::vector<double>& experts,
                 const std::vector<double>& tokens) {
  family.dtype = Dtype::Bf16;
  for (const char* impl : {"lt_loop_1s", "lt_loop_4s", "cublas_grouped_ex"}) {
    family.impl = impl;
    g.tables.push_back(grouped_spec(family, experts, tokens));
  }
  family.dtype = Dtype::Fp8;
  for (const char* impl : {"lt_loop_1s", "lt_loop_4s"}) {
    family.impl = impl;
    g.tables.push_back(grouped_spec(family, experts, tokens));
  }
}

/// Every memory-bound kernel (a row of memory/rows.cpp), each pass it has, at `bytes`.
void add_memory(Grid& g, const std::vector<double>& bytes) {
  for (const MemoryKernelRow* kernel : memory_kernel_rows()) {
    for (Pass pass : {Pass::Fwd, Pass::Bwd}) {
      if (kernel->pass(pass).exists()) {
        g.tables.push_back(memory_spec(kernel->name, pass, bytes));
      }
    }
  }
}

/// The blockwise FP8 recipe's dense GEMMs (1x128 activation, 128x128 weight scales): a table of
/// its own, impl cublaslt_blk128 (core/lt_spec.hpp).
TableSpec blk128_spec(std::vector<double> m, std::vector<double> n, std::vector<double> k) {
  TableSpec s = gemm_spec(Dtype::Fp8, std::move(m), std::move(n), std::move(k));
  s.impl = gemm_impl(Fp8Recipe::Block128);
  return s;
}

Grid smoke_grid() {
  Grid g{"smoke", {}};
  for (Dtype dtype : {Dtype::Bf16, Dtype::Fp8}) {
    g.tables.push_back(gemm_spec(dtype, {128, 1024, 4096, 8192}, {4096, 8192}, {4096, 8192}));
    g.tables.push_back(wgrad_spec(dtype, {4096, 7168}, {4096, 7168}, {4096}));
  }
  g.tables.push_back(blk128_spec({128, 1024, 4096, 8192}, {4096, 8192}, {4096, 8192}));
  // DeepSeek-V3 FC1 per expert: N = 2·I = 4096, K = H = 7168.
  add_experts(g, {Dtype::Bf16, "", 4096, 7168, "ramp1.5", Pass::Fwd}, {8, 32}, {128, 512, 2048});
  const std::vector<double> bh{16, 64};
  add_attn(g, {Pass::Fwd, 128, 128, Mask::CausalTopLeft, 8}, squares({1024, 4096, 8192}), bh);
  add_attn(g, {Pass::Fwd, 128, 128, Mask::None, 8}, square_and_halves({2048, 8192}), bh);
  add_attn(g, {Pass::Fwd, 128, 128, Mask::CausalBottomRight, 8}, half_queries({2048, 8192}), bh);
  add_memory(g, {16.0 * (1 << 20), 256.0 * (1 << 20)});
  return g;
}

/// Drops cells too large for one device or too slow to be worth timing.
void cap_attn_cells(TableSpec& spec) {
  const auto mask = parse_mask(key_string(spec.key, "mask"));
  for (std::size_t cell = 0; cell < spec.wanted.size(); ++cell) {
    const std::vector<double> v = cell_values(spec.axes, cell);
    const double pairs = static_cast<double>(
        attn_pairs(static_cast<std::int64_t>(v[0]), static_cast<std::int64_t>(v[1]), mask));
    if (pairs * v[2] > std::ldexp(1.0, 36)) {  // time ∝ bh beyond this: redundant and slow
      spec.wanted[cell] = false;
    }
  }
}

void cap_expert_cells(TableSpec& spec) {
  const double n = static_cast<double>(key_int(spec.key, "n"));
  const double k = static_cast<double>(key_int(spec.key, "k"));
  spec.wanted.assign(cell_count(spec.axes), true);
  for (std::size_t cell = 0; cell < spec.wanted.size(); ++cell) {
    const std::vector<double> v = cell_values(spec.axes, cell);
    const double weight_bytes = v[0] * n * k * 2.0;
    if (v[0] * v[1] > 131072.0 || weight_bytes > 16.0e9) {
      spec.wanted[cell] = false;
    }
  }
}

/// Dense GEMMs, and weight gradients over the shipped models' weights (input features x
/// outputs: Llama 3 8B, 70B and 405B under TP 1-8, DeepSeek-V3's projections and experts) and
/// 2K-16K tokens.
void add_full_gemms(Grid& g) {
  const std::vector<double> gemm_m{16,   32,   64,   128,  192,  256,  384,  512,   768,
                                   1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384};
  const std::vector<double> gemm_nk{1024, 2048, 4096, 5120, 7168, 8192, 14336, 28672};
  const std::vector<double> wgrad_in{1536, 2048, 4096, 7168, 8192, 14336, 16384};
  const std::vector<double> wgrad_out{2112, 4096, 6144, 7168, 8192, 14336, 24576, 28672, 32768};
  for (Dtype dtype : {Dtype::Bf16, Dtype::Fp8}) {
    g.tables.push_back(gemm_spec(dtype, gemm_m, gemm_nk, gemm_nk));
    g.tables.push_back(wgrad_spec(dtype, wgrad_in, wgrad_out, {2048, 4096, 8192, 16384}));
  }
  g.tables.push_back(blk128_spec(gemm_m, gemm_nk, gemm_nk));
}

/// (hidden H, expert FFN I): Qwen3-30B-A3B, DeepSeek-V2-Lite, Qwen3-235B, DeepSeek-V2,
/// DeepSeek-V3, Mixtral-8x7B. Forward FC1 (2I, H), FC2 (H, I); dgrad FC1 (H, 2I), FC2 (I, H);
/// wgrad (pass bwd) of FC1 and FC2.
void add_full_experts(Grid& g) {
  const std::vector<std::pair<std::int64_t, std::int64_t>> models{
      {2048, 768}, {2048, 1408}, {4096, 1536}, {5120, 1536}, {7168, 2048}, {4096, 14336}};
  const std::vector<double> experts{1, 2, 4, 8, 16, 32, 64};
  const std::vector<double> tokens{8,   16,  32,   64,   128,  192,  256,  384,
                                   512, 768, 1024, 1536, 2048, 3072, 4096, 8192};
  const std::size_t first_expert_table = g.tables.size();
  for (const auto& [h, i] : models) {
    for (const char* imbalance : {"uniform", "ramp1.5", "ramp2.0"}) {
      for (const auto& [n, k] : {std::pair{2 * i, h}, {h, i}, {h, 2 * i}, {i, h}}) {
        add_experts(g, {Dtype::Bf16, "", n, k, imbalance, Pass::Fwd}, experts, tokens);
      }
      for (const auto& [n, k] : {std::pair{2 * i, h}, {h, i}}) {
        add_experts(g, {Dtype::Bf16, "", n, k, imbalance, Pass::Bwd}, experts, tokens);
      }
    }
  }
  for (std::size_t t = first_expert_table; t < g.tables.size(); ++t) {
    cap_expert_cells(g.tables[t]);
  }
}

/// Head dims (d_qk, d_v) with their GQA groups, every mask's blocks, bh that the group divides.
void add_full_attention(Grid& g) {
  const std::vector<double> seqs{1024, 2048, 4096, 8192, 16384, 32768, 65536};
  const std::vector<double> bh{8, 16, 32, 64, 128};
  const std::vector<std::pair<std::pair<std::int64_t, std::int64_t>, std::vector<std::int64_t>>>
      heads{
          {{64, 64}, {1, 8}}, {{128, 128}, {1, 4, 8, 16}}, {{192, 128}, {1}}, {{256, 256}, {1, 8}}};
  const std::size_t first_attn_table = g.tables.size();
  for (const auto& [dims, groups] : heads) {
    for (std::int64_t gqa : groups) {
      std::vector<double> bh_ok;
      for (double b : bh) {
        if (static_cast<std::int64_t>(b) % gqa == 0) {
          bh_ok.push_back(b);
        }
      }
      AttnFamily f{Pass::Fwd, dims.first, dims.second, Mask::CausalTopLeft, gqa};
      add_attn(g, f, squares({512, 1024, 2048, 4096, 8192, 16384, 32768, 65536}), bh_ok);
      f.mask = Mask::None;
      add_attn(g, f, square_and_halves(seqs), bh_ok);
      f.mask = Mask::CausalBottomRight;
      add_attn(g, f, half_queries(seqs), bh_ok);
    }
  }
  for (std::size_t t = first_attn_table; t < g.tables.size(); ++t) {
    cap_attn_cells(g.tables[t]);
  }
}

Grid full_grid() {
  Grid g{"full", {}};
  add_full_gemms(g);
  add_full_experts(g);
  add_full_attention(g);
  std::vector<double> bytes;
  for (double mib = 1; mib <= 1024; mib *= 4) {
    bytes.push_back(mib * (1 << 20));
  }
  add_memory(g, bytes);
  return g;
}

}  // namespace

Grid make_grid(std::string_view name) {
  if (name == "smoke") {
    return smoke_grid();
  }
  if (name == "full") {
    return full_grid();
  }
  throw CalibError(std::string("unknown grid \"") + std::string(name) + "\" (expected smoke|full)");
}

}  // namespace hopsim::calib
