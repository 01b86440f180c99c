// One build of a cache entry at a time across the processes that share the cache (the ranks of
// a torch.distributed job, pytest workers): the first takes the entry's lock and builds, the
// others wait for it and then read what it stored, instead of each building the same kernel.
// So a builder looks in the cache, takes the lock on a miss, and looks again before building.
//
// The lock is flock(2) on "<entry>.lock", a private file beside the entry inside the private
// cache folder (runtime/cache.h). The kernel drops it when its holder exits, so a build that
// crashed frees its waiters at once. A wait is bounded: after `patience` the waiter builds on
// its own, which the cache's atomic writes make safe, so a hung holder stalls the others no
// longer than that. Where no lock can be had (a file system without flock, anything but this
// user's regular file in the lock's place) the build goes ahead unlocked, as before locks.
#pragma once

#include <chrono>
#include <string>

#include "base/unique_fd.h"

namespace tilec::runtime {

class BuildLock {
 public:
  static constexpr std::chrono::seconds kDefaultPatience{120};

  // Waits for the lock of `entry_path`, at most `patience`.
  explicit BuildLock(const std::string& entry_path, std::chrono::milliseconds patience = kDefaultPatience);

  BuildLock(const BuildLock&) = delete;
  BuildLock& operator=(const BuildLock&) = delete;

  // Whether this process holds the lock (false: it gave up waiting, or no lock could be had).
  bool held() const { return file_.valid(); }

 private:
  UniqueFd file_;  // closing it releases the lock
};

}  // namespace tilec::runtime
