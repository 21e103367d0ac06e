// Buffers and launch of one memory-bound kernel (memory.hpp).
#include "calibrate/backend/memory.hpp"

#include "calibrate/backend/cuda_check.hpp"

namespace hopsim::calib {

MemoryRunner::MemoryRunner(GpuContext& ctx, const MemoryKernelRow& kernel, Pass pass,
                           std::int64_t rows, std::int64_t width)
    : pass_(runnable_pass(kernel, pass, width)) {
  if (pass_.launch == nullptr) {
    throw CalibError("memory kernel " + std::string(kernel.name) + " was built without CUDA");
  }
  args_.rows = rows;
  args_.width = width;
  args_.stream = ctx.stream();
  for (const MemoryBuffer& b : pass_.in) {
    const auto count = static_cast<std::size_t>(b.count(rows, width));
    in_.emplace_back(b.elem, count);
    if (b.fill == Fill::Random) {
      fill_random(in_.back().get(), b.elem, count, 100 + in_.size(), 1.0F, ctx.stream());
    } else {
      const std::vector<std::int32_t> ids = memory_ids(b.fill, rows, width);
      HOPSIM_CUDA_CHECK(cudaMemcpy(in_.back().get(), ids.data(), ids.size() * sizeof ids[0],
                                   cudaMemcpyHostToDevice));
    }
    args_.in.push_back(in_.back().get());
  }
  for (const MemoryBuffer& b : pass_.out) {
    out_.emplace_back(b.elem, static_cast<std::size_t>(b.count(rows, width)));
    poison(out_.back(), ctx.stream());
    args_.out.push_back(out_.back().get());
  }
  HOPSIM_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
}

void MemoryRunner::run() const {
  pass_.launch(args_);
  HOPSIM_CUDA_CHECK(cudaGetLastError());
}

MemoryReadback MemoryRunner::readback() const {
  const auto read = [this](std::span<const MemoryBuffer> declared,
                           const std::vector<DeviceBuffer>& buffers, std::size_t i) {
    const DeviceBuffer& buffer = buffers.at(i);  // the same count as `declared`
    const MemoryBuffer& b = declared[i];
    return download(buffer.get(), b.elem,
                    static_cast<std::size_t>(b.count(args_.rows, args_.width)));
  };
  return {args_.rows, args_.width, [=, this](std::size_t i) { return read(pass_.in, in_, i); },
          [=, this](std::size_t i) { return read(pass_.out, out_, i); }};
}

}  // namespace hopsim::calib
