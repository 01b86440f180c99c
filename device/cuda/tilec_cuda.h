// Support code that every generated CUDA kernel includes: thin, explicit wrappers of CUDA
// intrinsics and PTX for tilec's CUDA backend (sm_80 .. sm_90a), in namespace tilec_cuda.
// C++17, compiled by NVRTC from the copies embedded in libtilec (#include "cuda/...").
//
//   cuda/types.h   int8_t..uint64_t, half, bfloat16, float8_e4m3, float8_e5m2; to_float,
//                  from_float<T> (round to nearest even, the CPU backend's overflow rules)
//   cuda/math.h    floordiv, floormod, the math functions of device/cpu/tilec_cpu.h (from
//                  gpu/math.h), atomic_add, warp_reduce_sum/max/min
//   cuda/memory.h  sync_threads and the vector copies (gpu/memory.h), cp.async, ldmatrix; on
//                  sm_90 fence_proxy_async, mbarriers, the bulk copy
//   cuda/mma.h     mma.sync m16n8k16 f16/bf16, m16n8k8 tf32, m16n8k32 e4m3/e5m2 (sm_89+) and
//                  their fragment maps
//   cuda/gemm.h    gemm_ss (the block GEMM of T.gemm on mma.sync) and swizzled_offset
//   cuda/blocks.h  rasterized_block (T.use_swizzle, gpu/blocks.h), persistent kernels' tiles
//
// What the CUDA and HIP support have in common is written once, in device/gpu/, and included
// into namespace tilec_cuda (gpu/types.h says how).
//
// Call everything qualified (tilec_cuda::exp(x)): CUDA declares exp, min, max, abs, ... for
// float and double in the global namespace, so `using namespace tilec_cuda` makes such calls
// ambiguous. Features of newer chips are declared only when compiling for them
// (__CUDA_ARCH__ >= 890 for the fp8 MMA, which also defines TILEC_CUDA_HAS_FP8_MMA; >= 900 for
// the async-proxy fence, mbarriers and the bulk copy): using one on an older target is a
// compile error, not a silent no-op.
#pragma once

#include "cuda/types.h"
#include "cuda/math.h"
#include "cuda/memory.h"
#include "cuda/mma.h"
#include "cuda/gemm.h"
#include "cuda/blocks.h"
