// The HIP target: lowered IR (after the "hip" pass list) as one HIP C++ translation unit for
// hipcc or hipRTC, for gfx906, gfx90a and gfx940 (wave64).
//
// The unit is the CUDA printer's (codegen/cuda/codegen_cuda.h: the same kernel entry, the
// same `tilec_args` of 8-byte words, dynamic shared memory as LDS) in the HIP dialect: it
// includes "hip/tilec_hip.h" from device/ and calls namespace tilec_hip, whose functions
// have the names and meaning of tilec_cuda's for what the HIP passes emit.
#pragma once

#include <string>

#include "codegen/cuda/codegen_cuda.h"

namespace tilec::codegen {

// The HIP source of `func` (one KernelLaunch) for `target` (hip gfx90a, ...). A CompileError
// when its shared memory exceeds a workgroup's LDS or an on-chip buffer has no constant size.
CudaSource generate_hip_source(const ir::PrimFunc& func, const KernelAbi& abi, const Target& target);

}  // namespace tilec::codegen
