// cuDNN backend-API building blocks: an owning descriptor and a graph builder that hands out
// tensor UIDs and records pointwise / reduction / matmul / reshape operations.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include <cudnn_graph.h>

namespace hopsim::calib {

using Dims = std::vector<std::int64_t>;

/// Owns one cudnnBackendDescriptor_t. Move-only.
class BackendDesc {
 public:
  BackendDesc() = default;
  explicit BackendDesc(cudnnBackendDescriptorType_t type);
  ~BackendDesc();
  BackendDesc(BackendDesc&& other) noexcept;
  BackendDesc& operator=(BackendDesc&& other) noexcept;
  BackendDesc(const BackendDesc&) = delete;
  BackendDesc& operator=(const BackendDesc&) = delete;

  cudnnBackendDescriptor_t get() const { return desc_; }

  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, std::int64_t count,
           const void* values);
  void set_int64(cudnnBackendAttributeName_t name, std::int64_t value);
  void set_int64s(cudnnBackendAttributeName_t name, const Dims& values);
  void set_dtype(cudnnBackendAttributeName_t name, cudnnDataType_t value);
  void set_bool(cudnnBackendAttributeName_t name, bool value);
  void set_desc(cudnnBackendAttributeName_t name, const BackendDesc& value);
  void finalize();

 private:
  cudnnBackendDescriptor_t desc_ = nullptr;
};

/// Packed row-major strides of `dims`.
Dims packed_strides(const Dims& dims);

/// Builds one operation graph. Tensors get UIDs 1, 2, ... in creation order; the builder keeps
/// every descriptor (and by-value scalars) alive for as long as plans built from it are used.
class GraphBuilder {
 public:
  struct TensorInfo {
    Dims dims;
    Dims strides;
    cudnnDataType_t dtype = CUDNN_DATA_FLOAT;
  };

  /// A device tensor (appears in the variant pack).
  std::int64_t tensor(const Dims& dims, const Dims& strides, cudnnDataType_t dtype);
  /// An intermediate that never touches memory; packed strides unless given.
  std::int64_t virtual_tensor(const Dims& dims, cudnnDataType_t dtype, const Dims& strides = {});
  /// A by-value scalar [1, 1, 1, 1]; its host value goes into the variant pack.
  std::int64_t scalar_float(float value);
  std::int64_t scalar_int32(std::int32_t value);

  /// y = mode(x), computed in FP32.
  void unary(cudnnPointwiseMode_t mode, std::int64_t x, std::int64_t y);
  /// y = mode(x, b), computed in `math`.
  void binary(cudnnPointwiseMode_t mode, std::int64_t x, std::int64_t b, std::int64_t y,
              cudnnDataType_t math = CUDNN_DATA_FLOAT);
  /// y = index of each element of x along `axis` (GEN_INDEX).
  void gen_index(std::int64_t x, std::int64_t y, std::int64_t axis);
  /// y = t ? x : b (BINARY_SELECT).
  void select(std::int64_t x, std::int64_t b, std::int64_t t, std::int64_t y);
  void reduction(cudnnReduceTensorOp_t reduce, std::int64_t x, std::int64_t y);
  void matmul(std::int64_t a, std::int64_t b, std::int64_t c);
  void reshape(std::int64_t x, std::int64_t y);

  /// Finalizes the operation graph. `handle` may be null: finalize then needs no device.
  BackendDesc build(cudnnHandle_t handle);

  const TensorInfo& info(std::int64_t uid) const;

  std::size_t op_count() const { return ops_.size(); }

  /// UIDs and host pointers of the by-value scalars, for the variant pack.
  std::vector<std::pair<std::int64_t, void*>> by_value() const;

 private:
  std::int64_t add_tensor(const Dims& dims, const Dims& strides, cudnnDataType_t dtype,
                          bool is_virtual, bool by_value);
  const BackendDesc& desc(std::int64_t uid) const;
  struct PointwiseArgs;
  void pointwise(cudnnPointwiseMode_t mode, std::int64_t x, std::int64_t y,
                 const PointwiseArgs& args);

  std::vector<BackendDesc> tensors_;
  std::vector<TensorInfo> infos_;
  std::vector<BackendDesc> ops_;
  std::vector<BackendDesc> op_parts_;  // pointwise/reduction/matmul descriptors the ops refer to
  std::deque<std::pair<std::int64_t, std::int64_t>> scalars_;  // (uid, 8 bytes of value storage)
};

}  // namespace hopsim::calib
