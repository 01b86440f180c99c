// Tests of device/cpu/tilec_cpu.h: the software float types against a reference written
// from the formats' definitions, Python-style division, math overloads and atomics.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../../device/cpu/tilec_cpu.h"

namespace {

using tilec_rt::bfloat16;
using tilec_rt::float8_e4m3;
using tilec_rt::float8_e5m2;
using tilec_rt::half;

template <class T>
struct Spec;
template <int E, int M, bool Ieee>
struct Spec<tilec_rt::soft_float<E, M, Ieee>> {
  static constexpr int kExpBits = E, kMantBits = M;
  static constexpr bool kIeee = Ieee;
  static constexpr uint32_t kPatterns = 1u << (1 + E + M);
  static constexpr uint32_t kSign = 1u << (E + M);
};

// The value of a bit pattern by the format's definition; NaN for NaN patterns. Long double
// holds every float, double and 64-bit integer exactly, so it can serve as the exact value
// of any source.
template <class T>
long double decode(uint32_t bits) {
  using S = Spec<T>;
  const int bias = (1 << (S::kExpBits - 1)) - 1;
  const uint32_t all = (1u << S::kExpBits) - 1, mant_all = (1u << S::kMantBits) - 1;
  const uint32_t biased = (bits >> S::kMantBits) & all, mant = bits & mant_all;
  const bool negative = (bits & S::kSign) != 0;
  long double value;
  if (S::kIeee && biased == all) {
    value = mant != 0 ? std::numeric_limits<long double>::quiet_NaN()
                      : std::numeric_limits<long double>::infinity();
  } else if (!S::kIeee && biased == all && mant == mant_all) {
    value = std::numeric_limits<long double>::quiet_NaN();
  } else if (biased == 0) {
    value = std::ldexp(static_cast<long double>(mant), 1 - bias - S::kMantBits);
  } else {
    value = std::ldexp(static_cast<long double>((1u << S::kMantBits) + mant),
                       static_cast<int>(biased) - bias - S::kMantBits);
  }
  return negative ? -value : value;
}

// Round-to-nearest-even by search: the non-negative finite values of the format, sorted,
// and the value one step past the largest (where overflow starts).
template <class T>
class Reference {
 public:
  Reference() {
    for (uint32_t bits = 0; bits < Spec<T>::kSign; ++bits) {
      const long double v = decode<T>(bits);
      if (std::isfinite(v)) values_.push_back({v, bits});
    }
    std::sort(values_.begin(), values_.end());
    const size_t n = values_.size();
    beyond_ = values_[n - 1].value + (values_[n - 1].value - values_[n - 2].value);
    beyond_even_ = (values_[n - 1].bits & 1) != 0;
  }

  struct Entry {
    long double value;
    uint32_t bits;
    bool operator<(const Entry& o) const { return value < o.value; }
  };
  const std::vector<Entry>& values() const { return values_; }
  long double beyond() const { return beyond_; }

  // The expected bits, or nullopt where the result must be a NaN.
  std::optional<uint32_t> round(long double x) const {
    if (std::isnan(x)) return std::nullopt;
    const uint32_t sign = std::signbit(x) ? Spec<T>::kSign : 0;
    const long double a = std::fabs(x);
    const auto overflow = [&]() -> std::optional<uint32_t> {
      if (!Spec<T>::kIeee) return std::nullopt;
      return sign | (((1u << Spec<T>::kExpBits) - 1) << Spec<T>::kMantBits);
    };
    if (a >= beyond_) return overflow();
    auto hi = std::lower_bound(values_.begin(), values_.end(), Entry{a, 0});
    if (hi != values_.end() && hi->value == a) return sign | hi->bits;
    const Entry& lo = *(hi - 1);
    const long double hi_value = hi == values_.end() ? beyond_ : hi->value;
    const bool hi_even = hi == values_.end() ? beyond_even_ : (hi->bits & 1) == 0;
    const long double mid = (lo.value + hi_value) / 2;  // exact: few significant bits
    const bool up = a > mid || (a == mid && hi_even);
    if (!up) return sign | lo.bits;
    if (hi == values_.end()) return overflow();
    return sign | hi->bits;
  }

