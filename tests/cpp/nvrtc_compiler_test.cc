#include "runtime/cuda/nvrtc_compiler.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/embedded_headers.h"

namespace tilec::runtime {
namespace {

// Stands in for the device headers under device/cuda/, which include each other by
// "cuda/<name>.h".
const std::vector<NvrtcHeader> kTestHeaders = {
    {"cuda/test_scale.h", R"(
#pragma once
#include <cuda_fp16.h>
#include "cuda/test_math.h"
__device__ inline __half test_scale(__half x, float factor) {
  return __float2half(test_fma(__half2float(x), factor, 1.0f));
}
)"},
    {"cuda/test_math.h", R"(
#pragma once
__device__ inline float test_fma(float a, float b, float c) { return fmaf(a, b, c); }
)"},
};

constexpr const char* kHalfKernel = R"(#include <cuda_fp16.h>
#include "cuda/test_scale.h"

extern "C" __global__ void scale(const __half* x, __half* y, float factor, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = test_scale(x[i], factor);
}
)";

const NvrtcCompiler& compiler() {
  const NvrtcCompiler* compiler = NvrtcCompiler::get();
  if (compiler == nullptr) throw std::runtime_error(NvrtcCompiler::unavailable_reason());
  return *compiler;
}

bool is_elf(const std::string& bytes) {
  return bytes.rfind(
             "\x7f"
             "ELF",
             0) == 0;
}

// The message of the std::runtime_error that compiling `source` throws.
std::string compile_error(const std::string& source, const std::string& arch = "sm_90a") {
  try {
    compiler().compile(source, "kernel.cu", arch);
  } catch (const std::runtime_error& error) {
    return error.what();
  }
  ADD_FAILURE() << "compiled without error:\n" << source;
  return "";
}

TEST(NvrtcCompilerTest, Loads) {
  const NvrtcCompiler* nvrtc = NvrtcCompiler::get();
  ASSERT_NE(nvrtc, nullptr) << NvrtcCompiler::unavailable_reason();
  EXPECT_EQ(NvrtcCompiler::unavailable_reason(), "");
  EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(nvrtc->version()[0]))) << nvrtc->version();
  EXPECT_NE(nvrtc->version().find('.'), std::string::npos) << nvrtc->version();
  EXPECT_NE(nvrtc->library_path().find("libnvrtc"), std::string::npos) << nvrtc->library_path();
  EXPECT_TRUE(std::filesystem::exists(nvrtc->include_dir() + "/cuda_fp16.h"))
      << nvrtc->include_dir();
}

TEST(NvrtcCompilerTest, OptionsAndIdentity) {
  const std::vector<std::string> options = compiler().options("sm_90a", {"-DEXTRA=1"});
  const std::vector<std::string> want_start = {"-std=c++17", "--gpu-architecture=sm_90a",
                                               "-default-device", "-lineinfo",
                                               "-I" + compiler().include_dir()};
  ASSERT_GE(options.size(), want_start.size() + 1);
  EXPECT_EQ(std::vector<std::string>(options.begin(), options.begin() + 5), want_start);
  EXPECT_EQ(options.back(), "-DEXTRA=1");
  for (const std::string& option : options) EXPECT_NE(option, "--use_fast_math");

  const std::string identity = compiler().identity("sm_90a", {});
  EXPECT_NE(identity.find(compiler().version()), std::string::npos) << identity;
  EXPECT_NE(identity, compiler().identity("sm_80", {}));
  EXPECT_NE(identity, compiler().identity("sm_90a", {"--use_fast_math"}));
  EXPECT_EQ(identity, compiler().identity("sm_90a", {}));
}

TEST(NvrtcCompilerTest, CompilesHalfKernelToCubinForSm90aAndSm80) {
  for (const char* arch : {"sm_90a", "sm_80"}) {
    const CompileResult result =
        compiler().compile(kHalfKernel, "scale.cu", arch, {}, kTestHeaders);
    EXPECT_GT(result.binary.size(), 64u) << arch;
    EXPECT_TRUE(is_elf(result.binary)) << arch;
  }
}

TEST(NvrtcCompilerTest, EmitsPtxForTheVirtualArchitecture) {
  const CompileResult result = compiler().ptx(kHalfKernel, "scale.cu", "sm_90a", {}, kTestHeaders);
  EXPECT_NE(result.binary.find(".target sm_90a"), std::string::npos) << result.binary;
  EXPECT_NE(result.binary.find(".entry scale"), std::string::npos) << result.binary;
  EXPECT_EQ(result.binary.find('\0'), std::string::npos);
}

TEST(NvrtcCompilerTest, ExtraOptionsReachNvrtc) {
  const std::string source = R"(
#ifndef TILE
#error TILE is not defined
#endif
extern "C" __global__ void k(int* out) { out[0] = TILE; }
)";
  EXPECT_TRUE(is_elf(compiler().compile(source, "k.cu", "sm_80", {"-DTILE=64"}).binary));
  EXPECT_NE(compile_error(source, "sm_80").find("TILE is not defined"), std::string::npos);
}

