#include "runtime/build_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "base/log.h"

namespace tilec::runtime {
namespace {

// The lock file of `path`, opened without following a symlink and without blocking on a FIFO;
// invalid (with `why`) unless it is this user's regular file that no one else can write.
UniqueFd open_lock_file(const std::string& path, std::string* why) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600));
  if (!fd) {
    *why = std::strerror(errno);
    return {};
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() ||
      (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    *why = "it is not a private file of this user";
    return {};
  }
  return fd;
}

}  // namespace

BuildLock::BuildLock(const std::string& entry_path, std::chrono::milliseconds patience) {
  const std::string path = entry_path + ".lock";
  std::string why;
  UniqueFd fd = open_lock_file(path, &why);
  if (!fd) {
    log(LogLevel::Info, "tilec cache: no build lock " + path + " (" + why + "); building without one");
    return;
  }
  const auto deadline = std::chrono::steady_clock::now() + patience;
  auto pause = std::chrono::milliseconds(2);
  while (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) {
      log(LogLevel::Info, "tilec cache: cannot lock " + path + " (" + std::strerror(errno) +
                              "); building without the lock");
      return;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      log(LogLevel::Warning, "tilec cache: another process has held " + path + " for over " +
                                 std::to_string(patience.count() / 1000) +
                                 " s; building without waiting for it");
      return;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
  file_ = std::move(fd);
}

}  // namespace tilec::runtime
