// Llama 3's all-gather CP (cp_algorithms.hpp): every position's K and V gathered before
// attention (exposed), each position then attends every key at once; backward attends, then
// reduce-scatters dK and dV. A ring of one position has nothing to gather and runs as a ring.
#include <vector>

#include "workloads/collectives/collectives.hpp"
#include "workloads/cp/cp_algorithms.hpp"
#include "workloads/cp/cp_stage.hpp"

namespace hopsim::work {
namespace {

void all_gather_stage(CpStage& s, const std::vector<topo::GpuId>& ring, Pass pass,
                      std::uint32_t phase, bool counting) {
  const auto r = static_cast<std::int64_t>(ring.size());
  const Bytes size{r * s.kv_block_bytes()};  // the gathered K and V (nccl-tests convention)
  const BuildEnv& b = s.build_env();
  Collectives coll(s.plan(), b.cluster, b.env.nccl, phase);
  const RingOptions options{Protocol::Simple, 1, 1};
  if (pass == Pass::Fwd) {
    const Handle h = coll.ring(ring, static_cast<int>(r) - 1, size, options, s.joined(ring));
    for (const topo::GpuId g : ring) {
      s.frontier(g) = h.done;
    }
    if (counting) {
      s.count_bytes((r - 1) * s.kv_block_bytes());
    }
  }
  for (std::int64_t p = 0; p < r; ++p) {
    const topo::GpuId g = ring[static_cast<std::size_t>(p)];
    s.compute(g, "attention", s.step_cost(static_cast<int>(p), -1, pass), phase);
  }
  if (pass == Pass::Bwd) {
    const Handle h = coll.ring(ring, static_cast<int>(r) - 1, size, options, s.joined(ring));
    for (const topo::GpuId g : ring) {
      s.frontier(g) = h.done;
    }
  }
}

}  // namespace

void attend_allgather(CpStage& stage, Pass pass, std::uint32_t phase, CpDetails* record) {
  if (stage.dims().r == 1) {  // nothing to gather
    attend_ring(stage, pass, phase, record);
    return;
  }
  for (const std::vector<topo::GpuId>& ring : stage.rings()) {
    all_gather_stage(stage, ring, pass, phase, record != nullptr && ring == stage.rings().front());
  }
}

std::vector<AttentionCall> all_keys_calls(const CpLayout& layout, int position) {
  return layout.calls_all_keys(position);
}

}  // namespace hopsim::work