 private:
  std::vector<Entry> values_;
  long double beyond_;
  bool beyond_even_;
};

template <class T>
const Reference<T>& reference() {
  static const Reference<T> ref;
  return ref;
}

template <class T>
std::string hex(uint32_t bits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%0*x", static_cast<int>(sizeof(T) * 2), bits);
  return buf;
}

// Counts mismatches of T(source) against the reference, reporting the first few.
template <class T>
class Checker {
 public:
  template <class Src>
  void check(Src source) {
    const long double exact = static_cast<long double>(source);
    const std::optional<uint32_t> want = reference<T>().round(exact);
    const T got(source);
    const bool ok = want ? got.bits == *want : std::isnan(static_cast<float>(got));
    ++checked_;
    if (ok) return;
    if (++failures_ <= 10) {
      ADD_FAILURE() << "converting " << std::hexfloat << exact << std::defaultfloat << " (" << exact
                    << ") gave " << hex<T>(got.bits) << ", want "
                    << (want ? hex<T>(*want) : std::string("NaN"));
    }
  }
  ~Checker() { EXPECT_EQ(failures_, 0u) << "of " << checked_ << " conversions"; }

 private:
  uint64_t checked_ = 0, failures_ = 0;
};

template <class T>
class SoftFloatTest : public ::testing::Test {};
using SoftFloatTypes = ::testing::Types<half, bfloat16, float8_e4m3, float8_e5m2>;
TYPED_TEST_SUITE(SoftFloatTest, SoftFloatTypes);

TYPED_TEST(SoftFloatTest, EveryPatternWidensExactly) {
  using T = TypeParam;
  for (uint32_t bits = 0; bits < Spec<T>::kPatterns; ++bits) {
    const float got = static_cast<float>(T::from_bits(static_cast<typename T::Bits>(bits)));
    const long double want = decode<T>(bits);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << hex<T>(bits);
    } else {
      EXPECT_EQ(static_cast<long double>(got), want) << hex<T>(bits);
      EXPECT_EQ(std::signbit(got), std::signbit(want)) << hex<T>(bits);
    }
  }
}

TYPED_TEST(SoftFloatTest, EveryPatternRoundTrips) {
  using T = TypeParam;
  for (uint32_t bits = 0; bits < Spec<T>::kPatterns; ++bits) {
    const T value = T::from_bits(static_cast<typename T::Bits>(bits));
    const float f = static_cast<float>(value);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(static_cast<float>(T(f)))) << hex<T>(bits);
      EXPECT_TRUE(std::isnan(static_cast<float>(T(static_cast<double>(f))))) << hex<T>(bits);
      continue;
    }
    EXPECT_EQ(T(f).bits, bits) << hex<T>(bits);
    EXPECT_EQ(T(static_cast<double>(f)).bits, bits) << hex<T>(bits);
  }
}

// Every value, every midpoint between neighbours (the ties), the float or double just on
// either side of each, the overflow threshold and everything beyond.
template <class T, class Src>
std::vector<Src> boundary_cases() {
  const Reference<T>& ref = reference<T>();
  std::vector<long double> points;
  const auto& values = ref.values();
  for (size_t i = 0; i < values.size(); ++i) {
    points.push_back(values[i].value);
    const long double next = i + 1 < values.size() ? values[i + 1].value : ref.beyond();
    points.push_back((values[i].value + next) / 2);
  }
  points.push_back(ref.beyond());
  points.push_back(ref.beyond() * 2);
  std::vector<Src> out;
  const Src inf = std::numeric_limits<Src>::infinity();
  for (long double p : points) {
    const Src s = static_cast<Src>(p);
    for (Src v : {s, std::nextafter(s, inf), std::nextafter(s, Src(0))}) {
      out.push_back(v);
      out.push_back(-v);
    }
  }
  for (Src v : {Src(0), std::numeric_limits<Src>::denorm_min(), std::numeric_limits<Src>::min(),
                std::numeric_limits<Src>::max(), inf, std::numeric_limits<Src>::quiet_NaN()}) {
    out.push_back(v);
    out.push_back(-v);
  }
  return out;
}

