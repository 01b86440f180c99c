// tilec CUDA device support, part 1: fixed-width integers, the narrow float types and their
// conversions to and from float. C++17, for NVRTC (and nvcc), sm_80 and later.
#pragma once

#define TILEC_GPU_NAMESPACE tilec_cuda

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

// NVRTC has no C library headers: generated code (and the C-family printer) expects <cstdint>'s
// names, so they are declared here with the types glibc gives them on LP64, which keeps them
// compatible with a later #include <cstdint> under nvcc.
#if defined(__CUDACC_RTC__)
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;
#ifndef INT8_MIN
#define INT8_MIN (-128)
#define INT16_MIN (-32767 - 1)
#define INT32_MIN (-2147483647 - 1)
#define INT64_MIN (-9223372036854775807L - 1)
#define INT8_MAX (127)
#define INT16_MAX (32767)
#define INT32_MAX (2147483647)
#define INT64_MAX (9223372036854775807L)
#define UINT8_MAX (255)
#define UINT16_MAX (65535)
#define UINT32_MAX (4294967295U)
#define UINT64_MAX (18446744073709551615UL)
#define INT8_C(c) c
#define INT16_C(c) c
#define INT32_C(c) c
#define INT64_C(c) c##L
#define UINT8_C(c) c
#define UINT16_C(c) c
#define UINT32_C(c) c##U
#define UINT64_C(c) c##UL
#endif
#else
#include <cstdint>
#endif

#include "gpu/types.h"

namespace tilec_cuda {

using half = __half;
using bfloat16 = __nv_bfloat16;
using float8_e4m3 = __nv_fp8_e4m3;  // OCP e4m3fn: max 448, no infinities, NaN = S.1111.111
using float8_e5m2 = __nv_fp8_e5m2;  // IEEE-like: max 57344, infinities

namespace detail {
template <>
struct is_narrow_float<half> {
  static constexpr bool value = true;
};
template <>
struct is_narrow_float<bfloat16> {
  static constexpr bool value = true;
};
template <>
struct is_narrow_float<float8_e4m3> {
  static constexpr bool value = true;
};
template <>
struct is_narrow_float<float8_e5m2> {
  static constexpr bool value = true;
};
}  // namespace detail

// ---------------------------------------------------------------- bits

__device__ __forceinline__ uint16_t bits_of(half x) { return __half_as_ushort(x); }
__device__ __forceinline__ uint16_t bits_of(bfloat16 x) { return __bfloat16_as_ushort(x); }
__device__ __forceinline__ uint8_t bits_of(float8_e4m3 x) { return x.__x; }
__device__ __forceinline__ uint8_t bits_of(float8_e5m2 x) { return x.__x; }

template <class T>
__device__ __forceinline__ T from_bits(unsigned bits);
template <>
__device__ __forceinline__ half from_bits<half>(unsigned bits) {
  return __ushort_as_half(static_cast<unsigned short>(bits));
}
template <>
__device__ __forceinline__ bfloat16 from_bits<bfloat16>(unsigned bits) {
  return __ushort_as_bfloat16(static_cast<unsigned short>(bits));
}
template <>
__device__ __forceinline__ float8_e4m3 from_bits<float8_e4m3>(unsigned bits) {
  float8_e4m3 x;
  x.__x = static_cast<__nv_fp8_storage_t>(bits);
  return x;
}
template <>
__device__ __forceinline__ float8_e5m2 from_bits<float8_e5m2>(unsigned bits) {
  float8_e5m2 x;
  x.__x = static_cast<__nv_fp8_storage_t>(bits);
  return x;
}

// ---------------------------------------------------------------- to float (exact)

__device__ __forceinline__ float to_float(half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_float(float8_e4m3 x) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(x.__x, __NV_E4M3)));
}
__device__ __forceinline__ float to_float(float8_e5m2 x) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(x.__x, __NV_E5M2)));
}

// ---------------------------------------------------------------- from float (RNE)

