// tilec GPU device support shared by device/cuda/ and device/hip/, part 1: the little of
// <type_traits> the headers need (NVRTC and hipRTC have no standard library), and the
// conversions from_float and to_float have in common.
//
// The headers of device/gpu/ are the part of the two backends' support that is the same
// text: each is included by the backend's own header of the same name, into the backend's
// namespace (TILEC_GPU_NAMESPACE: tilec_cuda or tilec_hip, defined by cuda/types.h and
// hip/types.h), so generated code calls tilec_cuda::exp or tilec_hip::exp as before. What
// they use of the backend (half, to_float of the narrow types, detail::is_narrow_float) is
// declared by the backend's header before it includes them.
#pragma once

#ifndef TILEC_GPU_NAMESPACE
#error "device/gpu/ headers are included by device/cuda/ and device/hip/ headers, which name the namespace"
#endif

namespace TILEC_GPU_NAMESPACE {

namespace detail {

template <bool B, class T = void>
struct enable_if {};
template <class T>
struct enable_if<true, T> {
  using type = T;
};
template <bool B, class T = void>
using enable_if_t = typename enable_if<B, T>::type;

template <bool C, class A, class B>
struct conditional {
  using type = A;
};
template <class A, class B>
struct conditional<false, A, B> {
  using type = B;
};

template <class A, class B>
struct is_same {
  static constexpr bool value = false;
};
template <class A>
struct is_same<A, A> {
  static constexpr bool value = true;
};

template <class T>
struct is_integral {
  static constexpr bool value = false;
};
#define TILEC_GPU_INTEGRAL(T)             \
  template <>                             \
  struct is_integral<T> {                 \
    static constexpr bool value = true;   \
  };
TILEC_GPU_INTEGRAL(bool)
TILEC_GPU_INTEGRAL(char)
TILEC_GPU_INTEGRAL(signed char)
TILEC_GPU_INTEGRAL(unsigned char)
TILEC_GPU_INTEGRAL(short)
TILEC_GPU_INTEGRAL(unsigned short)
TILEC_GPU_INTEGRAL(int)
TILEC_GPU_INTEGRAL(unsigned int)
TILEC_GPU_INTEGRAL(long)
TILEC_GPU_INTEGRAL(unsigned long)
TILEC_GPU_INTEGRAL(long long)
TILEC_GPU_INTEGRAL(unsigned long long)
#undef TILEC_GPU_INTEGRAL

template <class T>
struct is_floating_point {
  static constexpr bool value = is_same<T, float>::value || is_same<T, double>::value;
};

// half, bfloat16, float8_e4m3 and float8_e5m2: the backend's types.h specializes it for its
// types.
template <class T>
struct is_narrow_float {
  static constexpr bool value = false;
};

template <class T>
struct is_signed {
  static constexpr bool value = T(-1) < T(0);
};

// std::common_type for two integers: the type itself when both agree, else the usual
// arithmetic conversions.
template <class A, class B>
struct common_integer {
  using type = decltype(A() + B());
};
template <class A>
struct common_integer<A, A> {
  using type = A;
};

template <class T>
struct identity {
  using type = T;
};

}  // namespace detail

template <class T>
using if_float_t = detail::enable_if_t<detail::is_floating_point<T>::value, int>;
template <class T>
using if_integer_t = detail::enable_if_t<detail::is_integral<T>::value, int>;
template <class T>
using if_narrow_float_t = detail::enable_if_t<detail::is_narrow_float<T>::value, int>;

// ---------------------------------------------------------------- conversions

__device__ __forceinline__ float to_float(float x) { return x; }

// Round to nearest, ties to even, once, from float, double or an integer, with the CPU
// backend's rules (device/cpu/tilec_cpu.h): overflow gives inf in half, bfloat16 and e5m2 and
// NaN in e4m3; a NaN stays NaN. detail::narrow<T> converts to T; the backend's types.h gives
// it for the narrow types.
namespace detail {

template <class T>
struct narrow;

template <>
struct narrow<float> {
  static __device__ __forceinline__ float from(float f) { return f; }
  static __device__ __forceinline__ float from(double d) { return static_cast<float>(d); }  // cvt.rn
  template <class I>
  static __device__ __forceinline__ float from_integer(I i) {
    return static_cast<float>(i);  // one rounding
  }
};

template <>
struct narrow<double> {
  static __device__ __forceinline__ double from(float f) { return f; }
  static __device__ __forceinline__ double from(double d) { return d; }
  template <class I>
  static __device__ __forceinline__ double from_integer(I i) {
    return static_cast<double>(i);
  }
};

}  // namespace detail

template <class T>
__device__ __forceinline__ T from_float(float f) {
  return detail::narrow<T>::from(f);
}
template <class T>
__device__ __forceinline__ T from_float(double d) {
  return detail::narrow<T>::from(d);
}
template <class T, class I, if_integer_t<I> = 0>
__device__ __forceinline__ T from_float(I i) {
  return detail::narrow<T>::from_integer(i);
}

// at[0] = from_float<T>(a), at[1] = from_float<T>(b): a vector store's run, two elements at a
// time (a backend's types.h converts a pair of half or bfloat16 in one instruction).
template <class T>
__device__ __forceinline__ void from_float_pair(T* at, float a, float b) {
  at[0] = from_float<T>(a);
  at[1] = from_float<T>(b);
}

// from_float_pair(at, max(a, floor), max(b, floor)) (a backend's types.h takes the max after
// converting the pair, in one instruction).
template <class T>
__device__ __forceinline__ void from_float_pair_max(T* at, float a, float b, float floor) {
  from_float_pair(at, fmaxf(a, floor), fmaxf(b, floor));
}

// at[0] = from_float<T>(a < 0 ? 0 : a), at[1] likewise of b (a ReLU that keeps NaN).
template <class T>
__device__ __forceinline__ void from_float_pair_relu(T* at, float a, float b) {
  from_float_pair(at, a < 0.0f ? 0.0f : a, b < 0.0f ? 0.0f : b);
}

}  // namespace TILEC_GPU_NAMESPACE
