// tilec CUDA device support, part 3: barriers, asynchronous copies (cp.async, sm_80+), ldmatrix,
// and on sm_90 the async-proxy fence, mbarriers and the bulk copy engine.
//
// Shared-memory operands are generic pointers into shared memory, which each wrapper converts
// to 32-bit shared-window addresses (cvta.to.shared) itself; cp.async's are such addresses.
#pragma once

#include "cuda/types.h"
#include "gpu/memory.h"

namespace tilec_cuda {

__device__ __forceinline__ uint32_t shared_address(const void* smem) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(smem));
}

// bar.sync Id, Threads: Threads threads of the block (a multiple of 32: whole warps) wait for
// each other at barrier Id, when the others never reach it (a warp-specialized kernel's
// producer; the other T.ws groups).
template <int Id, int Threads>
__device__ __forceinline__ void sync_threads_partial() {
  asm volatile("bar.sync %0, %1;\n" ::"n"(Id), "n"(Threads) : "memory");
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800

// ---------------------------------------------------------------- cp.async (sm_80+)

// cp.async.cg.shared.global [smem], [gmem], 16, src_size: 16 bytes, cached in L2 only (4 and 8
// bytes: .ca, in L1 and L2). Both addresses aligned to the size. With pred false, src_size is
// 0: nothing is read (gmem may point anywhere) and the destination bytes are zero-filled.
// `smem` is a 32-bit shared-window address: the generated code passes a shared tile's
// (shared_address of its first element) plus the element's byte offset, so that a thread's
// copies into one tile share a base register and differ by immediates. From a generic pointer
// each copy's address was a 64-bit sum of its own, computed ahead and held in a register
// (NVRTC's shared pointers are 64-bit): the sparse MLA prefill's gathering warpgroup spilled at
// 104 registers with 72 such addresses.
//
// Policy and Prefetch are T.ptx_cp_async's L2 hints: Policy 1 evict_first, 2 evict_last (the
// lines' priority when L2 evicts; 0 no hint), Prefetch the bytes L2 fetches around a miss (64,
// 128, 256; 0 no hint). The policy is createpolicy's, the same value for every copy, which the
// compiler computes once.
template <int Policy>
__device__ __forceinline__ uint64_t l2_eviction_policy() {
  uint64_t policy;
  if constexpr (Policy == 1) asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  else if constexpr (Policy == 2) asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(policy));
  else asm("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;\n" : "=l"(policy));
  return policy;
}

#define TILEC_CP_ASYNC(CACHE, PREFETCH)                                                                       \
  asm volatile("cp.async." CACHE ".shared.global.L2::cache_hint" PREFETCH " [%0], [%1], %2, %3, %4;\n" ::"r"(smem), \
               "l"(__cvta_generic_to_global(gmem)), "n"(Bytes), "r"(pred ? Bytes : 0),                         \
               "l"(l2_eviction_policy<Policy>())                                                              \
               : "memory")
#define TILEC_CP_ASYNC_PREFETCHING(CACHE)                         \
  if constexpr (Prefetch == 256) TILEC_CP_ASYNC(CACHE, ".L2::256B"); \
  else if constexpr (Prefetch == 128) TILEC_CP_ASYNC(CACHE, ".L2::128B"); \
  else if constexpr (Prefetch == 64) TILEC_CP_ASYNC(CACHE, ".L2::64B");   \
  else TILEC_CP_ASYNC(CACHE, "")

template <int Bytes, int Policy, int Prefetch>
__device__ __forceinline__ void cp_async(uint32_t smem, const void* gmem, bool pred) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async copies 4, 8 or 16 bytes");
  static_assert(Prefetch == 0 || Prefetch == 64 || Prefetch == 128 || Prefetch == 256, "L2 prefetches 64, 128, 256 bytes");
  if constexpr (Policy == 0 && Prefetch == 0) {
    if constexpr (Bytes == 16)
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem), "l"(__cvta_generic_to_global(gmem)),
                   "r"(pred ? 16 : 0)
                   : "memory");
    else
      asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem), "l"(__cvta_generic_to_global(gmem)),
                   "n"(Bytes), "r"(pred ? Bytes : 0)
                   : "memory");
  } else if constexpr (Bytes == 16) {
    TILEC_CP_ASYNC_PREFETCHING("cg");
  } else {
    TILEC_CP_ASYNC_PREFETCHING("ca");
  }
}
#undef TILEC_CP_ASYNC_PREFETCHING
#undef TILEC_CP_ASYNC

