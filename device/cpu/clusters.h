// The CPU's thread block clusters (T.Kernel's cluster_dims): a cluster's blocks run as fibers
// (ucontext) of one OS thread, each with its own shared memory, in turn.
//
// A block gives way when all it has left to do waits on another block: a T.cluster_sync the
// others have not reached, an mbarrier phase (its own statements' wait, or every one of its
// thread groups', cpu/thread_groups.h) only a peer's arrival can complete. The blocks that can go
// on are resumed in turn; when a whole round of them leaves every barrier as it was and none
// finishes, the kernel would hang on a GPU: the cluster stops, and the error names each block's
// wait. A peer's shared memory is that block's bytes at the same offset; copies into it
// (T.copy_cluster) land when their statement returns, as loads do here.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "cpu/thread_groups.h"

namespace tilec_rt {

class Cluster final : public detail::BlockScheduler {
 public:
  // `blocks` blocks, block r's shared memory at shared + r * stride.
  Cluster(int64_t blocks, unsigned char* shared, int64_t stride, std::string name)
      : blocks_(blocks), shared_(shared), stride_(stride), name_(std::move(name)) {}
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;
  ~Cluster() {
    for (Block& b : fibers_)
      if (b.stack) detail::free_stacks().push_back(b.stack);
  }

  // Runs body(rank) for each block of the cluster until every one has returned.
  template <class Body>
  void run(Body& body) {
    detail::BlockScheduler* outer = detail::block_scheduler();
    Cluster* outer_cluster = running();
    detail::block_scheduler() = this;
    running() = this;
    body_ = [](void* closure, int64_t rank) { (*static_cast<Body*>(closure))(rank); };
    closure_ = &body;
    fibers_.resize(static_cast<size_t>(blocks_));
    for (Block& b : fibers_) {
      b.stack = detail::take_stack();
      if (!b.stack) {
        record_error("tilec_rt: no memory for a cluster block's stack");
        fibers_.clear();
        detail::block_scheduler() = outer;
        running() = outer_cluster;
        return;
      }
      detail::make_fiber(b.context, b.stack, &Cluster::start);
    }
    for (;;) {
      const uint64_t before = detail::progress();
      bool left = false, finished = false;
      for (size_t i = 0; i < fibers_.size(); ++i) {
        if (fibers_[i].done) continue;
        left = true;
        resume(i);
        finished |= fibers_[i].done;
      }
      if (!left) break;
      if (!finished && detail::progress() == before && !failed_) {
        record_error(hang_message().c_str());
        failed_ = true;  // each block, resumed, stops
      }
    }
    detail::block_scheduler() = outer;
    running() = outer_cluster;
  }

  bool give_way(const std::string& waits) override {
    Block& b = fibers_[static_cast<size_t>(running_)];
    b.waits = waits;
    const std::string name = detail::running_block();
    swapcontext(&b.context, &scheduler_);
    detail::running_block() = name;
    return !failed_;
  }

  // The running cluster (null outside one).
  static Cluster*& running() {
    static thread_local Cluster* cluster = nullptr;
    return cluster;
  }

  int64_t rank() const { return running_; }

  // What `local`, in the running block's shared memory, is in block `rank`'s.
  void* peer(const void* local, int64_t rank, const char* what) const {
    if (rank < 0 || rank >= blocks_)
      ThreadGroups::stop((std::string(what) + ": block rank " + std::to_string(rank) + " is not in the cluster of " +
                          std::to_string(blocks_) + " blocks")
                             .c_str());
    const unsigned char* mine = shared_ + running_ * stride_;
    const int64_t offset = static_cast<const unsigned char*>(local) - mine;
    if (offset < 0 || offset >= stride_)
      ThreadGroups::stop((std::string(what) + ": the address is not in the block's shared memory").c_str());
    return shared_ + rank * stride_ + offset;
  }

  // T.cluster_sync: the running block waits until every block of the cluster has come.
  void sync(const char* site) {
    ++detail::progress();
    if (++arrived_ == blocks_) {
      arrived_ = 0;
      ++generation_;
      return;
    }
    const uint64_t generation = generation_;
    while (generation_ == generation)
      if (!give_way(std::string("waits at ") + site + " in T.cluster_sync for " + std::to_string(blocks_ - arrived_) +
                    " of the cluster's " + std::to_string(blocks_) + " blocks"))
        throw BlockStopped();
  }

