// The transformer layer: checks, and the plan that chains the attention and MoE builders.
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "sim/assert.hpp"
#include "workloads/cp/attention_builder.hpp"
#include "workloads/ep/moe_builder.hpp"
#include "workloads/layer/case_details.hpp"
#include "workloads/layer/transformer_layer_job.hpp"

namespace hopsim::work {
namespace {

// A MoE-layer problem at the path a transformer layer's config has for it: the MoE part's own
// keys under /workload/moe, the token count at /workload/seq_len (it comes from there).
std::string moe_path(const std::string& path) {
  constexpr std::string_view kWorkload = "/workload/";
  if (path.rfind(kWorkload, 0) != 0) {
    return path;
  }
  const std::string key = path.substr(kWorkload.size());
  const std::string first = key.substr(0, key.find('/'));
  if (first == "tokens_per_gpu") {
    return "/workload/seq_len";
  }
  if (first == "kind") {
    return "/workload/ffn";
  }
  if (first == "layers" || first == "passes") {
    return path;
  }
  return "/workload/moe/" + key;
}

}  // namespace

MoeLayerJob TransformerLayerJob::moe_part(const ParallelSpec& p) const {
  HOPSIM_ASSERT(moe.has_value(), "a dense transformer layer has no MoE part");
  MoeLayerJob m = *moe;
  m.routing.tokens_per_gpu = tokens_per_gpu(p);
  m.routing.sequence_tokens = attention.seq_len;
  m.layers = attention.layers;
  m.passes = attention.passes;
  m.attention = false;
  m.overlap = EpOverlap::None;
  return m;
}

void TransformerLayerJob::check(const JobEnv& env, Problems& out) const {
  attention.check(env, out);
  if (!out.empty() || !moe) {
    return;
  }
  const ParallelSpec& p = env.mesh.spec();
  const std::int64_t tokens = attention.seq_len * attention.micro_batch;
  if (tokens % (p.cp * p.tp) != 0) {
    out.push_back({"/workload/seq_len",
                   fmt::format("{} tokens (seq_len x micro_batch) do not split over cp {} x tp {} "
                               "GPUs, which each route their share to the experts",
                               tokens, p.cp, p.tp)});
    return;
  }
  Problems moe_problems;
  moe_part(p).check(env, moe_problems);
  for (Problem& problem : moe_problems) {
    out.push_back({moe_path(problem.path), std::move(problem.message)});
  }
}

double TransformerLayerJob::estimated_plan_bytes(const JobEnv& env) const {
  return attention.estimated_plan_bytes(env) +
         (moe ? moe_part(env.mesh.spec()).estimated_plan_bytes(env) : 0.0);
}

std::vector<Case> TransformerLayerJob::cases(const BuildEnv& b) const {
  HOPSIM_ASSERT(b.compute != nullptr && b.env.model != nullptr,
                "a transformer layer needs a compute model and a model");
  Plan plan;
  AttentionBuilder attn(attention, b, plan);
  const std::optional<MoeLayerJob> part =
      moe ? std::optional<MoeLayerJob>(moe_part(b.env.mesh.spec())) : std::nullopt;
  std::optional<MoeBuilder> experts;
  if (part) {
    experts.emplace(*part, b, plan);
  }
  // The MoE part of a layer after each GPU's attention part (or before it, backward).
  const auto moe_pass = [&](Pass pass) {
    if (!experts) {
      return;
    }
    experts->ready(0) = attn.frontier();
    if (pass == Pass::Fwd) {
      experts->forward();
    } else {
      experts->backward();
    }
    attn.frontier() = experts->ready(0);
  };
  CpDetails cp = attn.details();
  if (attention.forward()) {
    for (std::int64_t l = 0; l < attention.layers; ++l) {
      attn.layer(Pass::Fwd, l == 0 ? &cp : nullptr);
      moe_pass(Pass::Fwd);
    }
  }
  if (attention.backward()) {
    for (std::int64_t l = 0; l < attention.layers; ++l) {
      moe_pass(Pass::Bwd);
      attn.layer(Pass::Bwd, nullptr);
    }
  }
  cp.cp_bytes_per_gpu_fwd = attn.cp_bytes_fwd();
  std::optional<EpDetails> ep;
  if (experts) {
    ep = experts->details();
  }
  const std::string choice =
      fmt::format("{} + {}", cp_algorithm_name(attention.cp.algorithm),
                  part ? ep_algorithm_name(part->algorithm) : std::string_view("dense"));
  std::vector<Case> out;
  out.push_back(Case{fmt::format("{} x{} {}", kKind, attention.layers, mode_name(attention.mode)),
                     std::move(plan), choice, {},
                     TransformerDetails{std::move(cp), std::move(ep)}});
  out.back().throughput =
      attention.throughput(b.env, layer_gemm_flops_per_token(*b.env.model, moe.has_value()));
  return out;
}

Plan TransformerLayerJob::overlapped_pair(const BuildEnv& b) const {
  HOPSIM_ASSERT(moe.has_value(), "a dense transformer layer has no overlapped pair");
  Plan plan;
  AttentionLayerJob one = attention;
  one.layers = 1;
  one.passes = Passes::Both;
  AttentionBuilder forward(one, b, plan);   // micro-batch 0's
  AttentionBuilder backward(one, b, plan);  // micro-batch 1's
  MoeLayerJob part = moe_part(b.env.mesh.spec());
  part.overlap = EpOverlap::DualPipePair;
  part.passes = Passes::Both;
  part.layers = 1;
  part.recompute_modules = 0;  // recomputation runs before the pair
  MoeBuilder experts(part, b, plan);
  const auto pass = [](AttentionBuilder& a, Pass p, const std::vector<TaskList>& after) {
    a.frontier() = after;
    a.layer(p, nullptr);
    return a.frontier();
  };
  experts.pair(PairAttention{
      [&](const std::vector<TaskList>& after) { return pass(forward, Pass::Fwd, after); },
      [&](const std::vector<TaskList>& after) { return pass(backward, Pass::Bwd, after); }});
  return plan;
}

}  // namespace hopsim::work
