// Plan cache and the per-shape attention runner.
#include "calibrate/backend/attention.hpp"

#include <algorithm>

#include "calibrate/backend/cuda_check.hpp"

namespace hopsim::calib {
namespace {

std::size_t count(std::int64_t n) {
  return static_cast<std::size_t>(n);
}

}  // namespace

const AttnPlanCache::Fwd& AttnPlanCache::fwd(cudnnHandle_t handle, const SdpaShape& shape) {
  const std::string key = shape.describe();
  auto it = fwd_.find(key);
  if (it == fwd_.end()) {
    SdpaFwdGraph graph = build_sdpa_fwd(shape, handle);
    ExecutionPlan plan(handle, graph.graph, "SDPA forward " + key);
    it = fwd_.emplace(key, std::make_unique<Fwd>(Fwd{std::move(graph), std::move(plan)})).first;
  }
  return *it->second;
}

const AttnPlanCache::Bwd& AttnPlanCache::bwd(cudnnHandle_t handle, const SdpaShape& shape) {
  const std::string key = shape.describe();
  auto it = bwd_.find(key);
  if (it == bwd_.end()) {
    SdpaBwdGraph graph = build_sdpa_bwd(shape, handle);
    ExecutionPlan plan(handle, graph.graph, "SDPA backward " + key);
    it = bwd_.emplace(key, std::make_unique<Bwd>(Bwd{std::move(graph), std::move(plan)})).first;
  }
  return *it->second;
}

AttnRunner::AttnRunner(GpuContext& ctx, AttnPlanCache& cache, const SdpaShape& shape, Pass pass,
                       std::uint64_t seed)
    : ctx_(ctx), shape_(shape), pass_(pass) {
  const SdpaShape& s = shape_;
  fwd_ = &cache.fwd(ctx.cudnn(), s);
  std::int64_t workspace = fwd_->plan.workspace_bytes();
  if (pass == Pass::Bwd) {
    bwd_ = &cache.bwd(ctx.cudnn(), s);
    workspace = std::max(workspace, bwd_->plan.workspace_bytes());
  }
  const cudaStream_t stream = ctx.stream();
  q_ = DeviceBuffer(Elem::Bf16, count(q_elems(s)));
  k_ = DeviceBuffer(Elem::Bf16, count(kv_elems(s, s.d_qk)));
  v_ = DeviceBuffer(Elem::Bf16, count(kv_elems(s, s.d_v)));
  o_ = DeviceBuffer(Elem::Bf16, count(o_elems(s)));
  stats_ = DeviceBuffer(Elem::F32, count(s.b * s.h_q * s.s_q));
  workspace_ = DeviceBuffer(static_cast<std::size_t>(std::max<std::int64_t>(workspace, 16)));
  fill_random(q_.get(), Elem::Bf16, count(q_elems(s)), seed * 4 + 0, 1.0F, stream);
  fill_random(k_.get(), Elem::Bf16, count(kv_elems(s, s.d_qk)), seed * 4 + 1, 1.0F, stream);
  fill_random(v_.get(), Elem::Bf16, count(kv_elems(s, s.d_v)), seed * 4 + 2, 1.0F, stream);
  const SdpaFwdGraph& f = fwd_->graph;
  auto fwd_tensors = f.builder.by_value();
  fwd_tensors.insert(fwd_tensors.end(), {{f.q, q_.get()},
                                         {f.k, k_.get()},
                                         {f.v, v_.get()},
                                         {f.o, o_.get()},
                                         {f.stats, stats_.get()}});
  fwd_pack_ = ExecutionPlan::variant_pack(fwd_tensors, workspace_.get());
  if (pass == Pass::Bwd) {
    d_o_ = DeviceBuffer(Elem::Bf16, count(o_elems(s)));
    dq_ = DeviceBuffer(Elem::Bf16, count(q_elems(s)));
    dk_ = DeviceBuffer(Elem::Bf16, count(kv_elems(s, s.d_qk)));
    dv_ = DeviceBuffer(Elem::Bf16, count(kv_elems(s, s.d_v)));
    softmax_sum_ = DeviceBuffer(Elem::F32, count(s.b * s.h_q * s.s_q));
    dq_accum_ = DeviceBuffer(Elem::F32, count(q_elems(s)));
    fill_random(d_o_.get(), Elem::Bf16, count(o_elems(s)), seed * 4 + 3, 1.0F, stream);
    HOPSIM_CUDA_CHECK(cudaMemsetAsync(dq_accum_.get(), 0, dq_accum_.bytes(), stream));
    const SdpaBwdGraph& g = bwd_->graph;
    auto tensors = g.builder.by_value();
    tensors.insert(tensors.end(), {{g.q, q_.get()},
                                   {g.k, k_.get()},
                                   {g.v, v_.get()},
                                   {g.o, o_.get()},
                                   {g.d_o, d_o_.get()},
                                   {g.stats, stats_.get()},
                                   {g.dq, dq_.get()},
                                   {g.dk, dk_.get()},
                                   {g.dv, dv_.get()},
                                   {g.softmax_sum, softmax_sum_.get()},
                                   {g.dq_accum, dq_accum_.get()}});
    bwd_pack_ = ExecutionPlan::variant_pack(tensors, workspace_.get());
    run_forward();
  }
  HOPSIM_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void AttnRunner::run_forward() {
  fwd_->plan.execute(ctx_.cudnn(), fwd_pack_);
}

void AttnRunner::run() {
  if (pass_ == Pass::Fwd) {
    run_forward();
  } else {
    bwd_->plan.execute(ctx_.cudnn(), bwd_pack_);
  }
}

std::string AttnRunner::engines() const {
  std::string out = fwd_->plan.engine_json();
  if (bwd_ != nullptr) {
    out += " | " + bwd_->plan.engine_json();
  }
  return out;
}

}  // namespace hopsim::calib
