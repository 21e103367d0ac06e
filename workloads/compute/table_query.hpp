// The kernel a calibration table's cell times, asked of a compute model: what lets one table be
// read against another as the simulator reads it (`hopsim check-calibration --against`).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "workloads/compute/calibration.hpp"
#include "workloads/compute/compute_model.hpp"

namespace hopsim::work {

/// The model's answer for the kernel of `table`'s cell at `point` (the table's axis order):
///   gemm fwd                  gemm(m, n, k) fprop;
///   gemm bwd, role wgrad      the weight gradient of Y[k x n] = X[k x m] W[m x n]: the table's
///                             m x n is the weight, k the tokens (compute_model.hpp);
///   gemm bwd                  the whole backward (data and weight gradient) of gemm(m, n, k);
///   grouped_gemm              the same for (experts, tokens per expert, n, k);
///   attn                      attention at (s_q, s_kv, bh) with the key's head dims, mask, GQA;
///   memory                    the key's kernel class moving `bytes`.
/// Nullopt when the table's key names something the model has no query for (an unknown dtype,
/// mask or kernel class); `why` then says what.
std::optional<ComputeCost> model_answer(const ComputeModel& model, const CalibrationTable& table,
                                        std::span<const std::int64_t> point, std::string& why);

/// The signed differences (answer - cell) / cell of `model`'s answers from `table`'s timed
/// cells, one per cell the model answers, in cell order.
std::vector<double> answer_errors(const ComputeModel& model, const CalibrationTable& table);

}  // namespace hopsim::work
