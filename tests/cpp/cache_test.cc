#include "runtime/cache.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/hash.h"

namespace tilec::runtime {
namespace {

namespace fs = std::filesystem;

// Each test gets a fresh TILEC_CACHE_DIR; the environment is restored afterwards.
class CacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"TILEC_CACHE_DIR", "XDG_CACHE_HOME", "HOME"}) {
      const char* value = std::getenv(name);
      saved_.push_back({name, value != nullptr ? std::optional<std::string>(value) : std::nullopt});
    }
    char pattern[] = "/tmp/tilec_cache_test_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    root_ = pattern;
    setenv("TILEC_CACHE_DIR", (root_ + "/cache").c_str(), 1);
  }
  void TearDown() override {
    for (const auto& [name, value] : saved_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
    fs::remove_all(root_);
  }

  static void write_raw(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  }

  std::string root_;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST_F(CacheTest, DirectoryFollowsEnvironment) {
  EXPECT_EQ(cache_dir(), root_ + "/cache");
  EXPECT_TRUE(fs::is_directory(root_ + "/cache"));

  unsetenv("TILEC_CACHE_DIR");
  setenv("XDG_CACHE_HOME", (root_ + "/xdg").c_str(), 1);
  EXPECT_EQ(cache_dir(), root_ + "/xdg/tilec");
  EXPECT_TRUE(fs::is_directory(root_ + "/xdg/tilec"));

  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", (root_ + "/home").c_str(), 1);
  EXPECT_EQ(cache_dir(), root_ + "/home/.cache/tilec");
  EXPECT_TRUE(fs::is_directory(root_ + "/home/.cache/tilec"));

  EXPECT_EQ(cache_subdir("cpu"), root_ + "/home/.cache/tilec/cpu");
  EXPECT_TRUE(fs::is_directory(root_ + "/home/.cache/tilec/cpu"));
}

TEST_F(CacheTest, WriteAtomicallyReplacesAndLeavesNoTemporaries) {
  const std::string path = cache_dir() + "/sub/dir/file.bin";
  write_atomically(path, std::string("first\0version", 13));
  EXPECT_EQ(read_file(path), std::string("first\0version", 13));
  write_atomically(path, "second");
  EXPECT_EQ(read_file(path), "second");
  int entries = 0;
  for (const auto& entry : fs::directory_iterator(cache_dir() + "/sub/dir")) {
    EXPECT_EQ(entry.path().filename(), "file.bin");
    ++entries;
  }
  EXPECT_EQ(entries, 1);
  EXPECT_EQ(read_file(cache_dir() + "/missing"), std::nullopt);
}

TEST_F(CacheTest, WriteFailureNamesThePath) {
  const std::string blocker = cache_dir() + "/not_a_dir";
  write_raw(blocker, "x");
  try {
    write_atomically(blocker + "/file", "bytes");
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find(blocker), std::string::npos) << error.what();
  }
}

TEST_F(CacheTest, UniqueTempPathsDiffer) {
  const std::string a = unique_temp_path("/x/y.so"), b = unique_temp_path("/x/y.so");
  EXPECT_NE(a, b);
  EXPECT_EQ(a.rfind("/x/y.so.tmp." + std::to_string(getpid()) + ".", 0), 0u) << a;
}

TEST_F(CacheTest, VerifiedRoundTrip) {
  const std::string path = cache_dir() + "/key.so";
  EXPECT_EQ(read_verified(path), std::nullopt);
  const std::string bytes(100000, '\x7f');
  store_verified(path, bytes);
  EXPECT_EQ(read_verified(path), bytes);
  EXPECT_EQ(read_file(path + ".sha256"), sha256_hex(bytes) + "\n");
  store_verified(path, "");
  EXPECT_EQ(read_verified(path), "");
}

TEST_F(CacheTest, DamagedEntriesReadAsMissing) {
  const std::string path = cache_dir() + "/key.so";
  const std::string bytes = "a compiled library, say";
  const auto damaged = [&](const auto& damage) {
    store_verified(path, bytes);
    EXPECT_EQ(read_verified(path), bytes);
    damage();
    return !read_verified(path).has_value();
  };
  EXPECT_TRUE(damaged([&] { write_raw(path, bytes.substr(0, 10)); }));
  EXPECT_TRUE(damaged([&] {
    std::string flipped = bytes;
    flipped[5] ^= 0x01;
    write_raw(path, flipped);
  }));
  EXPECT_TRUE(damaged([&] { fs::remove(path + ".sha256"); }));
  EXPECT_TRUE(damaged([&] { write_raw(path + ".sha256", ""); }));
  EXPECT_TRUE(damaged([&] { fs::remove(path); }));
  // Storing again repairs the entry.
  store_verified(path, bytes);
  EXPECT_EQ(read_verified(path), bytes);
}

// Processes write one key over and over while another reads it: every read sees the whole
// file or none, and the entry left behind is valid.
TEST_F(CacheTest, ConcurrentProcessesLeaveAValidEntry) {
  const std::string path = cache_dir() + "/shared.so";
  std::string bytes;
  for (int i = 0; i < 400000; ++i) bytes += static_cast<char>('a' + i % 26);

  std::vector<pid_t> children;
  for (int writer = 0; writer < 3; ++writer) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      for (int i = 0; i < 30; ++i) store_verified(path, bytes);
      _exit(0);
    }
    children.push_back(pid);
  }
  const pid_t reader = fork();
  ASSERT_GE(reader, 0);
  if (reader == 0) {
    for (int seen = 0; seen < 50;) {
      const std::optional<std::string> got = read_file(path);
      if (got && *got != bytes) _exit(1);
      seen += got.has_value();
    }
    _exit(0);
  }
  children.push_back(reader);
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  }
  EXPECT_EQ(read_verified(path), bytes);
  for (const auto& entry : fs::directory_iterator(cache_dir())) {
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
  }
}

}  // namespace
}  // namespace tilec::runtime
