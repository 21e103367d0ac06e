// Buffers and launch of one memory-bound kernel (memory.hpp).
#include "calibrate/backend/memory.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <string>

#include "calibrate/backend/cuda_check.hpp"

namespace hopsim::calib {
namespace {

std::size_t sz(std::int64_t v) {
  return static_cast<std::size_t>(v);
}

}  // namespace

MemoryRunner::MemoryRunner(GpuContext& ctx, MemoryKernel kernel, Pass pass, std::int64_t rows,
                           std::int64_t width)
    : ctx_(ctx) {
  if (memory_row_bytes(kernel, pass, width) <= 0) {
    throw CalibError("memory kernel " + std::string(to_string(kernel)) + " has no " +
                     std::string(to_string(pass)) + " pass");
  }
  const bool fwd = pass == Pass::Fwd;
  if ((kernel == MemoryKernel::Router && width > 256) ||
      (kernel == MemoryKernel::Fp8Cast && width % 128 != 0) ||
      (kernel == MemoryKernel::Rotary && width % 64 != 0) ||
      (kernel == MemoryKernel::Permute && (width * (fwd ? 1 : 2)) % 16 != 0)) {
    throw CalibError("memory kernel " + std::string(to_string(kernel)) + " cannot run " +
                     std::to_string(width) + " wide");
  }
  launch_ = MemoryLaunch{kernel, pass, rows, width, {}, {}};
  const std::size_t rw = sz(rows * width);
  const auto add_in = [&](Elem elem, std::size_t count) {
    in_.emplace_back(elem, count);
    fill_random(in_.back().get(), elem, count, 100 + in_.size(), 1.0F, ctx.stream());
  };
  const auto add_out = [&](Elem elem, std::size_t count) { out_.emplace_back(elem, count); };
  const auto upload_ids = [&] {  // int32 ids as the next input: 4 bytes each
    in_.emplace_back(Elem::F32, ids_.size());
    HOPSIM_CUDA_CHECK(cudaMemcpy(in_.back().get(), ids_.data(),
                                 ids_.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice));
  };
  switch (kernel) {
    case MemoryKernel::Norm:
      add_in(Elem::Bf16, rw);
      if (!fwd) {
        add_in(Elem::Bf16, rw);  // dy
      }
      add_in(Elem::Bf16, sz(width));
      if (fwd) {
        add_out(Elem::Bf16, rw);
        add_out(Elem::F32, sz(rows));
      } else {
        add_in(Elem::F32, sz(rows));  // 1/rms
        add_out(Elem::Bf16, rw);
      }
      break;
    case MemoryKernel::Residual:
      add_in(Elem::Bf16, rw);
      add_in(Elem::Bf16, rw);
      add_out(Elem::Bf16, rw);
      break;
    case MemoryKernel::Rotary:
      add_in(Elem::Bf16, rw);
      add_out(Elem::Bf16, rw);
      break;
    case MemoryKernel::SwiGlu:
      add_in(Elem::Bf16, 2 * rw);
      if (!fwd) {
        add_in(Elem::Bf16, rw);
      }
      add_out(Elem::Bf16, fwd ? rw : 2 * rw);
      break;
    case MemoryKernel::Fp8Cast:
      add_in(Elem::Bf16, rw);
      add_out(Elem::Fp8E4m3, rw);
      add_out(Elem::Fp8E4m3, rw);
      add_out(Elem::F32, sz(rows * (width / 128)));
      break;
    case MemoryKernel::Router:
      add_in(Elem::F32, rw);
      if (fwd) {
        add_out(Elem::F32, rw);
        add_out(Elem::F32, sz(rows * 8));  // int32 ids: 4 bytes each
        add_out(Elem::F32, sz(rows * 8));
      } else {
        add_in(Elem::F32, rw);
        add_out(Elem::F32, rw);
      }
      break;
    case MemoryKernel::Permute: {
      const Elem elem = fwd ? Elem::Fp8E4m3 : Elem::Bf16;
      add_in(elem, rw);
      ids_.resize(sz(rows));
      std::iota(ids_.begin(), ids_.end(), 0);
      std::shuffle(ids_.begin(), ids_.end(), std::mt19937(7));
      upload_ids();
      add_out(elem, rw);
      break;
    }
    case MemoryKernel::CrossEntropy:
      add_in(Elem::Bf16, rw);  // logits (fwd), their gradient (bwd)
      if (fwd) {
        std::uniform_int_distribution<std::int32_t> target(0, static_cast<std::int32_t>(width - 1));
        std::mt19937 gen(11);
        ids_.resize(sz(rows));
        for (std::int32_t& id : ids_) {
          id = target(gen);
        }
        upload_ids();
        add_out(Elem::Bf16, rw);
        add_out(Elem::F32, sz(rows));  // loss
      } else {
        add_in(Elem::F32, sz(rows));  // dloss
        add_out(Elem::Bf16, rw);
      }
      break;
    case MemoryKernel::AttnBwdPrep:
      add_in(Elem::Bf16, rw * 128);
      add_in(Elem::Bf16, rw * 128);
      add_in(Elem::F32, rw * 128);
      add_out(Elem::F32, rw);
      add_out(Elem::Bf16, rw * 128);
      break;
  }
  for (std::size_t i = 0; i < in_.size(); ++i) {
    launch_.in.at(i) = in_[i].get();
  }
  for (std::size_t i = 0; i < out_.size(); ++i) {
    launch_.out.at(i) = out_[i].get();
    poison(out_[i], ctx.stream());
  }
  HOPSIM_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
}

void MemoryRunner::run() const {
  launch_memory_kernel(launch_, ctx_.stream());
}

}  // namespace hopsim::calib
