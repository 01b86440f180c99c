// tilec CUDA device support, part 7 (sm_90a): the warpgroup GEMM that `T.gemm` lowers to on
// Hopper, on wgmma.mma_async.
//
// A warpgroup is four consecutive warps (threads 128g .. 128g + 127). wgmma_gemm_ss<...>(A, B,
// C) computes C += op(A) op(B) for an M x N x K tile over GroupsM x GroupsN warpgroups
// (warpgroup g at (g % GroupsM, g / GroupsM)); each owns an (M / GroupsM) x (N / GroupsN)
// part of C, made of m64 strips. The thread's C registers are, strip by strip, groups of 8
// columns, and in each the four slots of frag_m16n8_c for its warp's 16 rows of the strip:
// the compiler's wgmma accumulator Fragment (src/ir/layout.cc, wgmma_accumulator) is this map.
//
// Operands are panel tiles (cuda/panels.h: rows cut into panels of PanelA / PanelB bytes,
// swizzled as TMA writes them), which wgmma reads through descriptors (operand_part). A is
// M x K (K x M with TransA), B is K x N (N x K with TransB); fp8 and tf32 (float) operands must
// be K-major (A not transposed, B transposed).
#pragma once

#include "cuda/memory.h"
#include "cuda/panels.h"
#include "cuda/types.h"
#include "cuda/wgmma_ops.h"

namespace tilec_cuda {

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900

// wgmma.fence: the warpgroup's earlier register and shared-memory writes are seen by the
// wgmmas that follow. commit_group closes a group of wgmmas; wait_group<N> waits until at
// most N groups of this thread are pending.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// Keeps the compiler from moving accesses of registers that a wgmma in flight reads or writes
// across this point (the hardware writes them after the asm statement has "returned").
template <int Count>
__device__ __forceinline__ void fence_registers(float* r) {
#pragma unroll
  for (int i = 0; i < Count; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
template <int Count>
__device__ __forceinline__ void fence_registers(uint32_t* r) {
#pragma unroll
  for (int i = 0; i < Count; ++i) asm volatile("" : "+r"(r[i])::"memory");
}

// Ends the values the registers held, with no instruction, for a gemm that clears its
// accumulator (scale-d 0): the wgmma reads the registers only as its asm's "+f" operands. Zeros
// written first instead let the compiler make one zero register stand for many, among them a
// register the wgmma writes: ptxas then waits for the wgmma where the zero is next read
// (warning C7517), and the asynchronous gemm waits for itself.
template <int Count>
__device__ __forceinline__ void forget_registers(float* r) {
#pragma unroll
  for (int i = 0; i < Count; ++i) asm volatile("" : "=f"(r[i]));
}

// fence_registers for a fragment of Count elements of a 4-byte (accumulator) or 2-byte (A
// operand) type: after a wgmma_wait, its values are the ones the wgmmas wrote.
template <int Count>
__device__ __forceinline__ void fence_fragment(float* r) {
  fence_registers<Count>(r);
}
template <int Count, class T>
__device__ __forceinline__ void fence_fragment(T* r) {
  static_assert(sizeof(T) == 4 || (sizeof(T) == 2 && Count % 2 == 0), "wgmma fragments are 32- or 16-bit");
  fence_registers<Count * sizeof(T) / 4>(reinterpret_cast<uint32_t*>(r));
}

// setmaxnreg: the warpgroup's registers a thread drop to (dec) or grow to (inc) Count; all
// warps of the warpgroup execute it. Producer warpgroups give registers to the consumers.
template <int Count>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Count));
}
template <int Count>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Count));
}

// Two consumer warpgroups taking turns at the tensor cores (ping-pong; passes/cuda/
// pingpong_warpgroups.h): warpgroup g waits for its turn on named barrier B + g (a gemm's
// TakeTurn = B), issues its wgmmas, and hands the turn to the other on B + 1 - g (PassTurn = B)
// before it waits for their results, so that one's gemm runs while the other computes between
// its gemms. Each barrier counts both warpgroups (256 threads): one waits (turn_wait), the other
// arrives (turn_pass).
__device__ __forceinline__ void turn_wait(int barrier) {
  asm volatile("bar.sync %0, 256;\n" ::"r"(barrier) : "memory");
}
__device__ __forceinline__ void turn_pass(int barrier) {
  asm volatile("bar.arrive %0, 256;\n" ::"r"(barrier) : "memory");
}

// The widest wgmma a kernel issues. An m64n256 fp32 accumulator and its operands take about 158
// registers a thread, and ptxas refuses the instruction (C7602) in a kernel launched with fewer,
// even in a warpgroup that setmaxnreg grows past them: the generated source of a kernel launched
// with fewer (a block of more than 384 threads, or blocks asked to share an SM) sets 128. Two
// m64n128 wgmmas hold the accumulator's registers in the same order as one m64n256.
#ifndef TILEC_WGMMA_MAX_N
#define TILEC_WGMMA_MAX_N 256
#endif