// Round to nearest, ties to even, once, from float, double or an integer, with the CPU
// backend's rules (device/cpu/tilec_cpu.h): overflow gives inf in half, bfloat16 and e5m2 and
// NaN in e4m3 (PyTorch's float8_e4m3fn); a NaN stays NaN (its payload is not kept).
//
// __nv_fp8_e4m3(float) and __nv_fp8_e5m2(float) saturate to the largest finite value instead
// (they convert with __NV_SATFINITE, the only mode of the hardware cvt.rn.satfinite.e4m3x2.f32),
// so the fp8 conversions below handle NaN, overflow and underflow to zero themselves and pass
// only the values inside the finite range to the saturating conversion, where it rounds
// correctly. Generated code must build fp8 values with from_float, not the constructors.
namespace detail {

template <>
struct narrow<half> {
  static __device__ __forceinline__ half from(float f) { return __float2half_rn(f); }
  static __device__ __forceinline__ half from(double d) { return __double2half(d); }
  // Integers of up to 53 bits are exact in double; larger ones overflow half either way.
  template <class I>
  static __device__ __forceinline__ half from_integer(I i) {
    return __double2half(static_cast<double>(i));
  }
};

template <>
struct narrow<bfloat16> {
  static __device__ __forceinline__ bfloat16 from(float f) { return __float2bfloat16_rn(f); }
  static __device__ __forceinline__ bfloat16 from(double d) { return __double2bfloat16(d); }
  template <class I>
  static __device__ __forceinline__ bfloat16 from_integer(I i) {
    if constexpr (sizeof(I) == 8 && is_signed<I>::value) {
      return __ll2bfloat16_rn(static_cast<long long>(i));
    } else if constexpr (sizeof(I) == 8) {
      return __ull2bfloat16_rn(static_cast<unsigned long long>(i));
    } else {
      return __double2bfloat16(static_cast<double>(i));  // exact in double
    }
  }
};

// The fp8 thresholds: e4m3 overflows above 464, halfway between its largest value 448 and the
// next step 480 (464 itself ties to the even 448); e5m2 overflows from 61440, halfway between
// 57344 and 65536 (the tie goes to the even infinity). Magnitudes up to half the smallest
// subnormal (2^-10, 2^-17) round to a zero of the input's sign.
template <>
struct narrow<float8_e4m3> {
  static __device__ __forceinline__ float8_e4m3 from(float f) {
    const unsigned sign = (__float_as_uint(f) >> 24) & 0x80u;
    const float magnitude = fabsf(f);
    if (!(magnitude <= 464.0f)) return from_bits<float8_e4m3>(sign | 0x7Fu);  // NaN, overflow
    if (magnitude <= 0x1p-10f) return from_bits<float8_e4m3>(sign);
    return from_bits<float8_e4m3>(__nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E4M3));
  }
  static __device__ __forceinline__ float8_e4m3 from(double d) {
    const unsigned sign = static_cast<unsigned>(__double2hiint(d) >> 24) & 0x80u;
    const double magnitude = fabs(d);
    if (!(magnitude <= 464.0)) return from_bits<float8_e4m3>(sign | 0x7Fu);
    if (magnitude <= 0x1p-10) return from_bits<float8_e4m3>(sign);
    return from_bits<float8_e4m3>(__nv_cvt_double_to_fp8(d, __NV_SATFINITE, __NV_E4M3));
  }
  template <class I>
  static __device__ __forceinline__ float8_e4m3 from_integer(I i) {
    return from(static_cast<double>(i));  // beyond 2^53 it is NaN either way
  }
};

template <>
struct narrow<float8_e5m2> {
  static __device__ __forceinline__ float8_e5m2 from(float f) {
    const unsigned sign = (__float_as_uint(f) >> 24) & 0x80u;
    const float magnitude = fabsf(f);
    if (magnitude != magnitude) return from_bits<float8_e5m2>(sign | 0x7Eu);  // quiet NaN
    if (magnitude >= 61440.0f) return from_bits<float8_e5m2>(sign | 0x7Cu);   // inf
    if (magnitude <= 0x1p-17f) return from_bits<float8_e5m2>(sign);
    return from_bits<float8_e5m2>(__nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E5M2));
  }
  static __device__ __forceinline__ float8_e5m2 from(double d) {
    const unsigned sign = static_cast<unsigned>(__double2hiint(d) >> 24) & 0x80u;
    const double magnitude = fabs(d);
    if (magnitude != magnitude) return from_bits<float8_e5m2>(sign | 0x7Eu);
    if (magnitude >= 61440.0) return from_bits<float8_e5m2>(sign | 0x7Cu);
    if (magnitude <= 0x1p-17) return from_bits<float8_e5m2>(sign);
    return from_bits<float8_e5m2>(__nv_cvt_double_to_fp8(d, __NV_SATFINITE, __NV_E5M2));
  }
  template <class I>
  static __device__ __forceinline__ float8_e5m2 from_integer(I i) {
    return from(static_cast<double>(i));
  }
};

}  // namespace detail

// A pair in one conversion (cvt.rn.bf16x2.f32, cvt.rn.f16x2.f32), rounding as from_float does;
// `at` is 4-byte aligned.
__device__ __forceinline__ void from_float_pair(bfloat16* at, float a, float b) {
  *reinterpret_cast<__nv_bfloat162*>(at) = __floats2bfloat162_rn(a, b);
}
__device__ __forceinline__ void from_float_pair(half* at, float a, float b) {
  *reinterpret_cast<__half2*>(at) = __floats2half2_rn(a, b);
}

