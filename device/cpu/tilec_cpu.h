// Support code that every generated CPU kernel includes: software float types,
// Python-style integer division, math overloads and atomics.
// Self-contained C++17 for g++ and clang++ (uses their __builtin/__atomic intrinsics).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <cstring>
#include <type_traits>

namespace tilec_rt {

namespace detail {

template <class To, class From>
inline To bit_cast(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast between types of different sizes");
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}

}  // namespace detail

// `p` rounded up to a multiple of `alignment`, a power of two (a block's shared memory on the heap).
inline unsigned char* align_up(unsigned char* p, uintptr_t alignment) {
  return reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(p) + alignment - 1) & ~(alignment - 1));
}

// T.reinterpret: the bits of `from` read as To, a type of its size.
template <class To, class From>
inline To reinterpret(const From& from) {
  return detail::bit_cast<To>(from);
}

namespace detail {

// A binary floating-point format narrower than float: E exponent bits, M mantissa bits.
// IEEE-like formats keep the top exponent for inf and NaN and overflow to inf. The others
// (OCP "fn" formats such as e4m3fn) have no infinities, use only the all-ones exponent and
// mantissa as NaN, and overflow to NaN (as PyTorch and ml_dtypes do).
template <int E, int M, bool Ieee>
struct Format {
  using Bits = std::conditional_t<(1 + E + M > 8), uint16_t, uint8_t>;
  static constexpr int kBias = (1 << (E - 1)) - 1;
  static constexpr int kMinExp = 1 - kBias;  // exponent of the smallest normal
  static constexpr uint32_t kMantMask = (1u << M) - 1;
  static constexpr uint32_t kExpAll = (1u << E) - 1;
  static constexpr uint32_t kSign = 1u << (E + M);
  static constexpr uint32_t kNaN =
      (kExpAll << M) | (Ieee ? 1u << (M - 1) : kMantMask);  // quiet NaN / the only NaN
  static constexpr uint32_t kOverflow = Ieee ? kExpAll << M : kNaN;
  static constexpr uint32_t kMaxBiased = Ieee ? kExpAll - 1 : kExpAll;  // of finite values
};

// The bits of the format value nearest to (-1)^negative * sig * 2^exp, ties to even.
// Requires sig < 2^63.
template <int E, int M, bool Ieee>
inline uint32_t round_to_format(bool negative, uint64_t sig, int exp) {
  using F = Format<E, M, Ieee>;
  const uint32_t sign = negative ? F::kSign : 0u;
  if (sig == 0) return sign;
  const int lead = exp + 63 - __builtin_clzll(sig);  // the value lies in [2^lead, 2^(lead+1))
  int quantum = (lead > F::kMinExp ? lead : F::kMinExp) - M;  // weight of the last mantissa bit
  uint64_t r;
  if (quantum <= exp) {
    r = sig << (exp - quantum);
  } else if (quantum - exp >= 64) {
    r = 0;  // with sig < 2^63 the value is below half a quantum
  } else {
    const int shift = quantum - exp;
    r = sig >> shift;
    const uint64_t rest = sig & ((uint64_t{1} << shift) - 1);
    const uint64_t half = uint64_t{1} << (shift - 1);
    if (rest > half || (rest == half && (r & 1))) ++r;
  }
  if (r >> (M + 1)) {  // rounding carried into the next binade
    r >>= 1;
    ++quantum;
  }
  if (r < (uint64_t{1} << M)) return sign | static_cast<uint32_t>(r);  // subnormal or zero
  // In an fn format a value rounded one step past the max encodes as the NaN pattern itself.
  const int biased = quantum + M + F::kBias;
  if (biased > static_cast<int>(F::kMaxBiased)) return sign | F::kOverflow;
  return sign | (static_cast<uint32_t>(biased) << M) | (static_cast<uint32_t>(r) & F::kMantMask);
}

// Rounds a float or double straight from its own bits, so a double is rounded once.
template <int E, int M, bool Ieee, class Src>
inline uint32_t narrow(Src value) {
  using F = Format<E, M, Ieee>;
  using U = std::conditional_t<sizeof(Src) == 4, uint32_t, uint64_t>;
  constexpr int kSrcMant = sizeof(Src) == 4 ? 23 : 52;
  constexpr int kSrcExpBits = sizeof(Src) == 4 ? 8 : 11;
  constexpr int kSrcBias = (1 << (kSrcExpBits - 1)) - 1;
  const U bits = bit_cast<U>(value);
  const bool negative = (bits >> (8 * sizeof(Src) - 1)) != 0;
  const int biased = static_cast<int>((bits >> kSrcMant) & ((U{1} << kSrcExpBits) - 1));
  const U mant = bits & ((U{1} << kSrcMant) - 1);
  if (biased == (1 << kSrcExpBits) - 1) {  // inf becomes inf, or NaN where there is no inf
    return (negative ? F::kSign : 0u) | (mant != 0 ? F::kNaN : F::kOverflow);
  }
  if (biased == 0) return round_to_format<E, M, Ieee>(negative, mant, 1 - kSrcBias - kSrcMant);
  return round_to_format<E, M, Ieee>(negative, mant | (U{1} << kSrcMant),
                                     biased - kSrcBias - kSrcMant);
}

template <int E, int M, bool Ieee, class I>
inline uint32_t narrow_integer(I value) {
  bool negative = false;
  if constexpr (std::is_signed_v<I>) negative = value < 0;
  uint64_t mag = static_cast<uint64_t>(value);
  if (negative) mag = uint64_t{0} - mag;
  int exp = 0;
  if (mag >> 63) {  // halve with the dropped bit kept as a sticky bit: rounding is unchanged
    mag = (mag >> 1) | (mag & 1);
    exp = 1;
  }
  return round_to_format<E, M, Ieee>(negative, mag, exp);
}

// Exact: every value of these formats is a float.
template <int E, int M, bool Ieee>
inline float widen(uint32_t bits) {
  using F = Format<E, M, Ieee>;
  const uint32_t sign = (bits & F::kSign) ? 0x80000000u : 0u;
  uint32_t out;
  if constexpr (E == 8) {
    out = (bits & ~F::kSign) << (23 - M);  // float's own exponent: a shift covers every case
  } else {
    const uint32_t biased = (bits >> M) & F::kExpAll;
    const uint32_t mant = bits & F::kMantMask;
    if (biased == F::kExpAll && (Ieee || mant == F::kMantMask)) {
      out = 0x7F800000u | (Ieee ? mant << (23 - M) : 0x400000u);
    } else if (biased != 0) {
      out = ((biased - F::kBias + 127) << 23) | (mant << (23 - M));
    } else if (mant == 0) {
      out = 0;
    } else {  // a subnormal here is a normal float: mant * 2^(kMinExp - M)
      const int top = 31 - __builtin_clz(mant);
      out = (static_cast<uint32_t>(F::kMinExp - M + top + 127) << 23) |
            ((mant << (23 - top)) & 0x7FFFFFu);
    }
  }
  return bit_cast<float>(sign | out);
}

template <class T>
struct identity {
  using type = T;
};

}  // namespace detail