namespace detail {

// The widest wgmma (a multiple of 8, at most TILEC_WGMMA_MAX_N) that splits N.
__host__ __device__ constexpr int wgmma_width(int n) {
  int w = n <= TILEC_WGMMA_MAX_N ? n : TILEC_WGMMA_MAX_N;
  while (n % w != 0) w -= 8;
  return w;
}

// The descriptor of the operand part at (mn, k) of an MN x K operand tile in PanelBytes panels
// (a 64-row strip of A, or an instruction's columns of B, at one k step): stored MN x K when
// KMajor, else K x MN (so the part starts at row k, column mn). Only the layout taken is
// instantiated: a K x MN tile may have panels too narrow for a K-major one.
template <int MN, int K, int PanelBytes, bool KMajor, class T>
__device__ __forceinline__ uint64_t operand_descriptor(const T* tile, int mn, int k) {
  operand_view part;
  if constexpr (KMajor)
    part = operand_part<MN, K, sizeof(T), PanelBytes, true>(mn, k);
  else
    part = operand_part<K, MN, sizeof(T), PanelBytes, false>(k, mn);
  // The tile's descriptor plus the part's offset in 16-byte units: the start field holds a
  // shared address under 256 KB, so the addition never carries into the fields above it, and
  // the compiler builds the tile's descriptor once and adds an immediate a wgmma (from
  // operand_descriptor_bits(tile + start) it rebuilt every field each time).
  const unsigned start = part.start;
  part.start = 0;
  return operand_descriptor_bits(shared_address(tile), part) + (start >> 4);
}

// The warpgroup of thread `tid` (tid / 128), which every thread of a warp shares: read from
// lane 0, the compiler knows it is one value for the warp and computes what depends on it (a
// gemm's operand descriptors) on the uniform datapath, not in each thread's registers with a
// move to a uniform register before each wgmma.
__device__ __forceinline__ int warpgroup_index(int tid) { return __shfl_sync(0xffffffffu, tid / 128, 0); }

}  // namespace detail

// C += op(A) op(B), A and B panel tiles in shared memory; waits for the result, or with Async
// leaves it in flight (a later wgmma_wait and fence_fragment of C take it). With TakeTurn and
// PassTurn, the warpgroups issue in turns (turn_wait above). Clear: C = op(A) op(B), C's old
// values unread (the first K step's wgmmas ignore them: scale-d 0), so C needs no zeros first.
template <int M, int N, int K, int GroupsM, int GroupsN, bool TransA, bool TransB, int PanelA, int PanelB,
          int TakeTurn = 0, int PassTurn = 0, bool Async = false, bool Clear = false, class TA, class TB>
__device__ __forceinline__ void wgmma_gemm_ss(const TA* a, const TB* b, float* c, int tid) {
  static_assert(sizeof(TA) == sizeof(TB), "operands of one type width");
  constexpr int WM = M / GroupsM, WN = N / GroupsN, MI = WM / 64;
  constexpr int width = detail::wgmma_width(WN), NI = WN / width;
  using op = wgmma_op<width, TA>;
  static_assert(WM % 64 == 0 && WN % 8 == 0 && K % op::k == 0, "tile splits into wgmma shapes");
  // Along a dimension of one group the offset is 0 at compile time: from the warpgroup index
  // it is a run-time value, and every wgmma's descriptor then takes a 64-bit addition of it.
  const int group = detail::warpgroup_index(tid);
  const int m0 = GroupsM == 1 ? 0 : (group % GroupsM) * WM, n0 = GroupsN == 1 ? 0 : (group / GroupsM) * WN;
  if constexpr (Clear) forget_registers<MI * WN / 2>(c);
  fence_registers<MI * WN / 2>(c);
  if constexpr (TakeTurn != 0) turn_wait(TakeTurn + detail::warpgroup_index(tid));
  wgmma_fence();
#pragma unroll
  for (int k = 0; k < K; k += op::k) {
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      const uint64_t da = detail::operand_descriptor<M, K, PanelA, !TransA>(a, m0 + mi * 64, k);
#pragma unroll
      for (int ni = 0; ni < NI; ++ni) {
        const int n = n0 + ni * width;
        const uint64_t db = detail::operand_descriptor<N, K, PanelB, TransB>(b, n, k);
        op::template ss<TransA, !TransB>(c + (mi * NI + ni) * (width / 2), da, db, Clear && k == 0 ? 0 : 1);
      }
    }
  }
  wgmma_commit();
  if constexpr (PassTurn != 0) turn_pass(PassTurn + 1 - detail::warpgroup_index(tid));
  if constexpr (!Async) {
    wgmma_wait<0>();
    fence_registers<MI * WN / 2>(c);
  }
}

