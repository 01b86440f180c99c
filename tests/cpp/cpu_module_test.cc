#include "runtime/cpu/cpu_module.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../../device/cpu/tilec_cpu.h"
#include "base/log.h"
#include "runtime/cache.h"
#include "runtime/cpu/host_compiler.h"
#include "runtime/embedded_headers.h"
#include "test_support.h"

namespace tilec::runtime {
namespace {

namespace fs = std::filesystem;
using test_support::captured_debug_log;
using test_support::flip_byte;

// y[i] = half(x[i] * floats[0] + i // 3); counts[0] += i and counts[1] += 1 atomically.
constexpr const char* kScaleKernel = R"(
#include <cstdint>

#include "cpu/tilec_cpu.h"

extern "C" void scale(void* const* tensors, const int64_t* ints, const double* floats) {
  const auto* x = static_cast<const tilec_rt::half*>(tensors[0]);
  auto* y = static_cast<tilec_rt::half*>(tensors[1]);
  auto* sum = static_cast<int64_t*>(tensors[2]);
  auto* count = static_cast<tilec_rt::half*>(tensors[3]);
  const float factor = static_cast<float>(floats[0]);
#pragma omp parallel for
  for (int64_t i = 0; i < ints[0]; ++i) {
    y[i] = tilec_rt::half(static_cast<float>(x[i]) * factor + tilec_rt::floordiv(i, int64_t{3}));
    tilec_rt::atomic_add(sum, i);
    tilec_rt::atomic_add(count, tilec_rt::half(1.0f));
  }
}
)";

// A kernel that differs per test, so each test builds its own library.
std::string add_kernel(const std::string& tag) {
  return "// " + tag + R"(
#include <cstdint>
extern "C" void add(void* const* tensors, const int64_t* ints, const double*) {
  auto* out = static_cast<int64_t*>(tensors[0]);
  out[0] += ints[0];
}
)";
}

int64_t run_add(const CpuModule& module, int64_t start, int64_t step) {
  void* tensors[] = {&start};
  const int64_t ints[] = {step};
  module.call(tensors, ints, nullptr);
  return start;
}

class CpuModuleTest : public ::testing::Test {
 protected:
  // The root comes from the environment when set, so that a death-test child (a fresh run
  // of this binary) uses its parent's cache directories.
  static void SetUpTestSuite() {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    const char* saved = std::getenv("TILEC_CACHE_DIR");
    saved_cache_dir_ = saved != nullptr ? new std::string(saved) : nullptr;
    if (const char* root = std::getenv("TILEC_CPU_MODULE_TEST_ROOT")) {
      root_ = new std::string(root);
      return;
    }
    char pattern[] = "/tmp/tilec_cpu_module_test_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    root_ = new std::string(pattern);
    setenv("TILEC_CPU_MODULE_TEST_ROOT", pattern, 1);
  }
  static void TearDownTestSuite() {
    CpuModule::clear_memory_cache();
    fs::remove_all(*root_);
    unsetenv("TILEC_CPU_MODULE_TEST_ROOT");
    if (saved_cache_dir_ != nullptr) {
      setenv("TILEC_CACHE_DIR", saved_cache_dir_->c_str(), 1);
    } else {
      unsetenv("TILEC_CACHE_DIR");
    }
    delete root_;
    delete saved_cache_dir_;
  }
  // Each test gets its own cache directory.
  void SetUp() override {
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    setenv("TILEC_CACHE_DIR", (*root_ + "/" + name).c_str(), 1);
  }

  static std::string* root_;
  static std::string* saved_cache_dir_;
};

std::string* CpuModuleTest::root_ = nullptr;
std::string* CpuModuleTest::saved_cache_dir_ = nullptr;

