// tilec CUDA device support: T.sync_grid, a barrier of every thread of every block of the grid.
// The kernel is launched cooperatively (codegen/cuda: CudaLaunch::cooperative), so all its blocks
// are resident at once, and the driver gives the launch a workspace whose address is in the
// special registers %envreg1 (high half) and %envreg2 (low half): a 32-bit size, then a 32-bit
// word the grid's barrier counts in.
#pragma once

#include "cuda/types.h"

namespace tilec_cuda {

namespace detail {

__device__ __forceinline__ unsigned int* grid_barrier_word() {
  uint32_t hi, lo;
  asm("mov.u32 %0, %%envreg1;" : "=r"(hi));
  asm("mov.u32 %0, %%envreg2;" : "=r"(lo));
  return reinterpret_cast<unsigned int*>((static_cast<uint64_t>(hi) << 32 | lo) + 4);
}

}  // namespace detail

// Each block's thread 0 adds to the word: block 0 adds 2^31 - (blocks - 1), the others 1, so when
// the last has arrived the word's top bit has flipped (and its other bits are as they were: no
// reset between barriers). Each waits for that flip.
__device__ __forceinline__ void sync_grid() {
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    const unsigned int blocks = gridDim.x * gridDim.y * gridDim.z;
    const bool first = blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0;
    const unsigned int add = first ? 0x80000000u - (blocks - 1) : 1u;
    unsigned int* word = detail::grid_barrier_word();
    __threadfence();
    const unsigned int before = atomicAdd(word, add);
    while (((before ^ *static_cast<volatile unsigned int*>(word)) & 0x80000000u) == 0) {
    }
    __threadfence();
  }
  __syncthreads();
}

}  // namespace tilec_cuda
