// tilec CUDA device support: thread block clusters (T.Kernel's cluster_dims, sm_90 on). The
// kernel carries its cluster's extents (__cluster_dims__), so it is launched as any other.
#pragma once

#include "cuda/memory.h"
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

// The address in the shared memory of the cluster's block `rank` of what `local` is in this
// block's (mapa on a generic address: the result is generic too, and any store may use it).
template <typename T>
__device__ __forceinline__ T* peer_address(T* local, int32_t rank) {
  uint64_t peer;
  asm volatile("mapa.u64 %0, %1, %2;" : "=l"(peer) : "l"(reinterpret_cast<uint64_t>(local)), "r"(rank));
  return reinterpret_cast<T*>(peer);
}

template <typename T>
struct NonDeduced {
  using type = T;
};

// T.copy_cluster's element store: the cluster's block `rank` gets `value` at what `local` is in
// this block (`value` converts to the element's type).
template <typename T>
__device__ __forceinline__ void store_to_block(T* local, int32_t rank, typename NonDeduced<T>::type value) {
  *peer_address(local, rank) = value;
}

// fence.proxy.async.shared::cluster: this thread's stores to the cluster's shared memory (a peer's
// among them) are ordered before the async proxy's reads of it (the peer's wgmma), once the
// peer has acquired them.
__device__ __forceinline__ void fence_proxy_async_cluster() {
  asm volatile("fence.proxy.async.shared::cluster;\n" ::: "memory");
}

// T.mbarrier_arrive(bar, cta_id=rank): an arrival at the cluster's block `rank`'s copy of `bar`
// (T.alloc_cluster_barrier); it releases at cluster scope what this thread wrote before, to
// the peer's shared memory among the rest.
__device__ __forceinline__ void mbarrier_arrive_in_block(uint64_t* bar, int32_t rank) {
  asm volatile(
      "{\n"
      ".reg .b32 peer;\n"
      "mapa.shared::cluster.u32 peer, %0, %1;\n"
      "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [peer];\n"
      "}\n" ::"r"(shared_address(bar)),
      "r"(rank)
      : "memory");
}

// mbarrier_wait_parity for a T.alloc_cluster_barrier barrier: the wait acquires at cluster
// scope, so what the peer blocks released by their arrivals is seen after it.
__device__ __forceinline__ void mbarrier_wait_parity_in_cluster(uint64_t* bar, uint32_t parity) {
  uint32_t done = 0;
  while (!done) {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(shared_address(bar)), "r"(parity)
        : "memory");
  }
}

}  // namespace tilec_cuda
