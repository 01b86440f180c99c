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

namespace detail {

// ldmatrix moves 16-byte rows: a tile's rows must be whole 16-byte multiples, and 8-bit
// types load only along k (no .trans for bytes).
template <class T, int Cols, bool KAlongRows>
constexpr bool ldmatrix_loads = (Cols * sizeof(T)) % 16 == 0 && (sizeof(T) == 2 || (sizeof(T) == 1 && KAlongRows));

// The A operand of a warp's MI m16 x k tiles from a shared tile (M x K, K x M with TransA):
// load(a, k0) fills a[mi] with the fragment of rows m0 + 16 mi, columns k0.. of the step.
template <int M, int K, int MI, bool TransA, bool Swizzle, class T>
struct shared_a_operand {
  using frag = typename mma_frags<T>::a;
  static constexpr int cols = TransA ? M : K;
  static constexpr int kb = sizeof(T) == 1 ? 16 : 8;  // elements in 16 bytes: ldmatrix's row
  static constexpr bool ldsm = ldmatrix_loads<T, cols, !TransA>;
  using address = tile_address<cols, sizeof(T), Swizzle>;
  // Each lane's ldmatrix row at (mi, k0) = (0, 0); the others are constant offsets from it
  // when the steps keep the swizzle key and, for steps along a row, the warp's tiles are a
  // power of two (so the warp's first chunk and the step's are disjoint bits).
  static constexpr bool offsets =
      TransA ? address::keeps_key(mma_traits<T>::k) && (MI & (MI - 1)) == 0 : address::keeps_key(16);

  const T* tile;
  int m0, lane;
  address lane_row;

  __device__ __forceinline__ shared_a_operand(const T* A, int m0_, int lane_)
      : tile(A), m0(m0_), lane(lane_),
        lane_row(TransA ? address((lane_ / 8 / 2) * 8 + lane_ % 8, m0_ + (lane_ / 8 % 2) * 8)
                        : address(m0_ + lane_ % 16, (lane_ / 16) * kb)) {}

  __device__ __forceinline__ void load(uint32_t (&a)[MI][4], int k0) const {
    const char* bytes = reinterpret_cast<const char*>(tile);
    const int q = lane / 8;
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      const int m = m0 + mi * 16;
      if constexpr (ldsm && !TransA) {
        // Lane l: row l % 16 of the 16-row strip, second half of the k step for l >= 16.
        if constexpr (offsets) ldmatrix_x4(a[mi], bytes + lane_row.at(mi * 16, k0));
        else ldmatrix_x4(a[mi], tile_element<cols, Swizzle>(tile, m + lane % 16, k0 + (lane / 16) * kb));
      } else if constexpr (ldsm && TransA) {
        if constexpr (offsets) ldmatrix_x4_trans(a[mi], bytes + lane_row.at(k0, mi * 16));
        else
          ldmatrix_x4_trans(a[mi], tile_element<cols, Swizzle>(tile, k0 + (q / 2) * 8 + lane % 8, m + (q % 2) * 8));
      } else {
        load_fragment<frag, cols, Swizzle, TransA>(a[mi], tile, m, k0, lane);
      }
    }
  }
};

// The B operand of a warp's NI k x n8 tiles from a shared tile (K x N, N x K with TransB):
// load(b, k0) fills b[ni] with the fragment of rows k0.. of the step, columns n0 + 8 ni.
template <int N, int K, int NI, bool TransB, bool Swizzle, class T>
struct shared_b_operand {
  using frag = typename mma_frags<T>::b;
  static constexpr int cols = TransB ? K : N;
  static constexpr int kb = sizeof(T) == 1 ? 16 : 8;
  static constexpr bool ldsm = ldmatrix_loads<T, cols, TransB>;
  using address = tile_address<cols, sizeof(T), Swizzle>;
  static constexpr bool offsets =
      TransB ? address::keeps_key(16) : address::keeps_key(mma_traits<T>::k) && (NI & (NI - 1)) == 0;

  const T* tile;
  int n0, lane;
  address lane_row;

  __device__ __forceinline__ shared_b_operand(const T* B, int n0_, int lane_)
      : tile(B), n0(n0_), lane(lane_),
        lane_row(TransB ? address(n0_ + (lane_ / 8 / 2) * 8 + lane_ % 8, (lane_ / 8 % 2) * kb)
                        : address((lane_ / 8 % 2) * 8 + lane_ % 8, n0_ + (lane_ / 8 / 2) * 8)) {}

