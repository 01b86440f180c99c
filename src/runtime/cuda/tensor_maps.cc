#include "runtime/cuda/tensor_maps.h"

#include <algorithm>
#include <stdexcept>
#include <variant>

namespace tilec::runtime {
namespace {

// CUtensorMapDataType of cuda.h for a tensor element (fp8 moves as bytes).
int tensor_map_type(DType t) {
  switch (t.code()) {
    case DType::Float16: return 6;
    case DType::BFloat16: return 9;
    case DType::Float32: return 7;
    case DType::Float64: return 8;
    case DType::Int32: return 3;
    case DType::Int64: return 5;
    case DType::UInt16: case DType::Int16: return 1;
    case DType::UInt32: return 2;
    case DType::UInt64: return 4;
    default: return t.bytes() == 1 ? 0 : -1;
  }
}

constexpr int kInterleaveNone = 0, kL2Promotion256B = 3, kOobFillZeros = 0;

// CUtensorMapSwizzle of cuda.h for a swizzle of `bytes` (0: none).
int tensor_map_swizzle(int64_t bytes) {
  switch (bytes) {
    case 0: return 0;    // CU_TENSOR_MAP_SWIZZLE_NONE
    case 32: return 1;   // CU_TENSOR_MAP_SWIZZLE_32B
    case 64: return 2;   // CU_TENSOR_MAP_SWIZZLE_64B
    case 128: return 3;  // CU_TENSOR_MAP_SWIZZLE_128B
    default: throw std::logic_error("tensor map: no swizzle of " + std::to_string(bytes) + " bytes");
  }
}

}  // namespace

void append_tensor_maps(const CudaDriver& driver, const codegen::KernelAbi& abi, const std::vector<ArgValue>& args,
                        const std::vector<ParamInfo>& params, const std::string& kernel_name,
                        std::vector<uint64_t>* words) {
  if (abi.tensor_maps.empty()) return;
  if (driver.cuTensorMapEncodeTiled == nullptr)
    throw std::runtime_error("kernel '" + kernel_name +
                             "' copies with TMA, and this NVIDIA driver has no cuTensorMapEncodeTiled (CUDA 12+)");
  words->resize((words->size() + 7) / 8 * 8, 0);
  for (const codegen::KernelAbi::TensorMap& map : abi.tensor_maps) {
    const TensorView& view = std::get<TensorView>(args[map.param]);
    const size_t rank = view.shape.size();
    const int64_t bytes = view.dtype.bytes();
    std::vector<uint64_t> dims, strides;
    std::vector<unsigned> box, element_strides(rank, 1);
    for (size_t d = rank; d-- > 0;) {
      dims.push_back(static_cast<uint64_t>(std::max<int64_t>(view.shape[d], 1)));
      if (d + 1 < rank) strides.push_back(static_cast<uint64_t>(view.strides[d] * bytes));
    }
    for (int64_t b : map.box) box.push_back(static_cast<unsigned>(b));
    // A 1-D tensor has no strides to give, but the driver refuses a null array
    // (CUDA_ERROR_INVALID_VALUE, seen on CUDA 13 with a 1-D tile of scales).
    strides.resize(std::max<size_t>(strides.size(), 1), 0);
    uint64_t encoded[16] = {};
    const int result = driver.cuTensorMapEncodeTiled(
        encoded, tensor_map_type(view.dtype), static_cast<unsigned>(rank), view.data, dims.data(), strides.data(),
        box.data(), element_strides.data(), kInterleaveNone, tensor_map_swizzle(map.swizzle_bytes),
        kL2Promotion256B, kOobFillZeros);
    if (result != CUDA_SUCCESS)
      throw std::runtime_error("kernel '" + kernel_name + "': the TMA tensor map of argument '" +
                               params[map.param].name + "' could not be built: " + driver.error_text(result));
    words->insert(words->end(), std::begin(encoded), std::end(encoded));
  }
}

}  // namespace tilec::runtime
