// The TMA tensor maps of a launch (codegen/kernel_abi.h, KernelAbi::tensor_maps), built from
// the call's tensors with the driver's cuTensorMapEncodeTiled.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/kernel_abi.h"
#include "runtime/cuda/cuda_driver.h"
#include "tilec/tilec.h"

namespace tilec::runtime {

// Appends the kernel parameter's tensor maps to `words` (cuda_param_words's): zeros up to a
// 64-byte boundary, then 16 words a map. Throws std::runtime_error naming the kernel and the
// argument when the driver can't encode one.
void append_tensor_maps(const CudaDriver& driver, const codegen::KernelAbi& abi, const std::vector<ArgValue>& args,
                        const std::vector<ParamInfo>& params, const std::string& kernel_name,
                        std::vector<uint64_t>* words);

}  // namespace tilec::runtime
