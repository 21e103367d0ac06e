// The output layer's kernels (output_layer.hpp).
#include "workloads/costs/output_layer.hpp"

#include <string>

#include <fmt/format.h>

namespace hopsim::work {

LayerCosts output_layer_costs(const ModelSpec& m, std::int64_t tokens, std::int64_t tp,
                              CrossEntropyKernel loss, const ComputeModel& model) {
  const std::int64_t vocab_share = (m.vocab + tp - 1) / tp;  // vocab-parallel over TP
  const MemoryBytes norm = norm_bytes(tokens / tp, m.hidden);
  const MemoryBytes loss_bytes = cross_entropy_bytes(tokens, vocab_share, loss);
  LayerCosts out;
  add_memory("final_norm", KernelClass::Norm, norm, model, out);
  add_gemms({{"head", tokens, vocab_share, m.hidden}}, Dtype::Bf16, model, out);
  add_memory("cross_entropy", KernelClass::CrossEntropy, loss_bytes, model, out);
  // Each MTP module around its block (a layer of the stage): the norms of the hidden state
  // and of the next token's embedding, their concatenation projected to the hidden width
  // (column-parallel over TP), then the shared head and the loss again.
  for (std::int64_t k = 1; k <= m.mtp_depth; ++k) {
    const std::string mtp = fmt::format("mtp{}.", k);
    add_memory(mtp + "hnorm", KernelClass::Norm, norm, model, out);
    add_memory(mtp + "enorm", KernelClass::Norm, norm, model, out);
    add_gemms({{mtp + "proj", tokens, (m.hidden + tp - 1) / tp, 2 * m.hidden}}, Dtype::Bf16,
              model, out);
    add_memory(mtp + "final_norm", KernelClass::Norm, norm, model, out);
    add_gemms({{mtp + "head", tokens, vocab_share, m.hidden}}, Dtype::Bf16, model, out);
    add_memory(mtp + "cross_entropy", KernelClass::CrossEntropy, loss_bytes, model, out);
  }
  return out;
}

}  // namespace hopsim::work
