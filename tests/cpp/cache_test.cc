#include "runtime/cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/hash.h"
#include "test_support.h"

namespace tilec::runtime {
namespace {

namespace fs = std::filesystem;
using test_support::captured_debug_log;

// A user other than root, for the tests that give a file away; only root may chown.
constexpr uid_t kOtherUser = 65534;
constexpr const char* kNeedsRoot = "only root can give a file to another user (chown)";

mode_t mode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

uid_t owner_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
  return st.st_uid;
}

// Each test gets a fresh TILEC_CACHE_DIR; the environment is restored afterwards. The root
// comes from TILEC_CACHE_TEST_ROOT when set, so that a death-test child (a fresh run of this
// binary) works in its parent's folder.
class CacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"TILEC_CACHE_DIR", "XDG_CACHE_HOME", "HOME"}) {
      const char* value = std::getenv(name);
      saved_.push_back({name, value != nullptr ? std::optional<std::string>(value) : std::nullopt});
    }
    if (const char* root = std::getenv("TILEC_CACHE_TEST_ROOT")) {
      root_ = root;
    } else {
      char pattern[] = "/tmp/tilec_cache_test_XXXXXX";
      ASSERT_NE(mkdtemp(pattern), nullptr);
      root_ = pattern;
    }
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

  // A folder under the test's root with exactly `mode`.
  std::string make_folder(const std::string& name, mode_t mode) {
    const std::string path = root_ + "/" + name;
    fs::create_directories(path);
    chmod(path.c_str(), mode);
    return path;
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

// Outside the cache a file where a folder should be is not tilec's to remove.
TEST_F(CacheTest, WriteFailureNamesThePath) {
  const std::string blocker = root_ + "/not_a_dir";
  write_raw(blocker, "x");
  try {
    write_atomically(blocker + "/file", "bytes");
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(
        std::string(error.what()).find("cannot create the folder " + blocker + ": it is a file"),
        std::string::npos)
        << error.what();
  }
  EXPECT_EQ(read_file(blocker), "x");
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

TEST_F(CacheTest, FoldersAre0700AndFiles0600WhateverTheUmask) {
  for (const mode_t mask : {0000, 0022, 0777}) {
    const std::string top = root_ + "/umask" + std::to_string(mask);
    setenv("TILEC_CACHE_DIR", (top + "/cache").c_str(), 1);
    const mode_t saved = umask(mask);
    const std::string cpu = cache_subdir("cpu");
    store_verified(cpu + "/key.so", "library");
    write_atomically(cache_dir() + "/include/a/b.h", "header");
    umask(saved);
    for (const std::string& folder :
         {top, top + "/cache", cpu, top + "/cache/include", top + "/cache/include/a"}) {
      EXPECT_EQ(mode_of(folder), 0700u) << folder << " under umask " << mask;
    }
    for (const std::string& file :
         {cpu + "/key.so", cpu + "/key.so.sha256", top + "/cache/include/a/b.h"}) {
      EXPECT_EQ(mode_of(file), 0600u) << file << " under umask " << mask;
    }
    EXPECT_EQ(read_verified(cpu + "/key.so"), "library");
  }
}

TEST_F(CacheTest, CacheFolderOthersCanWriteIsRefused) {
  const std::vector<std::pair<mode_t, std::string>> cases = {
      {0777, "its group and others (mode 0777)"},
      {0770, "its group (mode 0770)"},
      {0703, "others (mode 0703)"}};
  for (const auto& [mode, writers] : cases) {
    const std::string shared = make_folder("shared" + std::to_string(mode), mode);
    setenv("TILEC_CACHE_DIR", shared.c_str(), 1);
    std::string dir;
    const std::string log = captured_debug_log([&] { dir = cache_dir(); });
    EXPECT_NE(
        log.find("WARNING tilec cache: not using " + shared + ": " + shared + " is writable by " +
                 writers + ". This process keeps its cache in " + dir + ", removed when it exits"),
        std::string::npos)
        << log;
    EXPECT_NE(dir, shared);
    EXPECT_EQ(mode_of(dir), 0700u);
    EXPECT_EQ(owner_of(dir), geteuid());
    // The compile goes on in the private folder, and the refused one gets nothing.
    const std::string cpu = cache_subdir("cpu");
    EXPECT_EQ(cpu, dir + "/cpu");
    store_verified(cpu + "/key.so", "library");
    EXPECT_EQ(read_verified(cpu + "/key.so"), "library");
    EXPECT_TRUE(fs::is_empty(shared));
    EXPECT_EQ(mode_of(shared), mode);
    // Said once per folder.
    EXPECT_EQ(captured_debug_log([] { cache_dir(); }).find("not using"), std::string::npos);
  }
}

TEST_F(CacheTest, FolderAboveTheCacheOthersCanWriteIsRefusedUnlessSticky) {
  const std::string above = make_folder("above", 0777);
  setenv("TILEC_CACHE_DIR", (above + "/cache").c_str(), 1);
  std::string dir;
  const std::string log = captured_debug_log([&] { dir = cache_dir(); });
  EXPECT_NE(log.find("not using " + above + "/cache: " + above +
                     " is writable by its group and others (mode 0777, not sticky)"),
            std::string::npos)
      << log;
  EXPECT_NE(dir, above + "/cache");
  EXPECT_FALSE(fs::exists(above + "/cache"));
  // Sticky, as /tmp is: only an entry's owner may rename or remove it.
  chmod(above.c_str(), 01777);
  EXPECT_EQ(cache_dir(), above + "/cache");
}

TEST_F(CacheTest, SymlinksOnTheWayAreResolved) {
  const std::string real = make_folder("real", 0700);
  fs::create_symlink("real", root_ + "/link");
  setenv("TILEC_CACHE_DIR", (root_ + "/link/./sub/..").c_str(), 1);
  EXPECT_EQ(cache_dir(), real);
  EXPECT_EQ(cache_subdir("cpu"), real + "/cpu");
  // A symlink to a folder others can write leads to a refused folder.
  const std::string open = make_folder("open", 0777);
  fs::create_symlink(open, root_ + "/open_link");
  setenv("TILEC_CACHE_DIR", (root_ + "/open_link").c_str(), 1);
  const std::string log = captured_debug_log([] { cache_dir(); });
  EXPECT_NE(log.find("not using " + root_ + "/open_link: " + open + " is writable"),
            std::string::npos)
      << log;
}

TEST_F(CacheTest, CacheFolderOfAnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << kNeedsRoot;
  const std::string theirs = make_folder("theirs", 0700);
  ASSERT_EQ(chown(theirs.c_str(), kOtherUser, kOtherUser), 0);
  setenv("TILEC_CACHE_DIR", theirs.c_str(), 1);
  std::string dir;
  std::string log = captured_debug_log([&] { dir = cache_dir(); });
  EXPECT_NE(log.find("not using " + theirs + ": " + theirs + " belongs to uid 65534"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("not to uid 0 (root), the user of this process"), std::string::npos) << log;
  EXPECT_NE(dir, theirs);
  EXPECT_EQ(owner_of(dir), 0u);
  // Above the cache, a folder of another user (neither this one nor root) could swap the cache.
  const std::string above = make_folder("theirs_above", 0755);
  ASSERT_EQ(chown(above.c_str(), kOtherUser, kOtherUser), 0);
  setenv("TILEC_CACHE_DIR", (above + "/cache").c_str(), 1);
  log = captured_debug_log([&] { dir = cache_dir(); });
  EXPECT_NE(log.find(above + " belongs to uid 65534"), std::string::npos) << log;
  EXPECT_NE(log.find(", nor to root"), std::string::npos) << log;
  EXPECT_NE(dir, above + "/cache");
}

TEST_F(CacheTest, SymlinkOfAnotherUserOnTheWayIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << kNeedsRoot;
  make_folder("real", 0700);
  const std::string sticky = make_folder("sticky", 01777);
  const std::string link = sticky + "/link";
  fs::create_symlink(root_ + "/real", link);
  ASSERT_EQ(lchown(link.c_str(), kOtherUser, kOtherUser), 0);
  setenv("TILEC_CACHE_DIR", link.c_str(), 1);
  std::string dir;
  const std::string log = captured_debug_log([&] { dir = cache_dir(); });
  EXPECT_NE(log.find(link + " is a symlink of uid 65534"), std::string::npos) << log;
  EXPECT_NE(dir, root_ + "/real");
}

// A file of the private folder's process outlives none of it, and a forked child's exit leaves
// its parent's folder alone.
TEST_F(CacheTest, PrivateFolderGoesWhenItsProcessExits) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  setenv("TILEC_CACHE_TEST_ROOT", root_.c_str(), 1);
  const std::string report = root_ + "/private-folder";
  EXPECT_EXIT(
      {
        setenv("TILEC_CACHE_DIR", make_folder("shared", 0777).c_str(), 1);
        const std::string dir = cache_dir();
        store_verified(cache_subdir("cpu") + "/key", "bytes");
        const pid_t child = fork();
        if (child == 0) std::exit(0);
        waitpid(child, nullptr, 0);
        std::ofstream(report) << dir;
        std::exit(read_verified(dir + "/cpu/key") == "bytes" ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "not using");
  unsetenv("TILEC_CACHE_TEST_ROOT");
  std::string dir;
  std::ifstream(report) >> dir;
  ASSERT_FALSE(dir.empty());
  EXPECT_NE(dir.find("/tilec-cache-"), std::string::npos) << dir;
  EXPECT_FALSE(fs::exists(dir)) << dir;
}

// A folder in the cache that can't be replaced (others may write it, and it holds a folder its
// user may not empty) is refused like a cache folder: the process goes on in its private
// folder. Root may empty any folder, so as root the scenario runs as another user.
TEST_F(CacheTest, SubfolderThatCannotBeReplacedIsRefused) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  setenv("TILEC_CACHE_TEST_ROOT", root_.c_str(), 1);
  const bool as_root = geteuid() == 0;
  const std::string top = make_folder("user", 0700);
  if (as_root) {
    chmod(root_.c_str(), 0711);
    ASSERT_EQ(chown(top.c_str(), kOtherUser, kOtherUser), 0);
  }
  const std::string cpu = top + "/cache/cpu";
  EXPECT_EXIT(
      {
        if (as_root && (setgid(kOtherUser) != 0 || setuid(kOtherUser) != 0)) std::exit(2);
        setenv("TILEC_CACHE_DIR", (top + "/cache").c_str(), 1);
        fs::create_directories(cpu + "/locked");
        write_raw(cpu + "/locked/file", "x");
        chmod((cpu + "/locked").c_str(), 0500);
        chmod(cpu.c_str(), 0777);
        const std::string dir = cache_subdir("cpu");
        std::exit(dir != cpu && dir.find("/tilec-cache-") != std::string::npos &&
                          fs::is_directory(dir)
                      ? 0
                      : 1);
      },
      ::testing::ExitedWithCode(0),
      "cannot remove " + cpu + " \\(" + cpu + " is writable by its group and others " +
          "\\(mode 0777\\)\\).*This process keeps its cache in .*/tilec-cache-.*/cpu, " +
          "removed when it exits");
  unsetenv("TILEC_CACHE_TEST_ROOT");
  chmod((cpu + "/locked").c_str(), 0700);
}

// A forked worker that drops root keeps no folder of root's: it makes a private folder of its
// own.
TEST_F(CacheTest, ProcessThatChangedItsUserMakesItsOwnPrivateFolder) {
  if (geteuid() != 0) GTEST_SKIP() << "only root can change its user (setuid)";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  setenv("TILEC_CACHE_TEST_ROOT", root_.c_str(), 1);
  chmod(root_.c_str(), 0711);
  const std::string shared = make_folder("shared", 0777);
  const std::string report = root_ + "/roots-folder";
  EXPECT_EXIT(
      {
        setenv("TILEC_CACHE_DIR", shared.c_str(), 1);
        const std::string roots = cache_dir();
        std::ofstream(report) << roots;
        if (setgid(kOtherUser) != 0 || setuid(kOtherUser) != 0) std::exit(2);
        const std::string theirs = cache_dir();
        std::exit(theirs != roots && owner_of(theirs) == kOtherUser ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  unsetenv("TILEC_CACHE_TEST_ROOT");
  // The worker could not remove root's folder; root can.
  std::string roots;
  std::ifstream(report) >> roots;
  ASSERT_NE(roots.find("/tilec-cache-"), std::string::npos) << roots;
  fs::remove_all(roots);
}

TEST_F(CacheTest, SubfolderInTheWrongStateIsReplaced) {
  const std::string cache = cache_dir();
  // Others can write it, and have planted an entry.
  const std::string cpu = make_folder("cache/cpu", 0777);
  write_raw(cpu + "/planted.so", "theirs");
  EXPECT_EQ(cache_subdir("cpu"), cpu);
  EXPECT_EQ(mode_of(cpu), 0700u);
  EXPECT_FALSE(fs::exists(cpu + "/planted.so"));
  // A file in its place.
  write_raw(cache + "/cuda", "x");
  EXPECT_TRUE(fs::is_directory(cache_subdir("cuda")));
  // A symlink in its place: replaced, and its target left alone.
  const std::string elsewhere = make_folder("elsewhere", 0700);
  write_raw(elsewhere + "/kept", "x");
  fs::create_symlink(elsewhere, cache + "/include");
  EXPECT_EQ(cache_subdir("include"), cache + "/include");
  EXPECT_FALSE(fs::is_symlink(cache + "/include"));
  EXPECT_TRUE(fs::exists(elsewhere + "/kept"));
}

TEST_F(CacheTest, SubfolderOfAnotherUserIsReplaced) {
  if (geteuid() != 0) GTEST_SKIP() << kNeedsRoot;
  const std::string cpu = cache_dir() + "/cpu";
  fs::create_directory(cpu);
  write_raw(cpu + "/planted.so", "theirs");
  ASSERT_EQ(chown(cpu.c_str(), kOtherUser, kOtherUser), 0);
  EXPECT_EQ(cache_subdir("cpu"), cpu);
  EXPECT_EQ(owner_of(cpu), geteuid());
  EXPECT_FALSE(fs::exists(cpu + "/planted.so"));
}

TEST_F(CacheTest, FileInAFoldersPlaceInsideTheCacheIsReplaced) {
  const std::string blocker = cache_dir() + "/include";
  write_raw(blocker, "x");
  write_atomically(blocker + "/cpu/tilec_cpu.h", "header");
  EXPECT_EQ(read_file(blocker + "/cpu/tilec_cpu.h"), "header");
}

TEST_F(CacheTest, FolderInAFilesPlaceIsRebuilt) {
  const std::string path = cache_dir() + "/key.so";
  for (const std::string& blocked : {path, path + ".sha256"}) {
    store_verified(path, "library");
    fs::remove(blocked);
    fs::create_directories(blocked + "/inside");
    write_raw(blocked + "/inside/file", "x");
    EXPECT_EQ(read_verified(path), std::nullopt) << blocked;
    store_verified(path, "library");
    EXPECT_EQ(read_verified(path), "library") << blocked;
  }
}

TEST_F(CacheTest, SymlinkInAnEntrysPlaceIsNotFollowed) {
  const std::string path = cache_dir() + "/key.so";
  const std::string bytes = "a library outside the cache";
  const std::string outside = root_ + "/outside.so";
  write_raw(outside, bytes);
  write_raw(outside + ".sha256", sha256_hex(bytes) + "\n");
  chmod(outside.c_str(), 0600);
  chmod((outside + ".sha256").c_str(), 0600);
  // The artifact is a symlink; its sidecar matches what it points to.
  fs::create_symlink(outside, path);
  write_atomically(path + ".sha256", sha256_hex(bytes) + "\n");
  std::string log = captured_debug_log([&] { EXPECT_EQ(read_verified(path), std::nullopt); });
  EXPECT_NE(log.find(path + " is a symlink; ignoring it"), std::string::npos) << log;
  EXPECT_EQ(read_file(path), std::nullopt);
  // The sidecar is a symlink.
  fs::remove(path);
  write_atomically(path, bytes);
  fs::remove(path + ".sha256");
  fs::create_symlink(outside + ".sha256", path + ".sha256");
  EXPECT_EQ(read_verified(path), std::nullopt);
  // Writing replaces the symlinks, not what they point to.
  fs::remove(path);
  fs::create_symlink(outside, path);
  store_verified(path, "new");
  EXPECT_FALSE(fs::is_symlink(path));
  EXPECT_FALSE(fs::is_symlink(path + ".sha256"));
  EXPECT_EQ(read_verified(path), "new");
  EXPECT_EQ(read_file(outside), bytes);
  EXPECT_EQ(read_file(outside + ".sha256"), sha256_hex(bytes) + "\n");
}

TEST_F(CacheTest, EntryOthersCanWriteIsNotRead) {
  const std::string path = cache_dir() + "/key.so";
  for (const std::string& loose : {path, path + ".sha256"}) {
    store_verified(path, "library");
    chmod(loose.c_str(), 0622);
    const std::string log =
        captured_debug_log([&] { EXPECT_EQ(read_verified(path), std::nullopt) << loose; });
    EXPECT_NE(log.find("WARNING tilec cache: " + loose +
                       " is writable by its group and others (mode 0622); ignoring it"),
              std::string::npos)
        << log;
  }
  store_verified(path, "library");
  EXPECT_EQ(read_verified(path), "library");
}

TEST_F(CacheTest, EntryOfAnotherUserIsNotRead) {
  if (geteuid() != 0) GTEST_SKIP() << kNeedsRoot;
  const std::string path = cache_dir() + "/key.so";
  for (const std::string& theirs : {path, path + ".sha256"}) {
    store_verified(path, "library");
    ASSERT_EQ(chown(theirs.c_str(), kOtherUser, kOtherUser), 0);
    const std::string log =
        captured_debug_log([&] { EXPECT_EQ(read_verified(path), std::nullopt) << theirs; });
    EXPECT_NE(log.find("WARNING tilec cache: " + theirs + " belongs to uid 65534"),
              std::string::npos)
        << log;
    // Storing again puts a file of this user in its place.
    store_verified(path, "library");
    EXPECT_EQ(owner_of(theirs), 0u);
    EXPECT_EQ(read_verified(path), "library");
  }
}

// Opening a FIFO for reading waits for a writer; the cache must not.
TEST_F(CacheTest, FifoInAnEntrysPlaceReadsAsMissing) {
  const std::string path = cache_dir() + "/key.so";
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  EXPECT_EQ(read_verified(path), std::nullopt);
  store_verified(path, "library");
  EXPECT_EQ(read_verified(path), "library");
}

}  // namespace
}  // namespace tilec::runtime
