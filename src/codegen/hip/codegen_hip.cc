#include "codegen/hip/codegen_hip.h"

namespace tilec::codegen {

CudaSource generate_hip_source(const ir::PrimFunc& func, const KernelAbi& abi, const Target& target) {
  static const GpuDialect hip{"HIP (hipcc, hipRTC)", "tilec_hip", "hip/tilec_hip.h"};
  return generate_gpu_source(func, abi, target, /*bounds_check=*/false, hip);
}

}  // namespace tilec::codegen
