// Tests of device/cuda/tilec_cuda.h, the header every generated CUDA kernel includes.
//
// Everywhere NVRTC loads (CI included): every wrapper compiles for sm_80 .. sm_90a, the PTX
// holds the instructions it should, the fp8 MMA is absent before sm_89, and the fragment maps
// agree with the PTX ISA's formulas (checked by static_assert inside NVRTC).
//
// On a GPU (skipped otherwise): one kernel per feature against a host reference, with fresh
// random inputs (the seed is in each failure message) and outputs poisoned before the launch.
// The host reference for the narrow floats is the CPU backend's header (device/cpu/tilec_cpu.h),
// whose soft floats soft_float_test.cc checks against the formats' definitions.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../device/cpu/tilec_cpu.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/cuda_module.h"
#include "runtime/cuda/nvrtc_compiler.h"
#include "runtime/embedded_headers.h"
#include "test_support.h"

namespace tilec::runtime {
namespace {

namespace fs = std::filesystem;

// ================================================================ kernels

// Every wrapper, instantiated for every type it takes, so that template and asm syntax errors
// show at compile time. Results go to `out` so nothing is dead.
constexpr const char* kEveryWrapper = R"cu(#include "cuda/tilec_cuda.h"
namespace tc = tilec_cuda;

#define UNARY(X) X(exp) X(exp2) X(exp10) X(log) X(log2) X(log10) X(sqrt) X(rsqrt) X(sin) X(cos) \
  X(tan) X(tanh) X(sigmoid) X(erf) X(abs) X(floor) X(ceil) X(round) X(trunc)
#define BINARY(X) X(pow) X(fmod) X(min) X(max)

template <class T>
__device__ float every_math(T x, T y) {
  float s = 0.0f;
#define U(name) s += tc::to_float(tc::name(x));
  UNARY(U)
#undef U
#define B(name) s += tc::to_float(tc::name(x, y));
  BINARY(B)
#undef B
  s += tc::isnan(x) + 2 * tc::isinf(x) + 4 * tc::isfinite(y);
  return s;
}

template <class T>
__device__ float every_conversion(float f, double d, int i, long l, unsigned long long u) {
  const T a = tc::from_float<T>(f), b = tc::from_float<T>(d), c = tc::from_float<T>(i);
  const T e = tc::from_float<T>(l), g = tc::from_float<T>(u);
  return tc::to_float(a) + tc::to_float(b) + tc::to_float(c) + tc::to_float(e) + tc::to_float(g) +
         float(tc::bits_of(tc::from_bits<T>(tc::bits_of(a))));
}

template <class T>
__device__ long long every_integer(T a, T b) {
  return static_cast<long long>(tc::floordiv(a, b)) + tc::floormod(a, b) + tc::abs(a) +
         tc::min(a, b) + tc::max(a, b);
}

template <class T>
__device__ float every_reduction(T v) {
  return float(tc::warp_reduce_sum(v)) + float(tc::warp_reduce_max(v)) +
         float(tc::warp_reduce_min(v)) + float(tc::warp_reduce_sum<16>(v)) +
         float(tc::warp_reduce_max<4>(v)) + float(tc::warp_reduce_min<2>(v));
}

extern "C" __global__ void every_wrapper(float* out, const float* in, int* iout, long* lout,
                                         unsigned* uout, unsigned long long* ullout, double* dout,
                                         tc::half* hout, tc::bfloat16* bout, tc::float8_e4m3* e4out,
                                         tc::float8_e5m2* e5out, int8_t* i8out, int16_t* i16out,
                                         uint8_t* u8out, uint16_t* u16out) {
  const int lane = threadIdx.x % 32;
  const float x = in[threadIdx.x], y = in[threadIdx.x + 64];
  float s = every_math(x, y) + every_math(double(x), double(y)) +
            every_math(tc::from_float<tc::half>(x), tc::from_float<tc::half>(y)) +
            every_math(tc::from_float<tc::bfloat16>(x), tc::from_float<tc::bfloat16>(y)) +
            every_math(tc::from_float<tc::float8_e4m3>(x), tc::from_float<tc::float8_e4m3>(y)) +
            every_math(tc::from_float<tc::float8_e5m2>(x), tc::from_float<tc::float8_e5m2>(y));
  s += every_conversion<tc::half>(x, y, iout[0], lout[0], ullout[0]) +
       every_conversion<tc::bfloat16>(x, y, iout[0], lout[0], ullout[0]) +
       every_conversion<tc::float8_e4m3>(x, y, iout[0], lout[0], ullout[0]) +
       every_conversion<tc::float8_e5m2>(x, y, iout[0], lout[0], ullout[0]) +
       tc::from_float<float>(y) + float(tc::from_float<double>(lout[1]));
  s += tc::floordiv(x, y) + tc::floormod(x, y) + float(tc::floordiv(double(x), 3.0)) +
       float(tc::floormod(double(x), 3.0));
  long long n = every_integer(iout[1], iout[2]) + every_integer(lout[1], lout[2]) +
                every_integer(uout[1], uout[2]) + every_integer(ullout[1], ullout[2]) +
                every_integer(i8out[1], i8out[2]) + tc::floordiv(iout[1], lout[2]) +
                tc::floormod(i16out[1], iout[2]);

  s += every_reduction(x) + every_reduction(double(y)) + every_reduction(iout[3]) +
       every_reduction(uout[3]) + every_reduction(lout[3]) + every_reduction(ullout[3]) +
       every_reduction(tc::from_float<tc::half>(x)) + every_reduction(tc::from_float<tc::bfloat16>(y));

  n += tc::atomic_add(iout + 4, 1) + tc::atomic_add(uout + 4, 2u) + tc::atomic_add(lout + 4, 3) +
       tc::atomic_add(ullout + 4, 4) + tc::atomic_add(i8out + 4, 5) + tc::atomic_add(i16out + 4, 6) +
       tc::atomic_add(u8out + 4, 7) + tc::atomic_add(u16out + 4, 8);
  s += tc::atomic_add(out + 100, x) + float(tc::atomic_add(dout + 4, 1.5)) +
       tc::to_float(tc::atomic_add(hout + 4, tc::from_float<tc::half>(x))) +
       tc::to_float(tc::atomic_add(bout + 4, tc::from_float<tc::bfloat16>(x))) +
       tc::to_float(tc::atomic_add(e4out + 4, tc::from_float<tc::float8_e4m3>(x))) +
       tc::to_float(tc::atomic_add(e5out + 4, tc::from_float<tc::float8_e5m2>(x)));

  __shared__ __align__(128) uint4 chunks[128];
  __shared__ __align__(16) uint16_t tile[16 * 24];
  tc::prefetch_l2(in + 32 * threadIdx.x);
  tc::cp_async_16(tc::shared_address(&chunks[threadIdx.x]), in + 4 * threadIdx.x, x > 0.0f);
  tc::cp_async_8(tc::shared_address(&chunks[64 + threadIdx.x]), in + 2 * threadIdx.x, y > 0.0f);
  tc::cp_async_4(tc::shared_address(&chunks[64 + threadIdx.x].z), in + threadIdx.x);
  tc::cp_async_commit();
  tc::cp_async_16(tc::shared_address(&tile[(threadIdx.x % 32) * 8]), in + 4 * threadIdx.x);
  tc::cp_async_commit();
  tc::cp_async_wait<1>();
  tc::cp_async_wait<0>();
  tc::cp_async_wait_all();
  tc::sync_threads();

  const uint16_t* row = &tile[(lane % 16) * 24 + 8 * (lane / 16)];
  uint32_t r[4], t[4], a2[2], b2[2], one[1], onet[1];
  tc::ldmatrix_x4(r, row);
  tc::ldmatrix_x4_trans(t, row);
  tc::ldmatrix_x2(a2, row);
  tc::ldmatrix_x2_trans(b2, row);
  tc::ldmatrix_x1(one, row);
  tc::ldmatrix_x1_trans(onet, row);
  n += one[0] + onet[0] + a2[1] + b2[0];
  n += tc::frag_ldmatrix::lane(3, 4) + tc::frag_ldmatrix::slot(3, 4) +
       tc::frag_ldmatrix_trans::row(lane, 1) + tc::frag_ldmatrix_trans::col(lane, 1);

  float c[4] = {x, y, x * y, x - y}, d[4];
  tc::mma_m16n8k16_f16(d, r, t, c);
  tc::mma_m16n8k16_bf16(d, t, r, d);
  const uint32_t tf[4] = {tc::to_tf32(x), tc::to_tf32(y), tc::to_tf32(d[0]), tc::to_tf32(d[1])};
  tc::mma_m16n8k8_tf32(d, tf, tf + 2, d);
#if __CUDA_ARCH__ >= 890
  tc::mma_m16n8k32_e4m3(d, r, t, d);
  tc::mma_m16n8k32_e5m2(d, t, r, d);
#endif
  n += tc::pack_half2(tc::from_float<tc::half>(x), tc::from_float<tc::half>(y)) +
       tc::pack_bfloat162(tc::from_float<tc::bfloat16>(x), tc::from_float<tc::bfloat16>(y)) +
       tc::pack_b8x4(1, 2, 3, 4) + tc::pack_b16x2(5, 6);
  n += tc::frag_m16n8k16_a::row(lane, 3) + tc::frag_m16n8k16_b::col(lane, 1) +
       tc::frag_m16n8_c::slot(9, 3) + tc::frag_m16n8k8_tf32_a::lane(9, 5) +
       tc::frag_m16n8k8_tf32_b::row(lane, 1) + tc::frag_m16n8k32_f8_a::col(lane, 13) +
       tc::frag_m16n8k32_f8_b::slot(20, 2);

#if __CUDA_ARCH__ >= 900
  __shared__ __align__(8) uint64_t bar;
  tc::fence_proxy_async();
  if (threadIdx.x == 0) tc::mbarrier_init(&bar, 1);
  tc::sync_threads();
  if (threadIdx.x == 0) {
    tc::mbarrier_arrive_expect_tx(&bar, 1024);
    tc::cp_async_bulk_global_to_shared(chunks, in, 1024, &bar);
  }
  n += tc::mbarrier_try_wait_parity(&bar, 1);
  tc::mbarrier_wait_parity(&bar, 0);
  tc::sync_threads();
  if (threadIdx.x == 0) {
    tc::mbarrier_init(&bar, 2);
    tc::mbarrier_arrive(&bar);
  }
#endif

  out[threadIdx.x] = s + d[0] + d[1] + d[2] + d[3] + float(n) + float(chunks[lane].x);
}
)cu";

// The fp8 MMA called without an architecture guard: an error before sm_89, not a no-op.
constexpr const char* kFp8MmaUnguarded = R"cu(#include "cuda/tilec_cuda.h"
extern "C" __global__ void k(float* out, const unsigned* in) {
  float d[4], c[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  tilec_cuda::mma_m16n8k32_e4m3(d, in, in + 4, c);
  out[threadIdx.x] = d[0];
}
)cu";

// The fragment maps against the PTX ISA's formulas, written out again from its text, and
// each map's inverse: checked by static_assert, so inside NVRTC.
constexpr const char* kFragmentMapChecks = R"cu(#include "cuda/tilec_cuda.h"
namespace tc = tilec_cuda;

// Each (lane, slot) names a distinct element in range, lane() and slot() invert row() and
// col(), and the slots cover the matrix.
template <class F>
constexpr bool is_bijection() {
  static_assert(F::rows * F::cols == 32 * F::slots, "the warp holds the matrix once");
  bool seen[F::rows * F::cols] = {};
  for (int lane = 0; lane < 32; ++lane) {
    for (int slot = 0; slot < F::slots; ++slot) {
      const int row = F::row(lane, slot), col = F::col(lane, slot);
      if (row < 0 || row >= F::rows || col < 0 || col >= F::cols) return false;
      if (seen[row * F::cols + col]) return false;
      seen[row * F::cols + col] = true;
      if (F::lane(row, col) != lane || F::slot(row, col) != slot) return false;
    }
  }
  return true;
}

// `row(g, t, i)` and `col(g, t, i)`: the PTX ISA's formula for element i of the thread with
// groupID g = lane >> 2 and threadID_in_group t = lane % 4.
template <class F, class Row, class Col>
constexpr bool follows(Row row, Col col) {
  for (int lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < F::slots; ++i) {
      const int g = lane >> 2, t = lane % 4;
      if (F::row(lane, i) != row(g, t, i) || F::col(lane, i) != col(g, t, i)) return false;
    }
  }
  return true;
}

