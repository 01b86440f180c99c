// tilec HIP device support, part 2: Python-style division, math, atomics and wave shuffles.
// Names and semantics match device/cpu/tilec_cpu.h and device/cuda/math.h, so one code
// generator serves every target.
#pragma once

#include "hip/types.h"

namespace tilec_hip {

// ---------------------------------------------------------------- Python division

// Python's // and % (the quotient rounds toward -inf; the remainder takes the divisor's
// sign). On floats: floor(a / b) and a - floor(a / b) * b.
template <class A, class B, if_integer_t<A> = 0, if_integer_t<B> = 0>
__device__ __forceinline__ typename detail::common_integer<A, B>::type floordiv(A a, B b) {
  using T = typename detail::common_integer<A, B>::type;
  const T x = static_cast<T>(a), y = static_cast<T>(b);
  const T q = x / y;
  if constexpr (detail::is_signed<T>::value) return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
  return q;
}
template <class A, class B, if_integer_t<A> = 0, if_integer_t<B> = 0>
__device__ __forceinline__ typename detail::common_integer<A, B>::type floormod(A a, B b) {
  using T = typename detail::common_integer<A, B>::type;
  const T x = static_cast<T>(a), y = static_cast<T>(b);
  const T r = x % y;
  if constexpr (detail::is_signed<T>::value) return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
  return r;
}
__device__ __forceinline__ float floordiv(float a, float b) { return floorf(a / b); }
__device__ __forceinline__ double floordiv(double a, double b) { return ::floor(a / b); }
__device__ __forceinline__ float floormod(float a, float b) { return a - __fmul_rn(floorf(a / b), b); }
__device__ __forceinline__ double floormod(double a, double b) { return a - __dmul_rn(::floor(a / b), b); }

// ---------------------------------------------------------------- math

// float and double call the device math library (OCML, precise); the narrow types compute
// in float and round the result back once. round() is round-half-to-even (rint).
#define TILEC_HIP_UNARY_MATH(X)                                  \
  X(exp, expf(x), ::exp(x))                                      \
  X(exp2, exp2f(x), ::exp2(x))                                   \
  X(exp10, exp10f(x), ::exp10(x))                                \
  X(log, logf(x), ::log(x))                                      \
  X(log2, log2f(x), ::log2(x))                                   \
  X(log10, log10f(x), ::log10(x))                                \
  X(sqrt, sqrtf(x), ::sqrt(x))                                   \
  X(rsqrt, rsqrtf(x), ::rsqrt(x))                                \
  X(sin, sinf(x), ::sin(x))                                      \
  X(cos, cosf(x), ::cos(x))                                      \
  X(tan, tanf(x), ::tan(x))                                      \
  X(tanh, tanhf(x), ::tanh(x))                                   \
  X(sigmoid, 1.0f / (1.0f + expf(-x)), 1.0 / (1.0 + ::exp(-x))) \
  X(erf, erff(x), ::erf(x))                                      \
  X(abs, fabsf(x), ::fabs(x))                                    \
  X(floor, floorf(x), ::floor(x))                                \
  X(ceil, ceilf(x), ::ceil(x))                                   \
  X(round, rintf(x), ::rint(x))                                  \
  X(trunc, truncf(x), ::trunc(x))

#define TILEC_HIP_DEFINE_UNARY(name, float_expr, double_expr)                 \
  __device__ __forceinline__ float name(float x) { return float_expr; }      \
  __device__ __forceinline__ double name(double x) { return double_expr; }   \
  template <int E, int M, bool Ieee>                                          \
  __device__ __forceinline__ narrow_float<E, M, Ieee> name(narrow_float<E, M, Ieee> x) { \
    return from_float<narrow_float<E, M, Ieee>>(name(to_float(x)));           \
  }
TILEC_HIP_UNARY_MATH(TILEC_HIP_DEFINE_UNARY)
#undef TILEC_HIP_DEFINE_UNARY
#undef TILEC_HIP_UNARY_MATH

// Classification by comparisons, which hold without fast-math.
__device__ __forceinline__ bool isnan(float x) { return x != x; }
__device__ __forceinline__ bool isnan(double x) { return x != x; }
__device__ __forceinline__ bool isinf(float x) { return fabsf(x) == __uint_as_float(0x7F800000u); }
__device__ __forceinline__ bool isinf(double x) { return ::fabs(x) == static_cast<double>(__uint_as_float(0x7F800000u)); }
__device__ __forceinline__ bool isfinite(float x) { return fabsf(x) < __uint_as_float(0x7F800000u); }
__device__ __forceinline__ bool isfinite(double x) { return ::fabs(x) < static_cast<double>(__uint_as_float(0x7F800000u)); }
template <int E, int M, bool Ieee>
__device__ __forceinline__ bool isnan(narrow_float<E, M, Ieee> x) { return isnan(to_float(x)); }
template <int E, int M, bool Ieee>
__device__ __forceinline__ bool isinf(narrow_float<E, M, Ieee> x) { return isinf(to_float(x)); }
template <int E, int M, bool Ieee>
__device__ __forceinline__ bool isfinite(narrow_float<E, M, Ieee> x) { return isfinite(to_float(x)); }

// Float min and max ignore a NaN operand (fmin/fmax), as the CPU backend's do.
#define TILEC_HIP_BINARY_MATH(X)    \
  X(pow, powf(a, b), ::pow(a, b))   \
  X(fmod, fmodf(a, b), ::fmod(a, b)) \
  X(min, fminf(a, b), ::fmin(a, b)) \
  X(max, fmaxf(a, b), ::fmax(a, b))

#define TILEC_HIP_DEFINE_BINARY(name, float_expr, double_expr)                          \
  __device__ __forceinline__ float name(float a, float b) { return float_expr; }        \
  __device__ __forceinline__ double name(double a, double b) { return double_expr; }    \
  template <int E, int M, bool Ieee>                                                     \
  __device__ __forceinline__ narrow_float<E, M, Ieee> name(narrow_float<E, M, Ieee> a,  \
                                                           narrow_float<E, M, Ieee> b) { \
    return from_float<narrow_float<E, M, Ieee>>(name(to_float(a), to_float(b)));         \
  }
TILEC_HIP_BINARY_MATH(TILEC_HIP_DEFINE_BINARY)
#undef TILEC_HIP_DEFINE_BINARY
#undef TILEC_HIP_BINARY_MATH

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
// aligned 32-bit word that holds it; returns the previous value.
template <class T, class F>
__device__ __forceinline__ T atomic_update_narrow(T* address, F update) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2, "1- or 2-byte objects");
  const uintptr_t at = reinterpret_cast<uintptr_t>(address);
  unsigned* word = reinterpret_cast<unsigned*>(at & ~uintptr_t{3});
  const unsigned shift = static_cast<unsigned>(at & 3u) * 8u;
  const unsigned mask = (sizeof(T) == 1 ? 0xFFu : 0xFFFFu) << shift;
  unsigned old = __hip_atomic_load(word, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  unsigned assumed;
  T previous;
  do {
    assumed = old;
    const unsigned short piece = static_cast<unsigned short>((assumed & mask) >> shift);
    __builtin_memcpy(&previous, &piece, sizeof(T));  // little-endian: the low bytes
    const T next = update(previous);
    unsigned short next_bits = 0;
    __builtin_memcpy(&next_bits, &next, sizeof(T));
    old = atomicCAS(word, assumed, (assumed & ~mask) | ((static_cast<unsigned>(next_bits) << shift) & mask));
  } while (old != assumed);
  return previous;
}

}  // namespace detail

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

}  // namespace tilec_hip
