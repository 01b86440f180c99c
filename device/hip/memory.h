// tilec HIP device support, part 3: barriers and the copies of lowered tile ops.
//
// gfx9 has no asynchronous global-to-LDS copy that tilec uses: cp_async_16 is a 16-byte load
// and store made at once, so the commit and wait calls of a software pipeline have nothing to
// wait for (the barrier that follows them still orders the threads).
#pragma once

#include "hip/types.h"
#include "gpu/memory.h"

namespace tilec_hip {

// 16 bytes from `gmem` into LDS at `smem` (both 16-byte aligned); with pred false nothing is
// read and the 16 bytes are zero-filled (as CUDA's cp.async with src_size 0).
__device__ __forceinline__ void cp_async_16(void* smem, const void* gmem, bool pred = true) {
  *static_cast<uint4*>(smem) = pred ? *static_cast<const uint4*>(gmem) : make_uint4(0, 0, 0, 0);
}
__device__ __forceinline__ void cp_async_commit() {}
template <int N>
__device__ __forceinline__ void cp_async_wait() {}
__device__ __forceinline__ void cp_async_wait_all() {}

}  // namespace tilec_hip
