// tilec HIP device support, part 3: barriers and the copies of lowered tile ops.
//
// gfx9 has no asynchronous global-to-LDS copy that tilec uses: cp_async_16 (_8, _4) is a
// 16-byte (8-, 4-byte) load and store made at once, so the commit and wait calls of a software
// pipeline have nothing to wait for (the barrier that follows them still orders the threads).
#pragma once

#include "hip/types.h"
#include "gpu/memory.h"

namespace tilec_hip {

// Bytes from `gmem` into LDS at `smem` (both aligned to Bytes); with pred false nothing is
// read and the bytes are zero-filled (as CUDA's cp.async with src_size 0).
// T.prefetch_l2: gfx9 has no L2 prefetch that tilec issues; the load that follows fetches.
__device__ __forceinline__ void prefetch_l2(const void*) {}

template <int Bytes>
__device__ __forceinline__ void cp_async(void* smem, const void* gmem, bool pred) {
  using V = typename vector_bits<Bytes>::type;
  *static_cast<V*>(smem) = pred ? *static_cast<const V*>(gmem) : V{};
}
// Policy and Prefetch: T.ptx_cp_async's L2 hints, which gfx9 has no use for.
template <int Policy = 0, int Prefetch = 0>
__device__ __forceinline__ void cp_async_16(void* smem, const void* gmem, bool pred = true) {
  cp_async<16>(smem, gmem, pred);
}
template <int Policy = 0, int Prefetch = 0>
__device__ __forceinline__ void cp_async_8(void* smem, const void* gmem, bool pred = true) {
  cp_async<8>(smem, gmem, pred);
}
template <int Policy = 0, int Prefetch = 0>
__device__ __forceinline__ void cp_async_4(void* smem, const void* gmem, bool pred = true) {
  cp_async<4>(smem, gmem, pred);
}
__device__ __forceinline__ void cp_async_commit() {}
template <int N>
__device__ __forceinline__ void cp_async_wait() {}
__device__ __forceinline__ void cp_async_wait_all() {}

}  // namespace tilec_hip