TEST_F(CpuModuleTest, BuildsAndRunsAnOpenMPHalfKernel) {
  const std::shared_ptr<CpuModule> module = CpuModule::load(kScaleKernel, "scale");
  EXPECT_FALSE(module->loaded_from_disk());
  EXPECT_EQ(module->library_path().rfind(cache_dir() + "/cpu/", 0), 0u) << module->library_path();

  constexpr int64_t n = 1000;
  std::vector<tilec_rt::half> x(n), y(n, tilec_rt::half(-1.0f));
  for (int64_t i = 0; i < n; ++i) x[i] = tilec_rt::half(0.001f * static_cast<float>(i) - 0.3f);
  int64_t sum = 0;
  tilec_rt::half count(0.0f);
  void* tensors[] = {x.data(), y.data(), &sum, &count};
  const int64_t ints[] = {n};
  const double floats[] = {2.5};
  module->call(tensors, ints, floats);
  for (int64_t i = 0; i < n; ++i) {
    const tilec_rt::half want(static_cast<float>(x[i]) * 2.5f + static_cast<float>(i / 3));
    EXPECT_EQ(y[i].bits, want.bits) << i;
  }
  EXPECT_EQ(sum, n * (n - 1) / 2);
  EXPECT_EQ(static_cast<float>(count), static_cast<float>(n));
}

TEST_F(CpuModuleTest, SecondLoadComesFromMemory) {
  const auto first = CpuModule::load(add_kernel("memory"), "add");
  std::shared_ptr<CpuModule> second;
  const std::string log =
      captured_debug_log([&] { second = CpuModule::load(add_kernel("memory"), "add"); });
  EXPECT_EQ(first.get(), second.get());
  EXPECT_NE(log.find(": from memory"), std::string::npos) << log;
  EXPECT_EQ(log.find("compiling"), std::string::npos) << log;
}

TEST_F(CpuModuleTest, FreshLoadComesFromDiskWithoutCompiling) {
  const auto built = CpuModule::load(add_kernel("disk"), "add");
  EXPECT_FALSE(built->loaded_from_disk());
  CpuModule::clear_memory_cache();
  std::shared_ptr<CpuModule> loaded;
  const std::string log =
      captured_debug_log([&] { loaded = CpuModule::load(add_kernel("disk"), "add"); });
  EXPECT_NE(built.get(), loaded.get());
  EXPECT_TRUE(loaded->loaded_from_disk());
  EXPECT_EQ(loaded->library_path(), built->library_path());
  EXPECT_NE(log.find(": from disk"), std::string::npos) << log;
  EXPECT_EQ(log.find("compiling"), std::string::npos) << log;
  EXPECT_EQ(run_add(*loaded, 40, 2), 42);
}