template <int Policy = 0, int Prefetch = 0>
__device__ __forceinline__ void cp_async_16(uint32_t smem, const void* gmem, bool pred = true) {
  cp_async<16, Policy, Prefetch>(smem, gmem, pred);
}
template <int Policy = 0, int Prefetch = 0>
__device__ __forceinline__ void cp_async_8(uint32_t smem, const void* gmem, bool pred = true) {
  cp_async<8, Policy, Prefetch>(smem, gmem, pred);
}
template <int Policy = 0, int Prefetch = 0>
__device__ __forceinline__ void cp_async_4(uint32_t smem, const void* gmem, bool pred = true) {
  cp_async<4, Policy, Prefetch>(smem, gmem, pred);
}

// prefetch.global.L2 [gmem]: the line holding gmem into L2, for a load soon after; a hint that
// holds no register and waits for nothing.
__device__ __forceinline__ void prefetch_l2(const void* gmem) {
  asm volatile("prefetch.global.L2 [%0];\n" ::"l"(__cvta_generic_to_global(gmem)));
}

// cp.async.commit_group: closes the group of this thread's cp.async issued since the last one.
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// cp.async.wait_group N: waits until at most N of this thread's committed groups are pending.
// Other threads' copies become visible only after a barrier (sync_threads) as well.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  static_assert(N >= 0, "a group count");
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// cp.async.wait_all: every cp.async of this thread, committed or not, has completed.
__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}

#endif  // sm_80

// ---------------------------------------------------------------- ldmatrix (sm_75+)

// ldmatrix.sync.aligned.m8n8.xN{.trans}.shared.b16 loads N 8x8 matrices of 16-bit elements
// from shared memory, one register per matrix per lane. Lane 8*j + r passes the address of
// row r of matrix j (16 contiguous bytes, 16-byte aligned); lanes past 8*N pass any address.
// Register j of lane l holds row l / 4, columns 2 * (l % 4) and 2 * (l % 4) + 1 of matrix j,
// the lower column in the low 16 bits (frag_ldmatrix below). With .trans it holds the
// transposed matrix's row instead: elements (2 * (l % 4), l / 4) and (2 * (l % 4) + 1, l / 4)
// of the matrix as stored (frag_ldmatrix_trans).
//
// For mma.m16n8k16, a 16x16 row-major A tile loads as its fragment with ldmatrix_x4 when lane
// l addresses row l % 16 at column 8 * (l / 16); B stored as N x K rows ("col") loads with
// ldmatrix_x2 from row l % 8 at column 8 * ((l / 8) % 2), and B stored as K x N rows with
// ldmatrix_x2_trans from row l % 16.
__device__ __forceinline__ void ldmatrix_x1(uint32_t* regs, const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n"
               : "=r"(regs[0])
               : "r"(shared_address(smem_row))
               : "memory");
}
__device__ __forceinline__ void ldmatrix_x2(uint32_t* regs, const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(regs[0]), "=r"(regs[1])
               : "r"(shared_address(smem_row))
               : "memory");
}
__device__ __forceinline__ void ldmatrix_x4(uint32_t* regs, const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(regs[0]), "=r"(regs[1]), "=r"(regs[2]), "=r"(regs[3])
               : "r"(shared_address(smem_row))
               : "memory");
}
__device__ __forceinline__ void ldmatrix_x1_trans(uint32_t* regs, const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n"
               : "=r"(regs[0])
               : "r"(shared_address(smem_row))
               : "memory");
}
__device__ __forceinline__ void ldmatrix_x2_trans(uint32_t* regs, const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(regs[0]), "=r"(regs[1])
               : "r"(shared_address(smem_row))
               : "memory");
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t* regs, const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(regs[0]), "=r"(regs[1]), "=r"(regs[2]), "=r"(regs[3])
               : "r"(shared_address(smem_row))
               : "memory");
}

