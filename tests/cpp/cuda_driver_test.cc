// The CUDA driver and CudaModule. The cubin cache tests need NVRTC only; the launch tests
// need a GPU and skip without one.
#include "runtime/cuda/cuda_driver.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/log.h"
#include "runtime/cache.h"
#include "runtime/cuda/cuda_module.h"
#include "runtime/cuda/nvrtc_compiler.h"
#include "test_support.h"

namespace tilec::runtime {
namespace {

namespace fs = std::filesystem;
using test_support::captured_debug_log;
using test_support::flip_byte;

#define SKIP_WITHOUT_CUDA() \
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: " << cuda_unavailable_reason()

// y[i] = half(x[i] * factor + 1).
constexpr const char* kScaleKernel = R"(#include <cuda_fp16.h>
extern "C" __global__ void scale(const __half* x, __half* y, float factor, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __float2half(__half2float(x[i]) * factor + 1.0f);
}
)";

// Each block fills `words` words of dynamic shared memory, then thread 0 sums them all.
constexpr const char* kSharedKernel = R"(
extern "C" __global__ void shared_sum(unsigned long long* out, int words) {
  extern __shared__ unsigned int buffer[];
  for (int i = threadIdx.x; i < words; i += blockDim.x) buffer[i] = i + blockIdx.x;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long sum = 0;
    for (int i = 0; i < words; ++i) sum += buffer[i];
    out[blockIdx.x] = sum;
  }
}
)";

// A kernel that differs per tag, so each test compiles its own cubin.
std::string tagged_kernel(const std::string& tag) {
  return "// " + tag + "\nextern \"C\" __global__ void k(int* out) { out[0] = 42; }\n";
}

bool is_elf(const std::string& bytes) {
  return bytes.rfind(
             "\x7f"
             "ELF",
             0) == 0;
}

TEST(CudaDriverTest, AvailabilityIsExplained) {
  if (cuda_available()) {
    ASSERT_NE(CudaDriver::get(), nullptr);
    EXPECT_EQ(CudaDriver::unavailable_reason(), "");
    EXPECT_EQ(cuda_unavailable_reason(), "");
    EXPECT_GE(CudaDriver::get()->device_count(), 1);
    return;
  }
  EXPECT_FALSE(cuda_unavailable_reason().empty());
  if (CudaDriver::get() == nullptr) {
    const std::string reason = CudaDriver::unavailable_reason();
    EXPECT_TRUE(reason.find("libcuda.so.1") != std::string::npos ||
                reason.find("cuInit") != std::string::npos)
        << reason;
    EXPECT_EQ(cuda_unavailable_reason(), reason);
  }
}

TEST(CudaDriverTest, NoDriverHere) {
  if (std::ifstream("/proc/driver/nvidia/version").good()) GTEST_SKIP() << "an NVIDIA driver";
  EXPECT_EQ(CudaDriver::get(), nullptr);
  const std::string reason = CudaDriver::unavailable_reason();
  EXPECT_TRUE(reason.find("cannot load libcuda.so.1") != std::string::npos ||
              reason.find("cuInit failed") != std::string::npos)
      << reason;
  EXPECT_FALSE(cuda_available());
}

class CudaModuleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (NvrtcCompiler::get() == nullptr) GTEST_SKIP() << NvrtcCompiler::unavailable_reason();
    cache_.emplace("tilec_cuda_module_test_");
    root_ = cache_->path();
  }
  void TearDown() override {
    if (root_.empty()) return;
    CudaModule::clear_memory_cache();
    cache_.reset();
  }

  std::string root_;
  std::optional<test_support::TemporaryCacheDir> cache_;
};

