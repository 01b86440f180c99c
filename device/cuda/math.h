// tilec CUDA device support, part 2: Python-style division, math, atomics and warp reductions.
// Names and semantics match device/cpu/tilec_cpu.h, so one code generator serves both targets.
#pragma once

#include "cuda/types.h"

namespace tilec_cuda {

// ---------------------------------------------------------------- Python division

// Python's // and % (the quotient rounds toward -inf; the remainder takes the divisor's
// sign). On floats, TVM's definitions: floor(a / b) and a - floor(a / b) * b.
template <class A, class B, if_integer_t<A> = 0, if_integer_t<B> = 0>
__device__ __forceinline__ typename detail::common_integer<A, B>::type floordiv(A a, B b) {
  using T = typename detail::common_integer<A, B>::type;
  const T x = static_cast<T>(a), y = static_cast<T>(b);
  const T q = static_cast<T>(x / y);
  if constexpr (detail::is_signed<T>::value) {
    if (x % y != 0 && ((x < 0) != (y < 0))) return static_cast<T>(q - 1);
  }
  return q;
}

template <class A, class B, if_integer_t<A> = 0, if_integer_t<B> = 0>
__device__ __forceinline__ typename detail::common_integer<A, B>::type floormod(A a, B b) {
  using T = typename detail::common_integer<A, B>::type;
  const T x = static_cast<T>(a), y = static_cast<T>(b);
  const T r = static_cast<T>(x % y);
  if constexpr (detail::is_signed<T>::value) {
    if (r != 0 && ((r < 0) != (y < 0))) return static_cast<T>(r + y);
  }
  return r;
}

// The product is rounded on its own (__fmul_rn is never fused into an fma), as written.
__device__ __forceinline__ float floordiv(float a, float b) { return floorf(a / b); }
__device__ __forceinline__ double floordiv(double a, double b) { return ::floor(a / b); }
__device__ __forceinline__ float floormod(float a, float b) {
  return a - __fmul_rn(floorf(a / b), b);
}
__device__ __forceinline__ double floormod(double a, double b) {
  return a - __dmul_rn(::floor(a / b), b);
}

// ---------------------------------------------------------------- math

// float and double call CUDA's precise math library (libdevice; no --use_fast_math
// intrinsics such as __expf); half, bfloat16 and fp8 compute in float and round the result
// back once. round() is round-half-to-even (rint), not roundf's half-away-from-zero.
#define TILEC_CUDA_UNARY_MATH(X)                                    \
  X(exp, expf(x), ::exp(x))                                         \
  X(exp2, exp2f(x), ::exp2(x))                                      \
  X(exp10, exp10f(x), ::exp10(x))                                   \
  X(log, logf(x), ::log(x))                                         \
  X(log2, log2f(x), ::log2(x))                                      \
  X(log10, log10f(x), ::log10(x))                                   \
  X(sqrt, sqrtf(x), ::sqrt(x))                                      \
  X(rsqrt, rsqrtf(x), ::rsqrt(x))                                   \
  X(sin, sinf(x), ::sin(x))                                         \
  X(cos, cosf(x), ::cos(x))                                         \
  X(tan, tanf(x), ::tan(x))                                         \
  X(tanh, tanhf(x), ::tanh(x))                                      \
  X(sigmoid, 1.0f / (1.0f + expf(-x)), 1.0 / (1.0 + ::exp(-x)))    \
  X(erf, erff(x), ::erf(x))                                         \
  X(abs, fabsf(x), ::fabs(x))                                       \
  X(floor, floorf(x), ::floor(x))                                   \
  X(ceil, ceilf(x), ::ceil(x))                                      \
  X(round, rintf(x), ::rint(x))                                     \
  X(trunc, truncf(x), ::trunc(x))

#define TILEC_CUDA_DEFINE_UNARY_NARROW(name, T) \
  __device__ __forceinline__ T name(T x) { return from_float<T>(name(to_float(x))); }

#define TILEC_CUDA_DEFINE_UNARY(name, float_expr, double_expr) \
  __device__ __forceinline__ float name(float x) { return float_expr; }   \
  __device__ __forceinline__ double name(double x) { return double_expr; } \
  TILEC_CUDA_DEFINE_UNARY_NARROW(name, half)                               \
  TILEC_CUDA_DEFINE_UNARY_NARROW(name, bfloat16)                           \
  TILEC_CUDA_DEFINE_UNARY_NARROW(name, float8_e4m3)                        \
  TILEC_CUDA_DEFINE_UNARY_NARROW(name, float8_e5m2)
TILEC_CUDA_UNARY_MATH(TILEC_CUDA_DEFINE_UNARY)
#undef TILEC_CUDA_DEFINE_UNARY
#undef TILEC_CUDA_DEFINE_UNARY_NARROW
#undef TILEC_CUDA_UNARY_MATH

// Classification by comparisons, which hold without fast-math.
#define TILEC_CUDA_DEFINE_CLASSIFY(T)                                                          \
  __device__ __forceinline__ bool isnan(T x) { return x != x; }                               \
  __device__ __forceinline__ bool isinf(T x) { return abs(x) == T(__int_as_float(0x7F800000)); } \
  __device__ __forceinline__ bool isfinite(T x) { return abs(x) < T(__int_as_float(0x7F800000)); }
TILEC_CUDA_DEFINE_CLASSIFY(float)
TILEC_CUDA_DEFINE_CLASSIFY(double)
#undef TILEC_CUDA_DEFINE_CLASSIFY

#define TILEC_CUDA_DEFINE_CLASSIFY_NARROW(T)                                           \
  __device__ __forceinline__ bool isnan(T x) { return isnan(to_float(x)); }          \
  __device__ __forceinline__ bool isinf(T x) { return isinf(to_float(x)); }          \
  __device__ __forceinline__ bool isfinite(T x) { return isfinite(to_float(x)); }
TILEC_CUDA_DEFINE_CLASSIFY_NARROW(half)
TILEC_CUDA_DEFINE_CLASSIFY_NARROW(bfloat16)
TILEC_CUDA_DEFINE_CLASSIFY_NARROW(float8_e4m3)
TILEC_CUDA_DEFINE_CLASSIFY_NARROW(float8_e5m2)
#undef TILEC_CUDA_DEFINE_CLASSIFY_NARROW

// Float min and max ignore a NaN operand (fmin/fmax), as the CPU backend's do.
#define TILEC_CUDA_BINARY_MATH(X)                  \
  X(pow, powf(a, b), ::pow(a, b))                  \
  X(fmod, fmodf(a, b), ::fmod(a, b))               \
  X(min, fminf(a, b), ::fmin(a, b))                \
  X(max, fmaxf(a, b), ::fmax(a, b))

#define TILEC_CUDA_DEFINE_BINARY_NARROW(name, T)                   \
  __device__ __forceinline__ T name(T a, T b) {                    \
    return from_float<T>(name(to_float(a), to_float(b)));          \
  }
#define TILEC_CUDA_DEFINE_BINARY(name, float_expr, double_expr)              \
  __device__ __forceinline__ float name(float a, float b) { return float_expr; }     \
  __device__ __forceinline__ double name(double a, double b) { return double_expr; } \
  TILEC_CUDA_DEFINE_BINARY_NARROW(name, half)                                         \
  TILEC_CUDA_DEFINE_BINARY_NARROW(name, bfloat16)                                     \
  TILEC_CUDA_DEFINE_BINARY_NARROW(name, float8_e4m3)                                  \
  TILEC_CUDA_DEFINE_BINARY_NARROW(name, float8_e5m2)
TILEC_CUDA_BINARY_MATH(TILEC_CUDA_DEFINE_BINARY)
#undef TILEC_CUDA_DEFINE_BINARY
#undef TILEC_CUDA_DEFINE_BINARY_NARROW
#undef TILEC_CUDA_BINARY_MATH

template <class T, if_integer_t<T> = 0>
__device__ __forceinline__ T abs(T x) {
  if constexpr (detail::is_signed<T>::value) return x < 0 ? static_cast<T>(-x) : x;
  return x;
}
template <class T, if_integer_t<T> = 0>
__device__ __forceinline__ T min(T a, T b) {
  return b < a ? b : a;
}
template <class T, if_integer_t<T> = 0>
__device__ __forceinline__ T max(T a, T b) {
  return a < b ? b : a;
}

// ---------------------------------------------------------------- atomics

namespace detail {

// An atomic read-modify-write of a 1- or 2-byte object through a compare-and-swap of the
// aligned 32-bit word that holds it (atom.cas.b32); returns the previous value.
template <class T, class F>
__device__ __forceinline__ T atomic_update_narrow(T* address, F update) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2, "1- or 2-byte objects");
  const uintptr_t at = reinterpret_cast<uintptr_t>(address);
  unsigned* word = reinterpret_cast<unsigned*>(at & ~uintptr_t{3});
  const unsigned shift = static_cast<unsigned>(at & 3u) * 8u;
  const unsigned mask = (sizeof(T) == 1 ? 0xFFu : 0xFFFFu) << shift;
  unsigned old = *reinterpret_cast<volatile unsigned*>(word);
  unsigned assumed;
  T previous;
  do {
    assumed = old;
    const unsigned short piece = static_cast<unsigned short>((assumed & mask) >> shift);
    memcpy(&previous, &piece, sizeof(T));  // little-endian: the low bytes
    const T next = update(previous);
    unsigned short next_bits = 0;
    memcpy(&next_bits, &next, sizeof(T));
    old = atomicCAS(word, assumed, (assumed & ~mask) | ((static_cast<unsigned>(next_bits) << shift) & mask));
  } while (old != assumed);
  return previous;
}

}  // namespace detail

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
