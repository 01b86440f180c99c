// tilec HIP device support, part 3: barriers and the copies of lowered tile ops.
//
// gfx9 has no asynchronous global-to-LDS copy that tilec uses: cp_async_16 is a 16-byte load
// and store made at once, so the commit and wait calls of a software pipeline have nothing to
// wait for (the barrier that follows them still orders the threads).
#pragma once

#include "hip/types.h"

namespace tilec_hip {

// s_barrier: every thread of the block, and their LDS and global memory accesses.
__device__ __forceinline__ void sync_threads() { __syncthreads(); }

// 16 bytes from `gmem` into LDS at `smem` (both 16-byte aligned); with pred false nothing is
// read and the 16 bytes are zero-filled (as CUDA's cp.async with src_size 0).
__device__ __forceinline__ void cp_async_16(void* smem, const void* gmem, bool pred = true) {
  *static_cast<uint4*>(smem) = pred ? *static_cast<const uint4*>(gmem) : make_uint4(0, 0, 0, 0);
}
__device__ __forceinline__ void cp_async_commit() {}
template <int N>
__device__ __forceinline__ void cp_async_wait() {}
__device__ __forceinline__ void cp_async_wait_all() {}

// 16 bytes from `src` to `dst` in one access each way (both 16-byte aligned).
__device__ __forceinline__ void copy_16(void* dst, const void* src) {
  *static_cast<uint4*>(dst) = *static_cast<const uint4*>(src);
}

// N consecutive elements between memory and a thread's local run in one access of
// N * sizeof(T) bytes (2, 4, 8 or 16), both sides aligned to that.
template <int Bytes>
struct vector_bits;
template <> struct vector_bits<2> { using type = uint16_t; };
template <> struct vector_bits<4> { using type = uint32_t; };
template <> struct vector_bits<8> { using type = uint2; };
template <> struct vector_bits<16> { using type = uint4; };

template <int N, class T>
__device__ __forceinline__ void load_vector(T* run, const T* src) {
  using V = typename vector_bits<N * sizeof(T)>::type;
  *reinterpret_cast<V*>(run) = *reinterpret_cast<const V*>(src);
}
template <int N, class T>
__device__ __forceinline__ void store_vector(T* dst, const T* run) {
  using V = typename vector_bits<N * sizeof(T)>::type;
  *reinterpret_cast<V*>(dst) = *reinterpret_cast<const V*>(run);
}

// Whether `p` is a multiple of `bytes` (a power of two).
__device__ __forceinline__ bool is_aligned(const void* p, int bytes) {
  return (reinterpret_cast<uintptr_t>(p) & static_cast<uintptr_t>(bytes - 1)) == 0;
}

}  // namespace tilec_hip