TEST_F(CudaModuleTest, CacheKeyCoversSourceArchAndNvrtcOptions) {
  const std::string key = CudaModule::cache_key(tagged_kernel("a"), "sm_90a");
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key, CudaModule::cache_key(tagged_kernel("a"), "sm_90a"));
  EXPECT_NE(key, CudaModule::cache_key(tagged_kernel("b"), "sm_90a"));
  EXPECT_NE(key, CudaModule::cache_key(tagged_kernel("a"), "sm_80"));
  EXPECT_NE(key, CudaModule::cache_key(tagged_kernel("a"), "sm_90a", {"--use_fast_math"}));
}

TEST_F(CudaModuleTest, NvrtcOptionsBuildAndLoadTheirOwnCubin) {
  const std::string source = tagged_kernel("options");
  const auto plain = CudaModule::load(source, "k", "sm_90a");
  const auto fast = CudaModule::load(source, "k", "sm_90a", {"--use_fast_math"});
  EXPECT_NE(plain->cubin_path(), fast->cubin_path());
  EXPECT_EQ(fast->cubin_path(), cache_dir() + "/cuda/" +
                                    CudaModule::cache_key(source, "sm_90a", {"--use_fast_math"}) + ".cubin");
}

TEST_F(CudaModuleTest, CubinRoundTripsThroughTheDiskCache) {
  const std::string source = tagged_kernel("round trip");
  const Cubin built = CudaModule::build_cubin(source, "k", "sm_90a");
  EXPECT_FALSE(built.from_disk);
  EXPECT_EQ(built.key, CudaModule::cache_key(source, "sm_90a"));
  EXPECT_EQ(built.path, cache_dir() + "/cuda/" + built.key + ".cubin");
  EXPECT_TRUE(is_elf(built.bytes));
  EXPECT_EQ(read_verified(built.path), built.bytes);
  EXPECT_EQ(read_file(cache_dir() + "/cuda/" + built.key + ".cu"), source);

  std::string log = captured_debug_log([&] {
    const Cubin again = CudaModule::build_cubin(source, "k", "sm_90a");
    EXPECT_TRUE(again.from_disk);
    EXPECT_EQ(again.bytes, built.bytes);
    EXPECT_EQ(again.path, built.path);
  });
  EXPECT_NE(log.find(": from disk"), std::string::npos) << log;
  EXPECT_EQ(log.find("nvrtc"), std::string::npos) << log;
}

TEST_F(CudaModuleTest, DamagedCubinIsRebuilt) {
  const std::string source = tagged_kernel("damaged");
  const Cubin built = CudaModule::build_cubin(source, "k", "sm_80");
  flip_byte(built.path, built.bytes.size() / 2);
  EXPECT_EQ(read_verified(built.path), std::nullopt);
  const Cubin rebuilt = CudaModule::build_cubin(source, "k", "sm_80");
  EXPECT_FALSE(rebuilt.from_disk);
  EXPECT_EQ(read_verified(built.path), rebuilt.bytes);

  fs::remove(built.path + ".sha256");
  EXPECT_FALSE(CudaModule::build_cubin(source, "k", "sm_80").from_disk);
}

TEST_F(CudaModuleTest, LoadComesFromMemoryThenFromDisk) {
  const std::string source = tagged_kernel("load");
  const auto first = CudaModule::load(source, "k", "sm_90a");
  EXPECT_FALSE(first->loaded_from_disk());
  EXPECT_EQ(first->kernel_name(), "k");
  EXPECT_EQ(first->arch(), "sm_90a");
  EXPECT_TRUE(is_elf(first->cubin()));
  EXPECT_EQ(first->cubin_path().rfind(cache_dir() + "/cuda/", 0), 0u) << first->cubin_path();

  std::shared_ptr<CudaModule> second;
  std::string log = captured_debug_log([&] { second = CudaModule::load(source, "k", "sm_90a"); });
  EXPECT_EQ(first.get(), second.get());
  EXPECT_NE(log.find(": from memory"), std::string::npos) << log;

  CudaModule::clear_memory_cache();
  std::shared_ptr<CudaModule> third;
  log = captured_debug_log([&] { third = CudaModule::load(source, "k", "sm_90a"); });
  EXPECT_NE(first.get(), third.get());
  EXPECT_TRUE(third->loaded_from_disk());
  EXPECT_EQ(third->cubin(), first->cubin());
  EXPECT_NE(log.find(": from disk"), std::string::npos) << log;

  // Another arch is another module.
  EXPECT_NE(CudaModule::load(source, "k", "sm_80")->cubin_path(), first->cubin_path());
}

