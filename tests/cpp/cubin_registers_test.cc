// cubin_registers: the register count ptxas gave a kernel, read from the cubin NVRTC built.
#include "runtime/cuda/cubin_registers.h"

#include <gtest/gtest.h>

#include <regex>
#include <stdexcept>
#include <string>

#include "runtime/cuda/nvrtc_compiler.h"

namespace tilec::runtime {
namespace {

// Two kernels of one module, one of them using registers for a dozen live values.
constexpr const char* kKernels = R"(
extern "C" __global__ void small(int* out) { out[threadIdx.x] = threadIdx.x; }
extern "C" __global__ void busy(const float* x, float* y) {
  float a[12];
#pragma unroll
  for (int i = 0; i < 12; ++i) a[i] = x[threadIdx.x * 12 + i];
  float s = 0;
#pragma unroll
  for (int i = 0; i < 12; ++i) s += a[i] * a[(i * 5) % 12];
  y[threadIdx.x] = s;
}
)";

CompileResult compiled() {
  const NvrtcCompiler* compiler = NvrtcCompiler::get();
  if (compiler == nullptr) throw std::runtime_error(NvrtcCompiler::unavailable_reason());
  return compiler->compile(kKernels, "kernels.cu", "sm_90a", {"--ptxas-options=-v"});
}

// What ptxas's -v report in NVRTC's log says of `kernel`.
int reported_registers(const std::string& log, const std::string& kernel) {
  const std::regex used("Compiling entry function '" + kernel + R"('[^]*?Used (\d+) registers)");
  std::smatch match;
  if (!std::regex_search(log, match, used)) throw std::runtime_error("no ptxas report of " + kernel + " in:\n" + log);
  return std::stoi(match[1]);
}

TEST(CubinRegisters, EachKernelHasTheCountPtxasReported) {
  const CompileResult result = compiled();
  for (const char* kernel : {"small", "busy"}) {
    const std::optional<int> registers = cubin_registers(result.binary, kernel);
    ASSERT_TRUE(registers.has_value()) << kernel;
    EXPECT_EQ(*registers, reported_registers(result.log, kernel)) << kernel;
  }
  EXPECT_FALSE(cubin_registers(result.binary, "missing").has_value());
}

TEST(CubinRegisters, BytesThatAreNoCubinOrAreCutShortGiveNothing) {
  EXPECT_FALSE(cubin_registers("", "small").has_value());
  EXPECT_FALSE(cubin_registers("\x7f" "ELF", "small").has_value());
  EXPECT_FALSE(cubin_registers(std::string(64, '\xff'), "small").has_value());
  const std::string cubin = compiled().binary;
  // every cut of it is read within its bytes (the sanitizers' build checks the reads)
  for (size_t size = 0; size < cubin.size(); size += 61) cubin_registers(cubin.substr(0, size), "busy");
}

}  // namespace
}  // namespace tilec::runtime