// One 8x8 matrix of ldmatrix: element (row, col) is in lane row * 4 + col / 2, in the low
// (slot 0) or high (slot 1) half of that lane's register: slot col % 2.
struct frag_ldmatrix {
  enum : int { rows = 8, cols = 8, slots = 2 };
  __host__ __device__ static constexpr int row(int lane, int slot) { return lane / 4; }
  __host__ __device__ static constexpr int col(int lane, int slot) { return 2 * (lane % 4) + slot; }
  __host__ __device__ static constexpr int lane(int row, int col) { return row * 4 + col / 2; }
  __host__ __device__ static constexpr int slot(int row, int col) { return col % 2; }
};
// The same with .trans: element (row, col) of the matrix as stored is in lane col * 4 + row / 2,
// slot row % 2.
struct frag_ldmatrix_trans {
  enum : int { rows = 8, cols = 8, slots = 2 };
  __host__ __device__ static constexpr int row(int lane, int slot) { return 2 * (lane % 4) + slot; }
  __host__ __device__ static constexpr int col(int lane, int slot) { return lane / 4; }
  __host__ __device__ static constexpr int lane(int row, int col) { return col * 4 + row / 2; }
  __host__ __device__ static constexpr int slot(int row, int col) { return row % 2; }
};

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900

// ---------------------------------------------------------------- async proxy (sm_90)

// fence.proxy.async.shared::cta: orders this thread's earlier ordinary (generic-proxy)
// shared-memory accesses before later async-proxy ones (bulk copies, TMA, wgmma operands).
// Each writing thread fences, then the block synchronizes.
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// mbarrier.init.shared::cta.b64 [bar], count: a barrier (8 bytes of shared memory, 8-byte
// aligned) whose phase completes when `count` arrivals and all expected transaction bytes have
// come. Initialize from one thread, then sync_threads before any other thread uses it.
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(bar)),
               "r"(count)
               : "memory");
}

// mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], bytes: this thread arrives and the current
// phase expects `bytes` more transaction bytes (from bulk copies that complete on `bar`).
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(
                   shared_address(bar)),
               "r"(bytes)
               : "memory");
}

// mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [bar], bytes: the current phase expects `bytes`
// more transaction bytes, with no arrival (T.tma_copy's issuing thread, which arrives with the
// rest of its group).
__device__ __forceinline__ void mbarrier_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(bar)),
               "r"(bytes)
               : "memory");
}

// mbarrier.arrive.shared::cta.b64 _, [bar]: a plain arrival.
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(shared_address(bar))
               : "memory");
}

// One arrival a warp: lane 0 arrives once every lane of the warp has come here (a barrier
// initialized with the number of warps that arrive).
__device__ __forceinline__ void mbarrier_arrive_per_warp(uint64_t* bar) {
  __syncwarp();
  if ((threadIdx.x & 31) == 0) mbarrier_arrive(bar);
}

// fence.mbarrier_init.release.cluster: barriers just initialized are seen initialized by the
// copy engine (then sync_threads publishes them to the block).
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// mbarrier.try_wait.parity.shared::cta.b64 p, [bar], parity: true once the phase with this
// parity (0 for the first phase, then 1, 0, ...) has completed; false after a time-out. Memory
// written by the completed phase's copies is then visible to this thread.
__device__ __forceinline__ bool mbarrier_try_wait_parity(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(shared_address(bar)), "r"(parity)
      : "memory");
  return done != 0;
}

// Spins on mbarrier_try_wait_parity.
__device__ __forceinline__ void mbarrier_wait_parity(uint64_t* bar, uint32_t parity) {
  while (!mbarrier_try_wait_parity(bar, parity)) {
  }
}

// cp.async.mbarrier.arrive.noinc.shared::cta.b64 [bar]: the barrier gets this thread's arrival
// once its cp.async copies so far have landed (noinc: the arrival is one of the count the
// barrier was initialized with).
__device__ __forceinline__ void cp_async_mbarrier_arrive_noinc(uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(shared_address(bar)) : "memory");
}

// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [smem], [gmem], bytes, [bar]:
// the copy engine moves `bytes` (a multiple of 16; both addresses 16-byte aligned) from global
// to shared memory and counts them as transaction bytes on `bar`.
__device__ __forceinline__ void cp_async_bulk_global_to_shared(void* smem, const void* gmem,
                                                               uint32_t bytes, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::
          "r"(shared_address(smem)),
      "l"(__cvta_generic_to_global(gmem)), "r"(bytes), "r"(shared_address(bar))
      : "memory");
}

#endif  // sm_90

}  // namespace tilec_cuda