TYPED_TEST(SoftFloatTest, FloatRoundsToNearestEven) {
  using T = TypeParam;
  Checker<T> checker;
  for (float f : boundary_cases<T, float>()) checker.check(f);
  std::mt19937 rng(1234);
  for (int i = 0; i < 1000000; ++i) {
    checker.check(tilec_rt::detail::bit_cast<float>(static_cast<uint32_t>(rng())));
  }
  // Dense sampling of the format's own range, where the rounding decisions are.
  const long double top = reference<T>().beyond();
  const int max_exp = std::ilogb(static_cast<double>(top)) + 2;
  const int min_exp = std::ilogb(static_cast<double>(reference<T>().values()[1].value)) - 3;
  std::uniform_int_distribution<int> exp(min_exp, max_exp);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  for (int i = 0; i < 1000000; ++i) {
    const float f = std::ldexp(mant(rng), exp(rng));
    checker.check(i % 2 ? f : -f);
  }
}

// A double near a tie must not be rounded to float first: that would land on the tie.
TYPED_TEST(SoftFloatTest, DoubleRoundsOnce) {
  using T = TypeParam;
  Checker<T> checker;
  for (double d : boundary_cases<T, double>()) checker.check(d);
  for (const auto& entry : reference<T>().values()) {
    for (double offset : {1e-12, -1e-12}) {
      checker.check(static_cast<double>(entry.value) * (1 + offset));
    }
  }
  std::mt19937_64 rng(99);
  for (int i = 0; i < 500000; ++i) checker.check(tilec_rt::detail::bit_cast<double>(rng()));
  const int max_exp = std::ilogb(static_cast<double>(reference<T>().beyond())) + 2;
  std::uniform_int_distribution<int> exp(-150, max_exp);
  std::uniform_real_distribution<double> mant(1.0, 2.0);
  for (int i = 0; i < 500000; ++i) checker.check(std::ldexp(mant(rng), exp(rng)));
}

TYPED_TEST(SoftFloatTest, IntegersRoundOnce) {
  using T = TypeParam;
  Checker<T> checker;
  for (int64_t v = -70000; v <= 70000; ++v) checker.check(v);
  for (int64_t v : {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}) {
    checker.check(v);
  }
  checker.check(std::numeric_limits<uint64_t>::max());
  checker.check((uint64_t{1} << 63) + 1);
  checker.check(static_cast<int8_t>(-128));
  checker.check(static_cast<uint16_t>(65535));
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    const uint64_t r = rng();
    const int width = static_cast<int>(rng() % 64) + 1;
    const uint64_t u = width == 64 ? r : r & ((uint64_t{1} << width) - 1);
    checker.check(u);
    checker.check(static_cast<int64_t>(u));
    checker.check(static_cast<int32_t>(u));
  }
}