  __device__ __forceinline__ void load(uint32_t (&b)[NI][2], int k0) const {
    const char* bytes = reinterpret_cast<const char*>(tile);
    const int q = lane / 8;
#pragma unroll
    for (int ni = 0; ni < NI; ++ni) {
      const int n = n0 + ni * 8;
      if constexpr (ldsm && TransB) {
        // Two n tiles a load when there are two left: matrices (n, k lo), (n, k hi), (n+8, ...).
        if (ni % 2 == 1) continue;
        if (ni + 1 < NI) {
          uint32_t r[4];
          if constexpr (offsets) ldmatrix_x4(r, bytes + lane_row.at(ni * 8, k0));
          else ldmatrix_x4(r, tile_element<cols, Swizzle>(tile, n + (q / 2) * 8 + lane % 8, k0 + (q % 2) * kb));
          b[ni][0] = r[0], b[ni][1] = r[1], b[ni + 1][0] = r[2], b[ni + 1][1] = r[3];
        } else {
          ldmatrix_x2(b[ni], tile_element<cols, Swizzle>(tile, n + lane % 8, k0 + (q % 2) * kb));
        }
      } else if constexpr (ldsm && !TransB) {
        if (ni % 2 == 1) continue;
        if (ni + 1 < NI) {
          uint32_t r[4];
          if constexpr (offsets) ldmatrix_x4_trans(r, bytes + lane_row.at(k0, ni * 8));
          else ldmatrix_x4_trans(r, tile_element<cols, Swizzle>(tile, k0 + (q % 2) * 8 + lane % 8, n + (q / 2) * 8));
          b[ni][0] = r[0], b[ni][1] = r[1], b[ni + 1][0] = r[2], b[ni + 1][1] = r[3];
        } else {
          ldmatrix_x2_trans(b[ni], tile_element<cols, Swizzle>(tile, k0 + (q % 2) * 8 + lane % 8, n));
        }
      } else {
        load_fragment<frag, cols, Swizzle, TransB>(b[ni], tile, k0, n, lane);
      }
    }
  }
};

}  // namespace detail

// C += op(A) op(B) with A and B in shared memory (see the top of this file).
template <int M, int N, int K, int WarpsM, int WarpsN, bool TransA, bool TransB, bool SwizzleA,
          bool SwizzleB, class TA, class TB>
__device__ __forceinline__ void gemm_ss(const TA* A, const TB* B, float* C, int tid) {
  static_assert(sizeof(TA) == sizeof(TB), "A and B have one element type on the mma path");
  using traits = detail::mma_traits<TA>;
  constexpr int WTM = M / WarpsM, WTN = N / WarpsN;
  constexpr int MI = WTM / 16, NI = WTN / 8;
  static_assert(M % (16 * WarpsM) == 0 && N % (8 * WarpsN) == 0 && K % traits::k == 0,
                "the tile splits into whole mma shapes over the warps");
  const int lane = tid % 32;
  const int warp = (tid / 32) % (WarpsM * WarpsN);
  const detail::shared_a_operand<M, K, MI, TransA, SwizzleA, TA> a_operand(A, (warp % WarpsM) * WTM, lane);
  const detail::shared_b_operand<N, K, NI, TransB, SwizzleB, TB> b_operand(B, (warp / WarpsM) * WTN, lane);
#pragma unroll
  for (int k0 = 0; k0 < K; k0 += traits::k) {
    uint32_t a[MI][4];
    uint32_t b[NI][2];
    a_operand.load(a, k0);
    b_operand.load(b, k0);
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
      for (int ni = 0; ni < NI; ++ni) traits::mma(C + (mi * NI + ni) * 4, a[mi], b[ni]);
  }
}

// C += op(A) op(B) with A (16-bit) in the calling thread's registers and B in shared
// memory, the warps all along M (warp w owns rows w * M / WarpsM..). A's registers are laid
// out as an accumulator of an M x K tile would be (tiles (mi, kj) of 16 x 8, mi major, each
// frag_m16n8_c) -- whether A is stored M x K or K x M: the mma A fragment of k step s is then
// tiles kj = 2s and 2s + 1, the layout a gemm's accumulator converted element by element
// already has (attention's P).
template <int M, int N, int K, int WarpsM, bool TransB, bool SwizzleB, class TA, class TB>
__device__ __forceinline__ void gemm_rs(const TA* A, const TB* B, float* C, int tid) {
  static_assert(sizeof(TA) == 2 && sizeof(TB) == 2, "gemm_rs takes 16-bit operands");
  using traits = detail::mma_traits<TA>;
  constexpr int MI = M / WarpsM / 16, NI = N / 8, KJ = K / 8;
  static_assert(M % (16 * WarpsM) == 0 && N % 8 == 0 && K % traits::k == 0,
                "the tile splits into whole mma shapes over the warps");
  const int lane = tid % 32;
  const detail::shared_b_operand<N, K, NI, TransB, SwizzleB, TB> b_operand(B, 0, lane);
#pragma unroll
  for (int k0 = 0; k0 < K; k0 += traits::k) {
    uint32_t b[NI][2];
    b_operand.load(b, k0);
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      const TA* lo = A + (mi * KJ + k0 / 8) * 4;  // columns k0 .. k0 + 7
      const TA* hi = lo + 4;                       // columns k0 + 8 .. k0 + 15
      uint32_t a[4] = {detail::pack_register(lo), detail::pack_register(lo + 2), detail::pack_register(hi),
                       detail::pack_register(hi + 2)};
#pragma unroll
      for (int ni = 0; ni < NI; ++ni) traits::mma(C + (mi * NI + ni) * 4, a, b[ni]);
    }
  }
}