static_assert(is_bijection<tc::frag_m16n8k16_a>(), "m16n8k16 A");
static_assert(is_bijection<tc::frag_m16n8k16_b>(), "m16n8k16 B");
static_assert(is_bijection<tc::frag_m16n8_c>(), "m16n8 C");
static_assert(is_bijection<tc::frag_m16n8k8_tf32_a>(), "m16n8k8 tf32 A");
static_assert(is_bijection<tc::frag_m16n8k8_tf32_b>(), "m16n8k8 tf32 B");
static_assert(is_bijection<tc::frag_m16n8k32_f8_a>(), "m16n8k32 fp8 A");
static_assert(is_bijection<tc::frag_m16n8k32_f8_b>(), "m16n8k32 fp8 B");
static_assert(is_bijection<tc::frag_ldmatrix>(), "ldmatrix");
static_assert(is_bijection<tc::frag_ldmatrix_trans>(), "ldmatrix .trans");

// "row = groupID for ai where 0 <= i < 2 || 4 <= i < 6, groupID + 8 otherwise;
//  col = (threadID_in_group * 2) + (i & 0x1) for ai where i < 4, ... + 8 for i >= 4"
static_assert(follows<tc::frag_m16n8k16_a>(
    [](int g, int t, int i) { return (i < 2 || (4 <= i && i < 6)) ? g : g + 8; },
    [](int g, int t, int i) { return t * 2 + (i & 1) + (i >= 4 ? 8 : 0); }), "m16n8k16 A");
// "row = (threadID_in_group * 2) + (i & 0x1) for bi where i < 2, ... + 8 for i >= 2;
//  col = groupID"
static_assert(follows<tc::frag_m16n8k16_b>(
    [](int g, int t, int i) { return t * 2 + (i & 1) + (i >= 2 ? 8 : 0); },
    [](int g, int t, int i) { return g; }), "m16n8k16 B");
// "row = groupID for ci where i < 2, groupID + 8 for i >= 2;
//  col = (threadID_in_group * 2) + (i & 0x1)"
static_assert(follows<tc::frag_m16n8_c>(
    [](int g, int t, int i) { return i < 2 ? g : g + 8; },
    [](int g, int t, int i) { return t * 2 + (i & 1); }), "m16n8 C");
// "row = groupID for a0 and a2, groupID + 8 for a1 and a3;
//  col = threadID_in_group for a0 and a1, threadID_in_group + 4 for a2 and a3"
static_assert(follows<tc::frag_m16n8k8_tf32_a>(
    [](int g, int t, int i) { return (i == 0 || i == 2) ? g : g + 8; },
    [](int g, int t, int i) { return i < 2 ? t : t + 4; }), "m16n8k8 tf32 A");
// "row = threadID_in_group for b0, threadID_in_group + 4 for b1; col = groupID"
static_assert(follows<tc::frag_m16n8k8_tf32_b>(
    [](int g, int t, int i) { return i == 0 ? t : t + 4; },
    [](int g, int t, int i) { return g; }), "m16n8k8 tf32 B");
// "row = groupID for ai where 0 <= i < 4 || 8 <= i < 12, groupID + 8 otherwise;
//  col = (threadID_in_group * 4) + (i & 0x3) for ai where i < 8, ... + 16 for i >= 8"
static_assert(follows<tc::frag_m16n8k32_f8_a>(
    [](int g, int t, int i) { return (i < 4 || (8 <= i && i < 12)) ? g : g + 8; },
    [](int g, int t, int i) { return t * 4 + (i & 3) + (i >= 8 ? 16 : 0); }), "m16n8k32 fp8 A");
// "row = (threadID_in_group * 4) + (i & 0x3) for bi where i < 4, ... + 16 for i >= 4;
//  col = groupID"
static_assert(follows<tc::frag_m16n8k32_f8_b>(
    [](int g, int t, int i) { return t * 4 + (i & 3) + (i >= 4 ? 16 : 0); },
    [](int g, int t, int i) { return g; }), "m16n8k32 fp8 B");
// ldmatrix: "each thread receives two consecutive elements of a row": thread l holds row
// l / 4, elements 2 * (l % 4) and 2 * (l % 4) + 1; .trans holds the same of the transpose.
static_assert(follows<tc::frag_ldmatrix>(
    [](int g, int t, int i) { return g; },
    [](int g, int t, int i) { return 2 * t + i; }), "ldmatrix");
static_assert(follows<tc::frag_ldmatrix_trans>(
    [](int g, int t, int i) { return 2 * t + i; },
    [](int g, int t, int i) { return g; }), "ldmatrix .trans");

extern "C" __global__ void k(int* out) { out[0] = tc::frag_m16n8k16_a::slot(9, 9); }
)cu";

// The kernels that run on a GPU share this start.
constexpr const char* kPrelude = R"cu(#include "cuda/tilec_cuda.h"
namespace tc = tilec_cuda;
)cu";

constexpr const char* kConversionKernels = R"cu(
template <class T, class Bits>
__device__ void widen_and_back(const Bits* in, float* wide, Bits* back, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float f = tc::to_float(tc::from_bits<T>(in[i]));
  wide[i] = f;
  back[i] = tc::bits_of(tc::from_float<T>(f));
}

template <class T, class Bits>
__device__ void narrow_all(const float* f, const double* d, const int32_t* i32,
                           const int64_t* i64, Bits* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[4 * i + 0] = tc::bits_of(tc::from_float<T>(f[i]));
  out[4 * i + 1] = tc::bits_of(tc::from_float<T>(d[i]));
  out[4 * i + 2] = tc::bits_of(tc::from_float<T>(i32[i]));
  out[4 * i + 3] = tc::bits_of(tc::from_float<T>(i64[i]));
}

#define KERNELS(name, T, Bits)                                                                 \
  extern "C" __global__ void widen_##name(const Bits* in, float* wide, Bits* back, int n) {    \
    widen_and_back<T>(in, wide, back, n);                                                      \
  }                                                                                            \
  extern "C" __global__ void narrow_##name(const float* f, const double* d, const int32_t* i32, \
                                           const int64_t* i64, Bits* out, int n) {             \
    narrow_all<T>(f, d, i32, i64, out, n);                                                     \
  }
KERNELS(half, tc::half, uint16_t)
KERNELS(bfloat16, tc::bfloat16, uint16_t)
KERNELS(float8_e4m3, tc::float8_e4m3, uint8_t)
KERNELS(float8_e5m2, tc::float8_e5m2, uint8_t)
)cu";

constexpr const char* kDivisionKernel = R"cu(
extern "C" __global__ void division(const int32_t* a32, const int32_t* b32, const int64_t* a64,
                                    const int64_t* b64, const float* af, const float* bf,
                                    const double* ad, const double* bd, int32_t* out32,
                                    int64_t* out64, float* outf, double* outd, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out32[2 * i] = tc::floordiv(a32[i], b32[i]);
  out32[2 * i + 1] = tc::floormod(a32[i], b32[i]);
  out64[4 * i] = tc::floordiv(a64[i], b64[i]);
  out64[4 * i + 1] = tc::floormod(a64[i], b64[i]);
  out64[4 * i + 2] = tc::floordiv(a32[i], b64[i]);  // mixed: int64_t results
  out64[4 * i + 3] = tc::floormod(a32[i], b64[i]);
  outf[2 * i] = tc::floordiv(af[i], bf[i]);
  outf[2 * i + 1] = tc::floormod(af[i], bf[i]);
  outd[2 * i] = tc::floordiv(ad[i], bd[i]);
  outd[2 * i + 1] = tc::floormod(ad[i], bd[i]);
}
)cu";

// kMathKernels is preceded by "#define UNARY(X) ..." and "#define BINARY(X) ..." built from the
// host's tables, so both sides list the functions in one order.
constexpr const char* kMathKernels = R"cu(
template <class T>
__device__ void math(const T* x, const T* y, T* out, bool* classes, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int k = 0;
#define U(name) out[(k++) * n + i] = tc::name(x[i]);
  UNARY(U)
#undef U
#define B(name) out[(k++) * n + i] = tc::name(x[i], y[i]);
  BINARY(B)
#undef B
  classes[3 * i] = tc::isnan(x[i]);
  classes[3 * i + 1] = tc::isinf(x[i]);
  classes[3 * i + 2] = tc::isfinite(x[i]);
}
extern "C" __global__ void math_float(const float* x, const float* y, float* out, bool* classes,
                                      int n) {
  math(x, y, out, classes, n);
}
extern "C" __global__ void math_double(const double* x, const double* y, double* out,
                                       bool* classes, int n) {
  math(x, y, out, classes, n);
}

// A narrow type's result and the float function's result on the same (exact) input.
template <class T, class Bits>
__device__ void math_narrow(const Bits* xb, const Bits* yb, Bits* out, float* out_float,
                            bool* classes, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const T x = tc::from_bits<T>(xb[i]), y = tc::from_bits<T>(yb[i]);
  const float xf = tc::to_float(x), yf = tc::to_float(y);
  int k = 0;
#define U(name)                                     \
  out[k * n + i] = tc::bits_of(tc::name(x));        \
  out_float[k * n + i] = tc::name(xf);              \
  ++k;
  UNARY(U)
#undef U
#define B(name)                                     \
  out[k * n + i] = tc::bits_of(tc::name(x, y));     \
  out_float[k * n + i] = tc::name(xf, yf);          \
  ++k;
  BINARY(B)
#undef B
  classes[3 * i] = tc::isnan(x);
  classes[3 * i + 1] = tc::isinf(x);
  classes[3 * i + 2] = tc::isfinite(x);
}
#define NARROW(name, T, Bits)                                                                  \
  extern "C" __global__ void math_##name(const Bits* x, const Bits* y, Bits* out,              \
                                         float* out_float, bool* classes, int n) {             \
    math_narrow<T>(x, y, out, out_float, classes, n);                                          \
  }
NARROW(half, tc::half, uint16_t)
NARROW(bfloat16, tc::bfloat16, uint16_t)
NARROW(float8_e4m3, tc::float8_e4m3, uint8_t)
NARROW(float8_e5m2, tc::float8_e5m2, uint8_t)

extern "C" __global__ void integer_math(const int32_t* a32, const int32_t* b32,
                                        const int64_t* a64, const int64_t* b64, int32_t* out32,
                                        int64_t* out64, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out32[3 * i] = tc::abs(a32[i]);
  out32[3 * i + 1] = tc::min(a32[i], b32[i]);
  out32[3 * i + 2] = tc::max(a32[i], b32[i]);
  out64[3 * i] = tc::abs(a64[i]);
  out64[3 * i + 1] = tc::min(a64[i], b64[i]);
  out64[3 * i + 2] = tc::max(a64[i], b64[i]);
}
)cu";

// Two warps; out[(width index * 3 + op) * 64 + thread] for the widths 32, 16, 8, 4, 2, 1 and
// then the default width (32) again; op 0 = sum, 1 = max, 2 = min.
constexpr const char* kReductionKernels = R"cu(
template <int W, class T>
__device__ void reduce(T v, T* out) {
  out[threadIdx.x] = tc::warp_reduce_sum<W>(v);
  out[64 + threadIdx.x] = tc::warp_reduce_max<W>(v);
  out[128 + threadIdx.x] = tc::warp_reduce_min<W>(v);
}
template <class T>
__device__ void reduce_all(const T* in, T* out) {
  const T v = in[threadIdx.x];
  reduce<32>(v, out);
  reduce<16>(v, out + 192);
  reduce<8>(v, out + 384);
  reduce<4>(v, out + 576);
  reduce<2>(v, out + 768);
  reduce<1>(v, out + 960);
  out[1152 + threadIdx.x] = tc::warp_reduce_sum(v);
  out[1216 + threadIdx.x] = tc::warp_reduce_max(v);
  out[1280 + threadIdx.x] = tc::warp_reduce_min(v);
}
extern "C" __global__ void reduce_int32(const int32_t* in, int32_t* out) { reduce_all(in, out); }
extern "C" __global__ void reduce_uint32(const uint32_t* in, uint32_t* out) { reduce_all(in, out); }
extern "C" __global__ void reduce_int64(const int64_t* in, int64_t* out) { reduce_all(in, out); }
extern "C" __global__ void reduce_float(const float* in, float* out) { reduce_all(in, out); }
extern "C" __global__ void reduce_double(const double* in, double* out) { reduce_all(in, out); }
extern "C" __global__ void reduce_half(const tc::half* in, tc::half* out) { reduce_all(in, out); }
extern "C" __global__ void reduce_bfloat16(const tc::bfloat16* in, tc::bfloat16* out) {
  reduce_all(in, out);
}
)cu";