TEST(SoftFloat, KnownValues) {
  EXPECT_EQ(half(65504.0f).bits, 0x7bff);
  EXPECT_EQ(half(65519.99f).bits, 0x7bff);
  EXPECT_EQ(half(65520.0f).bits, 0x7c00);  // the tie past the max goes to inf (odd max)
  EXPECT_EQ(half(5.9604645e-8f).bits, 0x0001);
  EXPECT_EQ(half(2.9802322e-8f).bits, 0x0000);  // half the smallest subnormal: tie to 0
  EXPECT_EQ(half(-0.0f).bits, 0x8000);
  EXPECT_EQ(bfloat16(1.00390625f).bits, 0x3f80);  // tie to even
  EXPECT_EQ(bfloat16(1.01171875f).bits, 0x3f82);
  EXPECT_EQ(float8_e4m3(448.0f).bits, 0x7e);
  EXPECT_EQ(float8_e4m3(464.0f).bits, 0x7e);  // tie between 448 and "480": even
  EXPECT_EQ(float8_e4m3(-464.0f).bits, 0xfe);
  EXPECT_EQ(float8_e4m3(464.5f).bits & 0x7f, 0x7f);
  EXPECT_TRUE(std::isnan(static_cast<float>(float8_e4m3(500.0f))));
  EXPECT_TRUE(std::isnan(static_cast<float>(float8_e4m3(INFINITY))));
  EXPECT_EQ(static_cast<float>(float8_e4m3::from_bits(0x01)), 0.001953125f);
  EXPECT_EQ(static_cast<float>(float8_e4m3::from_bits(0x7f)) != 0, true);
  EXPECT_EQ(float8_e5m2(57344.0f).bits, 0x7b);
  EXPECT_EQ(float8_e5m2(61440.0f).bits, 0x7c);  // tie past the max: inf
  EXPECT_EQ(float8_e5m2(-1e9f).bits, 0xfc);
  EXPECT_EQ(float8_e5m2(NAN).bits & 0x7f, 0x7e);
}

#if defined(__FLT16_MAX__)
// The compiler's own _Float16 is a second, independent reference for half.
TEST(SoftFloat, HalfMatchesFloat16) {
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    const _Float16 h = tilec_rt::detail::bit_cast<_Float16>(static_cast<uint16_t>(bits));
    const float want = static_cast<float>(h),
                got = static_cast<float>(half::from_bits(static_cast<uint16_t>(bits)));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got));
    } else {
      EXPECT_EQ(tilec_rt::detail::bit_cast<uint32_t>(got),
                tilec_rt::detail::bit_cast<uint32_t>(want));
    }
  }
  std::mt19937_64 rng(5);
  int mismatches = 0;
  for (int i = 0; i < 2000000; ++i) {
    const uint64_t r = rng();
    const float f =
        std::ldexp(static_cast<float>(r >> 40) / (1 << 24) + 1, static_cast<int>(r % 48) - 30);
    const double d = std::ldexp(static_cast<double>(r >> 11) / (uint64_t{1} << 53) + 1,
                                static_cast<int>(r % 48) - 30);
    mismatches += half(f).bits != tilec_rt::detail::bit_cast<uint16_t>(static_cast<_Float16>(f));
    mismatches += half(d).bits != tilec_rt::detail::bit_cast<uint16_t>(static_cast<_Float16>(d));
  }
  EXPECT_EQ(mismatches, 0);
}
#endif

TEST(SoftFloat, ArithmeticGoesThroughFloat) {
  half a(1.5f), b(2.25f);
  EXPECT_EQ(a + b, 3.75f);
  EXPECT_TRUE(a < b);
  a += b;
  EXPECT_EQ(static_cast<float>(a), 3.75f);
  a *= 2;
  EXPECT_EQ(static_cast<float>(a), 7.5f);
  a -= 0.5;
  a /= half(7.0f);
  EXPECT_EQ(static_cast<float>(a), 1.0f);
  EXPECT_EQ(half(bfloat16(3.0f)).bits, half(3.0f).bits);
  EXPECT_EQ(float8_e4m3(half(0.3f)).bits, float8_e4m3(static_cast<float>(half(0.3f))).bits);
  const half zero{};
  EXPECT_EQ(zero.bits, 0);
}