// C += op(A) op(B) with A in shared memory and B (16-bit) in the calling thread's registers,
// the warps all along N (warp w owns columns w * N / WarpsN..). B's registers are laid out as
// an accumulator of an N x K tile would be (tiles (nj, kj) of 16 x 8, each frag_m16n8_c) --
// whether B is stored N x K or K x N: n8 tile ni of k step s is then rows g (ni even) or
// g + 8 (ni odd) of tiles (ni / 2, 2s) and (ni / 2, 2s + 1).
template <int M, int N, int K, int WarpsN, bool TransA, bool SwizzleA, class TA, class TB>
__device__ __forceinline__ void gemm_sr(const TA* A, const TB* B, float* C, int tid) {
  static_assert(sizeof(TA) == 2 && sizeof(TB) == 2, "gemm_sr takes 16-bit operands");
  using traits = detail::mma_traits<TA>;
  constexpr int MI = M / 16, NI = N / WarpsN / 8, KJ = K / 8;
  static_assert(M % 16 == 0 && N % (16 * WarpsN) == 0 && K % traits::k == 0,
                "the tile splits into whole mma shapes over the warps");
  const int lane = tid % 32;
  const detail::shared_a_operand<M, K, MI, TransA, SwizzleA, TA> a_operand(A, 0, lane);
#pragma unroll
  for (int k0 = 0; k0 < K; k0 += traits::k) {
    uint32_t a[MI][4];
    a_operand.load(a, k0);
#pragma unroll
    for (int ni = 0; ni < NI; ++ni) {
      const TB* lo = B + ((ni / 2) * KJ + k0 / 8) * 4 + (ni % 2) * 2;  // k0 .. k0 + 7
      const TB* hi = lo + 4;                                          // k0 + 8 .. k0 + 15
      uint32_t b[2] = {detail::pack_register(lo), detail::pack_register(hi)};
#pragma unroll
      for (int mi = 0; mi < MI; ++mi) traits::mma(C + (mi * NI + ni) * 4, a[mi], b);
    }
  }
}

// Fills the calling thread's registers R of a 16-bit Rows x Cols fragment laid out as a gemm
// accumulator over a WarpsM x WarpsN warp grid (tiles (mi, ni) of 16 x 8, frag_m16n8_c) from
// a row-major shared tile, with ldmatrix: each 16 x 16 block is four 8 x 8 matrices whose
// lane map is the accumulator's (row l / 4, columns 2 (l % 4), +1).
template <int Rows, int Cols, int WarpsM, int WarpsN, bool Swizzle, class T>
__device__ __forceinline__ void ldmatrix_accumulator(T* R, const T* tile, int tid) {
  static_assert(sizeof(T) == 2 && (Cols * 2) % 16 == 0, "16-bit tiles of whole 16-byte rows");
  constexpr int MI = Rows / WarpsM / 16, NI = Cols / WarpsN / 8;
  const int lane = tid % 32, q = lane / 8;
  const int warp = (tid / 32) % (WarpsM * WarpsN);
  const int m0 = (warp % WarpsM) * (Rows / WarpsM), n0 = (warp / WarpsM) * (Cols / WarpsN);
  auto store = [&](int tile_index, uint32_t lo_rows, uint32_t hi_rows) {
    T* slots = R + tile_index * 4;
    slots[0] = from_bits<T>(lo_rows & 0xffffu), slots[1] = from_bits<T>(lo_rows >> 16);
    slots[2] = from_bits<T>(hi_rows & 0xffffu), slots[3] = from_bits<T>(hi_rows >> 16);
  };
#pragma unroll
  for (int mi = 0; mi < MI; ++mi) {
    const int row = m0 + mi * 16 + (q % 2) * 8 + lane % 8;
#pragma unroll
    for (int ni = 0; ni < NI; ni += 2) {
      uint32_t r[4];
      if (ni + 1 < NI) {
        ldmatrix_x4(r, detail::tile_element<Cols, Swizzle>(tile, row, n0 + ni * 8 + (q / 2) * 8));
        store(mi * NI + ni, r[0], r[1]);
        store(mi * NI + ni + 1, r[2], r[3]);
      } else {
        ldmatrix_x2(r, detail::tile_element<Cols, Swizzle>(tile, row, n0 + ni * 8));
        store(mi * NI + ni, r[0], r[1]);
      }
    }
  }
}

}  // namespace tilec_cuda
