// tilec CUDA device support, part 2: Python-style division, math, atomics and warp reductions.
// Names and semantics match device/cpu/tilec_cpu.h, so one code generator serves both targets.
#pragma once

#include "cuda/types.h"
#include "gpu/math.h"

namespace tilec_cuda {

// ---------------------------------------------------------------- atomics

// Returns the previous value, like atomicAdd (relaxed, device scope). Native red/atom.add
// where the hardware has it: 32- and 64-bit integers (signed ones through their unsigned
// twin: two's complement addition is the same), float, double, half (sm_70+), bfloat16
// (sm_80+); 8- and 16-bit integers and fp8 through a compare-and-swap loop.
template <class T, if_integer_t<T> = 0>
__device__ __forceinline__ T atomic_add(T* address, typename detail::identity<T>::type value) {
  if constexpr (sizeof(T) == 4) {
    return static_cast<T>(
        atomicAdd(reinterpret_cast<unsigned*>(address), static_cast<unsigned>(value)));
  } else if constexpr (sizeof(T) == 8) {
    return static_cast<T>(atomicAdd(reinterpret_cast<unsigned long long*>(address),
                                    static_cast<unsigned long long>(value)));
  } else {
    return detail::atomic_update_narrow(address,
                                        [value](T x) { return static_cast<T>(x + value); });
  }
}
__device__ __forceinline__ float atomic_add(float* address, float value) {
  return atomicAdd(address, value);
}
__device__ __forceinline__ double atomic_add(double* address, double value) {
  return atomicAdd(address, value);
}
__device__ __forceinline__ half atomic_add(half* address, half value) {
  return atomicAdd(address, value);
}
__device__ __forceinline__ bfloat16 atomic_add(bfloat16* address, bfloat16 value) {
  return atomicAdd(address, value);
}
__device__ __forceinline__ float8_e4m3 atomic_add(float8_e4m3* address, float8_e4m3 value) {
  return detail::atomic_update_narrow(address, [value](float8_e4m3 x) {
    return from_float<float8_e4m3>(to_float(x) + to_float(value));
  });
}
__device__ __forceinline__ float8_e5m2 atomic_add(float8_e5m2* address, float8_e5m2 value) {
  return detail::atomic_update_narrow(address, [value](float8_e5m2 x) {
    return from_float<float8_e5m2>(to_float(x) + to_float(value));
  });
}

// ---------------------------------------------------------------- warp reductions

// Butterfly reductions (shfl.sync.bfly) over groups of Width consecutive lanes (a power of
// two, 32 = the whole warp; every lane of the warp takes part). Every lane of a group ends
// with the same, bitwise identical result. For int, unsigned, 64-bit integers, float,
// double, half and bfloat16.
template <int Width = 32, class T>
__device__ __forceinline__ T warp_reduce_sum(T value) {
  static_assert(Width >= 1 && Width <= 32 && (Width & (Width - 1)) == 0,
                "the group width is a power of two up to 32");
  for (int offset = Width / 2; offset > 0; offset /= 2) {
    value = value + __shfl_xor_sync(0xFFFFFFFFu, value, offset, Width);
  }
  return value;
}

template <int Width = 32, class T>
__device__ __forceinline__ T warp_reduce_max(T value) {
  static_assert(Width >= 1 && Width <= 32 && (Width & (Width - 1)) == 0,
                "the group width is a power of two up to 32");
  for (int offset = Width / 2; offset > 0; offset /= 2) {
    value = tilec_cuda::max(value, __shfl_xor_sync(0xFFFFFFFFu, value, offset, Width));
  }
  return value;
}

template <int Width = 32, class T>
__device__ __forceinline__ T warp_reduce_min(T value) {
  static_assert(Width >= 1 && Width <= 32 && (Width & (Width - 1)) == 0,
                "the group width is a power of two up to 32");
  for (int offset = Width / 2; offset > 0; offset /= 2) {
    value = tilec_cuda::min(value, __shfl_xor_sync(0xFFFFFFFFu, value, offset, Width));
  }
  return value;
}

// The value of `value` in lane (this lane XOR lane_mask) of the warp; every lane takes part.
// Types without a native shuffle go through float.
template <class T>
__device__ __forceinline__ T shfl_xor(T value, int lane_mask) {
  return __shfl_xor_sync(0xFFFFFFFFu, value, lane_mask);
}
__device__ __forceinline__ bool shfl_xor(bool value, int lane_mask) {
  return __shfl_xor_sync(0xFFFFFFFFu, static_cast<int>(value), lane_mask) != 0;
}
__device__ __forceinline__ float8_e4m3 shfl_xor(float8_e4m3 value, int lane_mask) {
  return from_float<float8_e4m3>(__shfl_xor_sync(0xFFFFFFFFu, to_float(value), lane_mask));
}
__device__ __forceinline__ float8_e5m2 shfl_xor(float8_e5m2 value, int lane_mask) {
  return from_float<float8_e5m2>(__shfl_xor_sync(0xFFFFFFFFu, to_float(value), lane_mask));
}

}  // namespace tilec_cuda