TEST(IntegerDivision, MatchesPython) {
  for (int a = -30; a <= 30; ++a) {
    for (int b = -7; b <= 7; ++b) {
      if (b == 0) continue;
      const int q = static_cast<int>(std::floor(static_cast<double>(a) / b));
      EXPECT_EQ(tilec_rt::floordiv(a, b), q) << a << " // " << b;
      EXPECT_EQ(tilec_rt::floormod(a, b), a - q * b) << a << " % " << b;
      EXPECT_EQ(tilec_rt::floordiv(static_cast<int64_t>(a), static_cast<int64_t>(b)), q);
      EXPECT_EQ(tilec_rt::floormod(static_cast<int8_t>(a), static_cast<int8_t>(b)), a - q * b);
      const auto mixed = tilec_rt::floordiv(static_cast<int64_t>(a), b);
      static_assert(std::is_same_v<decltype(mixed), const int64_t>);
      EXPECT_EQ(mixed, q);
    }
  }
  EXPECT_EQ(tilec_rt::floordiv(7u, 2u), 3u);
  EXPECT_EQ(tilec_rt::floormod(uint64_t{7}, uint64_t{4}), 3u);
  EXPECT_EQ(tilec_rt::floordiv(-7.5f, 2.0f), -4.0f);
  EXPECT_EQ(tilec_rt::floormod(-7.5, 2.0), 0.5);
}

TEST(Math, FloatAndDoubleUseTheirOwnPrecision) {
  static_assert(std::is_same_v<decltype(tilec_rt::exp(1.0f)), float>);
  static_assert(std::is_same_v<decltype(tilec_rt::exp(1.0)), double>);
  static_assert(std::is_same_v<decltype(tilec_rt::exp(half(1.0f))), half>);
  static_assert(std::is_same_v<decltype(tilec_rt::isnan(half(1.0f))), bool>);
  EXPECT_EQ(tilec_rt::exp(0.7f), std::exp(0.7f));
  EXPECT_EQ(tilec_rt::exp(0.7), std::exp(0.7));
  EXPECT_EQ(tilec_rt::log2(8.0f), 3.0f);
  EXPECT_NEAR(tilec_rt::exp10(2.0), 100.0, 1e-12);
  EXPECT_FLOAT_EQ(tilec_rt::rsqrt(4.0f), 0.5f);
  EXPECT_FLOAT_EQ(tilec_rt::sigmoid(0.0f), 0.5f);
  EXPECT_DOUBLE_EQ(tilec_rt::sigmoid(2.0), 1 / (1 + std::exp(-2.0)));
  EXPECT_EQ(tilec_rt::tanh(0.3), std::tanh(0.3));
  EXPECT_EQ(tilec_rt::erf(0.3f), std::erf(0.3f));
  EXPECT_EQ(tilec_rt::pow(2.0f, 10.0f), 1024.0f);
  EXPECT_EQ(tilec_rt::fmod(7.5, 2.0), 1.5);
  EXPECT_EQ(tilec_rt::abs(-2.5f), 2.5f);
  EXPECT_EQ(tilec_rt::floor(-2.5), -3.0);
  EXPECT_EQ(tilec_rt::ceil(-2.5f), -2.0f);
  EXPECT_EQ(tilec_rt::trunc(-2.5f), -2.0f);
  EXPECT_TRUE(tilec_rt::isinf(INFINITY));
  EXPECT_TRUE(tilec_rt::isfinite(1.0));
}

TEST(Math, RoundIsHalfToEven) {
  EXPECT_EQ(tilec_rt::round(2.5f), 2.0f);
  EXPECT_EQ(tilec_rt::round(3.5), 4.0);
  EXPECT_EQ(tilec_rt::round(-2.5), -2.0);
  EXPECT_EQ(tilec_rt::round(2.6f), 3.0f);
  EXPECT_EQ(static_cast<float>(tilec_rt::round(half(0.5f))), 0.0f);
}