TEST(NvrtcCompilerTest, ErrorsNameTheKernelSourceLine) {
  const std::string source = R"(#include <cuda_fp16.h>
extern "C" __global__ void k(float* y, const float* x) {
  // example.py:12: for i in T.Parallel(128):
  const int i = threadIdx.x;
  // example.py:13: y[i] = x[i] * undefined_scale
  y[i] = x[i] * undefined_scale;
  // example.py:14: z = x[1:3:2]
  const float z = missing_function(x[i]);
  y[i] += z;
}
)";
  const std::string message = compile_error(source);
  EXPECT_NE(message.find("NVRTC cannot compile kernel.cu for sm_90a"), std::string::npos)
      << message;
  EXPECT_NE(message.find("kernel.cu(6): error: identifier \"undefined_scale\" is undefined"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("generated line 6: y[i] = x[i] * undefined_scale;"), std::string::npos)
      << message;
  EXPECT_NE(message.find("from kernel source example.py:13: y[i] = x[i] * undefined_scale\n"),
            std::string::npos)
      << message;
  // Each error maps to its own statement, the nearest comment above it.
  EXPECT_NE(message.find("generated line 8: const float z = missing_function(x[i]);\n"
                         "    from kernel source example.py:14: z = x[1:3:2]\n"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("from kernel source example.py:12"), std::string::npos) << message;
}

TEST(NvrtcCompilerTest, ErrorWithoutSourceCommentShowsTheGeneratedLine) {
  const std::string message =
      compile_error("extern \"C\" __global__ void k(int* out) {\n  out[0] = nope;\n}\n");
  EXPECT_NE(message.find("kernel.cu(2): error"), std::string::npos) << message;
  EXPECT_NE(message.find("generated line 2: out[0] = nope;"), std::string::npos) << message;
  EXPECT_EQ(message.find("from kernel source"), std::string::npos) << message;
}

TEST(NvrtcCompilerTest, MissingHeaderIsAnError) {
  const std::string message = compile_error("#include \"cuda/no_such_header.h\"\n");
  EXPECT_NE(message.find("no_such_header.h"), std::string::npos) << message;
  EXPECT_NE(message.find("generated line 1: #include \"cuda/no_such_header.h\""), std::string::npos)
      << message;
}

TEST(NvrtcCompilerTest, RejectsInvalidArchitectures) {
  for (const char* arch : {"90a", "sm90", "sm_", "sm_9", "compute_90a", "sm_90x"}) {
    EXPECT_THROW(compiler().compile(kHalfKernel, "scale.cu", arch, {}, kTestHeaders),
                 std::invalid_argument)
        << arch;
  }
}

// A pip wheel's layout (nvidia/cu13/lib beside nvidia/cu13/include) named by
// TILEC_NVIDIA_LIB_DIRS: NVRTC comes from there, and the headers beside it. The statement runs
// in a fresh process, where NVRTC is not loaded yet.
TEST(NvrtcCompilerTest, LibDirsFromTheEnvironmentComeFirst) {
  const std::string style = GTEST_FLAG_GET(death_test_style);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        namespace fs = std::filesystem;
        const std::string cuda = "/usr/local/cuda";
        if (!fs::exists(cuda + "/lib64/libnvrtc.so") || !fs::exists(cuda + "/include")) {
          std::exit(0);  // no toolkit to build the fake wheel from
        }
        char pattern[] = "/tmp/tilec_nvrtc_wheel_XXXXXX";
        const fs::path root = mkdtemp(pattern);
        const fs::path lib = root / "nvidia/cu13/lib";
        fs::create_directories(lib);
        fs::create_symlink(fs::canonical(cuda + "/lib64/libnvrtc.so"), lib / "libnvrtc.so");
        fs::create_directory_symlink(fs::canonical(cuda + "/include"),
                                     root / "nvidia/cu13/include");
        setenv("TILEC_NVIDIA_LIB_DIRS", ("/nonexistent:" + lib.string()).c_str(), 1);
        const NvrtcCompiler* nvrtc = NvrtcCompiler::get();
        const bool ok =
            nvrtc != nullptr && nvrtc->library_path() == (lib / "libnvrtc.so").string() &&
            nvrtc->include_dir() == (root / "nvidia/cu13/include").string() &&
            is_elf(nvrtc->compile(kHalfKernel, "scale.cu", "sm_90a", {}, kTestHeaders).binary);
        fs::remove_all(root);
        std::exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  GTEST_FLAG_SET(death_test_style, style);
}

// The real device headers, once device/cuda/ has some, each compile on their own.
TEST(NvrtcCompilerTest, EmbeddedCudaHeadersCompile) {
  std::vector<std::string> names;
  for (const EmbeddedHeader& header : embedded_headers()) {
    if (std::string(header.path).rfind("cuda/", 0) == 0) names.push_back(header.path);
  }
  if (names.empty()) GTEST_SKIP() << "no device/cuda/ headers yet";
  for (const std::string& name : names) {
    const std::string source =
        "#include \"" + name + "\"\nextern \"C\" __global__ void k(int* out) { out[0] = 1; }\n";
    EXPECT_TRUE(is_elf(compiler().compile(source, "k.cu", "sm_90a").binary)) << name;
  }
}

TEST(NvrtcCompilerTest, EmbeddedHeadersHashIsStable) {
  EXPECT_EQ(tilec::embedded_headers_hash().size(), 64u);
  EXPECT_EQ(tilec::embedded_headers_hash(), tilec::embedded_headers_hash());
}

}  // namespace
}  // namespace tilec::runtime
