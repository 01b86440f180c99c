// tilec HIP device support, part 1: fixed-width integers, the narrow float types and their
// conversions to and from float. C++17, for hipcc and hipRTC (clang), gfx906 and later.
//
// The narrow types are their bits in a struct, as on the CPU backend (device/cpu/tilec_cpu.h):
// generated code computes on them in float (to_float) and rounds back once (from_float), so
// results match the CPU backend's. half converts with the hardware (_Float16, whose
// conversion from float rounds to nearest even); bfloat16 and fp8 round in software.
#pragma once

#define TILEC_GPU_NAMESPACE tilec_hip

#if defined(__HIPCC_RTC__)
// hipRTC has no C library headers and declares only (u)int32_t and (u)int64_t (as long long)
// itself: the rest of <cstdint>'s names that generated code uses.
typedef signed char int8_t;
typedef short int16_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;
#ifndef INT8_MIN
#define INT8_MIN (-128)
#define INT16_MIN (-32767 - 1)
#define INT32_MIN (-2147483647 - 1)
#define INT64_MIN (-9223372036854775807LL - 1)
#define INT8_MAX (127)
#define INT16_MAX (32767)
#define INT32_MAX (2147483647)
#define INT64_MAX (9223372036854775807LL)
#define UINT8_MAX (255)
#define UINT16_MAX (65535)
#define UINT32_MAX (4294967295U)
#define UINT64_MAX (18446744073709551615ULL)
#endif
#else
#include <hip/hip_runtime.h>
#include <cstdint>
#endif

#include "gpu/types.h"

namespace tilec_hip {

// A float format narrower than float, stored as its bits: E exponent bits, M mantissa bits;
// IEEE-like ones have infinities, the others (OCP "fn": e4m3fn) overflow to their one NaN.
template <int E, int M, bool Ieee>
struct narrow_float {
  using Bits = typename detail::conditional<(1 + E + M > 8), uint16_t, uint8_t>::type;
  Bits bits;
  // Exact (to_float below): generated code writes float(x).
  __device__ __forceinline__ explicit operator float() const;
};

using half = narrow_float<5, 10, true>;
using bfloat16 = narrow_float<8, 7, true>;
using float8_e4m3 = narrow_float<4, 3, false>;  // OCP e4m3fn: max 448, no infinities
using float8_e5m2 = narrow_float<5, 2, true>;
static_assert(sizeof(half) == 2 && sizeof(bfloat16) == 2 && sizeof(float8_e4m3) == 1, "narrow floats are bits");

namespace detail {
template <int E, int M, bool Ieee>
struct is_narrow_float<narrow_float<E, M, Ieee>> {
  static constexpr bool value = true;
};
}  // namespace detail

template <class T>
__device__ __forceinline__ T from_bits(unsigned bits) {
  T x;
  x.bits = static_cast<typename T::Bits>(bits);
  return x;
}

namespace detail {

// Exact: every value of a narrow format is a float.
template <int E, int M, bool Ieee>
__device__ __forceinline__ float widen(unsigned bits) {
  constexpr unsigned kExpAll = (1u << E) - 1, kMant = (1u << M) - 1, kSign = 1u << (E + M);
  constexpr int kBias = (1 << (E - 1)) - 1;
  const unsigned sign = (bits & kSign) ? 0x80000000u : 0u;
  const unsigned biased = (bits >> M) & kExpAll, mant = bits & kMant;
  unsigned out;
  if (E == 8) {
    out = (bits & ~kSign) << (23 - M);
  } else if (biased == kExpAll && (Ieee || mant == kMant)) {
    out = 0x7F800000u | (Ieee ? mant << (23 - M) : 0x400000u);
  } else if (biased != 0) {
    out = ((biased - kBias + 127) << 23) | (mant << (23 - M));
  } else if (mant == 0) {
    out = 0;
  } else {  // a subnormal of the format is a normal float: mant * 2^(1 - bias - M)
    const int top = 31 - __builtin_clz(mant);
    out = (static_cast<unsigned>(1 - kBias - M + top + 127) << 23) | ((mant << (23 - top)) & 0x7FFFFFu);
  }
  return __uint_as_float(sign | out);
}

// The format value nearest to float `f`, ties to even; overflow gives inf (IEEE-like) or NaN.
template <int E, int M, bool Ieee>
__device__ __forceinline__ unsigned round_float(float f) {
  constexpr unsigned kExpAll = (1u << E) - 1, kMant = (1u << M) - 1;
  constexpr int kBias = (1 << (E - 1)) - 1;
  constexpr unsigned kNaN = (kExpAll << M) | (Ieee ? 1u << (M - 1) : kMant);
  constexpr unsigned kOverflow = Ieee ? kExpAll << M : kNaN;
  constexpr int kMaxBiased = Ieee ? kExpAll - 1 : kExpAll;
  const unsigned bits = __float_as_uint(f);
  const unsigned sign = (bits >> 31) << (E + M);
  const int fbiased = static_cast<int>((bits >> 23) & 0xFFu);
  const unsigned fmant = bits & 0x7FFFFFu;
  if (fbiased == 0xFF) return sign | (fmant ? kNaN : kOverflow);
  // The value is sig * 2^exp with sig < 2^24.
  unsigned sig = fbiased ? fmant | 0x800000u : fmant;
  int exp = (fbiased ? fbiased : 1) - 127 - 23;
  if (sig == 0) return sign;
  const int lead = exp + 31 - __builtin_clz(sig);
  int quantum = (lead > 1 - kBias ? lead : 1 - kBias) - M;  // weight of the format's last bit
  unsigned r;
  if (quantum <= exp) {
    r = sig << (exp - quantum);
  } else if (quantum - exp >= 32) {
    r = 0;
  } else {
    const int shift = quantum - exp;
    r = sig >> shift;
    const unsigned rest = sig & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (r & 1))) ++r;
  }
  if (r >> (M + 1)) {
    r >>= 1;
    ++quantum;
  }
  if (r < (1u << M)) return sign | r;
  const int biased = quantum + M + kBias;
  if (biased > kMaxBiased) return sign | kOverflow;
  return sign | (static_cast<unsigned>(biased) << M) | (r & kMant);
}