TEST(Math, SoftFloatsComputeInFloat) {
  for (uint32_t bits = 0; bits < 65536; bits += 7) {
    const half h = half::from_bits(static_cast<uint16_t>(bits));
    const float f = static_cast<float>(h);
    if (std::isnan(f)) continue;
    const auto same = [](half got, float want) {
      return std::isnan(want) ? std::isnan(static_cast<float>(got)) : got.bits == half(want).bits;
    };
    EXPECT_TRUE(same(tilec_rt::exp(h), std::exp(f))) << bits;
    EXPECT_TRUE(same(tilec_rt::sqrt(h), std::sqrt(f))) << bits;
    EXPECT_TRUE(same(tilec_rt::tanh(h), std::tanh(f))) << bits;
    EXPECT_TRUE(same(tilec_rt::max(h, half(1.0f)), std::fmax(f, 1.0f))) << bits;
    EXPECT_EQ(tilec_rt::isinf(h), std::isinf(f)) << bits;
  }
  const bfloat16 b(-3.0f);
  EXPECT_EQ(static_cast<float>(tilec_rt::abs(b)), 3.0f);
  EXPECT_EQ(static_cast<float>(tilec_rt::min(float8_e4m3(2.0f), float8_e4m3(-1.0f))), -1.0f);
  EXPECT_TRUE(tilec_rt::isnan(float8_e5m2(NAN)));
}

TEST(Math, MinMaxIgnoreNaNOnFloats) {
  EXPECT_EQ(tilec_rt::min(NAN, 1.0f), 1.0f);
  EXPECT_EQ(tilec_rt::max(2.0, std::nan("")), 2.0);
}

TEST(Math, Integers) {
  EXPECT_EQ(tilec_rt::abs(-5), 5);
  EXPECT_EQ(tilec_rt::abs(int64_t{-5}), 5);
  EXPECT_EQ(tilec_rt::abs(static_cast<int8_t>(-5)), 5);
  static_assert(std::is_same_v<decltype(tilec_rt::abs(int8_t{-5})), int8_t>);
  EXPECT_EQ(tilec_rt::abs(5u), 5u);
  EXPECT_EQ(tilec_rt::min(-3, 2), -3);
  EXPECT_EQ(tilec_rt::max(uint64_t{3}, uint64_t{9}), 9u);
}

// Threads hammer one location; each sum stays within the type's exact integers.
template <class T>
void hammer(int threads, int per_thread, T step) {
  // The neighbour shares a word with the target for 8- and 16-bit types.
  struct alignas(8) Pair {
    T target, neighbour;
  } pair{T(0), T(0)};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int i = 0; i < per_thread; ++i) {
        tilec_rt::atomic_add(&pair.target, step);
        tilec_rt::atomic_add(&pair.neighbour, step);
      }
    });
  }
  for (auto& thread : pool) thread.join();
  const double want = static_cast<double>(static_cast<float>(step)) * threads * per_thread;
  EXPECT_EQ(static_cast<double>(static_cast<float>(pair.target)), want);
  EXPECT_EQ(static_cast<double>(static_cast<float>(pair.neighbour)), want);
}

TEST(Atomics, AddIsAtomicForEveryType) {
  hammer<int32_t>(4, 20000, 3);
  hammer<int64_t>(4, 20000, -3);
  hammer<uint32_t>(4, 20000, 3);
  hammer<uint64_t>(4, 20000, 3);
  hammer<float>(4, 20000, 1.0f);
  hammer<double>(4, 20000, 0.5);
  hammer<half>(4, 512, half(1.0f));
  hammer<bfloat16>(4, 64, bfloat16(1.0f));
  hammer<float8_e4m3>(4, 4, float8_e4m3(1.0f));
  hammer<float8_e5m2>(4, 2, float8_e5m2(1.0f));
}

TEST(Atomics, ReturnsThePreviousValue) {
  int64_t i = 5;
  EXPECT_EQ(tilec_rt::atomic_add(&i, 2), 5);
  EXPECT_EQ(i, 7);
  float f = 1.5f;
  EXPECT_EQ(tilec_rt::atomic_add(&f, 1.0f), 1.5f);
  EXPECT_EQ(f, 2.5f);
  half h(1.5f);
  EXPECT_EQ(static_cast<float>(tilec_rt::atomic_add(&h, half(1.0f))), 1.5f);
  EXPECT_EQ(static_cast<float>(h), 2.5f);
}

}  // namespace
