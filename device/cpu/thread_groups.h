// The CPU's thread groups (T.ws) and mbarriers, for warp-specialized kernels.
//
// A block runs on one OS thread. Each of its thread groups runs as a fiber (ucontext) on that
// thread, its statements looped over its threads as everywhere on the CPU (passes/thread_loops.h).
// A fiber gives way when it waits on an mbarrier phase that has not completed, when its arrival
// completes a phase (the waiting groups go first: the schedule under which a premature signal
// shows), and at each step of a while loop. A fiber that can go on is resumed in turn. When
// every group left waits and none can go on, the kernel would hang on a GPU: the block stops,
// and the error names each group's wait (threads, source line, the barrier's state).
//
// Loads are synchronous here: a TMA load or cp.async has landed when its statement returns, and
// an arrival through cp.async.mbarrier.arrive is an arrival now. A phase counts the bytes it
// expects (expect_tx) against those that land (complete_tx), as on a GPU: it completes once its
// arrivals have come and the count is back at 0, so a multicast load from another block of the
// cluster, or a load the program never issues, shows here as it would there.
//
// In a thread block cluster (cpu/clusters.h) the cluster's blocks are fibers too: a block whose
// groups all wait, or whose own statements wait, gives way to the cluster's other blocks, which
// may arrive at its barriers; only when none of them can go on either would the kernel hang.
#pragma once

#include <sys/mman.h>
#include <ucontext.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cpu/tilec_cpu.h"

namespace tilec_rt {

// Thrown out of a block that can't go on (its error recorded): the grid loop's iteration ends.
struct BlockStopped {};

namespace detail {

// An mbarrier in its 8 bytes of shared memory: the arrivals a phase needs (0: never
// initialized), the arrivals its current phase still waits for, the bytes it expects that have
// not landed (below 0 where they landed first), and the number of phases completed, modulo 8
// (its low bit the parity). A GPU's counts are 20 bits.
struct Mbarrier {
  uint64_t count : 20;
  uint64_t pending : 20;
  int64_t tx : 21;
  uint64_t phase : 3;
};
static_assert(sizeof(Mbarrier) == sizeof(uint64_t), "an mbarrier is 8 bytes");

inline Mbarrier* as_mbarrier(void* bar) { return static_cast<Mbarrier*>(bar); }

// "block (x, y)": the block this OS thread runs, for the errors (set by the grid loop).
inline std::string& running_block() {
  static thread_local std::string block;
  return block;
}

struct Fiber {
  ucontext_t context;
  void (*body)(void*);
  void* closure;
  int64_t lo, hi;  // the group's threads
  void* stack;
  bool done = false;
  // the wait it stopped at, while waiting
  const Mbarrier* waits_on = nullptr;
  uint32_t parity = 0;
  const char* site = nullptr;
};

constexpr size_t kFiberStackBytes = size_t{8} << 20;  // reserved, not committed

// Stacks are kept for the OS thread's next block; they are reserved address space, and pages
// are committed as a fiber touches them.
inline std::vector<void*>& free_stacks() {
  static thread_local std::vector<void*> stacks;
  return stacks;
}

// Set while a cluster's blocks run (cpu/clusters.h): the running block, every wait of which is
// on what others do (`waits` says what), gives way to the cluster's other blocks. It returns
// false when no block can go on (the hang is recorded): the block stops.
struct BlockScheduler {
  virtual bool give_way(const std::string& waits) = 0;
};
inline BlockScheduler*& block_scheduler() {
  static thread_local BlockScheduler* scheduler = nullptr;
  return scheduler;
}

// Counts what may let a waiting block go on (arrivals, a group or block that ran on): a round of
// a cluster's blocks that leaves it unchanged, none finished, is a hang.
inline uint64_t& progress() {
  static thread_local uint64_t events = 0;
  return events;
}

inline void* take_stack() {
  std::vector<void*>& stacks = free_stacks();
  if (!stacks.empty()) {
    void* stack = stacks.back();
    stacks.pop_back();
    return stack;
  }
  void* stack = mmap(nullptr, kFiberStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                     -1, 0);
  if (stack == MAP_FAILED) return nullptr;
  mprotect(stack, 4096, PROT_NONE);  // an overflow faults instead of writing past the stack
  return stack;
}

// `context` set to start `entry` on `stack` (take_stack's), when first switched to.
inline void make_fiber(ucontext_t& context, void* stack, void (*entry)()) {
  getcontext(&context);
  context.uc_stack.ss_sp = stack;
  context.uc_stack.ss_size = kFiberStackBytes;
  context.uc_link = nullptr;
  makecontext(&context, entry, 0);
}

}  // namespace detail

// One run of a block's thread groups: add each group, then run them to their ends.
class ThreadGroups {
 public:
  ThreadGroups() = default;
  ThreadGroups(const ThreadGroups&) = delete;
  ThreadGroups& operator=(const ThreadGroups&) = delete;
  ~ThreadGroups() {
    for (detail::Fiber& f : fibers_)
      if (f.stack) detail::free_stacks().push_back(f.stack);
  }

