// A PyTorch profiler (Kineto) trace, as far as a check against the model needs it: the GPU
// kernels (name, start, duration, device, stream), the profiler steps it spans, and the GPU and
// rank it says it ran on. The format is the Chrome trace format Kineto writes
// (docs/profile-check.md): {"traceEvents": [...], "deviceProperties": [...], ...}, or a bare
// array of events; events of category "kernel" are GPU kernels, and user annotations named
// "ProfilerStep#N" mark the steps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hopsim::profile {

/// Traces are read whole, at most this much JSON (after gzip).
inline constexpr std::size_t kMaxTraceBytes = std::size_t{2} << 30;

struct KernelEvent {
  std::string name;
  double start_us = 0;
  double duration_us = 0;
  std::int64_t device = 0;  ///< args.device, else the event's pid
  std::int64_t stream = 0;  ///< args.stream, else the event's tid
  /// args["External id"]: the CPU operator that launched it (CpuOp), when the trace links them.
  std::optional<std::int64_t> external_id;
};

/// A CPU operator's shapes (`record_shapes=True`): its name, and per input the tensor's
/// dimensions (empty for an input that is not one tensor: a scalar, a list) and type
/// ("c10::BFloat16", ...).
struct CpuOp {
  std::string name;
  std::vector<std::vector<std::int64_t>> dims;
  std::vector<std::string> types;
};

struct KinetoTrace {
  std::vector<KernelEvent> kernels;  ///< in the file's order
  std::int64_t profiler_steps = 0;   ///< distinct "ProfilerStep#N" annotations
  /// Operators of category cpu_op with "External id" and "Input Dims", by that id.
  std::map<std::int64_t, CpuOp> ops;
  std::optional<std::string> gpu;    ///< deviceProperties[0].name
  std::optional<std::int64_t> sm_count;   ///< deviceProperties[0].numSms
  std::optional<std::int64_t> hbm_bytes;  ///< deviceProperties[0].totalGlobalMem
  std::optional<std::int64_t> rank;  ///< distributedInfo.rank
  std::optional<std::int64_t> world_size;
};

/// Reads a trace (plain or gzip). Malformed JSON, a file that is not a trace (no traceEvents),
/// a kernel event without a string name or with a missing or negative duration is one
/// config::ConfigError naming the file and the event ("/traceEvents/12/dur"); a trace without
/// kernels is one too (the profiler was not asked for CUDA activity).
KinetoTrace read_kineto_trace(const std::string& path);

/// The same, from JSON text that `where` names in errors.
KinetoTrace parse_kineto_trace(const std::string& text, const std::string& where);

}  // namespace hopsim::profile
