#include "base/log.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>
#include <vector>

namespace tilec {
namespace {

// Restores the process's log level after a test changes it.
class LogTest : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = log_level(); }
  void TearDown() override { set_log_level(saved_); }

 private:
  LogLevel saved_ = LogLevel::Warning;
};

TEST(ParseLogLevel, AcceptsNamesInAnyCase) {
  EXPECT_EQ(parse_log_level("error"), LogLevel::Error);
  EXPECT_EQ(parse_log_level("WARNING"), LogLevel::Warning);
  EXPECT_EQ(parse_log_level("Warn"), LogLevel::Warning);
  EXPECT_EQ(parse_log_level("info"), LogLevel::Info);
  EXPECT_EQ(parse_log_level("DeBuG"), LogLevel::Debug);
}

TEST(ParseLogLevel, RejectsOthers) {
  EXPECT_EQ(parse_log_level(""), std::nullopt);
  EXPECT_EQ(parse_log_level("verbose"), std::nullopt);
  EXPECT_EQ(parse_log_level("debug "), std::nullopt);
  EXPECT_EQ(parse_log_level("3"), std::nullopt);
}

TEST_F(LogTest, PrintsEnabledLevelsOnly) {
  set_log_level(LogLevel::Info);
  EXPECT_EQ(log_level(), LogLevel::Info);
  EXPECT_TRUE(log_enabled(LogLevel::Warning));
  EXPECT_FALSE(log_enabled(LogLevel::Debug));
  ::testing::internal::CaptureStderr();
  log(LogLevel::Info, "hello");
  log(LogLevel::Debug, "hidden");
  log(LogLevel::Error, "bad");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "[tilec] INFO hello\n[tilec] ERROR bad\n");
}

TEST_F(LogTest, LinesFromThreadsDoNotInterleave) {
  set_log_level(LogLevel::Info);
  ::testing::internal::CaptureStderr();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 200; ++i) {
        log(LogLevel::Info, std::string(50, static_cast<char>('a' + t)));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const std::string out = ::testing::internal::GetCapturedStderr();
  size_t lines = 0;
  for (size_t start = 0; start < out.size();) {
    const size_t end = out.find('\n', start);
    ASSERT_NE(end, std::string::npos);
    const std::string line = out.substr(start, end - start);
    ASSERT_EQ(line.size(), 63u) << line;
    EXPECT_EQ(line.substr(13), std::string(50, line[13])) << line;
    ++lines;
    start = end + 1;
  }
  EXPECT_EQ(lines, 800u);
}

TEST_F(LogTest, StageTimerLogsAtDebug) {
  set_log_level(LogLevel::Debug);
  ::testing::internal::CaptureStderr();
  {
    StageTimer timer("parse");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_GE(timer.elapsed_ms(), 5.0);
  }
  const std::string out = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(out.rfind("[tilec] DEBUG parse: ", 0), 0u) << out;
  EXPECT_NE(out.find(" ms\n"), std::string::npos) << out;
}

TEST_F(LogTest, StageTimerIsQuietBelowDebug) {
  set_log_level(LogLevel::Info);
  ::testing::internal::CaptureStderr();
  { StageTimer timer("parse"); }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

// The level is read from the environment once, at first use: check it in a fresh process.
TEST(LogLevelEnv, InitialLevelComesFromEnvironment) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("TILEC_LOG_LEVEL", "Debug", 1);
        std::exit(log_level() == LogLevel::Debug ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(
      {
        setenv("TILEC_LOG_LEVEL", "loud", 1);
        std::exit(log_level() == LogLevel::Warning ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "TILEC_LOG_LEVEL=loud is not one of");
  EXPECT_EXIT(
      {
        unsetenv("TILEC_LOG_LEVEL");
        std::exit(log_level() == LogLevel::Warning ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace tilec
