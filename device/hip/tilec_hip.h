// Support code that every generated HIP kernel includes: thin wrappers of HIP intrinsics for
// tilec's HIP backend (gfx906, gfx90a, gfx940; wave64), in namespace tilec_hip, with the
// names and meaning of device/cuda/'s where the two share a lowering.
// C++17, compiled by hipcc or hipRTC from the copies embedded in libtilec (#include "hip/...").
//
//   hip/types.h   int8_t..uint64_t, half, bfloat16, float8_e4m3, float8_e5m2 (their bits);
//                 to_float, from_float<T> (round to nearest even, the CPU backend's rules)
//   hip/math.h    floordiv, floormod, the math functions of device/cpu/tilec_cpu.h (from
//                 gpu/math.h), atomic_add, shfl_xor over the 64-lane wave
//   hip/memory.h  sync_threads and the vector copies (gpu/memory.h), the 16-byte copies of
//                 lowered T.copy
//   gpu/blocks.h  rasterized_block (T.use_swizzle)
//   hip/mfma.h    mfma_gemm_ss, mfma_gemm_rs (T.gemm on the matrix cores), on gfx90a and
//                 gfx940 only
//
// What the CUDA and HIP support have in common is written once, in device/gpu/, and included
// into namespace tilec_hip (gpu/types.h says how).
//
// Call everything qualified (tilec_hip::exp(x)): HIP declares exp, min, max, abs, ... in the
// global namespace too.
#pragma once

#include "hip/types.h"
#include "hip/math.h"
#include "hip/memory.h"
#include "gpu/blocks.h"
#if defined(__gfx90a__) || defined(__gfx940__)
#include "hip/mfma.h"
#endif
