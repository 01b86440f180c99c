// tilec HIP device support, part 5: T.gemm on the matrix cores of gfx90a and gfx940 (MFMA,
// 64-lane waves), B in LDS, A in LDS (mfma_gemm_ss) or in registers (mfma_gemm_rs), a float32
// accumulator in registers.
//
// One instruction multiplies a 16 x KS tile X by a KS x 16 tile Y into a 16 x 16 tile D:
// v_mfma_f32_16x16x16f16 (KS 16, half), v_mfma_f32_16x16x16bf16_1k (KS 16, bfloat16; gfx90a
// and later) and v_mfma_f32_16x16x4f32 (KS 4, float). Lane l of the wave holds
// (docs/hip_backend.md gives the sources):
//   X: row l % 16, columns (K) KS/4 * (l / 16) + e for e < KS/4 (4 values, or 1 for f32)
//   Y: column l % 16, rows (K) as X's columns
//   D: column l % 16, rows 4 * (l / 16) + r for r < 4 (4 floats)
// The gemms give the instruction B's part as X and A's as Y, so D is a 16 x 16 tile of C
// transposed: lane l holds row l % 16 of C, columns 4 * (l / 16) + r -- which is how X and
// a register A want their rows, so an accumulator converted elementwise is the next gemm's A.
// The M x N tile is split over WavesM x WavesN waves (wave w at row w % WavesM, column
// w / WavesM), each wave's part into 16 x 16 tiles (mi, ni); thread t's C registers hold, at
// c[(mi * NI + ni) * 4 + r], the element the Fragment ir::mfma_accumulator gives it.
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

// Where thread `tid` (of the threads the gemm is spread over) sits: its wave in the WavesM x
// WavesN grid over an M x N tile, and its lane. Waves past the grid's repeat its first ones (as
// the threads past a Fragment's do).
template <int M, int N, int WavesM, int WavesN>
struct wave_place {
  int row0, col0, group, within;
  __device__ __forceinline__ explicit wave_place(int tid) {
    const int lane = tid % 64, wave = tid / 64 % (WavesM * WavesN);
    row0 = (wave % WavesM) * (M / WavesM);
    col0 = (wave / WavesM) * (N / WavesN);
    group = lane / 16;
    within = lane % 16;
  }
};

template <int MI, int NI>
__device__ __forceinline__ void load_accumulator(const float* c, floatx4 (&acc)[MI][NI]) {
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int ni = 0; ni < NI; ++ni)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[mi][ni][r] = c[(mi * NI + ni) * 4 + r];
}

template <int MI, int NI>
__device__ __forceinline__ void store_accumulator(const floatx4 (&acc)[MI][NI], float* c) {
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int ni = 0; ni < NI; ++ni)
#pragma unroll
      for (int r = 0; r < 4; ++r) c[(mi * NI + ni) * 4 + r] = acc[mi][ni][r];
}

}  // namespace detail

// C (M x N, float, this thread's registers as above) += A (M x K; stored K x M when TransA)
// times B (K x N; stored N x K when TransB), A and B in LDS. Every thread of the block calls it,
// with its index.
template <int M, int N, int K, int WavesM, int WavesN, bool TransA, bool TransB, class T>
__device__ __forceinline__ void mfma_gemm_ss(const T* A, const T* B, float* c, int tid) {
  using I = detail::mfma16<T>;
  constexpr int MI = M / WavesM / 16, NI = N / WavesN / 16;
  constexpr int E = I::k / 4;  // operand values a lane holds
  static_assert(MI * 16 * WavesM == M && NI * 16 * WavesN == N && K % I::k == 0,
                "the tile splits into 16 x 16 parts over the waves, K into steps of the instruction");
  const detail::wave_place<M, N, WavesM, WavesN> at(tid);
  detail::floatx4 acc[MI][NI];
  detail::load_accumulator(c, acc);
  for (int k0 = 0; k0 < K; k0 += I::k) {
    typename I::operand a[MI], b[NI];
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
      for (int e = 0; e < E; ++e) {
        const int row = at.row0 + mi * 16 + at.within, k = k0 + E * at.group + e;
        I::set(a[mi], e, TransA ? A[k * M + row] : A[row * K + k]);
      }
#pragma unroll
    for (int ni = 0; ni < NI; ++ni)
#pragma unroll
      for (int e = 0; e < E; ++e) {
        const int col = at.col0 + ni * 16 + at.within, k = k0 + E * at.group + e;
        I::set(b[ni], e, TransB ? B[col * K + k] : B[k * N + col]);
      }
    // B's part as the instruction's A and A's as its B: D = (A B)^T, so that each lane holds
    // 4 consecutive columns of a row of C.
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
      for (int ni = 0; ni < NI; ++ni) acc[mi][ni] = I::run(b[ni], a[mi], acc[mi][ni]);
  }
  detail::store_accumulator(acc, c);
}

// As mfma_gemm_ss, with A (M x K) in this thread's registers `a`, laid out as the accumulator
// of an M x K tile over WavesM x 1 waves: slot (mi * K / 16 + kb) * 4 + j holds row
// row0 + mi * 16 + lane % 16, column kb * 16 + 4 * (lane / 16) + j -- 4 columns of a row, as an
// instruction's A operand wants (all 4 at K step 16; one at a time, j being the step, at K step
// 4). B's rows are read at the same k. Each wave holds whole rows of A, so the grid is one wave
// wide (WavesN 1).
template <int M, int N, int K, int WavesM, bool TransB, class T>
__device__ __forceinline__ void mfma_gemm_rs(const T* a, const T* B, float* c, int tid) {
  using I = detail::mfma16<T>;
  constexpr int MI = M / WavesM / 16, NI = N / 16, KI = K / 16;
  constexpr int E = I::k / 4, Steps = 4 / E;  // operand values a lane holds; instructions a 16-column block
  static_assert(MI * 16 * WavesM == M && NI * 16 == N && KI * 16 == K,
                "the tile splits into 16 x 16 parts over the waves, K into 16-column blocks");
  const detail::wave_place<M, N, WavesM, 1> at(tid);
  detail::floatx4 acc[MI][NI];
  detail::load_accumulator(c, acc);
#pragma unroll
  for (int kb = 0; kb < KI; ++kb)
#pragma unroll
    for (int s = 0; s < Steps; ++s) {
      typename I::operand av[MI], bv[NI];
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int e = 0; e < E; ++e) I::set(av[mi], e, a[(mi * KI + kb) * 4 + s * E + e]);
#pragma unroll
      for (int ni = 0; ni < NI; ++ni)
#pragma unroll
        for (int e = 0; e < E; ++e) {
          const int col = ni * 16 + at.within, k = kb * 16 + 4 * at.group + s * E + e;
          I::set(bv[ni], e, TransB ? B[col * K + k] : B[k * N + col]);
        }
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NI; ++ni) acc[mi][ni] = I::run(bv[ni], av[mi], acc[mi][ni]);
    }
  detail::store_accumulator(acc, c);
}

}  // namespace tilec_hip
