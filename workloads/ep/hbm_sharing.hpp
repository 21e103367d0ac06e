// HBM shared between a MoE layer's exchanges and the memory-bound kernels computing beside
// them (docs/expert-parallelism.md#hbm-shared-with-the-exchanges).
#pragma once

#include "workloads/plan/plan.hpp"

namespace hopsim::work {

/// Times each byte of an exchange crosses the HBM of a GPU it leaves or reaches: the link
/// reads it from the sender's HBM or writes it to the receiver's, and the kernel stages it
/// once more on each side (DeepEP's normal and low-latency kernels and NCCL's all copy through
/// buffers: into the send buffer, out of the receive buffer).
inline constexpr double kExchangeHbmTouches = 2.0;

/// The share of each GPU's HBM bandwidth (`hbm_bytes_per_s`) that the plan's exchanges draw
/// on average while its GPUs compute: every flow's payload at both its ends,
/// `kExchangeHbmTouches` times, over the summed time of every compute kernel; at most 1/2
/// (HBM split evenly at worst); 0 without compute.
double exchange_hbm_share(const Plan& plan, double hbm_bytes_per_s);

/// The memory-bound kernels get 1 - share of HBM: their time / (1 - share), rounded up. GEMMs
/// and attention are bound by their SMs and keep their time; the exchanges, link-bound and
/// drawing under half of HBM, keep their rate.
void share_hbm(Plan& plan, double share);

}  // namespace hopsim::work
