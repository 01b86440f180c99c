#include "runtime/build_lock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <string>
#include <thread>

#include "test_support.h"

namespace tilec::runtime {
namespace {

using namespace std::chrono_literals;
using test_support::captured_debug_log;
using test_support::TemporaryCacheDir;

TEST(BuildLock, SecondBuilderWaitsForTheFirst) {
  TemporaryCacheDir cache("tilec_build_lock_");
  const std::string entry = cache.path() + "/kernel.so";
  auto first = std::make_unique<BuildLock>(entry);
  ASSERT_TRUE(first->held());
  EXPECT_EQ(::access((entry + ".lock").c_str(), F_OK), 0);
  struct stat st {};
  ASSERT_EQ(::stat((entry + ".lock").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  std::atomic<bool> second_has_it{false};
  std::thread second([&] {
    const BuildLock lock(entry, 10s);
    second_has_it = lock.held();
  });
  std::this_thread::sleep_for(200ms);
  EXPECT_FALSE(second_has_it) << "the second builder took a lock the first still held";
  first.reset();
  second.join();
  EXPECT_TRUE(second_has_it);
}

TEST(BuildLock, LocksOfOtherEntriesDoNotWait) {
  TemporaryCacheDir cache("tilec_build_lock_");
  const BuildLock first(cache.path() + "/a.so");
  const auto start = std::chrono::steady_clock::now();
  const BuildLock second(cache.path() + "/b.so", 10s);
  EXPECT_TRUE(first.held() && second.held());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
}

TEST(BuildLock, AWaitEndsAfterItsPatienceWithAWarning) {
  TemporaryCacheDir cache("tilec_build_lock_");
  const std::string entry = cache.path() + "/kernel.cubin";
  const BuildLock first(entry);
  bool held = true;
  const std::string log = captured_debug_log([&] { held = BuildLock(entry, 100ms).held(); });
  EXPECT_FALSE(held);
  EXPECT_NE(log.find("another process has held " + entry + ".lock"), std::string::npos) << log;
  EXPECT_NE(log.find("building without waiting for it"), std::string::npos) << log;
}

TEST(BuildLock, AHolderThatDiesFreesTheLock) {
  TemporaryCacheDir cache("tilec_build_lock_");
  const std::string entry = cache.path() + "/kernel.so";
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // takes the lock and hangs, as a build that never ends
    const BuildLock lock(entry);
    const char byte = lock.held() ? '1' : '0';
    if (::write(ready[1], &byte, 1) != 1) ::_exit(2);
    for (;;) ::pause();
  }
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ASSERT_EQ(byte, '1');
  EXPECT_FALSE(BuildLock(entry, 100ms).held());
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(BuildLock(entry, 10s).held());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST(BuildLock, ASymlinkInTheLocksPlaceIsNotFollowed) {
  TemporaryCacheDir cache("tilec_build_lock_");
  const std::string entry = cache.path() + "/kernel.so";
  const std::string target = cache.path() + "/elsewhere";
  std::filesystem::create_symlink(target, entry + ".lock");
  bool held = true;
  const std::string log = captured_debug_log([&] { held = BuildLock(entry).held(); });
  EXPECT_FALSE(held);
  EXPECT_FALSE(std::filesystem::exists(target)) << "the lock followed a symlink and made its target";
  EXPECT_NE(log.find("building without one"), std::string::npos) << log;
}

TEST(BuildLock, AFifoInTheLocksPlaceDoesNotHang) {
  TemporaryCacheDir cache("tilec_build_lock_");
  const std::string entry = cache.path() + "/kernel.so";
  ASSERT_EQ(::mkfifo((entry + ".lock").c_str(), 0600), 0);
  auto held = std::async(std::launch::async, [&] { return BuildLock(entry).held(); });
  ASSERT_EQ(held.wait_for(5s), std::future_status::ready);
  EXPECT_FALSE(held.get());
}

}  // namespace
}  // namespace tilec::runtime