// A float type the host has no arithmetic for, stored as its bits. Arithmetic goes through
// float (operator float is exact); construction rounds to nearest, ties to even, from float,
// double and integers alike, each rounded once from its own value.
template <int E, int M, bool Ieee>
struct soft_float {
  using Bits = typename detail::Format<E, M, Ieee>::Bits;
  Bits bits;

  soft_float() = default;
  explicit soft_float(float value) : bits(static_cast<Bits>(detail::narrow<E, M, Ieee>(value))) {}
  explicit soft_float(double value) : bits(static_cast<Bits>(detail::narrow<E, M, Ieee>(value))) {}
  template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
  explicit soft_float(I value)
      : bits(static_cast<Bits>(detail::narrow_integer<E, M, Ieee>(value))) {}

  operator float() const { return detail::widen<E, M, Ieee>(bits); }

  static soft_float from_bits(Bits bits) {
    soft_float result;
    result.bits = bits;
    return result;
  }

  template <class T>
  soft_float& operator+=(T other) {
    return *this = soft_float(static_cast<float>(*this) + other);
  }
  template <class T>
  soft_float& operator-=(T other) {
    return *this = soft_float(static_cast<float>(*this) - other);
  }
  template <class T>
  soft_float& operator*=(T other) {
    return *this = soft_float(static_cast<float>(*this) * other);
  }
  template <class T>
  soft_float& operator/=(T other) {
    return *this = soft_float(static_cast<float>(*this) / other);
  }
};

using half = soft_float<5, 10, true>;  // IEEE binary16
using bfloat16 = soft_float<8, 7, true>;
using float8_e4m3 = soft_float<4, 3, false>;  // OCP e4m3fn: max 448, no inf
using float8_e5m2 = soft_float<5, 2, true>;

static_assert(sizeof(half) == 2 && sizeof(bfloat16) == 2, "16-bit soft floats");
static_assert(sizeof(float8_e4m3) == 1 && sizeof(float8_e5m2) == 1, "8-bit soft floats");
static_assert(std::is_trivially_copyable_v<half> && std::is_trivially_copyable_v<float8_e4m3>,
              "soft floats are plain bits");

template <class T>
struct is_soft_float : std::false_type {};
template <int E, int M, bool Ieee>
struct is_soft_float<soft_float<E, M, Ieee>> : std::true_type {};

template <class T>
using if_float_t = std::enable_if_t<std::is_floating_point_v<T>, int>;
template <class T>
using if_integer_t = std::enable_if_t<std::is_integral_v<T>, int>;

