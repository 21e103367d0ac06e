// What a MoE layer's report derives from its run: the routing settings that apply, how
// evenly the tokens landed, the bytes of each exchange, and the busiest rank's streams.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tools/commands/validation_figures.hpp"
#include "workloads/experiment/run.hpp"

namespace hopsim::tools {

/// Bytes of an exchange's flows: those that cross a NIC (InfiniBand) and those that cross an
/// NVLink hop (a flow that crosses both counts in both).
struct ExchangeBytes {
  std::int64_t ib = 0;
  std::int64_t nvlink = 0;
};

/// A MoE layer's run, as its report and summary show it.
struct EpFigures {
  // The settings that apply (unset: the algorithm, distribution or balancer has none).
  std::optional<std::string_view> pieces;  ///< two_tier: streamed or each piece its flows
  std::optional<double> zipf_s;
  std::optional<double> dirichlet_alpha;
  std::optional<double> aux_loss_weight;
  std::optional<double> capacity_factor;
  std::string_view placement;  ///< "even", "redundant" or "explicit"
  // Where the tokens went (EP group 0).
  std::vector<std::size_t> slots_per_rank;  ///< expert slots per GPU
  double dropped_fraction = 0;              ///< of the selections, over capacity
  double max_over_mean = 0;                 ///< of the tokens per rank
  double expert_max_over_mean = 0;          ///< of the tokens per expert
  double idle_expert_fraction = 0;  ///< of expert compute, waiting for the busiest rank
  /// Per pass, then phase name, as the run routed the flows.
  std::map<std::pair<std::string, std::string>, ExchangeBytes> bytes;
  /// The EP library's fixed costs per call on the busiest rank, by task label (deepep_layout,
  /// deepep_notify): each call's time and the calls over the run's layers.
  struct CallFigure {
    double each_s = 0;
    double calls = 0;
  };
  std::map<std::string, CallFigure> per_call;
  // The busiest rank's streams.
  topo::GpuId busiest_rank;
  double compute_s = 0;
  double comm_s = 0;
  double exposed_comm_s = 0;
  double hidden_comm_share = 0;   ///< of its communication, under compute (0 without any)
  double compute_comm_ratio = 0;  ///< 0 without communication
  double layer_time_s = 0;        ///< the step over its layers
  /// How long its exchanges' kernels held comm_sms of its SMs, and how much longer its compute
  /// ran for it (workloads/plan/sm_sharing.hpp); 0 where they hold none.
  double sm_held_s = 0;
  double sm_tax_s = 0;
  /// A moe_layer experiment's validation (time_s: the whole run), when it has one
  std::optional<ValidationFigures> validation;
};

/// The figures of case `c`, the run of `job` (`ep` its details) on `cluster`; `validation`'s
/// row when there is one (a transformer layer's is its attention part's: pass none).
EpFigures ep_figures(const work::CaseResult& c, const work::MoeLayerJob& job,
                     const work::EpDetails& ep, const topo::Cluster& cluster,
                     const std::optional<work::Validation>& validation = std::nullopt);

}  // namespace hopsim::tools