TEST_F(CudaModuleTest, CompileErrorNamesTheStatementAndTheSource) {
  const std::string source =
      "extern \"C\" __global__ void k(int* out) {\n"
      "  // gemm.py:7: out[0] = bogus\n"
      "  out[0] = bogus;\n"
      "}\n";
  try {
    CudaModule::load(source, "k", "sm_90a");
    FAIL() << "loaded";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("k.cu(3): error: identifier \"bogus\" is undefined"), std::string::npos)
        << message;
    EXPECT_NE(message.find("gemm.py:7: out[0] = bogus"), std::string::npos) << message;
    const std::string kept =
        cache_dir() + "/cuda/" + CudaModule::cache_key(source, "sm_90a") + ".cu";
    EXPECT_NE(message.find("generated source: " + kept), std::string::npos) << message;
    EXPECT_EQ(read_file(kept), source);
  }
  // A failed load is not remembered.
  EXPECT_THROW(CudaModule::load(source, "k", "sm_90a"), std::runtime_error);
}

TEST_F(CudaModuleTest, LaunchWithoutCudaNamesTheKernel) {
  if (cuda_available()) GTEST_SKIP() << "CUDA is available";
  const auto module = CudaModule::load(tagged_kernel("no gpu"), "k", "sm_90a");
  try {
    module->launch({1, 1, 1}, {1, 1, 1}, 0, nullptr, nullptr);
    FAIL() << "launched";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("kernel k"), std::string::npos) << error.what();
  }
  EXPECT_THROW(CudaModule::device_arch(), std::runtime_error);
}

// ---------------------------------------------------------------- on a GPU

// Device memory for a test.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) : driver_(*CudaDriver::get()) {
    driver_.check(driver_.cuMemAlloc(&pointer_, bytes), "cuMemAlloc");
  }
  ~DeviceBuffer() { driver_.cuMemFree(pointer_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  CUdeviceptr* address() { return &pointer_; }
  template <typename T>
  void upload(const std::vector<T>& values) {
    driver_.check(driver_.cuMemcpyHtoD(pointer_, values.data(), values.size() * sizeof(T)),
                  "cuMemcpyHtoD");
  }
  template <typename T>
  std::vector<T> download(size_t count) {
    std::vector<T> values(count);
    driver_.check(driver_.cuMemcpyDtoH(values.data(), pointer_, count * sizeof(T)), "cuMemcpyDtoH");
    return values;
  }

 private:
  const CudaDriver& driver_;
  CUdeviceptr pointer_ = 0;
};

uint16_t float_to_half_bits(float value) {  // exact for the small values used here
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const int exponent = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
  const uint32_t mantissa = bits & 0x7fffffu;
  if (value == 0.0f) return static_cast<uint16_t>(sign);
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(exponent) << 10) | (mantissa >> 13));
}

TEST_F(CudaModuleTest, PrimaryContextBecomesCurrent) {
  SKIP_WITHOUT_CUDA();
  const CudaDriver& driver = *CudaDriver::get();
  const CUcontext primary = driver.use_device(0);
  CUcontext current = nullptr;
  driver.check(driver.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  EXPECT_EQ(current, primary);
  EXPECT_EQ(driver.ensure_context(), primary);
  EXPECT_EQ(driver.use_device(0), primary);
  EXPECT_THROW(driver.use_device(driver.device_count()), std::runtime_error);
  const std::string arch = CudaModule::device_arch();
  EXPECT_EQ(arch.rfind("sm_", 0), 0u) << arch;
  const CUdevice device = driver.current_device();
  if (driver.attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device) == 9) {
    EXPECT_EQ(arch, "sm_90a");
  }
  EXPECT_GT(driver.attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device), 0);
}

