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

// The address in the cluster's shared-memory window of what `local` is in the block `rank`'s.
__device__ __forceinline__ uint32_t peer_shared_address(const void* local, int32_t rank) {
  uint32_t peer;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(peer) : "r"(shared_address(local)), "r"(rank));
  return peer;
}

// st.shared::cluster of 4, 8 or 16 bytes at a cluster shared-memory address (mapa's).
__device__ __forceinline__ void store_shared_cluster(uint32_t address, uint32_t v) {
  asm volatile("st.shared::cluster.b32 [%0], %1;" ::"r"(address), "r"(v) : "memory");
}
__device__ __forceinline__ void store_shared_cluster(uint32_t address, uint2 v) {
  asm volatile("st.shared::cluster.v2.b32 [%0], {%1, %2};" ::"r"(address), "r"(v.x), "r"(v.y) : "memory");
}
__device__ __forceinline__ void store_shared_cluster(uint32_t address, uint4 v) {
  asm volatile("st.shared::cluster.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(address), "r"(v.x), "r"(v.y), "r"(v.z),
               "r"(v.w)
               : "memory");
}

// T.copy_cluster's vector store: Bytes (4, 8 or 16) from `src` in this block's shared memory to
// what `local` is in the cluster's block `rank`'s (both aligned to Bytes). The addresses are the
// 32-bit ones of the shared windows: fewer registers than generic pointers.
template <int Bytes>
__device__ __forceinline__ void copy_to_block(void* local, int32_t rank, const void* src) {
  const typename vector_bits<Bytes>::type v = *static_cast<const typename vector_bits<Bytes>::type*>(src);
  store_shared_cluster(peer_shared_address(local, rank), v);
}

// T.copy_cluster's asynchronous vector store: Bytes (4, 8 or 16) from `src` in this block's
// shared memory to what `local` is in the block `rank`'s (both aligned to Bytes), the bytes
// counted on that block's copy of `bar` once they have landed (st.async; its complete-tx
// releases them at cluster scope).
__device__ __forceinline__ void store_async_to_block(uint32_t peer, uint32_t v, uint32_t peer_bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(peer), "r"(v),
               "r"(peer_bar)
               : "memory");
}
__device__ __forceinline__ void store_async_to_block(uint32_t peer, uint2 v, uint32_t peer_bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b32 [%0], {%1, %2}, [%3];" ::"r"(peer),
               "r"(v.x), "r"(v.y), "r"(peer_bar)
               : "memory");
}
__device__ __forceinline__ void store_async_to_block(uint32_t peer, uint4 v, uint32_t peer_bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, [%5];" ::"r"(
                   peer),
               "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w), "r"(peer_bar)
               : "memory");
}
template <int Bytes>
__device__ __forceinline__ void copy_to_block_async(void* local, int32_t rank, const void* src, uint64_t* bar) {
  const typename vector_bits<Bytes>::type v = *static_cast<const typename vector_bits<Bytes>::type*>(src);
  store_async_to_block(peer_shared_address(local, rank), v, peer_shared_address(bar, rank));
}

// The arrival of T.copy_cluster's asynchronous stores at the block `rank`'s copy of `bar`: it
// also adds the bytes they store to what the barrier's phase waits for.
__device__ __forceinline__ void mbarrier_arrive_expect_tx_in_block(uint64_t* bar, int32_t rank, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [%0], %1;" ::"r"(
                   peer_shared_address(bar, rank)),
               "r"(bytes)
               : "memory");
}

// T.mbarrier_arrive(bar, cta_id=rank): an arrival at the cluster's block `rank`'s copy of `bar`
// (T.alloc_cluster_barrier). Its release is the default's, at CTA scope, as TileLang's and
// CUTLASS's arrivals at a peer's barrier are: it tells the peer this thread is done (with a
// buffer it may now overwrite, say); data for the peer goes by T.copy_cluster.
__device__ __forceinline__ void mbarrier_arrive_in_block(uint64_t* bar, int32_t rank) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(peer_shared_address(bar, rank)) : "memory");
}

// T.copy_cluster's arrival after its threads' plain stores to the block `rank`'s shared memory
// (a barrier of theirs before it): it releases them at cluster scope.
__device__ __forceinline__ void mbarrier_arrive_release_in_block(uint64_t* bar, int32_t rank) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(peer_shared_address(bar, rank))
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
