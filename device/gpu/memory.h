// tilec GPU device support shared by device/cuda/ and device/hip/, part 3: the block barrier
// and the plain copies of lowered tile ops. Included by cuda/memory.h and hip/memory.h into
// their namespace (gpu/types.h says how).
#pragma once

#include "gpu/types.h"

namespace TILEC_GPU_NAMESPACE {

// Every thread of the block, and their shared (LDS) and global memory accesses: bar.sync 0
// on NVIDIA, s_barrier on AMD.
__device__ __forceinline__ void sync_threads() { __syncthreads(); }

template <int Bytes>
struct vector_bits;
template <> struct vector_bits<2> { using type = uint16_t; };
template <> struct vector_bits<4> { using type = uint32_t; };
template <> struct vector_bits<8> { using type = uint2; };
template <> struct vector_bits<16> { using type = uint4; };

// Bytes (4, 8 or 16) from `src` to `dst` in one access each way (both aligned to Bytes).
template <int Bytes>
__device__ __forceinline__ void copy(void* dst, const void* src) {
  using V = typename vector_bits<Bytes>::type;
  *static_cast<V*>(dst) = *static_cast<const V*>(src);
}

// N consecutive elements between memory and a thread's local run in one access of
// N * sizeof(T) bytes (2, 4, 8 or 16), both sides aligned to that (the code generator aligns
// small local arrays to their size).

template <int N, class T>
__device__ __forceinline__ void load_vector(T* run, const T* src) {
  using V = typename vector_bits<N * sizeof(T)>::type;
  *reinterpret_cast<V*>(run) = *reinterpret_cast<const V*>(src);
}
// load_vector where `pred` holds; zeros in the run where it doesn't (src is not read then).
template <int N, class T>
__device__ __forceinline__ void load_vector_or_zero(T* run, const T* src, bool pred) {
  using V = typename vector_bits<N * sizeof(T)>::type;
  V v{};
  if (pred) v = *reinterpret_cast<const V*>(src);
  *reinterpret_cast<V*>(run) = v;
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

}  // namespace TILEC_GPU_NAMESPACE
