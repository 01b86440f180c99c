// tilec HIP device support, part 5: T.gemm on the matrix cores of gfx90a and gfx940 (MFMA,
// 64-lane waves), both operands in LDS, a float32 accumulator in registers.
//
// One instruction multiplies a 16 x KS tile of A by a KS x 16 tile of B into a 16 x 16 tile
// of C: v_mfma_f32_16x16x16f16 (KS 16, half), v_mfma_f32_16x16x16bf16_1k (KS 16, bfloat16;
// gfx90a and later) and v_mfma_f32_16x16x4f32 (KS 4, float). Lane l of the wave holds
// (docs/hip_backend.md gives the sources):
//   A: row l % 16, columns (K) KS/4 * (l / 16) + e for e < KS/4 (4 values, or 1 for f32)
//   B: column l % 16, rows (K) as A's columns
//   C: column l % 16, rows 4 * (l / 16) + r for r < 4 (4 floats)
// mfma_gemm_ss splits the M x N tile over WavesM x WavesN waves (wave w at row w % WavesM,
// column w / WavesM), each wave's part into 16 x 16 tiles (mi, ni); thread t's C registers
// hold, at c[(mi * NI + ni) * 4 + r], the element the Fragment ir::mfma_accumulator gives it.
#pragma once

#include "hip/types.h"

namespace tilec_hip {

namespace detail {

typedef float floatx4 __attribute__((ext_vector_type(4)));
typedef _Float16 halfx4 __attribute__((ext_vector_type(4)));
typedef short shortx4 __attribute__((ext_vector_type(4)));

// The instruction of operand type T: its K, the per-lane operand, and one multiply-add.
template <class T>
struct mfma16;
template <>
struct mfma16<half> {
  static constexpr int k = 16;
  using operand = halfx4;
  static __device__ __forceinline__ void set(operand& v, int e, half x) { v[e] = __builtin_bit_cast(_Float16, x.bits); }
  static __device__ __forceinline__ floatx4 run(operand a, operand b, floatx4 c) {
    return __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, c, 0, 0, 0);
  }
};
template <>
struct mfma16<bfloat16> {
  static constexpr int k = 16;
  using operand = shortx4;
  static __device__ __forceinline__ void set(operand& v, int e, bfloat16 x) { v[e] = static_cast<short>(x.bits); }
  static __device__ __forceinline__ floatx4 run(operand a, operand b, floatx4 c) {
    return __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(a, b, c, 0, 0, 0);
  }
};
template <>
struct mfma16<float> {
  static constexpr int k = 4;
  using operand = float;
  static __device__ __forceinline__ void set(operand& v, int, float x) { v = x; }
  static __device__ __forceinline__ floatx4 run(operand a, operand b, floatx4 c) {
    return __builtin_amdgcn_mfma_f32_16x16x4f32(a, b, c, 0, 0, 0);
  }
};

}  // namespace detail

// C (M x N, float, this thread's registers as above) += A (M x K; stored K x M when TransA)
// times B (K x N; stored N x K when TransB), A and B in LDS. Every thread of the block calls it.
template <int M, int N, int K, int WavesM, int WavesN, bool TransA, bool TransB, class T>
__device__ __forceinline__ void mfma_gemm_ss(const T* A, const T* B, float* c) {
  using I = detail::mfma16<T>;
  constexpr int WM = M / WavesM, WN = N / WavesN, MI = WM / 16, NI = WN / 16;
  constexpr int E = I::k / 4;  // operand values a lane holds
  static_assert(MI * 16 * WavesM == M && NI * 16 * WavesN == N && K % I::k == 0,
                "the tile splits into 16 x 16 parts over the waves, K into steps of the instruction");
  // Waves past the grid's repeat its first ones (as the threads past a Fragment's do).
  const int lane = static_cast<int>(threadIdx.x) % 64, wave = static_cast<int>(threadIdx.x) / 64 % (WavesM * WavesN);
  const int row0 = (wave % WavesM) * WM, col0 = (wave / WavesM) * WN;
  const int group = lane / 16, within = lane % 16;
  detail::floatx4 acc[MI][NI];
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int ni = 0; ni < NI; ++ni)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[mi][ni][r] = c[(mi * NI + ni) * 4 + r];
  for (int k0 = 0; k0 < K; k0 += I::k) {
    typename I::operand a[MI], b[NI];
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
      for (int e = 0; e < E; ++e) {
        const int row = row0 + mi * 16 + within, k = k0 + E * group + e;
        I::set(a[mi], e, TransA ? A[k * M + row] : A[row * K + k]);
      }
#pragma unroll
    for (int ni = 0; ni < NI; ++ni)
#pragma unroll
      for (int e = 0; e < E; ++e) {
        const int col = col0 + ni * 16 + within, k = k0 + E * group + e;
        I::set(b[ni], e, TransB ? B[col * K + k] : B[k * N + col]);
      }
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
      for (int ni = 0; ni < NI; ++ni) acc[mi][ni] = I::run(a[mi], b[ni], acc[mi][ni]);
  }
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int ni = 0; ni < NI; ++ni)
#pragma unroll
      for (int r = 0; r < 4; ++r) c[(mi * NI + ni) * 4 + r] = acc[mi][ni][r];
}

}  // namespace tilec_hip
