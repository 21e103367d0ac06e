// Owning cuDNN backend descriptors and the operation-graph builder.
#include "calibrate/backend/cudnn_desc.hpp"

#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "calibrate/backend/cuda_check.hpp"
#include "calibrate/core/types.hpp"

namespace hopsim::calib {

BackendDesc::BackendDesc(cudnnBackendDescriptorType_t type) {
  HOPSIM_CUDNN_CHECK(cudnnBackendCreateDescriptor(type, &desc_));
}

BackendDesc::~BackendDesc() {
  if (desc_ != nullptr) {
    cudnnBackendDestroyDescriptor(desc_);
  }
}

BackendDesc::BackendDesc(BackendDesc&& other) noexcept
    : desc_(std::exchange(other.desc_, nullptr)) {}

BackendDesc& BackendDesc::operator=(BackendDesc&& other) noexcept {
  if (this != &other) {
    if (desc_ != nullptr) {
      cudnnBackendDestroyDescriptor(desc_);
    }
    desc_ = std::exchange(other.desc_, nullptr);
  }
  return *this;
}

void BackendDesc::set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                      std::int64_t count, const void* values) {
  const cudnnStatus_t st = cudnnBackendSetAttribute(desc_, name, type, count, values);
  if (st != CUDNN_STATUS_SUCCESS) {
    throw CudaError(fmt::format("cudnnBackendSetAttribute(attribute {}) failed: {}",
                                static_cast<int>(name), cudnn_status_text(st)),
                    "cudnn", static_cast<int>(st));
  }
}

void BackendDesc::set_int64(cudnnBackendAttributeName_t name, std::int64_t value) {
  set(name, CUDNN_TYPE_INT64, 1, &value);
}

void BackendDesc::set_int64s(cudnnBackendAttributeName_t name, const Dims& values) {
  set(name, CUDNN_TYPE_INT64, static_cast<std::int64_t>(values.size()), values.data());
}

void BackendDesc::set_dtype(cudnnBackendAttributeName_t name, cudnnDataType_t value) {
  set(name, CUDNN_TYPE_DATA_TYPE, 1, &value);
}

void BackendDesc::set_bool(cudnnBackendAttributeName_t name, bool value) {
  set(name, CUDNN_TYPE_BOOLEAN, 1, &value);
}

void BackendDesc::set_desc(cudnnBackendAttributeName_t name, const BackendDesc& value) {
  cudnnBackendDescriptor_t d = value.get();
  set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d);
}

void BackendDesc::finalize() {
  HOPSIM_CUDNN_CHECK(cudnnBackendFinalize(desc_));
}

Dims packed_strides(const Dims& dims) {
  Dims s(dims.size(), 1);
  for (std::size_t i = dims.size(); i-- > 1;) {
    s[i - 1] = s[i] * dims[i];
  }
  return s;
}

std::int64_t GraphBuilder::add_tensor(const Dims& dims, const Dims& strides, cudnnDataType_t dtype,
                                      bool is_virtual, bool by_value) {
  const auto uid = static_cast<std::int64_t>(tensors_.size()) + 1;
  BackendDesc t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  t.set_dtype(CUDNN_ATTR_TENSOR_DATA_TYPE, dtype);
  t.set_int64s(CUDNN_ATTR_TENSOR_DIMENSIONS, dims);
  t.set_int64s(CUDNN_ATTR_TENSOR_STRIDES, strides);
  t.set_int64(CUDNN_ATTR_TENSOR_UNIQUE_ID, uid);
  t.set_int64(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 16);
  t.set_bool(CUDNN_ATTR_TENSOR_IS_VIRTUAL, is_virtual);
  if (by_value) {
    t.set_bool(CUDNN_ATTR_TENSOR_IS_BY_VALUE, true);
  }
  t.finalize();
  tensors_.push_back(std::move(t));
  infos_.push_back({dims, strides, dtype});
  return uid;
}

std::int64_t GraphBuilder::tensor(const Dims& dims, const Dims& strides, cudnnDataType_t dtype) {
  return add_tensor(dims, strides, dtype, false, false);
}

std::int64_t GraphBuilder::virtual_tensor(const Dims& dims, cudnnDataType_t dtype,
                                          const Dims& strides) {
  return add_tensor(dims, strides.empty() ? packed_strides(dims) : strides, dtype, true, false);
}

std::int64_t GraphBuilder::scalar_float(float value) {
  const std::int64_t uid = add_tensor({1, 1, 1, 1}, {1, 1, 1, 1}, CUDNN_DATA_FLOAT, false, true);
  std::int64_t storage = 0;
  std::memcpy(&storage, &value, sizeof value);
  scalars_.emplace_back(uid, storage);
  return uid;
}

std::int64_t GraphBuilder::scalar_int32(std::int32_t value) {
  const std::int64_t uid = add_tensor({1, 1, 1, 1}, {1, 1, 1, 1}, CUDNN_DATA_INT32, false, true);
  std::int64_t storage = 0;
  std::memcpy(&storage, &value, sizeof value);
  scalars_.emplace_back(uid, storage);
  return uid;
}