// A new process finds the library on disk and compiles nothing. Each death-test statement
// runs in a fresh run of this binary, with nothing loaded before it.
TEST_F(CpuModuleTest, NewProcessLoadsFromDisk) {
  EXPECT_EXIT(
      {
        const auto module = CpuModule::load(add_kernel("new process"), "add");
        std::exit(module->loaded_from_disk() ? 1 : 0);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(
      {
        set_log_level(LogLevel::Debug);
        const auto module = CpuModule::load(add_kernel("new process"), "add");
        std::exit(module->loaded_from_disk() && run_add(*module, 1, 2) == 3 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "from disk");
}

TEST_F(CpuModuleTest, DamagedLibraryIsRebuilt) {
  const std::string source = add_kernel("damaged");
  const std::string path = CpuModule::load(source, "add")->library_path();
  const auto damage_and_reload = [&](const std::function<void()>& damage) {
    CpuModule::clear_memory_cache();
    damage();
    EXPECT_EQ(read_verified(path), std::nullopt);
    const auto module = CpuModule::load(source, "add");
    EXPECT_FALSE(module->loaded_from_disk());
    EXPECT_TRUE(read_verified(path).has_value());
    EXPECT_EQ(run_add(*module, 5, 6), 11);
  };
  damage_and_reload([&] { flip_byte(path, fs::file_size(path) / 2); });
  damage_and_reload([&] { fs::resize_file(path, fs::file_size(path) / 3); });
  damage_and_reload([&] { fs::remove(path + ".sha256"); });
  damage_and_reload([&] { fs::remove(path); });
}

// An entry whose hash matches but which dlopen refuses is rebuilt too. A child builds the
// entry: once this process had opened the library, dlopen would answer from memory.
TEST_F(CpuModuleTest, UnloadableLibraryIsRebuilt) {
  const std::string source = add_kernel("unloadable");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string path = CpuModule::load(source, "add")->library_path();
    store_verified(path, "not a shared object");
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  std::shared_ptr<CpuModule> module;
  const std::string log = captured_debug_log([&] { module = CpuModule::load(source, "add"); });
  EXPECT_NE(log.find("does not load"), std::string::npos) << log;
  EXPECT_FALSE(module->loaded_from_disk());
  EXPECT_EQ(run_add(*module, 1, 1), 2);
  const std::optional<std::string> bytes = read_verified(module->library_path());
  ASSERT_TRUE(bytes.has_value());
  EXPECT_EQ(bytes->substr(0, 4),
            "\x7f"
            "ELF");
}

TEST_F(CpuModuleTest, KeyFollowsSource) {
  const auto a = CpuModule::load(add_kernel("key a"), "add");
  const auto b = CpuModule::load(add_kernel("key b"), "add");
  EXPECT_NE(a->library_path(), b->library_path());
  EXPECT_TRUE(fs::exists(fs::path(a->library_path()).replace_extension(".cc")));
}

TEST_F(CpuModuleTest, HeadersAreWrittenAndRepaired) {
  CpuModule::load(add_kernel("headers 1"), "add");
  std::vector<fs::path> copies;
  bool precompiled = false;
  for (const auto& entry : fs::recursive_directory_iterator(cache_dir() + "/include")) {
    // The copy beside the precompiled header is made from the one checked here.
    if (entry.path().string().find("-pch-") != std::string::npos) {
      precompiled = precompiled || entry.path().extension() == ".gch";
      continue;
    }
    if (entry.path().filename() == "tilec_cpu.h") copies.push_back(entry.path());
  }
  EXPECT_TRUE(precompiled);
  ASSERT_EQ(copies.size(), 1u);
  const std::string header = copies[0].string();
  std::string want;
  for (const EmbeddedHeader& embedded : embedded_headers()) {
    if (std::string(embedded.path) == "cpu/tilec_cpu.h") want = embedded.text;
  }
  EXPECT_EQ(read_file(header), want);
  std::ofstream(header, std::ios::trunc) << "#error damaged\n";
  const auto module = CpuModule::load(kScaleKernel, "scale");
  EXPECT_FALSE(module->loaded_from_disk());
  EXPECT_EQ(read_file(header), want);
}

// The compiler reads the precompiled header by its path, so one that is not a private file of
// this user (writable by others, a folder GCC would search) is rebuilt before it is used.
TEST_F(CpuModuleTest, PrecompiledHeaderNotPrivateIsRebuilt) {
  CpuModule::load(add_kernel("pch 1"), "add");
  std::string pch;
  for (const auto& entry : fs::recursive_directory_iterator(cache_dir() + "/include")) {
    if (entry.path().extension() == ".gch") pch = entry.path().string();
  }
  ASSERT_FALSE(pch.empty());
  const auto expect_rebuilt = [&](const std::string& tag) {
    CpuModule::load(add_kernel("pch " + tag), "add");
    struct stat st {};
    ASSERT_EQ(lstat(pch.c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode)) << tag;
    EXPECT_EQ(st.st_mode & 07777, 0600u) << tag;
    EXPECT_GT(st.st_size, 1000) << tag;
  };
  chmod(pch.c_str(), 0666);
  expect_rebuilt("writable");
  fs::remove(pch);
  fs::create_directories(pch + "/inside");
  expect_rebuilt("folder");
}

TEST_F(CpuModuleTest, CompileErrorNamesCompilerAndShowsItsMessage) {
  const std::string source = "#include \"cpu/tilec_cpu.h\"\nint broken( {\n";
  try {
    CpuModule::load(source, "broken");
    FAIL() << "expected a compile error";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("host compiler failed (exit status"), std::string::npos) << message;
    EXPECT_NE(message.find(HostCompiler::get().command()[0]), std::string::npos) << message;
    EXPECT_NE(message.find("error"), std::string::npos) << message;
    EXPECT_NE(message.find("broken("), std::string::npos) << message;
  }
  // A failed build is not remembered: loading again compiles again.
  EXPECT_THROW(CpuModule::load(source, "broken"), std::runtime_error);
}

TEST_F(CpuModuleTest, MissingEntryIsAnError) {
  try {
    CpuModule::load(add_kernel("entry"), "no_such_entry");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("no_such_entry"), std::string::npos) << error.what();
  }
  EXPECT_EQ(run_add(*CpuModule::load(add_kernel("entry"), "add"), 0, 7), 7);
}

TEST_F(CpuModuleTest, ThreadsShareOneBuild) {
  std::vector<std::shared_ptr<CpuModule>> modules(4);
  const std::string log = captured_debug_log([&] {
    std::vector<std::thread> threads;
    for (auto& module : modules) {
      threads.emplace_back([&module] { module = CpuModule::load(add_kernel("threads"), "add"); });
    }
    for (auto& thread : threads) thread.join();
  });
  for (const auto& module : modules) EXPECT_EQ(module.get(), modules[0].get());
  size_t compiles = 0;
  for (size_t at = log.find("compiling:"); at != std::string::npos;
       at = log.find("compiling:", at + 1)) {
    ++compiles;
  }
  EXPECT_EQ(compiles, 1u) << log;
}

// Processes building one key at once all succeed and leave one valid entry.
TEST_F(CpuModuleTest, ConcurrentProcessesBuildOneKey) {
  const std::string source = add_kernel("processes");
  std::vector<pid_t> children;
  for (int i = 0; i < 2; ++i) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      const auto module = CpuModule::load(source, "add");
      _exit(run_add(*module, 1, 2) == 3 ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  const auto module = CpuModule::load(source, "add");
  EXPECT_TRUE(module->loaded_from_disk());
  EXPECT_TRUE(read_verified(module->library_path()).has_value());
}

// A library that "add"s wrongly and whose constructor leaves `marker`: what another user might
// plant in a cache, with a sidecar that matches it.
std::string planted_library(const std::string& dir, const std::string& marker) {
  const std::string source = dir + "/planted.cc";
  std::ofstream(source)
      << "#include <cstdint>\n#include <cstdio>\n"
      << "__attribute__((constructor)) static void mark() {\n"
      << "  if (std::FILE* f = std::fopen(\"" << marker << "\", \"w\")) std::fclose(f);\n"
      << "}\n"
      << "extern \"C\" void add(void* const* tensors, const int64_t*, const double*) {\n"
      << "  static_cast<int64_t*>(tensors[0])[0] = -1;\n"
      << "}\n";
  const std::string library = dir + "/planted.so";
  HostCompiler::get().compile(source, library, {});
  std::ifstream in(library, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Plants a library in the entry of `source` by `plant`, then loads `source`: the planted
// library must not run, and the kernel is rebuilt.
void expect_planted_library_not_loaded(
    const std::string& name,
    const std::function<void(const std::string& library, const std::string& planted)>& plant) {
  const std::string source = add_kernel("planted " + name);
  const std::string library = CpuModule::load(source, "add")->library_path();
  CpuModule::clear_memory_cache();
  const std::string dir = cache_dir();
  const std::string marker = dir + "/planted-" + name + "-ran";
  plant(library, planted_library(dir, marker));
  std::shared_ptr<CpuModule> module;
  const std::string log = captured_debug_log([&] { module = CpuModule::load(source, "add"); });
  EXPECT_FALSE(fs::exists(marker)) << name << ": the planted library ran\n" << log;
  EXPECT_FALSE(module->loaded_from_disk()) << name;
  EXPECT_EQ(run_add(*module, 1, 2), 3) << name;
  EXPECT_TRUE(read_verified(library).has_value()) << name << ": not rebuilt";
}

TEST_F(CpuModuleTest, LibraryOthersCouldHaveWrittenIsNotLoaded) {
  expect_planted_library_not_loaded("writable",
                                    [](const std::string& library, const std::string& planted) {
                                      store_verified(library, planted);
                                      chmod(library.c_str(), 0666);
                                    });
  // A symlink to a private library outside the cache, with a sidecar of its hash.
  expect_planted_library_not_loaded("symlink",
                                    [this](const std::string& library, const std::string& planted) {
                                      const std::string outside = *root_ + "/outside.so";
                                      write_atomically(outside, planted);
                                      store_verified(library, planted);
                                      fs::remove(library);
                                      fs::create_symlink(outside, library);
                                    });
}

// The report that asked for this: a root process loaded a library another user had planted.
TEST_F(CpuModuleTest, LibraryOfAnotherUserIsNotLoaded) {
  if (geteuid() != 0) GTEST_SKIP() << "only root can give a file to another user (chown)";
  expect_planted_library_not_loaded(
      "theirs", [](const std::string& library, const std::string& planted) {
        store_verified(library, planted);
        for (const std::string& path : {library, library + ".sha256"}) {
          ASSERT_EQ(chown(path.c_str(), 65534, 65534), 0) << path;
        }
      });
}

// Libraries are loaded by their descriptors' /proc/self/fd names, and a number comes back once
// its descriptor is closed: each library loaded under a reused number must still be its own.
TEST_F(CpuModuleTest, LibrariesLoadedByReusedDescriptorNumbersKeepTheirOwnCode) {
  const auto constant_kernel = [](int value) {
    return "#include <cstdint>\nextern \"C\" void add(void* const* tensors, const int64_t*, const "
           "double*) {\n"
           "  static_cast<int64_t*>(tensors[0])[0] = " +
           std::to_string(value) + ";\n}\n";
  };
  for (int value = 1; value <= 3; ++value)
    EXPECT_EQ(run_add(*CpuModule::load(constant_kernel(value), "add"), 0, 0), value);
  CpuModule::clear_memory_cache();
  for (int value = 1; value <= 3; ++value) {
    const auto module = CpuModule::load(constant_kernel(value), "add");
    EXPECT_TRUE(module->loaded_from_disk());
    EXPECT_EQ(run_add(*module, 0, 0), value);
  }
}

TEST_F(CpuModuleTest, CacheIsPrivateUnderUmask000) {
  const mode_t saved = umask(0);
  const auto module = CpuModule::load(add_kernel("umask"), "add");
  umask(saved);
  EXPECT_EQ(run_add(*module, 2, 3), 5);
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(cache_dir())) {
    struct stat st {};
    ASSERT_EQ(lstat(entry.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, S_ISDIR(st.st_mode) ? 0700u : 0600u) << entry.path();
    files += S_ISREG(st.st_mode);
  }
  EXPECT_GE(files, 4) << "the library, its hash, the source, the headers";
}

TEST(HostCompiler, IdentityHasVersionAndFlags) {
  const HostCompiler& compiler = HostCompiler::get();
  EXPECT_FALSE(compiler.command().empty());
  const std::vector<std::string>& flags = compiler.flags();
  for (const char* flag : {"-O3", "-march=native", "-fno-strict-aliasing", "-fPIC", "-shared", "-std=c++17", "-w"}) {
    EXPECT_NE(std::find(flags.begin(), flags.end(), flag), flags.end()) << flag;
  }
  EXPECT_EQ(std::find(flags.begin(), flags.end(), "-fopenmp") != flags.end(),
            compiler.has_openmp());
  EXPECT_NE(compiler.identity().find("-O3 -march=native"), std::string::npos)
      << compiler.identity();
  EXPECT_NE(compiler.identity().find("; cpu: "), std::string::npos) << compiler.identity();
}

// find() reads the environment each time; get() keeps its first answer.
class HostCompilerEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"CXX", "TILEC_CXXFLAGS", "TILEC_CACHE_DIR"}) {
      const char* value = std::getenv(name);
      saved_.push_back({name, value != nullptr ? std::optional<std::string>(value) : std::nullopt});
    }
    char pattern[] = "/tmp/tilec_host_compiler_test_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    root_ = pattern;
    setenv("TILEC_CACHE_DIR", root_.c_str(), 1);
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

  std::string root_;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST_F(HostCompilerEnvTest, ExtraFlagsAreAppendedAndPartOfIdentity) {
  setenv("TILEC_CXXFLAGS", "-DTILEC_TEST_FLAG=1  -fno-math-errno", 1);
  const HostCompiler compiler = HostCompiler::find();
  ASSERT_GE(compiler.flags().size(), 2u);
  EXPECT_EQ(compiler.flags()[compiler.flags().size() - 2], "-DTILEC_TEST_FLAG=1");
  EXPECT_EQ(compiler.flags().back(), "-fno-math-errno");
  EXPECT_NE(compiler.identity().find("-DTILEC_TEST_FLAG=1 -fno-math-errno"), std::string::npos);
  unsetenv("TILEC_CXXFLAGS");
  EXPECT_NE(compiler.identity(), HostCompiler::find().identity());
}

TEST_F(HostCompilerEnvTest, CxxWithLauncherWordsIsUsed) {
  setenv("CXX", "env g++", 1);
  const HostCompiler compiler = HostCompiler::find();
  EXPECT_EQ(compiler.command(), (std::vector<std::string>{"env", "g++"}));
}

TEST_F(HostCompilerEnvTest, CxxThatDoesNotRunFallsBack) {
  setenv("CXX", "/nonexistent/tilec-cxx", 1);
  std::optional<HostCompiler> compiler;
  const std::string log = captured_debug_log([&] { compiler = HostCompiler::find(); });
  ASSERT_FALSE(compiler->command().empty());
  EXPECT_NE(compiler->command()[0], "/nonexistent/tilec-cxx");
  EXPECT_NE(log.find("$CXX=/nonexistent/tilec-cxx does not run"), std::string::npos) << log;
}

// A compiler that cannot build OpenMP: its flags lose -fopenmp, once per cache directory.
TEST_F(HostCompilerEnvTest, OpenMPFailureFallsBackAndIsRemembered) {
  const std::string script = root_ + "/no-openmp-c++";
  const std::string trials = root_ + "/openmp-trials";
  std::ofstream(script) << "#!/bin/sh\n"
                        << "for arg; do\n"
                        << "  if [ \"$arg\" = -fopenmp ]; then echo x >> " << trials
                        << "; exit 1; fi\n"
                        << "done\n"
                        << "exec g++ \"$@\"\n";
  fs::permissions(script, fs::perms::owner_all);
  setenv("CXX", script.c_str(), 1);
  for (int i = 0; i < 2; ++i) {
    const HostCompiler compiler = HostCompiler::find();
    EXPECT_FALSE(compiler.has_openmp());
    const std::vector<std::string>& flags = compiler.flags();
    EXPECT_EQ(std::find(flags.begin(), flags.end(), "-fopenmp"), flags.end());
    EXPECT_EQ(compiler.identity().find("-fopenmp"), std::string::npos) << compiler.identity();
  }
  EXPECT_EQ(read_file(trials), "x\n");  // the second find() asked the cache, not the compiler

  // Kernels still build: without -fopenmp the pragmas are ignored.
  const std::string source = root_ + "/omp.cc";
  write_atomically(source,
                   "extern \"C\" void f(int* x) {\n#pragma omp parallel for\n"
                   "  for (int i = 0; i < 4; ++i) x[i] = i;\n}\n");
  EXPECT_NO_THROW(HostCompiler::find().compile(source, root_ + "/omp.so", {}));
  EXPECT_TRUE(fs::exists(root_ + "/omp.so"));
}

TEST_F(HostCompilerEnvTest, CompileFailureReportsCommandStatusAndFirstLines) {
  const std::string source = root_ + "/bad.cc";
  std::string text;
  for (int i = 0; i < 100; ++i) {
    text += "int f" + std::to_string(i) + "() { return undeclared_" + std::to_string(i) + "; }\n";
  }
  write_atomically(source, text);
  try {
    HostCompiler::get().compile(source, root_ + "/bad.so", {"/some/include"});
    FAIL() << "expected a compile error";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("exit status 1"), std::string::npos) << message;
    EXPECT_NE(message.find("-I/some/include " + source + " -o " + root_ + "/bad.so"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("undeclared_0"), std::string::npos) << message;
    EXPECT_EQ(message.find("undeclared_99"), std::string::npos) << message;
    EXPECT_NE(message.find("[...]"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace tilec::runtime
