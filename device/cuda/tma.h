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
// too.
__device__ __forceinline__ void tma_load(const tensor_map& map, void* smem, uint64_t* bar, int c0) {
  asm volatile(
      "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3}], [%2];\n" ::"r"(
          shared_address(smem)),
      "l"(&map), "r"(shared_address(bar)), "r"(c0)
      : "memory");
}
__device__ __forceinline__ void tma_load(const tensor_map& map, void* smem, uint64_t* bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(
          shared_address(smem)),
      "l"(&map), "r"(shared_address(bar)), "r"(c0), "r"(c1)
      : "memory");
}
__device__ __forceinline__ void tma_load(const tensor_map& map, void* smem, uint64_t* bar, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(
          shared_address(smem)),
      "l"(&map), "r"(shared_address(bar)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}
__device__ __forceinline__ void tma_load(const tensor_map& map, void* smem, uint64_t* bar, int c0, int c1, int c2,
                                         int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], [%2];\n" ::"r"(
          shared_address(smem)),
      "l"(&map), "r"(shared_address(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}
__device__ __forceinline__ void tma_load(const tensor_map& map, void* smem, uint64_t* bar, int c0, int c1, int c2,
                                         int c3, int c4) {
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6, %7}], [%2];\n" ::"r"(
          shared_address(smem)),
      "l"(&map), "r"(shared_address(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
      : "memory");
}

// prefetch.tensormap: brings the map into the descriptor cache ahead of the first copy.
__device__ __forceinline__ void tma_prefetch_map(const tensor_map& map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(&map) : "memory");
}

#endif  // sm_90

}  // namespace tilec_cuda