// 256 threads. src: 256 16-byte chunks, then 256 8-byte ones, then 256 4-byte ones (448 chunks
// of 16 bytes). Each thread copies its chunk of each size with its predicate, in two groups;
// after waiting for the first group only, the block reads the 16-byte chunks (each thread
// another thread's), then after wait_all the rest.
constexpr const char* kCpAsyncKernel = R"cu(
extern "C" __global__ void cp_async(const uint4* src, const int* pred, uint4* out16, uint2* out8,
                                    unsigned* out4) {
  __shared__ __align__(16) uint4 s16[256];
  __shared__ __align__(16) uint2 s8[256];
  __shared__ __align__(16) unsigned s4[256];
  const int t = threadIdx.x;
  s16[t] = make_uint4(0xA5A5A5A5u, 0xA5A5A5A5u, 0xA5A5A5A5u, 0xA5A5A5A5u);
  s8[t] = make_uint2(0xA5A5A5A5u, 0xA5A5A5A5u);
  s4[t] = 0xA5A5A5A5u;
  tc::sync_threads();
  tc::cp_async_16(tc::shared_address(&s16[t]), &src[t], pred[t] != 0);
  tc::cp_async_commit();
  tc::cp_async_8(tc::shared_address(&s8[t]), reinterpret_cast<const uint2*>(src + 256) + t, pred[256 + t] != 0);
  tc::cp_async_4(tc::shared_address(&s4[t]), reinterpret_cast<const unsigned*>(src + 384) + t, pred[512 + t] != 0);
  tc::cp_async_commit();
  tc::cp_async_wait<1>();
  tc::sync_threads();
  out16[t] = s16[(t + 37) % 256];
  tc::cp_async_wait_all();
  tc::sync_threads();
  out8[t] = s8[(t + 37) % 256];
  out4[t] = s4[(t + 37) % 256];
}
)cu";

// One warp. The 16x16 tile sits in shared memory with rows 24 elements apart (48 bytes; rows
// stay 16-byte aligned, the 8 padding elements poisoned). Lane l addresses row l % 16 at
// column 8 * (l / 16): matrix j = l / 8 of an x4 load is the 8x8 block at row 8 * (j % 2),
// column 8 * (j / 2). out[(variant * 32 + lane) * 4 + reg], variants x1, x2, x4, x1.trans,
// x2.trans, x4.trans; registers past the count stay as poisoned. frag_a[lane * 8 + slot] is the
// tile element that frag_m16n8k16_a places in (lane, slot), frag_b[lane * 4 + slot] the one
// that frag_m16n8k16_b places there for B = the tile's left 16x8 half (K x N rows).
constexpr const char* kLdmatrixKernel = R"cu(
extern "C" __global__ void ldmatrix(const uint16_t* tile, uint32_t* out, uint16_t* frag_a,
                                    uint16_t* frag_b) {
  __shared__ __align__(16) uint16_t s[16 * 24];
  const int lane = threadIdx.x;
  for (int i = lane; i < 16 * 24; i += 32) s[i] = 0xFFFF;
  tc::sync_threads();
  for (int i = lane; i < 256; i += 32) s[(i / 16) * 24 + i % 16] = tile[i];
  tc::sync_threads();
  const uint16_t* row = &s[(lane % 16) * 24 + 8 * (lane / 16)];
  uint32_t r[4];
  tc::ldmatrix_x1(r, row);
  out[(0 * 32 + lane) * 4] = r[0];
  tc::ldmatrix_x2(r, row);
  for (int j = 0; j < 2; ++j) out[(1 * 32 + lane) * 4 + j] = r[j];
  tc::ldmatrix_x4(r, row);
  for (int j = 0; j < 4; ++j) out[(2 * 32 + lane) * 4 + j] = r[j];
  tc::ldmatrix_x1_trans(r, row);
  out[(3 * 32 + lane) * 4] = r[0];
  tc::ldmatrix_x2_trans(r, row);
  for (int j = 0; j < 2; ++j) out[(4 * 32 + lane) * 4 + j] = r[j];
  tc::ldmatrix_x4_trans(r, row);
  for (int j = 0; j < 4; ++j) out[(5 * 32 + lane) * 4 + j] = r[j];
  using A = tc::frag_m16n8k16_a;
  using B = tc::frag_m16n8k16_b;
  for (int slot = 0; slot < A::slots; ++slot) {
    frag_a[lane * 8 + slot] = tile[A::row(lane, slot) * 16 + A::col(lane, slot)];
  }
  for (int slot = 0; slot < B::slots; ++slot) {
    frag_b[lane * 4 + slot] = tile[B::row(lane, slot) * 16 + B::col(lane, slot)];
  }
}
)cu";

// One warp per shape: A (16 x K, row-major), B (K x 8, row-major: B[k * 8 + n]) and C (16 x 8)
// are loaded into fragments through the header's maps, D is stored through frag_m16n8_c.
constexpr const char* kMmaKernels = R"cu(
template <class FA, class FB, int K, class Bits>
__device__ void load_16bit(const Bits* A, const Bits* B, uint32_t* a, uint32_t* b) {
  const int lane = threadIdx.x;
  for (int r = 0; r < FA::regs; ++r) {
    a[r] = tc::pack_b16x2(A[FA::row(lane, 2 * r) * K + FA::col(lane, 2 * r)],
                          A[FA::row(lane, 2 * r + 1) * K + FA::col(lane, 2 * r + 1)]);
  }
  for (int r = 0; r < FB::regs; ++r) {
    b[r] = tc::pack_b16x2(B[FB::row(lane, 2 * r) * 8 + FB::col(lane, 2 * r)],
                          B[FB::row(lane, 2 * r + 1) * 8 + FB::col(lane, 2 * r + 1)]);
  }
}
__device__ void load_c(const float* C, float* c) {
  using F = tc::frag_m16n8_c;
  for (int s = 0; s < F::slots; ++s) c[s] = C[F::row(threadIdx.x, s) * 8 + F::col(threadIdx.x, s)];
}
__device__ void store_d(const float* d, float* D) {
  using F = tc::frag_m16n8_c;
  for (int s = 0; s < F::slots; ++s) D[F::row(threadIdx.x, s) * 8 + F::col(threadIdx.x, s)] = d[s];
}

extern "C" __global__ void mma_f16(const uint16_t* A, const uint16_t* B, const float* C, float* D) {
  uint32_t a[4], b[2];
  float c[4], d[4];
  load_16bit<tc::frag_m16n8k16_a, tc::frag_m16n8k16_b, 16>(A, B, a, b);
  load_c(C, c);
  tc::mma_m16n8k16_f16(d, a, b, c);
  store_d(d, D);
}
extern "C" __global__ void mma_bf16(const uint16_t* A, const uint16_t* B, const float* C,
                                    float* D) {
  uint32_t a[4], b[2];
  float c[4], d[4];
  load_16bit<tc::frag_m16n8k16_a, tc::frag_m16n8k16_b, 16>(A, B, a, b);
  load_c(C, c);
  tc::mma_m16n8k16_bf16(d, a, b, c);
  store_d(d, D);
}
// The accumulator is both C and D here.
extern "C" __global__ void mma_tf32(const float* A, const float* B, const float* C, float* D) {
  using FA = tc::frag_m16n8k8_tf32_a;
  using FB = tc::frag_m16n8k8_tf32_b;
  const int lane = threadIdx.x;
  uint32_t a[4], b[2];
  float acc[4];
  for (int s = 0; s < FA::slots; ++s) a[s] = tc::to_tf32(A[FA::row(lane, s) * 8 + FA::col(lane, s)]);
  for (int s = 0; s < FB::slots; ++s) b[s] = tc::to_tf32(B[FB::row(lane, s) * 8 + FB::col(lane, s)]);
  load_c(C, acc);
  tc::mma_m16n8k8_tf32(acc, a, b, acc);
  store_d(acc, D);
}
#ifdef TILEC_CUDA_HAS_FP8_MMA
template <class FA, class FB>
__device__ void load_8bit(const uint8_t* A, const uint8_t* B, uint32_t* a, uint32_t* b) {
  const int lane = threadIdx.x;
  for (int r = 0; r < FA::regs; ++r) {
    uint8_t e[4];
    for (int j = 0; j < 4; ++j) e[j] = A[FA::row(lane, 4 * r + j) * 32 + FA::col(lane, 4 * r + j)];
    a[r] = tc::pack_b8x4(e[0], e[1], e[2], e[3]);
  }
  for (int r = 0; r < FB::regs; ++r) {
    uint8_t e[4];
    for (int j = 0; j < 4; ++j) e[j] = B[FB::row(lane, 4 * r + j) * 8 + FB::col(lane, 4 * r + j)];
    b[r] = tc::pack_b8x4(e[0], e[1], e[2], e[3]);
  }
}
extern "C" __global__ void mma_e4m3(const uint8_t* A, const uint8_t* B, const float* C, float* D) {
  uint32_t a[4], b[2];
  float c[4], d[4];
  load_8bit<tc::frag_m16n8k32_f8_a, tc::frag_m16n8k32_f8_b>(A, B, a, b);
  load_c(C, c);
  tc::mma_m16n8k32_e4m3(d, a, b, c);
  store_d(d, D);
}
extern "C" __global__ void mma_e5m2(const uint8_t* A, const uint8_t* B, const float* C, float* D) {
  uint32_t a[4], b[2];
  float c[4], d[4];
  load_8bit<tc::frag_m16n8k32_f8_a, tc::frag_m16n8k32_f8_b>(A, B, a, b);
  load_c(C, c);
  tc::mma_m16n8k32_e5m2(d, a, b, c);
  store_d(d, D);
}
#endif
)cu";

// Thread i adds values[i] to slot i % 8 of each type. olds32 receives the previous values of
// the int32 adds (all positive, so each slot's previous values increase).
constexpr const char* kAtomicKernels = R"cu(
extern "C" __global__ void atomics(int32_t* i32, uint32_t* u32, int64_t* i64, uint64_t* u64,
                                   float* f32, double* f64, const int32_t* values,
                                   int32_t* olds32, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int32_t v = values[i];
  const int slot = i % 8;
  olds32[i] = tc::atomic_add(&i32[slot], v);
  tc::atomic_add(&u32[slot], static_cast<uint32_t>(v) * 2654435761u);
  tc::atomic_add(&i64[slot], static_cast<int64_t>(v) * -1000003);
  tc::atomic_add(&u64[slot], static_cast<uint64_t>(v) << 40);
  tc::atomic_add(&f32[slot], static_cast<float>(v) * 0.0625f);
  tc::atomic_add(&f64[slot], static_cast<double>(v) * 0.0625);
}

// 8 adjacent slots of each narrow type; thread i adds to slot i % 8 the value of index i.
// Slots share 32-bit words, so the compare-and-swap loops race on neighbouring bytes.
extern "C" __global__ void narrow_atomics(tc::half* h, tc::bfloat16* bf, tc::float8_e4m3* e4,
                                          tc::float8_e5m2* e5, int8_t* i8, int16_t* i16,
                                          uint8_t* u8, const float* hv, const float* bv,
                                          const int8_t* iv, int n_half, int n_e4, int n_e5,
                                          int n_int) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int slot = i % 8;
  if (i < n_half) {
    tc::atomic_add(&h[slot], tc::from_float<tc::half>(hv[i]));
    tc::atomic_add(&bf[slot], tc::from_float<tc::bfloat16>(bv[i]));
  }
  if (i < n_e4) tc::atomic_add(&e4[slot], tc::from_float<tc::float8_e4m3>(0.25f));
  if (i < n_e5) tc::atomic_add(&e5[slot], tc::from_float<tc::float8_e5m2>(0.5f));
  if (i < n_int) {
    tc::atomic_add(&i8[slot], iv[i]);
    tc::atomic_add(&i16[slot], static_cast<int16_t>(iv[i] * 300));
    tc::atomic_add(&u8[slot], static_cast<uint8_t>(iv[i]));
  }
}
)cu";

