// What a compiled kernel holds; shared by compile.cc (which fills it) and
// kernel.cc (which checks arguments and launches).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "codegen/cuda/codegen_cuda.h"
#include "codegen/kernel_abi.h"
#include "ir/ir.h"
#include "runtime/cpu/cpu_module.h"
#include "runtime/cuda/cuda_module.h"
#include "target/target.h"
#include "tilec/tilec.h"

namespace tilec {

// One T.Kernel block of the kernel, lowered and built.
struct BuiltLaunch {
  ir::PrimFunc func;  // after lowering
  codegen::KernelAbi abi;
  std::string source;
  std::string ir;

  // Target "cpu".
  std::shared_ptr<runtime::CpuModule> cpu_module;
  // Built with bounds checks or thread groups: returns the error that stopped the last
  // launch (an out-of-bounds access, a wait that would hang), or null.
  const char* (*kernel_error)(int* argument) = nullptr;

  // Target "cuda".
  std::shared_ptr<runtime::CudaModule> cuda_module;
  codegen::CudaLaunch cuda_launch;
};

// One lowering of the kernel, built: the variant for contiguous, aligned tensors
// (passes/specialize_contiguous.h) or the general one. On a GPU a function of several
// T.Kernel blocks is as many launches, run in order (passes/split_launches.h); on the CPU it
// is one.
struct KernelVariant {
  std::vector<BuiltLaunch> launches;
  // Every launch's, in order (each under a comment line that numbers it, when there are
  // several).
  std::string source;
  std::string ir;
};

struct Kernel::Impl {
  std::string name;
  Target target;  // built for: a cuda arch is always known here
  std::vector<ParamInfo> params;
  std::vector<int> out_idx;
  std::vector<ConstDimInfo> const_dims;
  std::string tile_ir;
  double compile_seconds = 0;
  ir::PrimFunc tile;  // after elaboration: the params, for argument checks
  // Each launch's body as infer_layout left it, and its tiles' layouts, described on first
  // asking (Kernel::layouts()).
  std::vector<ir::Stmt> laid_out;
  std::once_flag layouts_once;
  std::vector<TileLayout> layouts;

  // Built at compile time: the contiguous variant unless the pass config
  // "tilec.specialize_contiguous" is off, then the general one.
  KernelVariant first;
  bool first_is_contiguous = false;
  // The general variant when `first` isn't, built by the first call that needs it.
  FunctionSource source;
  CompileOptions options;
  std::once_flag general_once;
  std::unique_ptr<KernelVariant> general;
};

// The general variant of `impl`, built on first use (thread-safe; a failed build is
// retried by the next call).
const KernelVariant& general_variant(Kernel::Impl& impl);

}  // namespace tilec