  template <class Body>
  void add(int64_t lo, int64_t hi, Body& body) {
    detail::Fiber f;
    f.body = [](void* closure) { (*static_cast<Body*>(closure))(); };
    f.closure = &body;
    f.lo = lo;
    f.hi = hi;
    f.stack = nullptr;
    fibers_.push_back(f);
  }

  // Runs the groups until each has finished; throws BlockStopped (the error recorded) when
  // they can't.
  void run() {
    ThreadGroups* outer = current();
    current() = this;
    for (detail::Fiber& f : fibers_) {
      f.stack = detail::take_stack();
      if (!f.stack) stop("tilec_rt: no memory for a thread group's stack");
      detail::make_fiber(f.context, f.stack, &ThreadGroups::start);
    }
    for (;;) {
      bool moved = false, left = false;
      for (size_t i = 0; i < fibers_.size(); ++i) {
        detail::Fiber& f = fibers_[i];
        if (f.done) continue;
        left = true;
        if (f.waits_on && !phase_done(*f.waits_on, f.parity)) continue;
        f.waits_on = nullptr;
        running_ = static_cast<int>(i);
        swapcontext(&scheduler_, &f.context);
        running_ = -1;
        if (failed_) break;
        moved = true;
        ++detail::progress();
      }
      if (failed_) break;
      if (!left) break;
      if (!moved) {
        if (detail::BlockScheduler* cluster = detail::block_scheduler()) {
          // the other blocks run, with groups of their own: none of them sees this block's
          current() = nullptr;
          const bool went_on = cluster->give_way(hang_message());
          current() = this;
          if (went_on) continue;
          failed_ = true;
          break;
        }
        record_error(hang_message().c_str());
        failed_ = true;
        break;
      }
    }
    current() = outer;
    if (failed_) throw BlockStopped();
  }

  // The running fiber waits until `bar`'s phase of this parity has completed; outside a
  // fiber a wait that can't return at once stops the block (no one else runs to arrive).
  static void wait(void* bar, int64_t parity, const char* site) {
    const detail::Mbarrier& b = *detail::as_mbarrier(bar);
    if (phase_done(b, static_cast<uint32_t>(parity & 1))) return;
    ThreadGroups* groups = current();
    if (!groups || groups->running_ < 0) {
      if (detail::BlockScheduler* cluster = detail::block_scheduler()) {
        while (!phase_done(b, static_cast<uint32_t>(parity & 1)))
          if (!cluster->give_way(std::string("waits at ") + site + " for the phase of parity " +
                                 std::to_string(parity & 1) + "; " + state(b)))
            throw BlockStopped();
        ++detail::progress();
        return;
      }
      stop(("the kernel would hang: " + detail::running_block() + " waits at " + site + " for a barrier phase no thread "
            "can complete (" + state(b) + ")").c_str());
    }
    detail::Fiber& f = groups->fibers_[groups->running_];
    f.waits_on = &b;
    f.parity = static_cast<uint32_t>(parity & 1);
    f.site = site;
    swapcontext(&f.context, &groups->scheduler_);
  }

  // The running fiber lets each other one that can run go first (at a while loop's step in a
  // group, which may wait for what another group writes; after an arrival that completes a phase).
  static void pause() {
    ThreadGroups* groups = current();
    if (groups && groups->running_ >= 0) swapcontext(&groups->fibers_[groups->running_].context, &groups->scheduler_);
  }

  // Records the error and stops the block: a fiber gives way for good, and the scheduler
  // throws; outside a fiber this throws.
  [[noreturn]] static void stop(const char* message) {
    record_error(message);
    ThreadGroups* groups = current();
    if (groups && groups->running_ >= 0) {
      groups->failed_ = true;
      swapcontext(&groups->fibers_[groups->running_].context, &groups->scheduler_);
    }
    throw BlockStopped();
  }

  static bool phase_done(const detail::Mbarrier& b, uint32_t parity) { return (b.phase & 1u) != parity; }

  static std::string state(const detail::Mbarrier& b) {
    std::string text = "the barrier is in phase " + std::to_string(b.phase) + ", with " + std::to_string(b.pending) +
                       " of its " + std::to_string(b.count) + " arrivals";
    if (b.tx > 0) return text + " and " + std::to_string(b.tx) + " bytes it expects to come";
    if (b.tx < 0) return text + " to come, and " + std::to_string(-b.tx) + " bytes landed that it did not expect";
    return text + " to come";
  }

 private:
  static ThreadGroups*& current() {
    static thread_local ThreadGroups* groups = nullptr;
    return groups;
  }