// 128 threads, sm_90. Two 2 KiB bulk copies through one mbarrier (phases 0 and 1) into a buffer
// the block first poisoned with ordinary stores; each thread then reads another's chunk.
// flags: try_wait on parity 0 and 1 right after init, before any arrival.
constexpr const char* kBulkCopyKernel = R"cu(
extern "C" __global__ void bulk_copy(const uint4* src, uint4* out, int* flags) {
  __shared__ __align__(128) uint4 buf[128];
  __shared__ __align__(8) uint64_t bar;
  const int t = threadIdx.x;
  if (t == 0) tc::mbarrier_init(&bar, 1);
  for (int phase = 0; phase < 2; ++phase) {
    buf[t] = make_uint4(0xA5A5A5A5u, 0xA5A5A5A5u, 0xA5A5A5A5u, 0xA5A5A5A5u);
    tc::fence_proxy_async();
    tc::sync_threads();
    if (t == 0) {
      if (phase == 0) {
        flags[0] = tc::mbarrier_try_wait_parity(&bar, 0);
        flags[1] = tc::mbarrier_try_wait_parity(&bar, 1);
      }
      tc::mbarrier_arrive_expect_tx(&bar, 128 * 16);
      tc::cp_async_bulk_global_to_shared(buf, src + 128 * phase, 128 * 16, &bar);
    }
    tc::mbarrier_wait_parity(&bar, phase);
    out[128 * phase + t] = buf[(t + 5) % 128];
    tc::sync_threads();
  }
}
)cu";

// ================================================================ host helpers

const NvrtcCompiler& compiler() {
  const NvrtcCompiler* compiler = NvrtcCompiler::get();
  if (compiler == nullptr) throw std::runtime_error(NvrtcCompiler::unavailable_reason());
  return *compiler;
}

bool is_elf(const std::string& bytes) {
  return bytes.rfind(
             "\x7f"
             "ELF",
             0) == 0;
}

template <class To, class From>
To bit_cast(const From& from) {
  static_assert(sizeof(To) == sizeof(From));
  To to;
  std::memcpy(&to, &from, sizeof to);
  return to;
}

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
  static constexpr int kBias = (1 << (E - 1)) - 1;
  static constexpr uint32_t kSign = 1u << (E + M);
  static constexpr uint32_t kPatterns = 1u << (1 + E + M);
  using Bits = typename tilec_rt::soft_float<E, M, Ieee>::Bits;
};

template <class T>
const char* type_name() {
  if constexpr (std::is_same_v<T, half>) return "half";
  if constexpr (std::is_same_v<T, bfloat16>) return "bfloat16";
  if constexpr (std::is_same_v<T, float8_e4m3>) return "float8_e4m3";
  if constexpr (std::is_same_v<T, float8_e5m2>) return "float8_e5m2";
  return "?";
}

template <class T>
bool is_nan_bits(uint32_t bits) {
  return std::isnan(static_cast<float>(T::from_bits(static_cast<typename Spec<T>::Bits>(bits))));
}

// The value a magnitude pattern would have by the format's formula, also for the pattern one
// past the largest finite value (inf or NaN in the format), which gives the overflow step.
template <class T>
double formula_value(uint32_t magnitude) {
  using S = Spec<T>;
  const uint32_t biased = magnitude >> S::kMantBits;
  const uint32_t mant = magnitude & ((1u << S::kMantBits) - 1);
  if (biased == 0) return std::ldexp(static_cast<double>(mant), 1 - S::kBias - S::kMantBits);
  return std::ldexp(static_cast<double>((1u << S::kMantBits) + mant),
                    static_cast<int>(biased) - S::kBias - S::kMantBits);
}

// The largest finite magnitude pattern.
template <class T>
uint32_t max_finite() {
  using S = Spec<T>;
  return S::kIeee ? ((((1u << S::kExpBits) - 1) << S::kMantBits) - 1) : S::kSign - 2;
}

float ulp_step(float x, int steps) {
  const float toward = steps > 0 ? std::numeric_limits<float>::infinity()
                                 : -std::numeric_limits<float>::infinity();
  for (int i = 0; i < std::abs(steps); ++i) x = std::nextafter(x, toward);
  return x;
}
double ulp_step(double x, int steps) {
  const double toward = steps > 0 ? std::numeric_limits<double>::infinity()
                                  : -std::numeric_limits<double>::infinity();
  for (int i = 0; i < std::abs(steps); ++i) x = std::nextafter(x, toward);
  return x;
}

// Inputs for float -> T (or double -> T): raw bit patterns, values spread over T's range and a
// little past it, exact midpoints between neighbours of T (where ties-to-even decides) and
// their nearest float or double neighbours (where a double rounding would go wrong), and the
// edges: zeros, infinities, NaNs, the overflow midpoint, half the smallest subnormal.
template <class T, class F>
std::vector<F> rounding_inputs(std::mt19937_64& rng, size_t n) {
  using S = Spec<T>;
  using U = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  std::vector<F> out;
  const uint32_t top = max_finite<T>();
  const double overflow_mid = (formula_value<T>(top) + formula_value<T>(top + 1)) / 2;
  const double zero_mid = formula_value<T>(1) / 2;
  for (double edge : {0.0, overflow_mid, zero_mid, formula_value<T>(top), formula_value<T>(1)}) {
    for (int steps = -2; steps <= 2; ++steps) {
      out.push_back(ulp_step(static_cast<F>(edge), steps));
      out.push_back(-ulp_step(static_cast<F>(edge), steps));
    }
  }
  for (F special : {std::numeric_limits<F>::infinity(), std::numeric_limits<F>::quiet_NaN(),
                    std::numeric_limits<F>::max(), std::numeric_limits<F>::denorm_min()}) {
    out.push_back(special);
    out.push_back(-special);
  }
  std::uniform_int_distribution<uint32_t> pattern(0, top);
  std::uniform_int_distribution<int> exponent(1 - S::kBias - S::kMantBits - 4,
                                              (1 << S::kExpBits) - S::kBias + 2);
  while (out.size() < n) {
    const bool negative = rng() & 1;
    F value;
    switch (rng() % 4) {
      case 0:  // any bits
        value = bit_cast<F>(static_cast<U>(rng()));
        break;
      case 1: {  // T's range, random mantissa
        const double mantissa = 1.0 + static_cast<double>(rng() >> 11) * 0x1p-53;
        value = static_cast<F>(std::ldexp(mantissa, exponent(rng)));
        break;
      }
      default: {  // a midpoint or a neighbour of one
        const uint32_t p = pattern(rng);
        const double mid = (formula_value<T>(p) + formula_value<T>(p + 1)) / 2;  // exact
        value = ulp_step(static_cast<F>(mid), static_cast<int>(rng() % 3) - 1);
        break;
      }
    }
    out.push_back(negative ? -value : value);
  }
  out.resize(n);
  return out;
}

// Integers of every magnitude and both signs.
template <class I>
std::vector<I> integer_inputs(std::mt19937_64& rng, size_t n) {
  using U = std::make_unsigned_t<I>;
  std::vector<I> out = {0, 1, -1, std::numeric_limits<I>::max(), std::numeric_limits<I>::min()};
  while (out.size() < n) {
    U bits = static_cast<U>(static_cast<U>(rng()) >> (rng() % (8 * sizeof(I))));
    if (rng() % 2) bits = static_cast<U>(U{0} - bits);
    out.push_back(static_cast<I>(bits));
  }
  out.resize(n);
  return out;
}

// Device memory for a test, filled from a vector or with a poison byte.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) : driver_(*CudaDriver::get()), bytes_(bytes) {
    driver_.check(driver_.cuMemAlloc(&pointer_, bytes == 0 ? 1 : bytes), "cuMemAlloc");
  }
  template <class T>
  explicit DeviceBuffer(const std::vector<T>& values) : DeviceBuffer(values.size() * sizeof(T)) {
    driver_.check(driver_.cuMemcpyHtoD(pointer_, values.data(), bytes_), "cuMemcpyHtoD");
  }
  static std::unique_ptr<DeviceBuffer> poisoned(size_t bytes, unsigned char poison) {
    auto buffer = std::make_unique<DeviceBuffer>(std::vector<unsigned char>(bytes, poison));
    return buffer;
  }
  ~DeviceBuffer() { driver_.cuMemFree(pointer_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* arg() { return &pointer_; }
  template <class T>
  std::vector<T> download() const {
    std::vector<T> values(bytes_ / sizeof(T));
    driver_.check(driver_.cuMemcpyDtoH(values.data(), pointer_, values.size() * sizeof(T)),
                  "cuMemcpyDtoH");
    return values;
  }

 private:
  const CudaDriver& driver_;
  size_t bytes_;
  CUdeviceptr pointer_ = 0;
};

using Buffer = std::unique_ptr<DeviceBuffer>;
template <class T>
Buffer upload(const std::vector<T>& values) {
  return std::make_unique<DeviceBuffer>(values);
}
template <class T>
Buffer poisoned(size_t count, unsigned char poison = 0xFF) {  // 0xFF..: NaN for floats
  return DeviceBuffer::poisoned(count * sizeof(T), poison);
}

// ================================================================ compiled here

TEST(CudaDeviceHeaderTest, EveryWrapperCompilesForEachArchitecture) {
  for (const char* arch : {"sm_80", "sm_89", "sm_90a"}) {
    const CompileResult result = compiler().compile(kEveryWrapper, "every_wrapper.cu", arch);
    EXPECT_TRUE(is_elf(result.binary)) << arch;
  }
}

TEST(CudaDeviceHeaderTest, EachHeaderCompilesOnItsOwn) {
  int count = 0;
  for (const EmbeddedHeader& header : embedded_headers()) {
    const std::string path = header.path;
    if (path.rfind("cuda/", 0) != 0) continue;
    ++count;
    const std::string source =
        "#include \"" + path + "\"\nextern \"C\" __global__ void k(int* out) { out[0] = 1; }\n";
    for (const char* arch : {"sm_80", "sm_90a"}) {
      EXPECT_TRUE(is_elf(compiler().compile(source, "k.cu", arch).binary)) << path << " " << arch;
    }
  }
  EXPECT_GE(count, 5);  // tilec_cuda.h, types.h, math.h, memory.h, mma.h
}

TEST(CudaDeviceHeaderTest, PtxHasTheInstructions) {
  const std::string sm90 = compiler().ptx(kEveryWrapper, "every_wrapper.cu", "sm_90a").binary;
  for (const char* instruction :
       {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
        "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32",
        "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32", "cvt.rna.tf32.f32",
        "ldmatrix.sync.aligned.m8n8.x1.shared.b16", "ldmatrix.sync.aligned.m8n8.x2.shared.b16",
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16", "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
        "cp.async.cg.shared.global", "cp.async.ca.shared.global", "cp.async.commit_group",
        "cp.async.wait_group 1", "cp.async.wait_group 0", "cp.async.wait_all", "prefetch.global.L2",
        "shfl.sync.bfly", "fence.proxy.async.shared::cta", "mbarrier.init.shared::cta.b64",
        "mbarrier.arrive.expect_tx.shared::cta.b64", "mbarrier.try_wait.parity.shared::cta.b64",
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes", ".cas.b32",
        ".add.f32", ".add.f64", ".add.noftz.f16", ".add.noftz.bf16"}) {
    EXPECT_NE(sm90.find(instruction), std::string::npos) << instruction;
  }
  // The precise math library, not the approximate instructions of --use_fast_math.
  EXPECT_EQ(sm90.find("sin.approx"), std::string::npos);
  EXPECT_EQ(sm90.find("lg2.approx"), std::string::npos);

  const std::string sm80 = compiler().ptx(kEveryWrapper, "every_wrapper.cu", "sm_80").binary;
  EXPECT_NE(sm80.find("mma.sync.aligned.m16n8k16"), std::string::npos);
  EXPECT_NE(sm80.find("ldmatrix.sync.aligned"), std::string::npos);
  EXPECT_NE(sm80.find("cp.async.cg.shared.global"), std::string::npos);
  for (const char* absent : {"mma.sync.aligned.m16n8k32", "e4m3.e4m3", "mbarrier",
                             "fence.proxy.async", "cp.async.bulk"}) {
    EXPECT_EQ(sm80.find(absent), std::string::npos) << absent;
  }
}

TEST(CudaDeviceHeaderTest, Fp8MmaIsAnErrorBeforeSm89) {
  EXPECT_TRUE(is_elf(compiler().compile(kFp8MmaUnguarded, "k.cu", "sm_89").binary));
  try {
    compiler().compile(kFp8MmaUnguarded, "k.cu", "sm_80");
    FAIL() << "the fp8 MMA compiled for sm_80";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("mma_m16n8k32_e4m3"), std::string::npos)
        << error.what();
  }
}

TEST(CudaDeviceHeaderTest, FragmentMapsFollowThePtxIsa) {
  EXPECT_TRUE(is_elf(compiler().compile(kFragmentMapChecks, "maps.cu", "sm_80").binary));
}

std::string math_source();