// Python's // and % (the quotient rounds toward -inf; the remainder takes the divisor's
// sign). On floats, TVM's definitions: floor(a / b) and a - floor(a / b) * b.
template <class A, class B, if_integer_t<A> = 0, if_integer_t<B> = 0>
inline std::common_type_t<A, B> floordiv(A a, B b) {
  using T = std::common_type_t<A, B>;
  const T x = static_cast<T>(a), y = static_cast<T>(b);
  const T q = static_cast<T>(x / y);
  if constexpr (std::is_signed_v<T>) {
    if (x % y != 0 && ((x < 0) != (y < 0))) return static_cast<T>(q - 1);
  }
  return q;
}

template <class A, class B, if_integer_t<A> = 0, if_integer_t<B> = 0>
inline std::common_type_t<A, B> floormod(A a, B b) {
  using T = std::common_type_t<A, B>;
  const T x = static_cast<T>(a), y = static_cast<T>(b);
  const T r = static_cast<T>(x % y);
  if constexpr (std::is_signed_v<T>) {
    if (r != 0 && ((r < 0) != (y < 0))) return static_cast<T>(r + y);
  }
  return r;
}

template <class T, if_float_t<T> = 0>
inline T floordiv(T a, T b) {
  return std::floor(a / b);
}
template <class T, if_float_t<T> = 0>
inline T floormod(T a, T b) {
  return a - std::floor(a / b) * b;
}

// Math on float and double uses the std:: function of that precision; on soft floats it
// computes in float and rounds the result back. round() is round-half-to-even (nearbyint
// in the default rounding mode), not std::round's half-away-from-zero.
#define TILEC_RT_UNARY_MATH(X)             \
  X(exp, std::exp(x))                      \
  X(exp2, std::exp2(x))                    \
  X(exp10, std::pow(T(10), x))             \
  X(log, std::log(x))                      \
  X(log2, std::log2(x))                    \
  X(log10, std::log10(x))                  \
  X(sqrt, std::sqrt(x))                    \
  X(rsqrt, T(1) / std::sqrt(x))            \
  X(sin, std::sin(x))                      \
  X(cos, std::cos(x))                      \
  X(tan, std::tan(x))                      \
  X(tanh, std::tanh(x))                    \
  X(sigmoid, T(1) / (T(1) + std::exp(-x))) \
  X(erf, std::erf(x))                      \
  X(abs, std::fabs(x))                     \
  X(floor, std::floor(x))                  \
  X(ceil, std::ceil(x))                    \
  X(round, std::nearbyint(x))              \
  X(trunc, std::trunc(x))

#define TILEC_RT_DEFINE_UNARY(name, expr)                    \
  template <class T, if_float_t<T> = 0>                      \
  inline T name(T x) {                                       \
    return expr;                                             \
  }                                                          \
  template <int E, int M, bool I>                            \
  inline soft_float<E, M, I> name(soft_float<E, M, I> x) {   \
    return soft_float<E, M, I>(name(static_cast<float>(x))); \
  }
TILEC_RT_UNARY_MATH(TILEC_RT_DEFINE_UNARY)
#undef TILEC_RT_DEFINE_UNARY
#undef TILEC_RT_UNARY_MATH

#define TILEC_RT_DEFINE_CLASSIFY(name)       \
  template <class T, if_float_t<T> = 0>      \
  inline bool name(T x) {                    \
    return std::name(x);                     \
  }                                          \
  template <int E, int M, bool I>            \
  inline bool name(soft_float<E, M, I> x) {  \
    return std::name(static_cast<float>(x)); \
  }
TILEC_RT_DEFINE_CLASSIFY(isnan)
TILEC_RT_DEFINE_CLASSIFY(isinf)
TILEC_RT_DEFINE_CLASSIFY(isfinite)
#undef TILEC_RT_DEFINE_CLASSIFY

// Float min and max ignore a NaN operand (fmin/fmax), as CUDA's min and max do.
#define TILEC_RT_BINARY_MATH(X) \
  X(pow, std::pow(a, b))        \
  X(fmod, std::fmod(a, b))      \
  X(min, std::fmin(a, b))       \
  X(max, std::fmax(a, b))

#define TILEC_RT_DEFINE_BINARY(name, expr)                                          \
  template <class T, if_float_t<T> = 0>                                             \
  inline T name(T a, T b) {                                                         \
    return expr;                                                                    \
  }                                                                                 \
  template <int E, int M, bool I>                                                   \
  inline soft_float<E, M, I> name(soft_float<E, M, I> a, soft_float<E, M, I> b) {   \
    return soft_float<E, M, I>(name(static_cast<float>(a), static_cast<float>(b))); \
  }