  static void start() {
    ThreadGroups* groups = current();
    detail::Fiber& f = groups->fibers_[groups->running_];
    f.body(f.closure);
    f.done = true;
    swapcontext(&f.context, &groups->scheduler_);
  }

  std::string hang_message() const {
    std::string text = "the kernel would hang: in " + detail::running_block() +
                       ", every thread group left waits on an mbarrier phase that no thread can complete:";
    for (const detail::Fiber& f : fibers_) {
      if (f.done) continue;
      text += "\n  threads [" + std::to_string(f.lo) + ", " + std::to_string(f.hi) + ") wait at " + f.site +
              " for the phase of parity " + std::to_string(f.parity) + "; " + state(*f.waits_on);
    }
    return text;
  }

  std::vector<detail::Fiber> fibers_;
  ucontext_t scheduler_;
  int running_ = -1;
  bool failed_ = false;
};

// The grid loop's iteration starts block (x, y, ...), named so in its errors.
inline void enter_block(std::initializer_list<int64_t> index) {
  std::string& block = detail::running_block();
  block = "block (";
  for (int64_t i : index) block += (block.size() > 7 ? ", " : "") + std::to_string(i);
  block += ")";
}

// --- mbarriers -------------------------------------------------------------------------------

inline void mbarrier_init(void* bar, int64_t count) {
  detail::Mbarrier& b = *detail::as_mbarrier(bar);
  b.count = static_cast<uint32_t>(count);
  b.pending = static_cast<uint32_t>(count);
  b.tx = 0;
  b.phase = 0;
}

namespace detail {

// The phase completes if its arrivals have come and its bytes landed. The one that completes it
// lets the groups waiting for it run before its own group goes on: a program that signals
// before it has finished with what the barrier guards (a stage its group still reads) then sees
// it overwritten, here as it could on a GPU.
inline void complete_if_done(Mbarrier& b) {
  if (b.pending != 0 || b.tx != 0) return;
  b.pending = b.count;
  ++b.phase;
  ThreadGroups::pause();
}

inline Mbarrier& initialized(void* bar, const char* site) {
  Mbarrier& b = *as_mbarrier(bar);
  if (b.count == 0)
    ThreadGroups::stop((std::string("at ") + site + ": an mbarrier that was never initialized").c_str());
  return b;
}

}  // namespace detail

// A thread arrives (a statement of a group's threads runs once for each of them).
inline void mbarrier_arrive(void* bar, const char* site) {
  detail::Mbarrier& b = detail::initialized(bar, site);
  if (b.pending == 0)
    ThreadGroups::stop((std::string("at ") + site + ": a thread arrives at an mbarrier whose phase has all its " +
                        std::to_string(b.count) + " arrivals and waits for " + std::to_string(b.tx) +
                        " bytes it expects")
                           .c_str());
  ++detail::progress();
  --b.pending;
  detail::complete_if_done(b);
}

inline void mbarrier_wait_parity(void* bar, int64_t parity, const char* site) {
  ThreadGroups::wait(bar, parity, site);
}

// The bytes of loads the current phase waits for, and their landing.
inline void mbarrier_expect_tx(void* bar, int64_t bytes, const char* site) {
  detail::Mbarrier& b = detail::initialized(bar, site);
  b.tx += bytes;
  detail::complete_if_done(b);
}
inline void mbarrier_arrive_expect_tx(void* bar, int64_t bytes, const char* site) {
  detail::initialized(bar, site).tx += bytes;
  mbarrier_arrive(bar, site);
}
inline void mbarrier_complete_tx(void* bar, int64_t bytes, const char* site) {
  detail::Mbarrier& b = detail::initialized(bar, site);
  b.tx -= bytes;
  detail::complete_if_done(b);
}
inline void cp_async_mbarrier_arrive_noinc(void* bar, const char* site) { mbarrier_arrive(bar, site); }

inline void fence_mbarrier_init() {}
inline void fence_proxy_async() {}
template <int Registers>
inline void setmaxnreg_inc() {}
template <int Registers>
inline void setmaxnreg_dec() {}

// T.ptx_cp_async: `Bytes` bytes from src to dst, zeros where the predicate is false.
template <int Bytes>
inline void cp_async(void* dst, const void* src, bool predicate) {
  if (predicate) std::memcpy(dst, src, Bytes);
  else std::memset(dst, 0, Bytes);
}
// Policy and Prefetch: T.ptx_cp_async's L2 hints, nothing here.
template <int Policy = 0, int Prefetch = 0>
inline void cp_async_4(void* dst, const void* src, bool predicate) { cp_async<4>(dst, src, predicate); }
template <int Policy = 0, int Prefetch = 0>
inline void cp_async_8(void* dst, const void* src, bool predicate) { cp_async<8>(dst, src, predicate); }
template <int Policy = 0, int Prefetch = 0>
inline void cp_async_16(void* dst, const void* src, bool predicate) { cp_async<16>(dst, src, predicate); }

}  // namespace tilec_rt