// The GPU tests' kernels, compiled here too so that they stay valid where no GPU runs them.
TEST(CudaDeviceHeaderTest, GpuTestKernelsCompile) {
  const std::vector<std::pair<const char*, std::string>> sources = {
      {"conversion", kConversionKernels}, {"division", kDivisionKernel},
      {"math", math_source()},           {"reduction", kReductionKernels},
      {"cp_async", kCpAsyncKernel},      {"ldmatrix", kLdmatrixKernel},
      {"mma", kMmaKernels},              {"atomic", kAtomicKernels},
      {"bulk_copy", kBulkCopyKernel}};
  for (const auto& [name, source] : sources) {
    for (const char* arch : {"sm_80", "sm_90a"}) {
      if (std::string(name) == "bulk_copy" && std::string(arch) == "sm_80") continue;
      EXPECT_TRUE(is_elf(compiler().compile(kPrelude + source, name, arch).binary))
          << name << " " << arch;
    }
  }
}

// ================================================================ on a GPU

class CudaDeviceHeaderGpuTest : public ::testing::Test {
 public:
  void SetUp() override {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA device: " << cuda_unavailable_reason();
    cache_.emplace("tilec_cuda_header_test_");
    root_ = cache_->path();
    arch_ = CudaModule::device_arch();
    seed_ = std::random_device{}();
    rng_.seed(seed_);
  }
  void TearDown() override {
    if (root_.empty()) return;
    CudaModule::clear_memory_cache();
    cache_.reset();
  }

  // The compute capability as a number: 90 for sm_90a.
  int sm() const { return std::stoi(arch_.substr(3, 2)); }
  std::string trace() const { return "random seed " + std::to_string(seed_) + ", " + arch_; }

  void run(const std::string& source, const std::string& kernel, unsigned grid, unsigned block,
           std::vector<void*> args) {
    const auto module = CudaModule::load(kPrelude + source, kernel, arch_);
    module->launch({grid, 1, 1}, {block, 1, 1}, 0, nullptr, args.data());
    const CudaDriver& driver = *CudaDriver::get();
    driver.check(driver.cuStreamSynchronize(nullptr), "cuStreamSynchronize");
  }

  template <class T>
  void check_conversions();

  std::string root_;
  std::optional<test_support::TemporaryCacheDir> cache_;
  std::string arch_;
  uint64_t seed_ = 0;
  std::mt19937_64 rng_;
};

// Every bit pattern widens exactly and narrows back to itself (NaNs to a NaN); float, double
// and integer inputs round as the CPU backend's soft floats do.
template <class T>
void CudaDeviceHeaderGpuTest::check_conversions() {
  using S = Spec<T>;
  using Bits = typename S::Bits;
  const std::string name = type_name<T>();
  SCOPED_TRACE(name);

  std::vector<Bits> patterns(S::kPatterns);
  for (uint32_t p = 0; p < S::kPatterns; ++p) patterns[p] = static_cast<Bits>(p);
  std::shuffle(patterns.begin(), patterns.end(), rng_);
  int n = static_cast<int>(patterns.size());
  Buffer in = upload(patterns), wide = poisoned<float>(n), back = poisoned<Bits>(n, 0xAB);
  run(kConversionKernels, "widen_" + name, (n + 255) / 256, 256,
      {in->arg(), wide->arg(), back->arg(), &n});
  const std::vector<float> wide_values = wide->download<float>();
  const std::vector<Bits> back_bits = back->download<Bits>();
  int failures = 0;
  for (int i = 0; i < n && failures < 10; ++i) {
    const Bits p = patterns[i];
    const float expected = static_cast<float>(T::from_bits(p));
    const bool nan = std::isnan(expected);
    if (nan ? !std::isnan(wide_values[i])
            : bit_cast<uint32_t>(wide_values[i]) != bit_cast<uint32_t>(expected)) {
      ADD_FAILURE() << "to_float(0x" << std::hex << +p << ") = " << wide_values[i] << ", expected "
                    << expected;
      ++failures;
    }
    if (nan ? !is_nan_bits<T>(back_bits[i]) : back_bits[i] != p) {
      ADD_FAILURE() << "from_float(to_float(0x" << std::hex << +p << ")) = 0x" << +back_bits[i];
      ++failures;
    }
  }

  constexpr size_t kInputs = 1 << 18;
  const std::vector<float> floats = rounding_inputs<T, float>(rng_, kInputs);
  const std::vector<double> doubles = rounding_inputs<T, double>(rng_, kInputs);
  const std::vector<int32_t> ints = integer_inputs<int32_t>(rng_, kInputs);
  const std::vector<int64_t> longs = integer_inputs<int64_t>(rng_, kInputs);
  n = static_cast<int>(kInputs);
  Buffer f = upload(floats), d = upload(doubles), i32 = upload(ints), i64 = upload(longs);
  Buffer out = poisoned<Bits>(4 * kInputs, 0xAB);
  run(kConversionKernels, "narrow_" + name, (n + 255) / 256, 256,
      {f->arg(), d->arg(), i32->arg(), i64->arg(), out->arg(), &n});
  const std::vector<Bits> got = out->download<Bits>();
  const char* sources[] = {"float", "double", "int32", "int64"};
  for (size_t i = 0; i < kInputs && failures < 20; ++i) {
    const Bits expected[4] = {T(floats[i]).bits, T(doubles[i]).bits, T(ints[i]).bits,
                              T(longs[i]).bits};
    for (int k = 0; k < 4; ++k) {
      const Bits g = got[4 * i + k];
      const bool ok = is_nan_bits<T>(expected[k]) ? is_nan_bits<T>(g) : g == expected[k];
      if (ok) continue;
      std::ostringstream input;
      input.precision(17);
      if (k == 0) input << std::hexfloat << floats[i];
      if (k == 1) input << std::hexfloat << doubles[i];
      if (k == 2) input << ints[i];
      if (k == 3) input << longs[i];
      ADD_FAILURE() << "from_float<" << name << ">(" << sources[k] << " " << input.str()
                    << ") = 0x" << std::hex << +g << ", expected 0x" << +expected[k];
      ++failures;
    }
  }
}

TEST_F(CudaDeviceHeaderGpuTest, ConversionsRoundTripAndRoundToNearestEven) {
  SCOPED_TRACE(trace());
  check_conversions<half>();
  check_conversions<bfloat16>();
  check_conversions<float8_e4m3>();
  check_conversions<float8_e5m2>();
}

TEST_F(CudaDeviceHeaderGpuTest, FloorDivAndModFollowPython) {
  SCOPED_TRACE(trace());
  constexpr int kN = 1 << 14;
  std::vector<int32_t> a32(kN), b32(kN);
  std::vector<int64_t> a64(kN), b64(kN);
  std::vector<float> af(kN), bf(kN);
  std::vector<double> ad(kN), bd(kN);
  std::uniform_int_distribution<int32_t> small(-50, 50);
  std::uniform_real_distribution<double> real(-100.0, 100.0);
  for (int i = 0; i < kN; ++i) {
    const bool big = i % 2 == 0;
    do {
      a32[i] = big ? static_cast<int32_t>(rng_()) : small(rng_);
      b32[i] = big ? static_cast<int32_t>(rng_() >> (33 + rng_() % 31)) * (rng_() % 2 ? 1 : -1)
                   : small(rng_);
    } while (b32[i] == 0 || (a32[i] == INT32_MIN && b32[i] == -1));
    do {
      a64[i] = big ? static_cast<int64_t>(rng_()) : small(rng_);
      b64[i] = big ? static_cast<int64_t>(rng_() >> (1 + rng_() % 63)) * (rng_() % 2 ? 1 : -1)
                   : small(rng_);
    } while (b64[i] == 0 || (a64[i] == INT64_MIN && b64[i] == -1));
    do {
      af[i] = static_cast<float>(real(rng_));
      bf[i] = static_cast<float>(real(rng_) / 8);
      ad[i] = real(rng_);
      bd[i] = real(rng_) / 8;
    } while (af[i] == 0 || bf[i] == 0 || ad[i] == 0 || bd[i] == 0);
    if (i % 7 == 0) {  // exact multiples: the remainder is zero
      af[i] = bf[i] * static_cast<float>(small(rng_));
      ad[i] = bd[i] * small(rng_);
    }
  }
  int n = kN;
  Buffer da32 = upload(a32), db32 = upload(b32), da64 = upload(a64), db64 = upload(b64);
  Buffer daf = upload(af), dbf = upload(bf), dad = upload(ad), dbd = upload(bd);
  Buffer out32 = poisoned<int32_t>(2 * kN), out64 = poisoned<int64_t>(4 * kN);
  Buffer outf = poisoned<float>(2 * kN), outd = poisoned<double>(2 * kN);
  run(kDivisionKernel, "division", kN / 256, 256,
      {da32->arg(), db32->arg(), da64->arg(), db64->arg(), daf->arg(), dbf->arg(), dad->arg(),
       dbd->arg(), out32->arg(), out64->arg(), outf->arg(), outd->arg(), &n});
  const auto r32 = out32->download<int32_t>();
  const auto r64 = out64->download<int64_t>();
  const auto rf = outf->download<float>();
  const auto rd = outd->download<double>();
  // The float references without contraction into an fma, as the header computes them.
  auto mod_float = [](float a, float b) {
    volatile float product = std::floor(a / b) * b;
    return a - product;
  };
  auto mod_double = [](double a, double b) {
    volatile double product = std::floor(a / b) * b;
    return a - product;
  };
  int failures = 0;
  for (int i = 0; i < kN && failures < 10; ++i) {
    const int64_t mixed_div = tilec_rt::floordiv(a32[i], b64[i]);
    const int64_t mixed_mod = tilec_rt::floormod(a32[i], b64[i]);
    const bool ok = r32[2 * i] == tilec_rt::floordiv(a32[i], b32[i]) &&
                    r32[2 * i + 1] == tilec_rt::floormod(a32[i], b32[i]) &&
                    r64[4 * i] == tilec_rt::floordiv(a64[i], b64[i]) &&
                    r64[4 * i + 1] == tilec_rt::floormod(a64[i], b64[i]) &&
                    r64[4 * i + 2] == mixed_div && r64[4 * i + 3] == mixed_mod &&
                    rf[2 * i] == std::floor(af[i] / bf[i]) &&
                    bit_cast<uint32_t>(rf[2 * i + 1]) == bit_cast<uint32_t>(mod_float(af[i], bf[i])) &&
                    rd[2 * i] == std::floor(ad[i] / bd[i]) &&
                    bit_cast<uint64_t>(rd[2 * i + 1]) == bit_cast<uint64_t>(mod_double(ad[i], bd[i]));
    if (!ok) {
      ADD_FAILURE() << "i " << i << ": " << a32[i] << " // " << b32[i] << " = " << r32[2 * i]
                    << ", % = " << r32[2 * i + 1] << "; " << a64[i] << " // " << b64[i] << " = "
                    << r64[4 * i] << ", % = " << r64[4 * i + 1] << "; mixed " << r64[4 * i + 2]
                    << ", " << r64[4 * i + 3] << "; " << af[i] << " // " << bf[i] << " = "
                    << rf[2 * i] << ", % = " << rf[2 * i + 1] << "; " << ad[i] << " // " << bd[i]
                    << " = " << rd[2 * i] << ", % = " << rd[2 * i + 1];
      ++failures;
    }
  }
  // Python's examples.
  EXPECT_EQ(tilec_rt::floordiv(-7, 2), -4);
  EXPECT_EQ(tilec_rt::floormod(-7, 2), 1);
  EXPECT_EQ(tilec_rt::floormod(7, -2), -1);
}

// ---------------------------------------------------------------- math

struct UnaryCase {
  const char* name;
  int float_ulps;   // CUDA's documented bound, with one for the reference's own rounding
  int double_ulps;
  long double (*reference)(long double);
  enum Domain { kAny, kPositive, kSmall } domain;
};