TILEC_RT_BINARY_MATH(TILEC_RT_DEFINE_BINARY)
#undef TILEC_RT_DEFINE_BINARY
#undef TILEC_RT_BINARY_MATH

template <class T, if_integer_t<T> = 0>
inline T abs(T x) {
  if constexpr (std::is_signed_v<T>) return x < 0 ? static_cast<T>(-x) : x;
  return x;
}
template <class T, if_integer_t<T> = 0>
inline T min(T a, T b) {
  return b < a ? b : a;
}
template <class T, if_integer_t<T> = 0>
inline T max(T a, T b) {
  return a < b ? b : a;
}

// Returns the previous value, like CUDA's atomicAdd, with relaxed ordering: kernels order
// their atomics by the end of the parallel region.
template <class T, if_integer_t<T> = 0>
inline T atomic_add(T* address, typename detail::identity<T>::type value) {
  return __atomic_fetch_add(address, value, __ATOMIC_RELAXED);
}

// Floats have no fetch-add: a compare-exchange loop on the object's own bytes (1 to 8 of
// them, all lock-free), which also compares NaNs by their bits.
template <class T,
          std::enable_if_t<std::is_floating_point_v<T> || is_soft_float<T>::value, int> = 0>
inline T atomic_add(T* address, typename detail::identity<T>::type value) {
  T expected;
  __atomic_load(address, &expected, __ATOMIC_RELAXED);
  T desired;
  do {
    desired = T(expected + value);
  } while (!__atomic_compare_exchange(address, &expected, &desired, true, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED));
  return expected;
}

// T.prefetch_l2: a hint for a GPU's L2; nothing to do here.
inline void prefetch_l2(const void*) {}

// ---------------------------------------------------------------- errors
// A kernel that finds it can't go on (an index out of bounds in a bounds-checked build, a
// thread group's wait that would hang) records the error; the first one wins, and the runtime
// raises it once the launch returns.

namespace detail {
struct KernelError {
  int recorded = 0;   // set once, atomically
  bool argument = false;  // the arguments' fault (record_argument_error)
  char text[2048] = {};
};
inline KernelError& kernel_error() {
  static KernelError error;
  return error;
}
}  // namespace detail

inline void record_error(const char* message, bool argument = false) {
  detail::KernelError& error = detail::kernel_error();
  int expected = 0;
  if (__atomic_compare_exchange_n(&error.recorded, &expected, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    std::snprintf(error.text, sizeof error.text, "%s", message);
    error.argument = argument;
  }
}

// An error of the arguments found before any block runs (a grid that is not a multiple of the
// clusters), which the runtime raises as it does the same error on a GPU: a ValueError.
inline void record_argument_error(const char* message) { record_error(message, true); }

// The recorded error, once (null when there is none), and whether it is the arguments'; clears
// it for the next launch.
inline const char* take_kernel_error(int* argument) {
  detail::KernelError& error = detail::kernel_error();
  if (!__atomic_load_n(&error.recorded, __ATOMIC_ACQUIRE)) return nullptr;
  static thread_local char message[sizeof error.text];
  std::memcpy(message, error.text, sizeof message);
  *argument = error.argument;
  __atomic_store_n(&error.recorded, 0, __ATOMIC_RELEASE);
  return message;
}

// ---------------------------------------------------------------- bounds checks
// Kernels built with bounds checks (TILEC_BOUNDS_CHECK=1) access every element through
// checked(): an index out of range is recorded and the access goes to a scratch element
// instead, so the kernel finishes without touching memory it doesn't own.

inline void record_bounds_error(const char* site, std::initializer_list<int64_t> index,
                                std::initializer_list<int64_t> shape) {
  if (__atomic_load_n(&detail::kernel_error().recorded, __ATOMIC_ACQUIRE)) return;
  auto list = [](char* out, size_t size, std::initializer_list<int64_t> values) {
    size_t used = 0;
    for (int64_t v : values) {
      int n = std::snprintf(out + used, size - used, used ? ", %lld" : "%lld", static_cast<long long>(v));
      if (n < 0 || static_cast<size_t>(n) >= size - used) break;
      used += static_cast<size_t>(n);
    }
  };
  char index_text[128] = {}, shape_text[128] = {}, text[512] = {};
  list(index_text, sizeof index_text, index);
  list(shape_text, sizeof shape_text, shape);
  std::snprintf(text, sizeof text, "index [%s] is out of bounds for shape (%s) of %s", index_text, shape_text, site);
  record_error(text);
}

template <class T>
inline T& checked(T* base, int64_t offset, bool in_bounds, const char* site,
                  std::initializer_list<int64_t> index, std::initializer_list<int64_t> shape) {
  if (in_bounds) return base[offset];
  record_bounds_error(site, index, shape);
  static thread_local T scratch;
  return scratch;
}

}  // namespace tilec_rt