const BackendDesc& GraphBuilder::desc(std::int64_t uid) const {
  if (uid < 1 || uid > static_cast<std::int64_t>(tensors_.size())) {
    throw CalibError(fmt::format("graph builder: unknown tensor uid {}", uid));
  }
  return tensors_[static_cast<std::size_t>(uid - 1)];
}

const GraphBuilder::TensorInfo& GraphBuilder::info(std::int64_t uid) const {
  desc(uid);
  return infos_[static_cast<std::size_t>(uid - 1)];
}

/// Optional operands and settings of a pointwise op.
struct GraphBuilder::PointwiseArgs {
  std::optional<std::int64_t> b;  ///< second input
  std::optional<std::int64_t> t;  ///< condition of BINARY_SELECT
  cudnnDataType_t math = CUDNN_DATA_FLOAT;
  std::optional<std::int64_t> axis;  ///< of GEN_INDEX
};

void GraphBuilder::unary(cudnnPointwiseMode_t mode, std::int64_t x, std::int64_t y) {
  pointwise(mode, x, y, PointwiseArgs{});
}

void GraphBuilder::binary(cudnnPointwiseMode_t mode, std::int64_t x, std::int64_t b, std::int64_t y,
                          cudnnDataType_t math) {
  PointwiseArgs args;
  args.b = b;
  args.math = math;
  pointwise(mode, x, y, args);
}

void GraphBuilder::gen_index(std::int64_t x, std::int64_t y, std::int64_t axis) {
  PointwiseArgs args;
  args.axis = axis;
  pointwise(CUDNN_POINTWISE_GEN_INDEX, x, y, args);
}

void GraphBuilder::select(std::int64_t x, std::int64_t b, std::int64_t t, std::int64_t y) {
  PointwiseArgs args;
  args.b = b;
  args.t = t;
  pointwise(CUDNN_POINTWISE_BINARY_SELECT, x, y, args);
}

void GraphBuilder::pointwise(cudnnPointwiseMode_t mode, std::int64_t x, std::int64_t y,
                             const PointwiseArgs& args) {
  BackendDesc pw(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
  pw.set_dtype(CUDNN_ATTR_POINTWISE_MATH_PREC, args.math);
  if (args.axis) {
    pw.set_int64(CUDNN_ATTR_POINTWISE_AXIS, *args.axis);
  }
  pw.finalize();
  BackendDesc op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw);
  op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, desc(x));
  if (args.b) {
    op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, desc(*args.b));
  }
  if (args.t) {
    op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, desc(*args.t));
  }
  op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, desc(y));
  op.finalize();
  op_parts_.push_back(std::move(pw));
  ops_.push_back(std::move(op));
}

void GraphBuilder::reduction(cudnnReduceTensorOp_t reduce, std::int64_t x, std::int64_t y) {
  BackendDesc r(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
  r.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &reduce);
  r.set_dtype(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_DATA_FLOAT);
  r.finalize();
  BackendDesc op(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
  op.set_desc(CUDNN_ATTR_OPERATION_REDUCTION_DESC, r);
  op.set_desc(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, desc(x));
  op.set_desc(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, desc(y));
  op.finalize();
  op_parts_.push_back(std::move(r));
  ops_.push_back(std::move(op));
}

void GraphBuilder::matmul(std::int64_t a, std::int64_t b, std::int64_t c) {
  BackendDesc mm(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
  mm.set_dtype(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_DATA_FLOAT);
  mm.finalize();
  BackendDesc op(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
  op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_ADESC, desc(a));
  op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_BDESC, desc(b));
  op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_CDESC, desc(c));
  op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_DESC, mm);
  op.finalize();
  op_parts_.push_back(std::move(mm));
  ops_.push_back(std::move(op));
}

void GraphBuilder::reshape(std::int64_t x, std::int64_t y) {
  BackendDesc op(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
  op.set_desc(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, desc(x));
  op.set_desc(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, desc(y));
  op.finalize();
  ops_.push_back(std::move(op));
}

BackendDesc GraphBuilder::build(cudnnHandle_t handle) {
  BackendDesc graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  std::vector<cudnnBackendDescriptor_t> ops;
  ops.reserve(ops_.size());
  for (const BackendDesc& op : ops_) {
    ops.push_back(op.get());
  }
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
            static_cast<std::int64_t>(ops.size()), ops.data());
  if (handle != nullptr) {
    // Deprecated in cuDNN 9 but still honoured; it ties heuristics to this device.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
#pragma GCC diagnostic pop
  }
  graph.finalize();
  return graph;
}

std::vector<std::pair<std::int64_t, void*>> GraphBuilder::by_value() const {
  std::vector<std::pair<std::int64_t, void*>> out;
  for (const auto& [uid, storage] : scalars_) {
    out.emplace_back(uid, const_cast<std::int64_t*>(&storage));
  }
  return out;
}

}  // namespace hopsim::calib