const std::vector<UnaryCase>& unary_cases() {
  using L = long double;
  static const std::vector<UnaryCase> cases = {
      {"exp", 3, 2, [](L x) { return std::exp(x); }, UnaryCase::kAny},
      {"exp2", 3, 2, [](L x) { return std::exp2(x); }, UnaryCase::kAny},
      {"exp10", 3, 2, [](L x) { return std::pow(10.0L, x); }, UnaryCase::kAny},
      {"log", 2, 2, [](L x) { return std::log(x); }, UnaryCase::kPositive},
      {"log2", 2, 2, [](L x) { return std::log2(x); }, UnaryCase::kPositive},
      {"log10", 3, 2, [](L x) { return std::log10(x); }, UnaryCase::kPositive},
      {"sqrt", 1, 1, [](L x) { return std::sqrt(x); }, UnaryCase::kPositive},
      {"rsqrt", 3, 2, [](L x) { return 1.0L / std::sqrt(x); }, UnaryCase::kPositive},
      {"sin", 3, 3, [](L x) { return std::sin(x); }, UnaryCase::kAny},
      {"cos", 3, 3, [](L x) { return std::cos(x); }, UnaryCase::kAny},
      {"tan", 5, 3, [](L x) { return std::tan(x); }, UnaryCase::kSmall},
      {"tanh", 3, 2, [](L x) { return std::tanh(x); }, UnaryCase::kAny},
      {"sigmoid", 5, 4, [](L x) { return 1.0L / (1.0L + std::exp(-x)); }, UnaryCase::kAny},
      {"erf", 3, 3, [](L x) { return std::erf(x); }, UnaryCase::kAny},
      {"abs", 0, 0, [](L x) { return std::fabs(x); }, UnaryCase::kAny},
      {"floor", 0, 0, [](L x) { return std::floor(x); }, UnaryCase::kAny},
      {"ceil", 0, 0, [](L x) { return std::ceil(x); }, UnaryCase::kAny},
      {"round", 0, 0, [](L x) { return std::nearbyint(x); }, UnaryCase::kAny},
      {"trunc", 0, 0, [](L x) { return std::trunc(x); }, UnaryCase::kAny},
  };
  return cases;
}

struct BinaryCase {
  const char* name;
  int float_ulps;
  int double_ulps;
  long double (*reference)(long double, long double);
};

const std::vector<BinaryCase>& binary_cases() {
  using L = long double;
  static const std::vector<BinaryCase> cases = {
      {"pow", 5, 3, [](L a, L b) { return std::pow(a, b); }},
      {"fmod", 0, 0, [](L a, L b) { return std::fmod(a, b); }},
      {"min", 0, 0, [](L a, L b) { return std::fmin(a, b); }},
      {"max", 0, 0, [](L a, L b) { return std::fmax(a, b); }},
  };
  return cases;
}

std::string math_source() {
  std::string unary = "#define UNARY(X)", binary = "#define BINARY(X)";
  for (const UnaryCase& c : unary_cases()) unary += std::string(" X(") + c.name + ")";
  for (const BinaryCase& c : binary_cases()) binary += std::string(" X(") + c.name + ")";
  return unary + "\n" + binary + "\n" + kMathKernels;
}

// Distance in units in the last place; NaN matches NaN only, and +0 matches -0.
template <class F>
uint64_t ulp_distance(F a, F b) {
  using U = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  using I = std::make_signed_t<U>;
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : UINT64_MAX;
  if (std::isinf(a) || std::isinf(b)) return a == b ? 0 : UINT64_MAX;
  auto ordered = [](F x) {
    const U bits = bit_cast<U>(x);
    const U magnitude = bits & (~U{0} >> 1);
    return (bits >> (8 * sizeof(U) - 1)) ? -static_cast<I>(magnitude) : static_cast<I>(magnitude);
  };
  const I x = ordered(a), y = ordered(b);
  return x > y ? static_cast<uint64_t>(x - y) : static_cast<uint64_t>(y - x);
}

// Inputs: the specials first, then [-8, 8], (0, 100] for the logarithms and roots, [-8, 8]
// again, and last (0, 10] with exponents in [-5, 5] for pow. Every function runs on every
// input; the references give NaN where the device must (log(-1), fmod(x, 0), ...).
template <class F>
void check_math(CudaDeviceHeaderGpuTest& test, std::mt19937_64& rng) {
  const bool is_float = sizeof(F) == 4;
  SCOPED_TRACE(is_float ? "float" : "double");
  constexpr F kInf = std::numeric_limits<F>::infinity();
  constexpr F kNaN = std::numeric_limits<F>::quiet_NaN();
  const std::vector<F> specials = {0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.5, 1.0, -1.0,
                                   kInf, -kInf, kNaN};
  constexpr int kN = 4096;
  std::vector<F> x(kN), y(kN);
  std::uniform_real_distribution<double> wide(-8.0, 8.0), positive(0.0, 100.0), power(-5, 5);
  for (int i = 0; i < kN; ++i) {
    const bool positive_run = kN / 4 <= i && i < kN / 2;
    const bool pow_run = i >= 3 * kN / 4;
    do {
      x[i] = static_cast<F>(positive_run ? positive(rng) : pow_run ? positive(rng) / 10 : wide(rng));
      y[i] = static_cast<F>(pow_run ? power(rng) : wide(rng));
    } while (x[i] == 0 || y[i] == 0);
  }
  for (size_t i = 0; i < specials.size(); ++i) {
    x[i] = specials[i];
    y[specials.size() + i] = specials[i];  // binary functions: specials on either side
    y[2 * specials.size() + i] = specials[i];
    x[2 * specials.size() + i] = specials[(i + 3) % specials.size()];
  }
  int n = kN;
  const size_t functions = unary_cases().size() + binary_cases().size();
  Buffer dx = upload(x), dy = upload(y), out = poisoned<F>(functions * kN);
  Buffer classes = poisoned<uint8_t>(3 * kN, 0x7);
  test.run(math_source(), is_float ? "math_float" : "math_double", kN / 256, 256,
           {dx->arg(), dy->arg(), out->arg(), classes->arg(), &n});
  const auto got = out->download<F>();
  const auto got_classes = classes->download<uint8_t>();
  int failures = 0;
  size_t k = 0;
  for (const UnaryCase& c : unary_cases()) {
    const uint64_t allowed = is_float ? c.float_ulps : c.double_ulps;
    for (int i = 0; i < kN && failures < 20; ++i) {
      if (c.domain == UnaryCase::kSmall && std::fabs(x[i]) > 1.5) continue;
      const F expected = static_cast<F>(c.reference(static_cast<long double>(x[i])));
      const F g = got[k * kN + i];
      if (ulp_distance(g, expected) > allowed) {
        ADD_FAILURE() << c.name << "(" << std::hexfloat << x[i] << ") = " << g << ", expected "
                      << expected;
        ++failures;
      }
    }
    if (std::string(c.name) == "round") {  // half to even
      EXPECT_EQ(got[k * kN + 2], static_cast<F>(0.0)) << "round(0.5)";
      EXPECT_EQ(got[k * kN + 5], static_cast<F>(2.0)) << "round(2.5)";
      EXPECT_EQ(got[k * kN + 6], static_cast<F>(-2.0)) << "round(-2.5)";
      EXPECT_EQ(got[k * kN + 7], static_cast<F>(4.0)) << "round(3.5)";
    }
    ++k;
  }
  for (const BinaryCase& c : binary_cases()) {
    const uint64_t allowed = is_float ? c.float_ulps : c.double_ulps;
    for (int i = 0; i < kN && failures < 40; ++i) {
      const F expected = static_cast<F>(
          c.reference(static_cast<long double>(x[i]), static_cast<long double>(y[i])));
      const F g = got[k * kN + i];
      if (ulp_distance(g, expected) > allowed) {
        ADD_FAILURE() << c.name << "(" << std::hexfloat << x[i] << ", " << y[i] << ") = " << g
                      << ", expected " << expected;
        ++failures;
      }
    }
    ++k;
  }
  for (int i = 0; i < kN && failures < 50; ++i) {
    const bool expected[3] = {std::isnan(x[i]), std::isinf(x[i]), std::isfinite(x[i])};
    for (int j = 0; j < 3; ++j) {
      if (got_classes[3 * i + j] != static_cast<uint8_t>(expected[j])) {
        ADD_FAILURE() << "classification " << j << " of " << x[i];
        ++failures;
      }
    }
  }
}

// A narrow type's function is the float function's result rounded once.
template <class T>
void check_narrow_math(CudaDeviceHeaderGpuTest& test, std::mt19937_64& rng) {
  using S = Spec<T>;
  using Bits = typename S::Bits;
  const std::string name = type_name<T>();
  SCOPED_TRACE(name);
  constexpr int kN = 4096;
  std::vector<Bits> x(kN), y(kN);
  for (int i = 0; i < kN; ++i) {
    x[i] = static_cast<Bits>(S::kPatterns <= kN ? i % S::kPatterns : rng() % S::kPatterns);
    y[i] = static_cast<Bits>(rng() % S::kPatterns);
  }
  int n = kN;
  const size_t functions = unary_cases().size() + binary_cases().size();
  Buffer dx = upload(x), dy = upload(y), out = poisoned<Bits>(functions * kN, 0xAB);
  Buffer out_float = poisoned<float>(functions * kN), classes = poisoned<uint8_t>(3 * kN, 0x7);
  test.run(math_source(), "math_" + name, kN / 256, 256,
           {dx->arg(), dy->arg(), out->arg(), out_float->arg(), classes->arg(), &n});
  const auto got = out->download<Bits>();
  const auto got_float = out_float->download<float>();
  const auto got_classes = classes->download<uint8_t>();
  int failures = 0;
  for (size_t k = 0; k < functions; ++k) {
    for (int i = 0; i < kN && failures < 20; ++i) {
      const Bits expected = T(got_float[k * kN + i]).bits;
      const Bits g = got[k * kN + i];
      if (is_nan_bits<T>(expected) ? !is_nan_bits<T>(g) : g != expected) {
        ADD_FAILURE() << "function " << k << " of 0x" << std::hex << +x[i] << ", 0x" << +y[i]
                      << " = 0x" << +g << ", expected 0x" << +expected;
        ++failures;
      }
    }
  }
  for (int i = 0; i < kN && failures < 30; ++i) {
    const float v = static_cast<float>(T::from_bits(x[i]));
    const bool expected[3] = {std::isnan(v), std::isinf(v), std::isfinite(v)};
    for (int j = 0; j < 3; ++j) {
      if (got_classes[3 * i + j] != static_cast<uint8_t>(expected[j])) {
        ADD_FAILURE() << "classification " << j << " of " << v;
        ++failures;
      }
    }
  }
}

TEST_F(CudaDeviceHeaderGpuTest, MathMatchesTheLibraryAndTheCpuBackend) {
  SCOPED_TRACE(trace());
  check_math<float>(*this, rng_);
  check_math<double>(*this, rng_);
  check_narrow_math<half>(*this, rng_);
  check_narrow_math<bfloat16>(*this, rng_);
  check_narrow_math<float8_e4m3>(*this, rng_);
  check_narrow_math<float8_e5m2>(*this, rng_);

  constexpr int kN = 1024;
  std::vector<int32_t> a32 = integer_inputs<int32_t>(rng_, kN), b32 = integer_inputs<int32_t>(rng_, kN);
  std::vector<int64_t> a64 = integer_inputs<int64_t>(rng_, kN), b64 = integer_inputs<int64_t>(rng_, kN);
  for (int i = 0; i < kN; ++i) {  // negatives too; abs(INT_MIN) wraps alike on both sides
    if (rng_() % 2) a32[i] = -a32[i] - 1, a64[i] = -a64[i] - 1;
  }
  int n = kN;
  Buffer da32 = upload(a32), db32 = upload(b32), da64 = upload(a64), db64 = upload(b64);
  Buffer out32 = poisoned<int32_t>(3 * kN), out64 = poisoned<int64_t>(3 * kN);
  run(math_source(), "integer_math", kN / 256, 256,
      {da32->arg(), db32->arg(), da64->arg(), db64->arg(), out32->arg(), out64->arg(), &n});
  const auto r32 = out32->download<int32_t>();
  const auto r64 = out64->download<int64_t>();
  for (int i = 0; i < kN; ++i) {
    ASSERT_EQ(r32[3 * i], tilec_rt::abs(a32[i])) << a32[i];
    ASSERT_EQ(r32[3 * i + 1], std::min(a32[i], b32[i]));
    ASSERT_EQ(r32[3 * i + 2], std::max(a32[i], b32[i]));
    ASSERT_EQ(r64[3 * i], tilec_rt::abs(a64[i])) << a64[i];
    ASSERT_EQ(r64[3 * i + 1], std::min(a64[i], b64[i]));
    ASSERT_EQ(r64[3 * i + 2], std::max(a64[i], b64[i]));
  }
}

// ---------------------------------------------------------------- warp reductions

// The butterfly of the header, step by step on the host: lane l combines its value with lane
// l ^ offset's for offset = W/2 .. 1, so float sums come out bit for bit.
template <class T, class Op>
std::vector<T> butterfly(const std::vector<T>& in, int width, Op op) {
  std::vector<T> v = in;
  for (int offset = width / 2; offset > 0; offset /= 2) {
    std::vector<T> next = v;
    for (size_t l = 0; l < v.size(); ++l) next[l] = op(v[l], v[l ^ offset]);
    v = next;
  }
  return v;
}

