// tilec HIP device support, part 2: Python-style division, math, atomics and wave shuffles.
// Names and semantics match device/cpu/tilec_cpu.h and device/cuda/math.h, so one code
// generator serves every target.
#pragma once

#include "hip/types.h"
#include "gpu/math.h"

namespace tilec_hip {

// ---------------------------------------------------------------- atomics

// Returns the previous value, like atomicAdd (relaxed, device scope): native for 32- and
// 64-bit integers, float and double; 8- and 16-bit integers and the narrow floats through a
// compare-and-swap loop.
template <class T, if_integer_t<T> = 0>
__device__ __forceinline__ T atomic_add(T* address, typename detail::identity<T>::type value) {
  if constexpr (sizeof(T) == 4) {
    return static_cast<T>(atomicAdd(reinterpret_cast<unsigned*>(address), static_cast<unsigned>(value)));
  } else if constexpr (sizeof(T) == 8) {
    return static_cast<T>(atomicAdd(reinterpret_cast<unsigned long long*>(address),
                                    static_cast<unsigned long long>(value)));
  } else {
    return detail::atomic_update_narrow(address, [value](T x) { return static_cast<T>(x + value); });
  }
}
__device__ __forceinline__ float atomic_add(float* address, float value) { return atomicAdd(address, value); }
__device__ __forceinline__ double atomic_add(double* address, double value) { return atomicAdd(address, value); }
template <int E, int M, bool Ieee>
__device__ __forceinline__ narrow_float<E, M, Ieee> atomic_add(narrow_float<E, M, Ieee>* address,
                                                               narrow_float<E, M, Ieee> value) {
  using T = narrow_float<E, M, Ieee>;
  return detail::atomic_update_narrow(address, [value](T x) { return from_float<T>(to_float(x) + to_float(value)); });
}

// ---------------------------------------------------------------- wave shuffles

// The value of `value` in lane (this lane XOR lane_mask) of the wave (64 lanes on gfx9);
// every lane takes part. Types of other sizes than 4 and 8 bytes go through float.
template <class T>
__device__ __forceinline__ T shfl_xor(T value, int lane_mask) {
  if constexpr (sizeof(T) == 4 || sizeof(T) == 8) {
    return __shfl_xor(value, lane_mask, warpSize);
  } else if constexpr (detail::is_integral<T>::value) {
    return static_cast<T>(__shfl_xor(static_cast<int>(value), lane_mask, warpSize));
  } else {
    return from_float<T>(__shfl_xor(to_float(value), lane_mask, warpSize));
  }
}
__device__ __forceinline__ bool shfl_xor(bool value, int lane_mask) {
  return __shfl_xor(static_cast<int>(value), lane_mask, warpSize) != 0;
}

// ---------------------------------------------------------------- FP8 pairs

// Two FP8 values (in[0], in[1], bytes) as floats, exactly: cuda/types.h converts them in one
// instruction; here one by one, as to_float does.
template <class Fp8>
__device__ __forceinline__ void fp8_pair_to_float(float* out, const void* in) {
  const uint8_t* bytes = static_cast<const uint8_t*>(in);
  out[0] = to_float(reinterpret<Fp8>(bytes[0]));
  out[1] = to_float(reinterpret<Fp8>(bytes[1]));
}
__device__ __forceinline__ void e4m3_pair_to_float(float* out, const void* in) {
  fp8_pair_to_float<float8_e4m3>(out, in);
}
__device__ __forceinline__ void e5m2_pair_to_float(float* out, const void* in) {
  fp8_pair_to_float<float8_e5m2>(out, in);
}

}  // namespace tilec_hip
