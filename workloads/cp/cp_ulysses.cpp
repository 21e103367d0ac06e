// Ulysses CP (cp_algorithms.hpp): an all-to-all inside each Ulysses group turns the sequence-
// sharded Q, K and V into head-sharded ones, a pass-KV ring runs across the groups (cp / u
// positions; none when u = cp), and an all-to-all brings the output back to sequence shards.
// Backward runs the two all-to-alls the other way round.
#include <vector>

#include <fmt/format.h>

#include "workloads/collectives/collectives.hpp"
#include "workloads/cp/cp_algorithms.hpp"
#include "workloads/cp/cp_stage.hpp"

namespace hopsim::work {
namespace {

// The all-to-all of every Ulysses group: sequence-sharded to head-sharded (`in`: Q, K, V; on
// the way back the output) or back; with `count`, one GPU's bytes are counted.
void ulysses_all_to_all(CpStage& s, bool in, std::uint32_t phase, bool count) {
  const AttentionDims& d = s.dims();
  // Each peer gets every token this GPU holds, for the peer's heads only. K/V heads a peer
  // needs: its share, or one head when each rank gets a copy.
  const std::int64_t kv_to_peer = d.kv_heads % d.u == 0 ? d.kv_heads / d.u : std::int64_t{1};
  const std::int64_t per_token =
      in ? d.attn_q_heads * d.d_qk + kv_to_peer * (d.d_qk + d.d_v) : d.attn_q_heads * d.d_v;
  const std::int64_t pair_bytes = d.tokens * per_token * d.elem;
  const auto n = static_cast<std::size_t>(d.u);
  ByteMatrix m{n, std::vector<std::int64_t>(n * n, pair_bytes)};
  for (std::size_t i = 0; i < n; ++i) {
    m.bytes[i * n + i] = 0;
  }
  const BuildEnv& b = s.build_env();
  for (const std::vector<topo::GpuId>& group : s.ulysses_groups()) {
    Collectives coll(s.plan(), b.cluster, b.env.nccl, phase);
    const TaskList after = s.joined(group);
    const Handle h = coll.all_to_all_flat(group, m, after);
    for (const topo::GpuId g : group) {
      s.frontier(g) = h.done;
    }
  }
  if (count) {
    s.count_bytes(pair_bytes * (d.u - 1));
  }
}

}  // namespace

void attend_ulysses(CpStage& stage, Pass pass, std::uint32_t phase, CpDetails* record) {
  const bool grouped = stage.dims().u > 1;
  const bool count = pass == Pass::Fwd && record != nullptr;
  if (grouped) {
    ulysses_all_to_all(stage, pass == Pass::Fwd, phase, count);
  }
  attend_ring(stage, pass, phase, record);
  if (grouped) {
    ulysses_all_to_all(stage, pass != Pass::Fwd, phase, count);
  }
}

// The Ulysses degree divides cp, the query heads of a TP rank, and its KV heads (or each rank
// gets a copy of the one it needs, with replicate_kv).
void check_ulysses_heads(const AttentionLayerJob& job, const JobEnv& env, Problems& out) {
  const ParallelSpec& p = env.mesh.spec();
  const std::int64_t u = job.ulysses(p.cp);
  if (p.cp % u != 0) {
    out.push_back(
        {"/workload/cp/ulysses_degree", fmt::format("{} does not divide cp = {}", u, p.cp)});
    return;
  }
  const AttentionDims d = job.dims(*env.model, p);
  if (d.q_heads % u != 0) {
    out.push_back({"/workload/cp/ulysses_degree",
                   fmt::format("Ulysses degree {} must divide the {} query heads of a TP rank "
                               "({} heads / tp {})",
                               u, d.q_heads, env.model->heads, p.tp)});
  } else if (d.kv_heads % u != 0 && !(u % d.kv_heads == 0 && job.cp.replicate_kv)) {
    out.push_back({"/workload/cp/ulysses_degree",
                   fmt::format("Ulysses degree {} exceeds or does not split the {} KV heads of a "
                               "TP rank; set cp.replicate_kv to give each rank a copy of the KV "
                               "head it needs (when {} is a multiple of {})",
                               u, d.kv_heads, u, d.kv_heads)});
  }
}

}  // namespace hopsim::work