template <class T, class Host, class Add, class Max, class Min>
void check_reduction(CudaDeviceHeaderGpuTest& test, const std::string& kernel,
                     const std::vector<Host>& in, Add add, Max max, Min min) {
  SCOPED_TRACE(kernel);
  Buffer din = upload(in), out = poisoned<Host>(1344, 0xAB);
  test.run(kReductionKernels, kernel, 1, 64, {din->arg(), out->arg()});
  const auto got = out->download<Host>();
  const int widths[] = {32, 16, 8, 4, 2, 1, 32};
  for (int w = 0; w < 7; ++w) {
    const std::vector<Host> expected[3] = {butterfly(in, widths[w], add),
                                           butterfly(in, widths[w], max),
                                           butterfly(in, widths[w], min)};
    for (int op = 0; op < 3; ++op) {
      for (int t = 0; t < 64; ++t) {
        const Host g = got[(w * 3 + op) * 64 + t];
        ASSERT_EQ(std::memcmp(&g, &expected[op][t], sizeof(Host)), 0)
            << "width " << widths[w] << (w == 6 ? " (default)" : "") << ", op " << op
            << ", thread " << t;
      }
    }
  }
}

TEST_F(CudaDeviceHeaderGpuTest, WarpReductionsOverTheWarpAndPowerOfTwoGroups) {
  SCOPED_TRACE(trace());
  std::vector<int32_t> i32(64);
  std::vector<uint32_t> u32(64);
  std::vector<int64_t> i64(64);
  std::vector<float> f32(64);
  std::vector<double> f64(64);
  std::vector<uint16_t> h16(64), b16(64);
  std::uniform_int_distribution<int32_t> ints(-1000000, 1000000);
  std::uniform_real_distribution<double> reals(-100.0, 100.0);
  for (int t = 0; t < 64; ++t) {
    i32[t] = ints(rng_);
    u32[t] = static_cast<uint32_t>(rng_());                    // sums wrap
    i64[t] = static_cast<int64_t>(rng_() >> 24) - (1LL << 39);  // no overflow in 64 sums
    f32[t] = static_cast<float>(reals(rng_));
    f64[t] = reals(rng_);
    h16[t] = half(static_cast<float>(reals(rng_) / 4)).bits;
    b16[t] = bfloat16(static_cast<float>(reals(rng_))).bits;
  }
  auto plus = [](auto a, auto b) { return a + b; };
  auto larger = [](auto a, auto b) { return std::max(a, b); };
  auto smaller = [](auto a, auto b) { return std::min(a, b); };
  check_reduction<int32_t>(*this, "reduce_int32", i32, plus, larger, smaller);
  check_reduction<uint32_t>(*this, "reduce_uint32", u32, plus, larger, smaller);
  check_reduction<int64_t>(*this, "reduce_int64", i64, plus, larger, smaller);
  check_reduction<float>(
      *this, "reduce_float", f32, plus, [](float a, float b) { return std::fmax(a, b); },
      [](float a, float b) { return std::fmin(a, b); });
  check_reduction<double>(
      *this, "reduce_double", f64, plus, [](double a, double b) { return std::fmax(a, b); },
      [](double a, double b) { return std::fmin(a, b); });
  // 16-bit floats: each step rounds (a + b) once, which float arithmetic gives exactly.
  auto via_float = [](auto type_tag, auto f) {
    using T = decltype(type_tag);
    return [f](uint16_t a, uint16_t b) {
      return T(f(static_cast<float>(T::from_bits(a)), static_cast<float>(T::from_bits(b)))).bits;
    };
  };
  auto fplus = [](float a, float b) { return a + b; };
  auto fmax = [](float a, float b) { return std::fmax(a, b); };
  auto fmin = [](float a, float b) { return std::fmin(a, b); };
  check_reduction<half>(*this, "reduce_half", h16, via_float(half{}, fplus),
                        via_float(half{}, fmax), via_float(half{}, fmin));
  check_reduction<bfloat16>(*this, "reduce_bfloat16", b16, via_float(bfloat16{}, fplus),
                            via_float(bfloat16{}, fmax), via_float(bfloat16{}, fmin));
}

// ---------------------------------------------------------------- cp.async and ldmatrix

TEST_F(CudaDeviceHeaderGpuTest, CpAsyncCopiesAndZeroFills) {
  SCOPED_TRACE(trace());
  std::vector<uint32_t> src(448 * 4);
  for (uint32_t& word : src) {
    do word = static_cast<uint32_t>(rng_());
    while (word == 0 || word == 0xA5A5A5A5u || word == 0xCDCDCDCDu);
  }
  std::vector<int> pred(768);
  for (int& p : pred) p = rng_() % 3 != 0;
  pred[0] = 0, pred[1] = 1;  // both cases, whatever the draw
  Buffer dsrc = upload(src), dpred = upload(pred);
  Buffer out16 = poisoned<uint32_t>(1024, 0xCD), out8 = poisoned<uint32_t>(512, 0xCD);
  Buffer out4 = poisoned<uint32_t>(256, 0xCD);
  run(kCpAsyncKernel, "cp_async", 1, 256,
      {dsrc->arg(), dpred->arg(), out16->arg(), out8->arg(), out4->arg()});
  const auto got16 = out16->download<uint32_t>();
  const auto got8 = out8->download<uint32_t>();
  const auto got4 = out4->download<uint32_t>();
  for (int t = 0; t < 256; ++t) {
    const int c = (t + 37) % 256;  // the chunk thread t read back
    for (int w = 0; w < 4; ++w) {
      ASSERT_EQ(got16[4 * t + w], pred[c] ? src[4 * c + w] : 0u) << "16-byte chunk " << c;
    }
    for (int w = 0; w < 2; ++w) {
      ASSERT_EQ(got8[2 * t + w], pred[256 + c] ? src[256 * 4 + 2 * c + w] : 0u)
          << "8-byte chunk " << c;
    }
    ASSERT_EQ(got4[t], pred[512 + c] ? src[384 * 4 + c] : 0u) << "4-byte chunk " << c;
  }
}

TEST_F(CudaDeviceHeaderGpuTest, LdmatrixFollowsTheDocumentedLaneMap) {
  SCOPED_TRACE(trace());
  std::vector<uint16_t> tile(256);
  for (uint16_t& e : tile) {  // finite, non-zero, not the padding's 0xFFFF
    do e = static_cast<uint16_t>(rng_());
    while ((e & 0x7C00) == 0x7C00 || (e & 0x7FFF) == 0);
  }
  Buffer dtile = upload(tile), out = poisoned<uint32_t>(6 * 32 * 4, 0xEE);
  Buffer frag_a = poisoned<uint16_t>(32 * 8, 0xEE), frag_b = poisoned<uint16_t>(32 * 4, 0xEE);
  run(kLdmatrixKernel, "ldmatrix", 1, 32, {dtile->arg(), out->arg(), frag_a->arg(), frag_b->arg()});
  const auto regs = out->download<uint32_t>();
  const auto fa = frag_a->download<uint16_t>();
  const auto fb = frag_b->download<uint16_t>();
  const int counts[6] = {1, 2, 4, 1, 2, 4};
  for (int variant = 0; variant < 6; ++variant) {
    const bool trans = variant >= 3;
    for (int lane = 0; lane < 32; ++lane) {
      for (int j = 0; j < 4; ++j) {
        const uint32_t reg = regs[(variant * 32 + lane) * 4 + j];
        if (j >= counts[variant]) {
          EXPECT_EQ(reg, 0xEEEEEEEEu) << "variant " << variant << " wrote register " << j;
          continue;
        }
        const int row0 = 8 * (j % 2), col0 = 8 * (j / 2);  // matrix j's block of the tile
        for (int h = 0; h < 2; ++h) {
          // PTX ISA: lane l holds row l / 4, elements 2 * (l % 4) + h of its matrix; with
          // .trans the same of the transpose.
          const int r = trans ? 2 * (lane % 4) + h : lane / 4;
          const int c = trans ? lane / 4 : 2 * (lane % 4) + h;
          const uint16_t expected = tile[(row0 + r) * 16 + col0 + c];
          ASSERT_EQ(static_cast<uint16_t>(reg >> (16 * h)), expected)
              << "variant " << variant << ", lane " << lane << ", register " << j << ", half " << h;
        }
      }
      // ldmatrix_x4 with this addressing is the m16n8k16 A fragment, ldmatrix_x2_trans the B
      // fragment of the tile's left half.
      for (int slot = 0; slot < 8; ++slot) {
        const uint32_t reg = regs[(2 * 32 + lane) * 4 + slot / 2];
        ASSERT_EQ(static_cast<uint16_t>(reg >> (16 * (slot % 2))), fa[lane * 8 + slot])
            << "A fragment, lane " << lane << ", slot " << slot;
      }
      for (int slot = 0; slot < 4; ++slot) {
        const uint32_t reg = regs[(4 * 32 + lane) * 4 + slot / 2];
        ASSERT_EQ(static_cast<uint16_t>(reg >> (16 * (slot % 2))), fb[lane * 4 + slot])
            << "B fragment, lane " << lane << ", slot " << slot;
      }
    }
  }
}

// ---------------------------------------------------------------- MMA

// Compares D with C + A * B computed in long double from the exact inputs: within
// `tolerance` times the sum of the magnitudes of the terms (a layout error is off by O(1)).
void check_product(const std::vector<float>& d, const std::vector<double>& a,
                   const std::vector<double>& b, const std::vector<float>& c, int k,
                   double tolerance) {
  for (int m = 0; m < 16; ++m) {
    for (int n = 0; n < 8; ++n) {
      long double sum = c[m * 8 + n], magnitude = std::fabs(c[m * 8 + n]);
      for (int i = 0; i < k; ++i) {
        sum += static_cast<long double>(a[m * k + i]) * b[i * 8 + n];
        magnitude += std::fabs(static_cast<long double>(a[m * k + i]) * b[i * 8 + n]);
      }
      const float got = d[m * 8 + n];
      ASSERT_LE(std::fabs(got - sum), tolerance * magnitude + 1e-30)
          << "D[" << m << "][" << n << "] = " << got << ", expected " << static_cast<double>(sum);
    }
  }
}

std::vector<float> random_c(std::mt19937_64& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> c(128);
  for (float& v : c) {
    do v = dist(rng);
    while (v == 0.0f);
  }
  return c;
}

// A random non-zero finite value of T between -range and range.
template <class T>
T random_element(std::mt19937_64& rng, float range) {
  std::uniform_real_distribution<float> dist(-range, range);
  for (;;) {
    const T v(dist(rng));
    const float f = static_cast<float>(v);
    if (f != 0.0f && std::isfinite(f)) return v;
  }
}

template <class T>
void check_mma_16bit(CudaDeviceHeaderGpuTest& test, std::mt19937_64& rng, const char* kernel) {
  SCOPED_TRACE(kernel);
  for (int trial = 0; trial < 3; ++trial) {
    std::vector<uint16_t> a(16 * 16), b(16 * 8);
    std::vector<double> av(a.size()), bv(b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      const T v = random_element<T>(rng, 2.0f);
      a[i] = v.bits, av[i] = static_cast<float>(v);
    }
    for (size_t i = 0; i < b.size(); ++i) {
      const T v = random_element<T>(rng, 2.0f);
      b[i] = v.bits, bv[i] = static_cast<float>(v);
    }
    const std::vector<float> c = random_c(rng);
    Buffer da = upload(a), db = upload(b), dc = upload(c), dd = poisoned<float>(128);
    test.run(kMmaKernels, kernel, 1, 32, {da->arg(), db->arg(), dc->arg(), dd->arg()});
    check_product(dd->download<float>(), av, bv, c, 16, 1e-4);
  }
}

// float rounded to tf32 as cvt.rna.tf32.f32 does: 10 mantissa bits, ties away from zero.
float round_tf32(float f) {
  return bit_cast<float>((bit_cast<uint32_t>(f) + 0x1000u) & ~0x1FFFu);
}

