// tilec GPU device support shared by device/cuda/ and device/hip/, part 2: Python-style
// division and the math functions, with the names and semantics of device/cpu/tilec_cpu.h,
// so one code generator serves every target. Included by cuda/math.h and hip/math.h into
// their namespace (gpu/types.h says how).
#pragma once

#include "gpu/types.h"

namespace TILEC_GPU_NAMESPACE {

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
__device__ __forceinline__ float floormod(float a, float b) { return a - __fmul_rn(floorf(a / b), b); }
__device__ __forceinline__ double floormod(double a, double b) { return a - __dmul_rn(::floor(a / b), b); }

// ---------------------------------------------------------------- math

// float and double call the device's precise math library (CUDA's libdevice, AMD's OCML; no
// fast-math intrinsics such as __expf); half, bfloat16 and fp8 compute in float and round the
// result back once. round() is round-half-to-even (rint), not roundf's half-away-from-zero.
#define TILEC_GPU_UNARY_MATH(X)                                    \
  X(exp, expf(x), ::exp(x))                                        \
  X(exp2, exp2f(x), ::exp2(x))                                     \
  X(exp10, exp10f(x), ::exp10(x))                                  \
  X(log, logf(x), ::log(x))                                        \
  X(log2, log2f(x), ::log2(x))                                     \
  X(log10, log10f(x), ::log10(x))                                  \
  X(sqrt, sqrtf(x), ::sqrt(x))                                     \
  X(rsqrt, rsqrtf(x), ::rsqrt(x))                                  \
  X(sin, sinf(x), ::sin(x))                                        \
  X(cos, cosf(x), ::cos(x))                                        \
  X(tan, tanf(x), ::tan(x))                                        \
  X(tanh, tanhf(x), ::tanh(x))                                     \
  X(sigmoid, 1.0f / (1.0f + expf(-x)), 1.0 / (1.0 + ::exp(-x)))   \
  X(erf, erff(x), ::erf(x))                                        \
  X(abs, fabsf(x), ::fabs(x))                                      \
  X(floor, floorf(x), ::floor(x))                                  \
  X(ceil, ceilf(x), ::ceil(x))                                     \
  X(round, rintf(x), ::rint(x))                                    \
  X(trunc, truncf(x), ::trunc(x))

#define TILEC_GPU_DEFINE_UNARY(name, float_expr, double_expr)               \
  __device__ __forceinline__ float name(float x) { return float_expr; }     \
  __device__ __forceinline__ double name(double x) { return double_expr; }  \
  template <class T, if_narrow_float_t<T> = 0>                              \
  __device__ __forceinline__ T name(T x) {                                  \
    return from_float<T>(name(to_float(x)));                                \
  }
TILEC_GPU_UNARY_MATH(TILEC_GPU_DEFINE_UNARY)
#undef TILEC_GPU_DEFINE_UNARY
#undef TILEC_GPU_UNARY_MATH

// Classification by comparisons, which hold without fast-math.
#define TILEC_GPU_DEFINE_CLASSIFY(T)                                                             \
  __device__ __forceinline__ bool isnan(T x) { return x != x; }                                 \
  __device__ __forceinline__ bool isinf(T x) { return abs(x) == T(__int_as_float(0x7F800000)); } \
  __device__ __forceinline__ bool isfinite(T x) { return abs(x) < T(__int_as_float(0x7F800000)); }
TILEC_GPU_DEFINE_CLASSIFY(float)
TILEC_GPU_DEFINE_CLASSIFY(double)
#undef TILEC_GPU_DEFINE_CLASSIFY

template <class T, if_narrow_float_t<T> = 0>
__device__ __forceinline__ bool isnan(T x) { return isnan(to_float(x)); }
template <class T, if_narrow_float_t<T> = 0>
__device__ __forceinline__ bool isinf(T x) { return isinf(to_float(x)); }
template <class T, if_narrow_float_t<T> = 0>
__device__ __forceinline__ bool isfinite(T x) { return isfinite(to_float(x)); }

// Float min and max ignore a NaN operand (fmin/fmax), as the CPU backend's do.
#define TILEC_GPU_BINARY_MATH(X)        \
  X(pow, powf(a, b), ::pow(a, b))       \
  X(fmod, fmodf(a, b), ::fmod(a, b))    \
  X(min, fminf(a, b), ::fmin(a, b))     \
  X(max, fmaxf(a, b), ::fmax(a, b))

#define TILEC_GPU_DEFINE_BINARY(name, float_expr, double_expr)                        \
  __device__ __forceinline__ float name(float a, float b) { return float_expr; }      \
  __device__ __forceinline__ double name(double a, double b) { return double_expr; }  \
  template <class T, if_narrow_float_t<T> = 0>                                        \
  __device__ __forceinline__ T name(T a, T b) {                                       \
    return from_float<T>(name(to_float(a), to_float(b)));                             \
  }
TILEC_GPU_BINARY_MATH(TILEC_GPU_DEFINE_BINARY)
#undef TILEC_GPU_DEFINE_BINARY
#undef TILEC_GPU_BINARY_MATH

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

// The low bytes of `from` as the low bytes of a To (little-endian; the rest zero), copied
// byte by byte: NVRTC and hipRTC share no memcpy.
template <class To, class From>
__device__ __forceinline__ To low_bytes_as(const From& from) {
  To to{};
  const unsigned char* src = reinterpret_cast<const unsigned char*>(&from);
  unsigned char* dst = reinterpret_cast<unsigned char*>(&to);
  for (unsigned i = 0; i < (sizeof(To) < sizeof(From) ? sizeof(To) : sizeof(From)); ++i) dst[i] = src[i];
  return to;
}

// An atomic read-modify-write of a 1- or 2-byte object through a compare-and-swap of the
// aligned 32-bit word that holds it; returns the previous value. The first read may be stale:
// the compare-and-swap then fails and hands back the word's value.
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
    previous = low_bytes_as<T>(static_cast<unsigned short>((assumed & mask) >> shift));
    const unsigned next_bits = low_bytes_as<unsigned short>(update(previous));
    old = atomicCAS(word, assumed, (assumed & ~mask) | ((next_bits << shift) & mask));
  } while (old != assumed);
  return previous;
}

}  // namespace detail

// T.reinterpret: the bits of `from` read as To, a type of its size.
template <class To, class From>
__device__ __forceinline__ To reinterpret(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "reinterpret between types of different sizes");
  return detail::low_bytes_as<To>(from);
}

}  // namespace TILEC_GPU_NAMESPACE
