// tilec CUDA device support, part 8 (sm_90): the Tensor Memory Accelerator. A tensor map
// (CUtensorMap, 128 bytes, built on the host by cuTensorMapEncodeTiled) describes a global
// tensor and the box one copy moves; the kernel receives it inside its __grid_constant__
// parameter, so its address is a parameter-space address the copy engine can read.
#pragma once

#include "cuda/memory.h"
#include "cuda/types.h"

namespace tilec_cuda {

struct alignas(64) tensor_map {
  uint64_t words[16];
};

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900

// cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes: the box at
// coordinates (c0 innermost, c1, ...) of `map`'s tensor into shared memory at `smem` (laid
// out, swizzled, as the map says; 128-byte aligned, 1024 with 128-byte swizzle); its bytes
// count as transaction bytes on `bar`. Elements outside the tensor arrive as zeros and count
// too. Policy is T.copy's eviction_policy (0 none, 1 evict_first, 2 evict_last): the load's
// .L2::cache_hint, an l2_eviction_policy (memory.h) as its last operand.
//
// The multicast form: the box lands at `smem`'s offset in the shared memory of each block of
// the cluster whose rank's bit `ranks` sets, and its bytes count on each one's barrier at
// `bar`'s offset (the issuing block need not be one of them).
#define TILEC_TMA_LOAD(N, COORDS, POLICY, ...)                                                                     \
  if constexpr (Policy == 0)                                                                                        \
    asm volatile("cp.async.bulk.tensor." #N "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"           \
                 " [%0], [%1, {" COORDS "}], [%2];\n" ::"r"(shared_address(smem)),                                \
                 "l"(&map), "r"(shared_address(bar)), __VA_ARGS__                                                  \
                 : "memory");                                                                                      \
  else                                                                                                              \
    asm volatile("cp.async.bulk.tensor." #N "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"           \
                 ".L2::cache_hint [%0], [%1, {" COORDS "}], [%2], " POLICY ";\n" ::"r"(shared_address(smem)),      \
                 "l"(&map), "r"(shared_address(bar)), __VA_ARGS__, "l"(l2_eviction_policy<Policy>())              \
                 : "memory")
#define TILEC_TMA_LOAD_MULTICAST(N, COORDS, POLICY, ...)                                                           \
  if constexpr (Policy == 0)                                                                                        \
    asm volatile("cp.async.bulk.tensor." #N "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"           \
                 ".multicast::cluster [%0], [%1, {" COORDS "}], [%2], %3;\n" ::"r"(shared_address(smem)),          \
                 "l"(&map), "r"(shared_address(bar)), "h"(ranks), __VA_ARGS__                                      \
                 : "memory");                                                                                      \
  else                                                                                                              \
    asm volatile("cp.async.bulk.tensor." #N "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"           \
                 ".multicast::cluster.L2::cache_hint [%0], [%1, {" COORDS "}], [%2], %3, " POLICY ";\n" ::"r"(      \
                     shared_address(smem)),                                                                         \
                 "l"(&map), "r"(shared_address(bar)), "h"(ranks), __VA_ARGS__, "l"(l2_eviction_policy<Policy>()) \
                 : "memory")

template <int Policy = 0>
__device__ __forceinline__ void tma_load(const tensor_map& map, void* smem, uint64_t* bar, int c0) {
  TILEC_TMA_LOAD(1, "%3", "%4", "r"(c0));
}
template <int Policy = 0>
__device__ __forceinline__ void tma_load(const tensor_map& map, void* smem, uint64_t* bar, int c0, int c1) {
  TILEC_TMA_LOAD(2, "%3, %4", "%5", "r"(c0), "r"(c1));
}
template <int Policy = 0>
__device__ __forceinline__ void tma_load(const tensor_map& map, void* smem, uint64_t* bar, int c0, int c1, int c2) {
  TILEC_TMA_LOAD(3, "%3, %4, %5", "%6", "r"(c0), "r"(c1), "r"(c2));
}
template <int Policy = 0>
__device__ __forceinline__ void tma_load(const tensor_map& map, void* smem, uint64_t* bar, int c0, int c1, int c2,
                                         int c3) {
  TILEC_TMA_LOAD(4, "%3, %4, %5, %6", "%7", "r"(c0), "r"(c1), "r"(c2), "r"(c3));
}
template <int Policy = 0>
__device__ __forceinline__ void tma_load(const tensor_map& map, void* smem, uint64_t* bar, int c0, int c1, int c2,
                                         int c3, int c4) {
  TILEC_TMA_LOAD(5, "%3, %4, %5, %6, %7", "%8", "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4));
}

template <int Policy = 0>
__device__ __forceinline__ void tma_load_multicast(const tensor_map& map, void* smem, uint64_t* bar, uint16_t ranks,
                                                   int c0) {
  TILEC_TMA_LOAD_MULTICAST(1, "%4", "%5", "r"(c0));
}
template <int Policy = 0>
__device__ __forceinline__ void tma_load_multicast(const tensor_map& map, void* smem, uint64_t* bar, uint16_t ranks,
                                                   int c0, int c1) {
  TILEC_TMA_LOAD_MULTICAST(2, "%4, %5", "%6", "r"(c0), "r"(c1));
}
template <int Policy = 0>
__device__ __forceinline__ void tma_load_multicast(const tensor_map& map, void* smem, uint64_t* bar, uint16_t ranks,
                                                   int c0, int c1, int c2) {
  TILEC_TMA_LOAD_MULTICAST(3, "%4, %5, %6", "%7", "r"(c0), "r"(c1), "r"(c2));
}
template <int Policy = 0>
__device__ __forceinline__ void tma_load_multicast(const tensor_map& map, void* smem, uint64_t* bar, uint16_t ranks,
                                                   int c0, int c1, int c2, int c3) {
  TILEC_TMA_LOAD_MULTICAST(4, "%4, %5, %6, %7", "%8", "r"(c0), "r"(c1), "r"(c2), "r"(c3));
}
template <int Policy = 0>
__device__ __forceinline__ void tma_load_multicast(const tensor_map& map, void* smem, uint64_t* bar, uint16_t ranks,
                                                   int c0, int c1, int c2, int c3, int c4) {
  TILEC_TMA_LOAD_MULTICAST(5, "%4, %5, %6, %7, %8", "%9", "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4));
}
#undef TILEC_TMA_LOAD_MULTICAST
#undef TILEC_TMA_LOAD

// cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group: the box at (c0 innermost, c1,
// ...) of `map`'s tensor from shared memory at `smem` (laid out as for tma_load). Elements
// outside the tensor are not written. The calling thread's earlier shared writes, and other
// threads' before a barrier, must be ordered before it with fence_proxy_async.
__device__ __forceinline__ void tma_store(const tensor_map& map, const void* smem, int c0) {
  asm volatile("cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [%0, {%2}], [%1];\n" ::"l"(&map),
               "r"(shared_address(smem)), "r"(c0)
               : "memory");
}
__device__ __forceinline__ void tma_store(const tensor_map& map, const void* smem, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(&map),
               "r"(shared_address(smem)), "r"(c0), "r"(c1)
               : "memory");
}
__device__ __forceinline__ void tma_store(const tensor_map& map, const void* smem, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(&map),
               "r"(shared_address(smem)), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}
__device__ __forceinline__ void tma_store(const tensor_map& map, const void* smem, int c0, int c1, int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n" ::"l"(&map),
      "r"(shared_address(smem)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}
__device__ __forceinline__ void tma_store(const tensor_map& map, const void* smem, int c0, int c1, int c2, int c3,
                                          int c4) {
  asm volatile(
      "cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];\n" ::"l"(&map),
      "r"(shared_address(smem)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
      : "memory");
}

// cp.reduce.async.bulk.tensor.Nd.global.shared::cta.add.tile.bulk_group: as tma_store, but each
// element of the box is added to the tensor's (atomically, element by element; float32 here).
__device__ __forceinline__ void tma_reduce_add(const tensor_map& map, const void* smem, int c0) {
  asm volatile("cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.tile.bulk_group [%0, {%2}], [%1];\n" ::"l"(&map),
               "r"(shared_address(smem)), "r"(c0)
               : "memory");
}
__device__ __forceinline__ void tma_reduce_add(const tensor_map& map, const void* smem, int c0, int c1) {
  asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
                   &map),
               "r"(shared_address(smem)), "r"(c0), "r"(c1)
               : "memory");
}
__device__ __forceinline__ void tma_reduce_add(const tensor_map& map, const void* smem, int c0, int c1, int c2) {
  asm volatile(
      "cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(&map),
      "r"(shared_address(smem)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}
__device__ __forceinline__ void tma_reduce_add(const tensor_map& map, const void* smem, int c0, int c1, int c2,
                                               int c3) {
  asm volatile(
      "cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n" ::"l"(
          &map),
      "r"(shared_address(smem)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}
__device__ __forceinline__ void tma_reduce_add(const tensor_map& map, const void* smem, int c0, int c1, int c2,
                                               int c3, int c4) {
  asm volatile(
      "cp.reduce.async.bulk.tensor.5d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];\n" ::"l"(
          &map),
      "r"(shared_address(smem)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
      : "memory");
}

// Closes this thread's group of tma_stores and tma_reduce_adds.
__device__ __forceinline__ void tma_store_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }

// Waits until this thread's groups of tma_stores and tma_reduce_adds have read their shared
// memory, which may then be written again (their global writes may still be in flight).
__device__ __forceinline__ void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}

// prefetch.tensormap: brings the map into the descriptor cache ahead of the first copy.
__device__ __forceinline__ void tma_prefetch_map(const tensor_map& map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(&map) : "memory");
}

#endif  // sm_90

}  // namespace tilec_cuda