// `d` as a float rounded to odd (toward zero, the last bit set when inexact): a float rounded
// this way and then to a format of at most 22 mantissa bits is rounded once from `d`.
__device__ __forceinline__ float to_odd_float(double d) {
  const float t = __double2float_rz(d);
  if (static_cast<double>(t) == d || t != t) return t;
  return __uint_as_float(__float_as_uint(t) | 1u);
}

// The same for an integer, through a double rounded to odd.
template <class I>
__device__ __forceinline__ double to_odd_double(I i) {
  if constexpr (sizeof(I) < 8) {
    return static_cast<double>(i);  // exact
  } else if constexpr (is_signed<I>::value) {
    const double t = __ll2double_rz(static_cast<long long>(i));
    return static_cast<long long>(t) == static_cast<long long>(i) || t >= 9.2233720368547758e18
               ? t : __longlong_as_double(__double_as_longlong(t) | 1);
  } else {
    const double t = __ull2double_rz(static_cast<unsigned long long>(i));
    return t >= 1.8446744073709552e19 || static_cast<unsigned long long>(t) == static_cast<unsigned long long>(i)
               ? t : __longlong_as_double(__double_as_longlong(t) | 1);
  }
}

}  // namespace detail

// ---------------------------------------------------------------- to float (exact)

template <int E, int M, bool Ieee>
__device__ __forceinline__ float to_float(narrow_float<E, M, Ieee> x) {
  if constexpr (E == 5 && M == 10) return static_cast<float>(__builtin_bit_cast(_Float16, x.bits));
  return detail::widen<E, M, Ieee>(x.bits);
}

template <int E, int M, bool Ieee>
__device__ __forceinline__ narrow_float<E, M, Ieee>::operator float() const {
  return to_float(*this);
}

// ---------------------------------------------------------------- from float (RNE)
// Round to nearest, ties to even, once, from float, double or an integer, with the CPU
// backend's rules: overflow gives inf in half, bfloat16 and e5m2 and NaN in e4m3.
namespace detail {
template <int E, int M, bool Ieee>
struct narrow<narrow_float<E, M, Ieee>> {
  using T = narrow_float<E, M, Ieee>;
  static __device__ __forceinline__ T from(float f) {
    if constexpr (E == 5 && M == 10) {
      return from_bits<T>(__builtin_bit_cast(uint16_t, static_cast<_Float16>(f)));
    } else {
      return from_bits<T>(round_float<E, M, Ieee>(f));
    }
  }
  static __device__ __forceinline__ T from(double d) { return from(to_odd_float(d)); }
  template <class I>
  static __device__ __forceinline__ T from_integer(I i) {
    return from(static_cast<double>(to_odd_double(i)));
  }
};
}  // namespace detail

}  // namespace tilec_hip
