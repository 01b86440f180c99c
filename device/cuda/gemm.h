// tilec CUDA device support, part 5: the block-level GEMM that `T.gemm` lowers to on the
// mma.sync path, and the swizzled shared-memory layout its operands are stored in.
//
// gemm_ss<...>(A, B, C) computes C += op(A) op(B) for an M x N x K tile whose operands are
// in shared memory and whose accumulator C is the calling thread's registers. The warps of
// the block form a WarpsM x WarpsN grid (warp w at (w % WarpsM, w / WarpsM); warps past
// WarpsM * WarpsN repeat the first ones); each owns an (M / WarpsM) x (N / WarpsN) part of C
// made of MI x NI tiles of 16 x 8. The thread's C registers are, in order, tile (mi, ni)
// (mi major) and within it the four slots of frag_m16n8_c: the compiler's accumulator
// Fragment (src/ir/layout.cc, mma_accumulator) is this map, element for element.
//
// Operands are row-major tiles: A is M x K (K x M with TransA), B is K x N (N x K with
// TransB), rows padded to nothing. With Swizzle, element (r, c) of a tile lives at
// swizzled_offset<Cols, sizeof(T)>(r, c): 16-byte chunks are permuted inside each 128-byte
// line so that ldmatrix's eight 16-byte rows fall in distinct banks; the copies that fill the
// tile compute the same offsets.
#pragma once

#include "cuda/memory.h"
#include "cuda/mma.h"
#include "cuda/types.h"

