// The CP algorithms in one table: a row per algorithm with its name in configs and reports, a
// note for the reference, what it takes (prefill only, a KV cache, Ulysses groups), its own
// checks, its plan builder (the CP part of one layer on every GPU) and a position's attention
// calls (the closed forms explain prices). The parser, the checks, the reference, explain and
// the plan read this table, so a new CP algorithm is its builder file and its row here.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/problem.hpp"
#include "workloads/compute/compute_model.hpp"
#include "workloads/compute/enum_names.hpp"
#include "workloads/cp/cp_details.hpp"
#include "workloads/cp/cp_layout.hpp"
#include "workloads/env/job_env.hpp"

namespace hopsim::work {

enum class CpAlgorithm : std::uint8_t { Ring, RingPassQ, AllGather, Ulysses };

struct AttentionLayerJob;
class CpStage;

/// One CP algorithm. `prefill_only`: it runs forward only, as inference does; `kv_cache`: a
/// prefill's cached_tokens are modelled; `ulysses`: all-to-all groups of ulysses_degree ranks
/// (and replicate_kv) before a ring over the rest. `check` adds its own problems (null: none);
/// `attend` adds the CP part of one layer and pass on every GPU (after their frontiers,
/// counting its bytes and, with `record`, the ring steps); `calls` lists the attention calls
/// one ring position runs in a pass, for the closed forms.
struct CpAlgorithmRow {
  CpAlgorithm algorithm;
  std::string_view name;
  std::string_view note;
  bool prefill_only;
  bool kv_cache;
  bool ulysses;
  void (*check)(const AttentionLayerJob& job, const JobEnv& env, Problems& out);
  void (*attend)(CpStage& stage, Pass pass, std::uint32_t phase, CpDetails* record);
  std::vector<AttentionCall> (*calls)(const CpLayout& layout, int position);
};

// The rows' columns: cp_ring.cpp (pass-KV and pass-Q rings), cp_allgather.cpp, cp_ulysses.cpp.
void attend_ring(CpStage& stage, Pass pass, std::uint32_t phase, CpDetails* record);
void attend_ring_pass_q(CpStage& stage, Pass pass, std::uint32_t phase, CpDetails* record);
void attend_allgather(CpStage& stage, Pass pass, std::uint32_t phase, CpDetails* record);
void attend_ulysses(CpStage& stage, Pass pass, std::uint32_t phase, CpDetails* record);
std::vector<AttentionCall> pass_kv_calls(const CpLayout& layout, int position);
std::vector<AttentionCall> pass_q_calls(const CpLayout& layout, int position);
std::vector<AttentionCall> all_keys_calls(const CpLayout& layout, int position);
void check_ulysses_heads(const AttentionLayerJob& job, const JobEnv& env, Problems& out);

inline constexpr std::array<CpAlgorithmRow, 4> kCpAlgorithms{{
    {CpAlgorithm::Ring, "ring", "pass-KV, overlapped", false, true, false, nullptr, attend_ring,
     pass_kv_calls},
    {CpAlgorithm::RingPassQ, "ring_pass_q", "queries rotate (prefill)", true, true, false, nullptr,
     attend_ring_pass_q, pass_q_calls},
    {CpAlgorithm::AllGather, "allgather", "Llama 3's exposed K/V all-gather", false, false, false,
     nullptr, attend_allgather, all_keys_calls},
    {CpAlgorithm::Ulysses, "ulysses", "all-to-all to heads and back", false, false, true,
     check_ulysses_heads, attend_ulysses, pass_kv_calls},
}};

constexpr const CpAlgorithmRow& cp_algorithm_row(CpAlgorithm a) {
  return kCpAlgorithms[static_cast<std::size_t>(a)];
}

constexpr std::string_view cp_algorithm_name(CpAlgorithm a) {
  return cp_algorithm_row(a).name;
}

/// Every row's name, in table order (for the parser).
constexpr std::array<std::string_view, kCpAlgorithms.size()> cp_algorithm_names() {
  std::array<std::string_view, kCpAlgorithms.size()> out{};
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = kCpAlgorithms[i].name;
  }
  return out;
}

/// The names of the rows `keep` keeps (every row: null), in table order, "a, b or c" (`last`
/// joins the last two), each in double quotes with `quoted`; and for the reference each row's
/// name and note, "ring: pass-KV, overlapped; ...".
std::string cp_algorithm_list(bool (*keep)(const CpAlgorithmRow&), bool quoted,
                              std::string_view last);
std::string cp_algorithms_described();

// The table is in enum order, so cp_algorithm_row indexes it.
static_assert(in_enum_order(kCpAlgorithms, &CpAlgorithmRow::algorithm));

}  // namespace hopsim::work
