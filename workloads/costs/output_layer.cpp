// The output layer's kernels (output_layer.hpp).
#include "workloads/costs/output_layer.hpp"

#include <algorithm>
#include <array>

namespace hopsim::work {
namespace {

constexpr std::array<std::string_view, 3> kNames{"unfused", "fused", "online"};

// Whole bytes, held below int64 as layer_kernels.cpp does.
Bytes bytes(double b) { return Bytes{static_cast<std::int64_t>(std::min(b, 9e18))}; }
double d(std::int64_t v) { return static_cast<double>(v); }

}  // namespace

std::string_view cross_entropy_kernel_name(CrossEntropyKernel k) {
  return kNames[static_cast<std::size_t>(k)];
}

std::optional<CrossEntropyKernel> cross_entropy_kernel_named(std::string_view name) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) {
      return static_cast<CrossEntropyKernel>(i);
    }
  }
  return std::nullopt;
}

MemoryBytes cross_entropy_bytes(std::int64_t tokens, std::int64_t vocab, CrossEntropyKernel k) {
  const double tv = d(tokens) * d(vocab);
  switch (k) {
    case CrossEntropyKernel::Unfused:
      return {bytes(38 * tv + 16 * d(tokens)), bytes(14 * tv)};
    case CrossEntropyKernel::Fused:
      return {bytes(22 * tv + 16 * d(tokens)), bytes(14 * tv)};
    case CrossEntropyKernel::Online:
      break;
  }
  return {bytes(6 * tv + 8 * d(tokens)), bytes(4 * tv + 4 * d(tokens))};
}

LayerCosts output_layer_costs(const ModelSpec& m, std::int64_t tokens, std::int64_t tp,
                              CrossEntropyKernel loss, const ComputeModel& model) {
  const std::int64_t vocab_share = (m.vocab + tp - 1) / tp;  // vocab-parallel over TP
  LayerCosts out;
  add_memory("final_norm", KernelClass::Norm, norm_bytes(tokens / tp, m.hidden), model, out);
  add_gemms({{"head", tokens, vocab_share, m.hidden}}, Dtype::Bf16, model, out);
  add_memory("cross_entropy", KernelClass::CrossEntropy,
             cross_entropy_bytes(tokens, vocab_share, loss), model, out);
  return out;
}

}  // namespace hopsim::work
