// An EP library's costs in a collective's exchange (exchange_costs.hpp).
#include "tools/commands/exchange_costs.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "workloads/collectives/algorithms.hpp"
#include "workloads/collectives/ep_algorithms.hpp"

namespace hopsim::tools {

using Json = nlohmann::ordered_json;

Json exchange_costs(const work::Experiment& exp, const work::CollectiveJob& job) {
  const std::optional<work::EpAlgorithm> a = work::exchange_of(job.algorithm);
  if (!a || job.op != work::CollectiveOp::AllToAll) {
    return nullptr;
  }
  const work::EpAlgorithmRow& row = work::ep_algorithm_row(*a);
  const work::LibraryFile* file = exp.ep_libraries.files.find(row.data_file);
  if (row.data_file.empty() || file == nullptr || !file->rates) {
    return nullptr;
  }
  const work::LibraryRates& rates = *file->rates;
  const work::Mesh mesh(exp.parallel);
  const std::vector<topo::GpuId> ranks = job.rank_sets(exp.cluster, mesh).front();
  std::set<int> nodes;
  for (const topo::GpuId g : ranks) {
    nodes.insert(g.value() / exp.cluster.gpus_per_node);
  }
  const bool across = nodes.size() > 1;
  const work::ExchangeOp op = job.combine ? work::ExchangeOp::Combine : work::ExchangeOp::Dispatch;
  const work::PathCost& c = rates.cost(across, static_cast<std::size_t>(op));
  Json out = {{"library", row.library},
              {"data_file", fmt::format("configs/ep_libraries/{}.json", row.data_file)},
              {"path", across ? "internode" : "intranode"},
              {"op", job.combine ? "combine" : "dispatch"},
              {"floor_us", c.floor.seconds() * 1e6},
              {"nvlink_GBps", c.nvlink.bytes_per_s / 1e9}};
  if (across) {
    out["nic_GBps"] = c.nic.bytes_per_s / 1e9;
    out["nic_pair_GBps"] = c.nic_pair.bytes_per_s / 1e9;
  }
  // Per byte one SM spends: its share of a pair's time at this token size, and the byte's own.
  const double per_byte = c.sm_seconds_per_byte(static_cast<double>(job.token_bytes.n));
  if (per_byte <= 0) {
    out["sm_bound"] = "none: the file states nothing its SMs bind, so comm_sms changes no rate";
    return out;
  }
  Json curve = {{"sm_GBps", c.sm_rate.bytes_per_s / 1e9},
                {"sm_pair_us", c.sm_pair.seconds() * 1e6},
                {"token_bytes", job.token_bytes.n},
                {"default_sms", rates.sms}};
  const std::array<std::int64_t, 6> points{2, 4, 8, 16, 32, job.comm_sms};
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::int64_t sms = points[i];
    const std::int64_t held = rates.held_sms(sms);
    // The job's own comm_sms last, under its own key even where it is one of the others.
    const std::string at = i + 1 == points.size()
                               ? fmt::format("comm_sms {} ({} SMs)", sms, held)
                               : fmt::format("{} SMs", sms);
    curve[at] = static_cast<double>(held) / per_byte / 1e9;
  }
  curve["note"] =
      "GB/s per GPU of every (token, destination node) pair's bytes, its own node included "
      "(each op at its bytes per token): the exchange lasts at least its bytes over this; past "
      "the links' rate more SMs change nothing";
  out["sm_bound_GBps"] = std::move(curve);
  return out;
}

}  // namespace hopsim::tools