// C += A op(B), A a 16-bit register tile in the accumulator layout of its M x K shape over
// GroupsM x 1 warpgroups (each holds its rows), B a panel tile; waits for the result, or with
// Async leaves it in flight (C and A until a later wgmma_wait and fence_fragment). With TakeTurn
// and PassTurn, the warpgroups issue in turns (turn_wait above); Clear as wgmma_gemm_ss's.
template <int M, int N, int K, int GroupsM, bool TransB, int PanelB, int TakeTurn = 0, int PassTurn = 0,
          bool Async = false, bool Clear = false, class TA, class TB>
__device__ __forceinline__ void wgmma_gemm_rs(const TA* a, const TB* b, float* c, int tid) {
  static_assert(sizeof(TA) == 2, "register A operands are 16-bit");
  constexpr int WM = M / GroupsM, MI = WM / 64;
  constexpr int width = detail::wgmma_width(N), NI = N / width;
  using op = wgmma_op<width, TA>;
  static_assert(WM % 64 == 0 && N % 8 == 0 && K % op::k == 0, "tile splits into wgmma shapes");
  uint32_t* regs = reinterpret_cast<uint32_t*>(const_cast<TA*>(a));
  if constexpr (Clear) forget_registers<MI * N / 2>(c);
  fence_registers<MI * N / 2>(c);
  fence_registers<MI * K / 4>(regs);
  if constexpr (TakeTurn != 0) turn_wait(TakeTurn + detail::warpgroup_index(tid));
  wgmma_fence();
#pragma unroll
  for (int k = 0; k < K; k += op::k) {
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
#pragma unroll
      for (int ni = 0; ni < NI; ++ni) {
        const int n = ni * width;
        const uint64_t db = detail::operand_descriptor<N, K, PanelB, TransB>(b, n, k);
        op::template rs<!TransB>(c + (mi * NI + ni) * (width / 2), regs + (mi * K + k) / 4, db,
                                 Clear && k == 0 ? 0 : 1);
      }
    }
  }
  wgmma_commit();
  if constexpr (PassTurn != 0) turn_pass(PassTurn + 1 - detail::warpgroup_index(tid));
  if constexpr (!Async) {
    wgmma_wait<0>();
    fence_registers<MI * N / 2>(c);
    fence_registers<MI * K / 4>(regs);
  }
}

// stmatrix.sync.aligned.m8n8.x4.shared.b16: the warp stores four 8x8 matrices of 16-bit
// elements, register j of each lane holding row l / 4, columns 2 * (l % 4) and + 1 of matrix j
// (ldmatrix_x4's map, the other way); lane 8 * j + r passes the address of row r of matrix j.
__device__ __forceinline__ void stmatrix_x4(void* smem_row, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(shared_address(smem_row)),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

// The accumulator `c` of an M x N wgmma gemm over GroupsM x GroupsN warpgroups, rounded to T
// (16-bit), into the M x N tile `tile` in Panel-byte panels. Each group of 8 columns of a warp's 16 rows is
// two 8x8 matrices (rows 0-7: slots 0-1, rows 8-15: slots 2-3), so a stmatrix_x4 stores 16
// columns; with panels no two rows of a matrix share banks.
template <int M, int N, int GroupsM, int GroupsN, int Panel, class T>
__device__ __forceinline__ void stmatrix_accumulator(const float* c, T* tile, int tid) {
  static_assert(sizeof(T) == 2, "stmatrix stores 16-bit elements");
  constexpr int WM = M / GroupsM, WN = N / GroupsN;
  static_assert(WM % 64 == 0 && WN % 16 == 0, "each warp stores whole 16 x 16 blocks");
  const int group = tid / 128, warp = (tid / 32) % 4, lane = tid % 32;
  const int row0 = (group % GroupsM) * WM + warp * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
  const int col0 = (group / GroupsM) * WN + (lane >> 4) * 8;
  auto pack = [](float lo, float hi) {
    return uint32_t(bits_of(from_float<T>(lo))) | (uint32_t(bits_of(from_float<T>(hi))) << 16);
  };
#pragma unroll
  for (int mi = 0; mi < WM / 64; ++mi) {
#pragma unroll
    for (int j = 0; j < WN / 8; j += 2) {
      const float* r = c + (mi * (WN / 8) + j) * 4;
      stmatrix_x4(tile + panel_offset<M, N, 2, Panel>(row0 + mi * 64, col0 + j * 8), pack(r[0], r[1]), pack(r[2], r[3]),
                  pack(r[4], r[5]), pack(r[6], r[7]));
    }
  }
}

#endif  // sm_90

}  // namespace tilec_cuda
