// What a compiled kernel holds; shared by compile.cc (which fills it) and
// kernel.cc (which checks arguments and launches).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/cuda/codegen_cuda.h"
#include "codegen/kernel_abi.h"
#include "ir/ir.h"
#include "runtime/cpu/cpu_module.h"
#include "runtime/cuda/cuda_module.h"
#include "tilec/tilec.h"

namespace tilec {

struct Kernel::Impl {
  std::string name;
  std::string target;
  std::vector<ParamInfo> params;
  std::vector<int> out_idx;
  std::vector<ConstDimInfo> const_dims;
  std::string source;
  std::string tile_ir;
  std::string ir;
  double compile_seconds = 0;
  ir::PrimFunc func;  // after lowering: params with shapes for argument checks
  codegen::KernelAbi abi;

  // Target "cpu".
  std::shared_ptr<runtime::CpuModule> cpu_module;
  // Built with bounds checks: returns the first out-of-bounds access of the last
  // launch, or null.
  const char* (*bounds_error)() = nullptr;

  // Target "cuda".
  std::string arch;
  std::shared_ptr<runtime::CudaModule> cuda_module;
  codegen::CudaLaunch cuda_launch;
};

}  // namespace tilec
