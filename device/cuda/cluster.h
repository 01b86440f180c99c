// tilec CUDA device support: thread block clusters (T.Kernel's cluster_dims, sm_90 on). The
// kernel carries its cluster's extents (__cluster_dims__), so it is launched as any other.
#pragma once

#include "cuda/types.h"

namespace tilec_cuda {

// T.block_rank_in_cluster(): the block's place in its cluster, x fastest.
__device__ __forceinline__ int32_t block_rank_in_cluster() {
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return static_cast<int32_t>(rank);
}

// T.cluster_sync(): every thread of the cluster's blocks arrives, then waits for the rest; the
// arrival releases what the thread wrote and the wait acquires what the others did.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
}

}  // namespace tilec_cuda
