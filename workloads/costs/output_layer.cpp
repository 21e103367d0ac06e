// The output layer's kernels (output_layer.hpp).
#include "workloads/costs/output_layer.hpp"

namespace hopsim::work {

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