namespace tilec_cuda {

// The element offset of (row, col) in a row-major tile of `Cols` elements of `ElemBytes`
// bytes a row, with its 16-byte chunks XOR-permuted within each 128-byte line: by the row
// when rows are whole lines, else by the line's index. A bijection on every 128-byte line, so
// the tile must span whole lines (the compiler swizzles only tiles that do).
template <int Cols, int ElemBytes>
__host__ __device__ __forceinline__ constexpr int swizzled_offset(int row, int col) {
  constexpr int row_bytes = Cols * ElemBytes;
  int byte = row * row_bytes + col * ElemBytes;
  int chunk = byte >> 4;
  int line_key = row_bytes % 128 == 0 ? row : (chunk >> 3);
  int swizzled = chunk ^ (line_key & 7);
  return ((swizzled << 4) | (byte & 15)) / ElemBytes;
}

namespace detail {

template <class T>
struct mma_traits;
template <>
struct mma_traits<half> {
  enum : int { k = 16 };
  __device__ static void mma(float* c, const uint32_t* a, const uint32_t* b) {
    mma_m16n8k16_f16(c, a, b, c);
  }
};
template <>
struct mma_traits<bfloat16> {
  enum : int { k = 16 };
  __device__ static void mma(float* c, const uint32_t* a, const uint32_t* b) {
    mma_m16n8k16_bf16(c, a, b, c);
  }
};
template <>
struct mma_traits<float> {
  enum : int { k = 8 };
  __device__ static void mma(float* c, const uint32_t* a, const uint32_t* b) {
    mma_m16n8k8_tf32(c, a, b, c);
  }
};
#ifdef TILEC_CUDA_HAS_FP8_MMA
template <>
struct mma_traits<float8_e4m3> {
  enum : int { k = 32 };
  __device__ static void mma(float* c, const uint32_t* a, const uint32_t* b) {
    mma_m16n8k32_e4m3(c, a, b, c);
  }
};
template <>
struct mma_traits<float8_e5m2> {
  enum : int { k = 32 };
  __device__ static void mma(float* c, const uint32_t* a, const uint32_t* b) {
    mma_m16n8k32_e5m2(c, a, b, c);
  }
};
#endif

// The A and B fragment maps of each element type's mma shape.
template <class T>
struct mma_frags {
  using a = frag_m16n8k16_a;
  using b = frag_m16n8k16_b;
};
template <>
struct mma_frags<float> {
  using a = frag_m16n8k8_tf32_a;
  using b = frag_m16n8k8_tf32_b;
};
template <>
struct mma_frags<float8_e4m3> {
  using a = frag_m16n8k32_f8_a;
  using b = frag_m16n8k32_f8_b;
};
template <>
struct mma_frags<float8_e5m2> {
  using a = frag_m16n8k32_f8_a;
  using b = frag_m16n8k32_f8_b;
};

// Element (r, c) of a row-major tile of Cols columns, swizzled or not.
template <int Cols, bool Swizzle, class T>
__device__ __forceinline__ const T* tile_element(const T* tile, int r, int c) {
  return tile + (Swizzle ? swizzled_offset<Cols, sizeof(T)>(r, c) : r * Cols + c);
}

// Byte offsets in a row-major tile of Cols elements of ElemBytes bytes a row, swizzled or
// not, of elements (r0 + dr, c0 + dc) for one thread's (r0, c0) and offsets (dr, dc) that
// are compile-time constants after unrolling: the swizzle is computed once, at (r0, c0),
// and each offset costs at most one XOR (the address adds fold into ldmatrix's immediate).
// Valid when dr keeps the swizzle key (dr rows span whole 1024-byte periods: `keeps_key`),
// dc is whole 16-byte chunks, and the chunk bits of dc below 8 are disjoint from those of c0
// (so adding them carries nothing into another line).
template <int Cols, int ElemBytes, bool Swizzle>
struct tile_address {
  static constexpr int row_bytes = Cols * ElemBytes;
  __host__ __device__ static constexpr bool keeps_key(int dr) { return !Swizzle || dr * row_bytes % 1024 == 0; }
  int base;
  __device__ __forceinline__ tile_address(int r0, int c0)
      : base((Swizzle ? swizzled_offset<Cols, ElemBytes>(r0, c0) : r0 * Cols + c0) * ElemBytes) {}
  __device__ __forceinline__ int at(int dr, int dc) const {
    const int chunks = dc * ElemBytes / 16;
    if (!Swizzle) return base + dr * row_bytes + dc * ElemBytes;
    return (base ^ ((chunks & 7) << 4)) + dr * row_bytes + (chunks & ~7) * 16;
  }
};

// Register `reg` of a fragment from `slots_per_reg` consecutive slots.
template <class T>
__device__ __forceinline__ uint32_t pack_register(const T* values);
template <>
__device__ __forceinline__ uint32_t pack_register<half>(const half* v) {
  return pack_half2(v[0], v[1]);
}
template <>
__device__ __forceinline__ uint32_t pack_register<bfloat16>(const bfloat16* v) {
  return pack_bfloat162(v[0], v[1]);
}
template <>
__device__ __forceinline__ uint32_t pack_register<float>(const float* v) {
  return to_tf32(v[0]);
}
template <>
__device__ __forceinline__ uint32_t pack_register<float8_e4m3>(const float8_e4m3* v) {
  return pack_b8x4(bits_of(v[0]), bits_of(v[1]), bits_of(v[2]), bits_of(v[3]));
}
template <>
__device__ __forceinline__ uint32_t pack_register<float8_e5m2>(const float8_e5m2* v) {
  return pack_b8x4(bits_of(v[0]), bits_of(v[1]), bits_of(v[2]), bits_of(v[3]));
}

// A fragment through plain shared loads, element by element from the fragment map `Frag`
// (rows and columns of the fragment; `Transposed`: the tile stores it column by column).
template <class Frag, int Cols, bool Swizzle, bool Transposed, class T>
__device__ __forceinline__ void load_fragment(uint32_t* regs, const T* tile, int row0, int col0,
                                              int lane) {
  constexpr int per_reg = 4 / (sizeof(T) < 4 ? sizeof(T) : 4);
  T values[Frag::slots];
#pragma unroll
  for (int s = 0; s < Frag::slots; ++s) {
    int r = row0 + Frag::row(lane, s), c = col0 + Frag::col(lane, s);
    values[s] = Transposed ? *tile_element<Cols, Swizzle>(tile, c, r)
                           : *tile_element<Cols, Swizzle>(tile, r, c);
  }
#pragma unroll
  for (int reg = 0; reg < Frag::slots / per_reg; ++reg) regs[reg] = pack_register(values + reg * per_reg);
}

}  // namespace detail

template <int M, int N, int K, int WarpsM, int WarpsN, bool TransA, bool TransB, bool SwizzleA,
          bool SwizzleB, class TA, class TB>
__device__ __forceinline__ void gemm_ss(const TA* A, const TB* B, float* C) {
  static_assert(sizeof(TA) == sizeof(TB), "A and B have one element type on the mma path");
  using traits = detail::mma_traits<TA>;
  using frags = detail::mma_frags<TA>;
  constexpr int KS = traits::k;
  constexpr int WTM = M / WarpsM, WTN = N / WarpsN;
  constexpr int MI = WTM / 16, NI = WTN / 8;
  static_assert(M % (16 * WarpsM) == 0 && N % (8 * WarpsN) == 0 && K % KS == 0,
                "the tile splits into whole mma shapes over the warps");
  constexpr int a_cols = TransA ? M : K;
  constexpr int b_cols = TransB ? K : N;
  constexpr bool bytes16 = sizeof(TA) == 2;
  constexpr bool bytes8 = sizeof(TA) == 1;
  // ldmatrix moves 16-byte rows: it needs them 16-byte aligned, and for 8-bit types the
  // tile's rows must run along k (no .trans for bytes).
  constexpr bool ldsm_a = (a_cols * sizeof(TA)) % 16 == 0 && (bytes16 || (bytes8 && !TransA));
  constexpr bool ldsm_b = (b_cols * sizeof(TB)) % 16 == 0 && (bytes16 || (bytes8 && TransB));

  const int lane = threadIdx.x % 32;
  const int warp = (threadIdx.x / 32) % (WarpsM * WarpsN);
  const int m0 = (warp % WarpsM) * WTM, n0 = (warp / WarpsM) * WTN;
  const char* a_bytes = reinterpret_cast<const char*>(A);
  const char* b_bytes = reinterpret_cast<const char*>(B);
  using a_tile = detail::tile_address<a_cols, sizeof(TA), SwizzleA>;
  using b_tile = detail::tile_address<b_cols, sizeof(TB), SwizzleB>;
  // Each lane's ldmatrix row at (mi, k0) = (0, 0): the other tiles are constant offsets from
  // it (see tile_address) when the steps keep the swizzle key and, for steps along a row,
  // the warp's tiles are a power of two (so the warp's first chunk and the step's are
  // disjoint bits).
  constexpr int kb = bytes8 ? 16 : 8;  // elements in 16 bytes: ldmatrix's row
  constexpr bool a_offsets = TransA ? a_tile::keeps_key(KS) && (MI & (MI - 1)) == 0 : a_tile::keeps_key(16);
  constexpr bool b_offsets = TransB ? b_tile::keeps_key(16) : b_tile::keeps_key(KS) && (NI & (NI - 1)) == 0;
  const int q = lane / 8;
  const a_tile a_lane = TransA ? a_tile((q / 2) * 8 + lane % 8, m0 + (q % 2) * 8)
                               : a_tile(m0 + lane % 16, (lane / 16) * kb);
  const b_tile b_lane = TransB ? b_tile(n0 + (q / 2) * 8 + lane % 8, (q % 2) * kb)
                               : b_tile((q % 2) * 8 + lane % 8, n0 + (q / 2) * 8);

#pragma unroll
  for (int k0 = 0; k0 < K; k0 += KS) {
    uint32_t a[MI][4];
    uint32_t b[NI][2];
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      int m = m0 + mi * 16;
      if constexpr (ldsm_a && !TransA) {
        // Lane l: row l % 16 of the 16-row strip, second half of the k step for l >= 16.
        if constexpr (a_offsets) ldmatrix_x4(a[mi], a_bytes + a_lane.at(mi * 16, k0));
        else ldmatrix_x4(a[mi], detail::tile_element<a_cols, SwizzleA>(A, m + lane % 16, k0 + (lane / 16) * kb));
      } else if constexpr (ldsm_a && TransA) {
        if constexpr (a_offsets) ldmatrix_x4_trans(a[mi], a_bytes + a_lane.at(k0, mi * 16));
        else
          ldmatrix_x4_trans(a[mi], detail::tile_element<a_cols, SwizzleA>(A, k0 + (q / 2) * 8 + lane % 8,
                                                                         m + (q % 2) * 8));
      } else {
        detail::load_fragment<typename frags::a, a_cols, SwizzleA, TransA>(a[mi], A, m, k0, lane);
      }
    }
#pragma unroll
    for (int ni = 0; ni < NI; ++ni) {
      int n = n0 + ni * 8;
      if constexpr (ldsm_b && TransB) {
        // Two n tiles a load when there are two left: matrices (n, k lo), (n, k hi), (n+8, ...).
        if (ni % 2 == 1) continue;
        if (ni + 1 < NI) {
          uint32_t r[4];
          if constexpr (b_offsets) ldmatrix_x4(r, b_bytes + b_lane.at(ni * 8, k0));
          else
            ldmatrix_x4(r, detail::tile_element<b_cols, SwizzleB>(B, n + (q / 2) * 8 + lane % 8, k0 + (q % 2) * kb));
          b[ni][0] = r[0], b[ni][1] = r[1], b[ni + 1][0] = r[2], b[ni + 1][1] = r[3];
        } else {
          ldmatrix_x2(b[ni], detail::tile_element<b_cols, SwizzleB>(B, n + lane % 8, k0 + (q % 2) * kb));
        }
      } else if constexpr (ldsm_b && !TransB && bytes16) {
        if (ni % 2 == 1) continue;
        if (ni + 1 < NI) {
          uint32_t r[4];
          if constexpr (b_offsets) ldmatrix_x4_trans(r, b_bytes + b_lane.at(k0, ni * 8));
          else
            ldmatrix_x4_trans(r, detail::tile_element<b_cols, SwizzleB>(B, k0 + (q % 2) * 8 + lane % 8, n + (q / 2) * 8));
          b[ni][0] = r[0], b[ni][1] = r[1], b[ni + 1][0] = r[2], b[ni + 1][1] = r[3];
        } else {
          ldmatrix_x2_trans(b[ni], detail::tile_element<b_cols, SwizzleB>(B, k0 + (q % 2) * 8 + lane % 8, n));
        }
      } else {
        detail::load_fragment<typename frags::b, b_cols, SwizzleB, TransB>(b[ni], B, k0, n, lane);
      }
    }
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
      for (int ni = 0; ni < NI; ++ni) traits::mma(C + (mi * NI + ni) * 4, a[mi], b[ni]);
  }
}

}  // namespace tilec_cuda