TEST_F(CudaModuleTest, LaunchesAHalfKernel) {
  SKIP_WITHOUT_CUDA();
  const CudaDriver& driver = *CudaDriver::get();
  const auto module = CudaModule::load(kScaleKernel, "scale", CudaModule::device_arch());
  constexpr int n = 1000;
  std::vector<uint16_t> x(n);
  for (int i = 0; i < n; ++i) x[i] = float_to_half_bits(static_cast<float>(i % 64) * 0.5f);
  DeviceBuffer x_buffer(n * 2);
  DeviceBuffer y_buffer(n * 2);
  x_buffer.upload(x);
  float factor = 2.0f;
  int count = n;
  void* args[] = {x_buffer.address(), y_buffer.address(), &factor, &count};
  module->launch({(n + 127) / 128, 1, 1}, {128, 1, 1}, 0, nullptr, args);
  driver.check(driver.cuStreamSynchronize(nullptr), "cuStreamSynchronize");
  const std::vector<uint16_t> y = y_buffer.download<uint16_t>(n);
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(y[i], float_to_half_bits(static_cast<float>(i % 64) + 1.0f)) << i;
  }
}

TEST_F(CudaModuleTest, LaunchesWith96KiBOfDynamicSharedMemory) {
  SKIP_WITHOUT_CUDA();
  const CudaDriver& driver = *CudaDriver::get();
  const auto module = CudaModule::load(kSharedKernel, "shared_sum", CudaModule::device_arch());
  constexpr int blocks = 4;
  DeviceBuffer out(blocks * sizeof(uint64_t));
  for (const int kib : {16, 96, 64}) {
    int words = kib * 1024 / 4;
    void* args[] = {out.address(), &words};
    module->launch({blocks, 1, 1}, {256, 1, 1}, static_cast<size_t>(kib) * 1024, nullptr, args);
    driver.check(driver.cuStreamSynchronize(nullptr), "cuStreamSynchronize");
    const std::vector<uint64_t> sums = out.download<uint64_t>(blocks);
    for (int b = 0; b < blocks; ++b) {
      const uint64_t w = static_cast<uint64_t>(words);
      EXPECT_EQ(sums[b], w * (w - 1) / 2 + w * b) << kib << " KiB, block " << b;
    }
  }
}

TEST_F(CudaModuleTest, TooMuchSharedMemoryAndBadLaunchesNameTheKernel) {
  SKIP_WITHOUT_CUDA();
  const auto module = CudaModule::load(kSharedKernel, "shared_sum", CudaModule::device_arch());
  DeviceBuffer out(sizeof(uint64_t));
  int words = 1;
  void* args[] = {out.address(), &words};
  try {
    module->launch({1, 1, 1}, {32, 1, 1}, 4u << 20, nullptr, args);
    FAIL() << "launched with 4 MiB of shared memory";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("kernel shared_sum"), std::string::npos)
        << error.what();
  }
  try {
    module->launch({1, 1, 1}, {4096, 1, 1}, 0, nullptr, args);
    FAIL() << "launched 4096 threads in a block";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("CUDA error CUDA_ERROR_"), std::string::npos) << message;
    EXPECT_NE(message.find("launching kernel shared_sum"), std::string::npos) << message;
  }
}

TEST_F(CudaModuleTest, MissingKernelNameIsAnError) {
  SKIP_WITHOUT_CUDA();
  const auto module =
      CudaModule::load(tagged_kernel("missing"), "not_there", CudaModule::device_arch());
  try {
    module->launch({1, 1, 1}, {1, 1, 1}, 0, nullptr, nullptr);
    FAIL() << "launched";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("kernel not_there"), std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace tilec::runtime