// fp8 inputs from {0.5, 0.75, 1, 1.5, 2, 3} with random signs (in both formats) and C on a
// 1/16 grid: every product and partial sum is a multiple of 1/16 below 2^9, exact in any
// accumulator of 13 or more bits, so the tensor cores' narrower fp8 accumulation rounds
// nothing and the tolerance can stay tight.
template <class T>
void check_mma_fp8(CudaDeviceHeaderGpuTest& test, std::mt19937_64& rng, const char* kernel) {
  SCOPED_TRACE(kernel);
  const float magnitudes[] = {0.5f, 0.75f, 1.0f, 1.5f, 2.0f, 3.0f};
  auto element = [&]() {
    const float v = magnitudes[rng() % 6];
    return T(rng() % 2 ? -v : v);
  };
  for (int trial = 0; trial < 3; ++trial) {
    std::vector<uint8_t> a(16 * 32), b(32 * 8);
    std::vector<double> av(a.size()), bv(b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      const T v = element();
      a[i] = v.bits, av[i] = static_cast<float>(v);
    }
    for (size_t i = 0; i < b.size(); ++i) {
      const T v = element();
      b[i] = v.bits, bv[i] = static_cast<float>(v);
    }
    std::vector<float> c(128);
    for (float& v : c) v = static_cast<float>(static_cast<int>(rng() % 31) - 15) / 16;
    Buffer da = upload(a), db = upload(b), dc = upload(c), dd = poisoned<float>(128);
    test.run(kMmaKernels, kernel, 1, 32, {da->arg(), db->arg(), dc->arg(), dd->arg()});
    check_product(dd->download<float>(), av, bv, c, 32, 1e-6);
  }
}

TEST_F(CudaDeviceHeaderGpuTest, MmaComputesTheProductWithTheDocumentedFragments) {
  SCOPED_TRACE(trace());
  check_mma_16bit<half>(*this, rng_, "mma_f16");
  check_mma_16bit<bfloat16>(*this, rng_, "mma_bf16");
  {
    SCOPED_TRACE("mma_tf32");
    for (int trial = 0; trial < 3; ++trial) {
      std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
      std::vector<float> a(16 * 8), b(8 * 8);
      std::vector<double> av(a.size()), bv(b.size());
      for (size_t i = 0; i < a.size(); ++i) {
        do a[i] = dist(rng_);
        while (a[i] == 0.0f);
        av[i] = round_tf32(a[i]);  // full float inputs: the kernel rounds them with to_tf32
      }
      for (size_t i = 0; i < b.size(); ++i) {
        do b[i] = dist(rng_);
        while (b[i] == 0.0f);
        bv[i] = round_tf32(b[i]);
      }
      const std::vector<float> c = random_c(rng_);
      Buffer da = upload(a), db = upload(b), dc = upload(c), dd = poisoned<float>(128);
      run(kMmaKernels, "mma_tf32", 1, 32, {da->arg(), db->arg(), dc->arg(), dd->arg()});
      check_product(dd->download<float>(), av, bv, c, 8, 1e-4);
    }
  }
  if (sm() < 89) {
    std::cout << "fp8 MMA skipped: " << arch_ << " has none\n";
    return;
  }
  check_mma_fp8<float8_e4m3>(*this, rng_, "mma_e4m3");
  check_mma_fp8<float8_e5m2>(*this, rng_, "mma_e5m2");
}

// ---------------------------------------------------------------- atomics

TEST_F(CudaDeviceHeaderGpuTest, AtomicAddFromManyThreads) {
  SCOPED_TRACE(trace());
  constexpr int kThreads = 256 * 256;
  std::uniform_int_distribution<int32_t> positive(1, 1000);
  std::vector<int32_t> values(kThreads);
  for (int32_t& v : values) v = positive(rng_);
  std::vector<int32_t> i32(8);
  std::vector<uint32_t> u32(8);
  std::vector<int64_t> i64(8);
  std::vector<uint64_t> u64(8);
  std::vector<float> f32(8);
  std::vector<double> f64(8);
  for (int s = 0; s < 8; ++s) {
    i32[s] = positive(rng_) * 1000;
    u32[s] = static_cast<uint32_t>(rng_());
    i64[s] = static_cast<int64_t>(rng_() >> 2);
    u64[s] = rng_();
    f32[s] = static_cast<float>(positive(rng_)) * 0.0625f;  // every partial sum exact
    f64[s] = static_cast<double>(positive(rng_)) * 0.0625;
  }
  Buffer d32 = upload(i32), du32 = upload(u32), d64 = upload(i64), du64 = upload(u64);
  Buffer df32 = upload(f32), df64 = upload(f64), dvalues = upload(values);
  Buffer olds = poisoned<int32_t>(kThreads);
  int n = kThreads;
  run(kAtomicKernels, "atomics", kThreads / 256, 256,
      {d32->arg(), du32->arg(), d64->arg(), du64->arg(), df32->arg(), df64->arg(), dvalues->arg(),
       olds->arg(), &n});
  std::vector<int32_t> e32 = i32;
  std::vector<uint32_t> eu32 = u32;
  std::vector<int64_t> e64 = i64;
  std::vector<uint64_t> eu64 = u64;
  std::vector<float> ef32 = f32;
  std::vector<double> ef64 = f64;
  for (int i = 0; i < kThreads; ++i) {
    const int s = i % 8;
    const int32_t v = values[i];
    e32[s] += v;
    eu32[s] += static_cast<uint32_t>(v) * 2654435761u;
    e64[s] += static_cast<int64_t>(v) * -1000003;
    eu64[s] += static_cast<uint64_t>(v) << 40;
    ef32[s] += static_cast<float>(v) * 0.0625f;
    ef64[s] += static_cast<double>(v) * 0.0625;
  }
  EXPECT_EQ(d32->download<int32_t>(), e32);
  EXPECT_EQ(du32->download<uint32_t>(), eu32);
  EXPECT_EQ(d64->download<int64_t>(), e64);
  EXPECT_EQ(du64->download<uint64_t>(), eu64);
  EXPECT_EQ(df32->download<float>(), ef32);
  EXPECT_EQ(df64->download<double>(), ef64);
  // The previous values of each slot's adds chain from the initial value to the final one.
  const auto old = olds->download<int32_t>();
  for (int s = 0; s < 8; ++s) {
    std::vector<std::pair<int32_t, int32_t>> chain;  // (old, value)
    for (int i = s; i < kThreads; i += 8) chain.push_back({old[i], values[i]});
    std::sort(chain.begin(), chain.end());
    int32_t expected = i32[s];
    for (const auto& [previous, value] : chain) {
      ASSERT_EQ(previous, expected) << "slot " << s;
      expected += value;
    }
    EXPECT_EQ(expected, e32[s]);
  }
}

TEST_F(CudaDeviceHeaderGpuTest, NarrowAtomicAddFromManyThreads) {
  SCOPED_TRACE(trace());
  // Exact sums whatever the order: half and bfloat16 add multiples of 1/8 up to 32;
  // e4m3 adds 0.25 up to 4 (k/4 has at most 4 significant bits for k <= 16); e5m2 adds 0.5 up
  // to 4 (k/2 has at most 3 for k <= 8).
  constexpr int kHalf = 8 * 64, kE4 = 8 * 12, kE5 = 8 * 6, kInt = 8 * 100;
  std::vector<float> hv(kHalf), bv(kHalf);
  std::vector<int8_t> iv(kInt);
  for (int i = 0; i < kHalf; ++i) {
    hv[i] = static_cast<float>(1 + rng_() % 3) / 8;
    bv[i] = static_cast<float>(1 + rng_() % 3) / 8;
  }
  for (int8_t& v : iv) {
    do v = static_cast<int8_t>(static_cast<int>(rng_() % 7) - 3);
    while (v == 0);
  }
  std::vector<uint16_t> h(8), b(8), i16(8);
  std::vector<uint8_t> e4(8), e5(8), u8(8);
  std::vector<int8_t> i8(8);
  std::vector<float> eh(8), eb(8), ee4(8), ee5(8);
  for (int s = 0; s < 8; ++s) {
    eh[s] = static_cast<float>(8 + rng_() % 56) / 8;  // 1 .. 7.875
    eb[s] = static_cast<float>(8 + rng_() % 56) / 8;
    ee4[s] = static_cast<float>(1 + rng_() % 4) / 4;  // then 12 adds of 0.25: at most 4
    ee5[s] = static_cast<float>(1 + rng_() % 2) / 2;  // then 6 adds of 0.5: at most 4
    h[s] = half(eh[s]).bits;
    b[s] = bfloat16(eb[s]).bits;
    e4[s] = float8_e4m3(ee4[s]).bits;
    e5[s] = float8_e5m2(ee5[s]).bits;
    i8[s] = static_cast<int8_t>(rng_());
    i16[s] = static_cast<uint16_t>(rng_());
    u8[s] = static_cast<uint8_t>(rng_());
  }
  std::vector<int8_t> ei8 = i8;
  std::vector<uint16_t> ei16 = i16;
  std::vector<uint8_t> eu8 = u8;
  for (int i = 0; i < kHalf; ++i) eh[i % 8] += hv[i], eb[i % 8] += bv[i];
  for (int i = 0; i < kE4; ++i) ee4[i % 8] += 0.25f;
  for (int i = 0; i < kE5; ++i) ee5[i % 8] += 0.5f;
  for (int i = 0; i < kInt; ++i) {
    ei8[i % 8] = static_cast<int8_t>(ei8[i % 8] + iv[i]);
    ei16[i % 8] = static_cast<uint16_t>(ei16[i % 8] + static_cast<int16_t>(iv[i] * 300));
    eu8[i % 8] = static_cast<uint8_t>(eu8[i % 8] + static_cast<uint8_t>(iv[i]));
  }
  Buffer dh = upload(h), db = upload(b), de4 = upload(e4), de5 = upload(e5), di8 = upload(i8);
  Buffer di16 = upload(i16), du8 = upload(u8), dhv = upload(hv), dbv = upload(bv), div = upload(iv);
  int n_half = kHalf, n_e4 = kE4, n_e5 = kE5, n_int = kInt;
  run(kAtomicKernels, "narrow_atomics", (kInt + 127) / 128, 128,
      {dh->arg(), db->arg(), de4->arg(), de5->arg(), di8->arg(), di16->arg(), du8->arg(),
       dhv->arg(), dbv->arg(), div->arg(), &n_half, &n_e4, &n_e5, &n_int});
  const auto gh = dh->download<uint16_t>();
  const auto gb = db->download<uint16_t>();
  const auto ge4 = de4->download<uint8_t>();
  const auto ge5 = de5->download<uint8_t>();
  for (int s = 0; s < 8; ++s) {
    EXPECT_EQ(static_cast<float>(half::from_bits(gh[s])), eh[s]) << "half slot " << s;
    EXPECT_EQ(static_cast<float>(bfloat16::from_bits(gb[s])), eb[s]) << "bfloat16 slot " << s;
    EXPECT_EQ(static_cast<float>(float8_e4m3::from_bits(ge4[s])), ee4[s]) << "e4m3 slot " << s;
    EXPECT_EQ(static_cast<float>(float8_e5m2::from_bits(ge5[s])), ee5[s]) << "e5m2 slot " << s;
  }
  EXPECT_EQ(di8->download<int8_t>(), ei8);
  EXPECT_EQ(di16->download<uint16_t>(), ei16);
  EXPECT_EQ(du8->download<uint8_t>(), eu8);
}

// ---------------------------------------------------------------- sm_90

TEST_F(CudaDeviceHeaderGpuTest, MbarrierCompletesBulkCopies) {
  SCOPED_TRACE(trace());
  if (sm() < 90) GTEST_SKIP() << arch_ << " has no bulk copy engine";
  std::vector<uint32_t> src(2 * 128 * 4);
  for (uint32_t& word : src) {
    do word = static_cast<uint32_t>(rng_());
    while (word == 0 || word == 0xA5A5A5A5u);
  }
  Buffer dsrc = upload(src), out = poisoned<uint32_t>(src.size(), 0xCD);
  Buffer flags = poisoned<int>(2, 0xCD);
  run(kBulkCopyKernel, "bulk_copy", 1, 128, {dsrc->arg(), out->arg(), flags->arg()});
  const auto got = out->download<uint32_t>();
  for (int phase = 0; phase < 2; ++phase) {
    for (int t = 0; t < 128; ++t) {
      const int c = 128 * phase + (t + 5) % 128;
      for (int w = 0; w < 4; ++w) {
        ASSERT_EQ(got[(128 * phase + t) * 4 + w], src[4 * c + w])
            << "phase " << phase << ", thread " << t;
      }
    }
  }
  const auto f = flags->download<int>();
  EXPECT_EQ(f[0], 0) << "phase 0 completed before any arrival";
  EXPECT_EQ(f[1], 1) << "the phase before the first counts as completed";
}

}  // namespace
}  // namespace tilec::runtime
