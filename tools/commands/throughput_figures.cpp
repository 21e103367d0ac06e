// Tokens per second per GPU, model TFLOPs per GPU and MFU of a case that has tokens.
#include "tools/commands/throughput_figures.hpp"

namespace hopsim::tools {

std::optional<ThroughputFigures> throughput_figures(const work::CaseResult& c) {
  const double step = c.summary.step.seconds();
  if (!c.throughput || c.throughput->gpus <= 0 || !(step > 0)) {
    return std::nullopt;
  }
  const work::Throughput& t = *c.throughput;
  ThroughputFigures f;
  f.gpus = t.gpus;
  f.tokens = t.tokens;
  const double gpus = static_cast<double>(t.gpus);
  f.tokens_per_s_per_gpu = t.tokens / step / gpus;
  f.model_tflops_per_gpu = t.model_flops / step / gpus / 1e12;
  f.mfu = t.peak_tflops > 0 ? f.model_tflops_per_gpu / t.peak_tflops : 0.0;
  return f;
}

}  // namespace hopsim::tools
