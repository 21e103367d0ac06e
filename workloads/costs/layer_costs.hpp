// What the layer kinds' costs are made of: kernels priced by the compute model, one pass
// after the other, and closed-form FLOPs per operation (cp/ and ep/ build their layers' from
// these).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "workloads/compute/compute_model.hpp"
#include "workloads/model/model.hpp"

namespace hopsim::work {

/// One pass of a layer: each kernel's name and cost. Forward lists run in order; backward
/// lists are in forward order too (entry i is the backward of what precedes it) and run in
/// reverse.
using KernelCosts = std::vector<std::pair<std::string, ComputeCost>>;

struct LayerCosts {
  KernelCosts fwd;
  KernelCosts bwd;
};

/// A backward list (kept in forward order) in the order its kernels run.
inline KernelCosts run_order(const KernelCosts& bwd) { return {bwd.rbegin(), bwd.rend()}; }

/// FLOPs of one layer on one GPU, by operation, for one pass.
using OpFlops = std::vector<std::pair<std::string, double>>;

struct LayerFlops {
  OpFlops fwd;
  OpFlops bwd;
};

/// A GEMM of one layer: its name and m x n x k.
struct Gemm {
  std::string name;
  std::int64_t m, n, k;
};

/// Each GEMM forward (fprop) and backward (dgrad, wgrad), at `dtype`, appended to `out`; FP8
/// GEMMs with the casts of their input (fwd) and output gradient (bwd).
void add_gemms(const std::vector<Gemm>& gemms, Dtype dtype, const ComputeModel& model,
               LayerCosts& out);
/// MLA's projections, each its own GEMM as DeepSeek-V3's training runs them (its published
/// profile has one kernel each), on `tokens` tokens and this GPU's share of them (split over
/// `tp` like the layer's FLOPs): `before` attention the query's down-projection
/// `q_down_projection` (hidden -> q_lora_rank) and up-projection `q_up_projection` (without a
/// query latent, the query's own projection `q_projection`), the key-value's down-projection
/// `kv_down_projection` (hidden -> kv_lora_rank and the shared rotary key) and up-projection
/// `kv_up_projection`; `after` it `output_projection`. Their weights are the layer's attention
/// parameters less the two latent norms.
struct MlaProjections {
  std::vector<Gemm> before;
  std::vector<Gemm> after;
};
MlaProjections mla_projections(const ModelSpec& m, std::int64_t tokens, std::int64_t tp);

/// Whether a layer runs MLA's projections as their own FP8 GEMMs: an MLA model under DeepSeek-V3's
/// FP8 recipe, which quantizes every linear layer but the embedding, the head and the router
/// (arXiv 2412.19437, section 3.3.1).
bool mla_projections_in_fp8(const ModelSpec& m, const ComputeModel& model);

/// The attention calls as one "attention" entry per pass.
void add_attention(const std::vector<AttentionShape>& calls, Dtype dtype,
                   const ComputeModel& model, LayerCosts& out);
/// Per-head dimensions of scores (q.k) and values.
std::pair<double, double> head_dims(const ModelSpec& m);
/// A forward's FLOPs, backward: GEMMs twice (data and weight gradients), attention scores 2.5x.
OpFlops backward_flops(const OpFlops& fwd);

}  // namespace hopsim::work