// from_float_pair(at, max(a, floor), max(b, floor)) as the pair's conversion, then its max
// (rounding keeps order, so the max of the rounded values is the rounded max, NaN included: both
// give the other operand): two instructions a pair where max, max and the conversion took three.
__device__ __forceinline__ void from_float_pair_max(bfloat16* at, float a, float b, float floor) {
  *reinterpret_cast<__nv_bfloat162*>(at) = __hmax2(__floats2bfloat162_rn(a, b), __float2bfloat162_rn(floor));
}
__device__ __forceinline__ void from_float_pair_max(half* at, float a, float b, float floor) {
  *reinterpret_cast<__half2*>(at) = __hmax2(__floats2half2_rn(a, b), __float2half2_rn(floor));
}

// at[0] = from_float(a < 0 ? 0 : a), at[1] likewise of b, in one conversion
// (cvt.rn.relu.bf16x2.f32: negatives to 0, NaN stays NaN).
__device__ __forceinline__ void from_float_pair_relu(bfloat16* at, float a, float b) {
  unsigned pair;
  asm("cvt.rn.relu.bf16x2.f32 %0, %1, %2;" : "=r"(pair) : "f"(b), "f"(a));
  *reinterpret_cast<unsigned*>(at) = pair;
}
__device__ __forceinline__ void from_float_pair_relu(half* at, float a, float b) {
  unsigned pair;
  asm("cvt.rn.relu.f16x2.f32 %0, %1, %2;" : "=r"(pair) : "f"(b), "f"(a));
  *reinterpret_cast<unsigned*>(at) = pair;
}

// Two FP8 values (in[0], in[1], bytes; `in` 2-byte aligned) as floats, exactly, in one
// conversion (cvt.rn.f16x2.e4m3x2). Read as one 16-bit value: from bytes, the compiler took each
// out of its register and put the two back together (5 instructions a pair).
namespace detail {
template <__nv_fp8_interpretation_t Format>
__device__ __forceinline__ void fp8_pair_to_float(float* out, const void* in) {
  const float2 f =
      __half22float2(__half2(__nv_cvt_fp8x2_to_halfraw2(*static_cast<const __nv_fp8x2_storage_t*>(in), Format)));
  out[0] = f.x;
  out[1] = f.y;
}
}  // namespace detail
__device__ __forceinline__ void e4m3_pair_to_float(float* out, const void* in) {
  detail::fp8_pair_to_float<__NV_E4M3>(out, in);
}
__device__ __forceinline__ void e5m2_pair_to_float(float* out, const void* in) {
  detail::fp8_pair_to_float<__NV_E5M2>(out, in);
}

// An FP8 cache's dequantization in bf16x2 multiplies (passes/gpu/pair_conversions.h):
// at[i] = from_float<bfloat16>(float(e4m3(in[i])) * float(scale)), i = 0..3, `in` 4-byte
// aligned. Each byte becomes the bfloat16 2^-120 times its value (a byte permute that
// sign-extends it to 16 bits, a shift and a mask: its sign to bit 15, the rest 4 bits up, so an
// e4m3 subnormal is a bfloat16 subnormal); a bf16x2 multiply by 2^120 makes the pair its values
// exactly, and one by the scale rounds the product as float32's would be rounded (an e4m3 times
// a bfloat16 is exact in float32): 5 instructions a pair where the conversion through floats
// takes 6, exact for every scale.
namespace detail {
template <unsigned Selector>  // 0x9180: bytes 0 and 1; 0xB3A2: bytes 2 and 3
__device__ __forceinline__ __nv_bfloat162 e4m3_pair_scaled_down(unsigned bytes) {
  unsigned lanes;  // the two bytes, each sign-extended to 16 bits
  asm("prmt.b32 %0, %1, 0, %2;" : "=r"(lanes) : "r"(bytes), "n"(Selector));
  const unsigned bits = (lanes << 4) & 0x87F087F0u;
  return *reinterpret_cast<const __nv_bfloat162*>(&bits);
}
}  // namespace detail
__device__ __forceinline__ void e4m3_quad_times(bfloat16* at, const void* in, bfloat16 scale) {
  const unsigned bytes = *static_cast<const unsigned*>(in);
  const unsigned up_bits = 0x7B807B80u;  // 2^120, twice
  const __nv_bfloat162 up = *reinterpret_cast<const __nv_bfloat162*>(&up_bits);
  const __nv_bfloat162 scale2 = __bfloat162bfloat162(scale);
  __nv_bfloat162* out = reinterpret_cast<__nv_bfloat162*>(at);
  out[0] = __hmul2(__hmul2(detail::e4m3_pair_scaled_down<0x9180>(bytes), up), scale2);
  out[1] = __hmul2(__hmul2(detail::e4m3_pair_scaled_down<0xB3A2>(bytes), up), scale2);
}

}  // namespace tilec_cuda