 private:
  struct Block {
    ucontext_t context;
    void* stack = nullptr;
    bool done = false;
    std::string waits;  // what it waits for, while it waits
  };

  void resume(size_t i) {
    running_ = static_cast<int64_t>(i);
    swapcontext(&scheduler_, &fibers_[i].context);
    running_ = -1;
  }

  static void start() {
    Cluster* cluster = running();
    const int64_t rank = cluster->running_;
    cluster->body_(cluster->closure_, rank);
    cluster->fibers_[static_cast<size_t>(rank)].done = true;
    swapcontext(&cluster->fibers_[static_cast<size_t>(rank)].context, &cluster->scheduler_);
  }

  std::string hang_message() const {
    std::string text = "the kernel would hang: in " + name_ + ", every block left waits for what no block can do:";
    for (size_t i = 0; i < fibers_.size(); ++i)
      if (!fibers_[i].done) text += "\n  block rank " + std::to_string(i) + ": " + fibers_[i].waits;
    return text;
  }

  const int64_t blocks_;
  unsigned char* const shared_;
  const int64_t stride_;
  const std::string name_;
  std::vector<Block> fibers_;
  void (*body_)(void*, int64_t) = nullptr;
  void* closure_ = nullptr;
  ucontext_t scheduler_;
  int64_t running_ = -1;
  int64_t arrived_ = 0;
  uint64_t generation_ = 0;
  bool failed_ = false;
};

// --- the device calls of cluster kernels -------------------------------------------------------

inline int32_t block_rank_in_cluster() { return static_cast<int32_t>(Cluster::running()->rank()); }

inline void cluster_sync(const char* site) { Cluster::running()->sync(site); }

// T.copy_cluster's stores into block `rank`'s shared memory.
template <class T, class V>
inline void store_to_block(T* local, int32_t rank, V value) {
  *static_cast<T*>(Cluster::running()->peer(local, rank, "T.copy_cluster")) = static_cast<T>(value);
}
template <int Bytes>
inline void copy_to_block(void* local, int32_t rank, const void* src) {
  std::memcpy(Cluster::running()->peer(local, rank, "T.copy_cluster"), src, Bytes);
}
// By st.async: the bytes land on block `rank`'s copy of the barrier.
template <int Bytes>
inline void copy_to_block_async(void* local, int32_t rank, const void* src, void* bar) {
  copy_to_block<Bytes>(local, rank, src);
  mbarrier_complete_tx(Cluster::running()->peer(bar, rank, "T.copy_cluster"), Bytes, "T.copy_cluster");
}

// Arrivals at block `rank`'s copy of a barrier (T.mbarrier_arrive(bar, cta_id=rank), and
// T.copy_cluster's, which expects the bytes its stores bring).
inline void mbarrier_arrive_in_block(void* bar, int32_t rank, const char* site) {
  mbarrier_arrive(Cluster::running()->peer(bar, rank, site), site);
}
inline void mbarrier_arrive_release_in_block(void* bar, int32_t rank, const char* site) {
  mbarrier_arrive_in_block(bar, rank, site);
}
inline void mbarrier_arrive_expect_tx_in_block(void* bar, int32_t rank, int64_t bytes, const char* site) {
  mbarrier_arrive_expect_tx(Cluster::running()->peer(bar, rank, site), bytes, site);
}

// The bytes of a multicast TMA load (T.tma_copy(cluster_mask=...)) landing on block `rank`'s
// copy of the barrier.
inline void mbarrier_complete_tx_in_block(void* bar, int32_t rank, int64_t bytes, const char* site) {
  mbarrier_complete_tx(Cluster::running()->peer(bar, rank, site), bytes, site);
}

inline void mbarrier_wait_parity_in_cluster(void* bar, int64_t parity, const char* site) {
  ThreadGroups::wait(bar, parity, site);
}

inline void fence_proxy_async_cluster() {}

}  // namespace tilec_rt
