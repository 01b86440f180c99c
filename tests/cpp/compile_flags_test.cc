// nvrtc_flags (src/runtime/compile_flags.h): nvcc's flags as NVRTC options, the fast-math
// switch, the flags with no effect (logged) and the refused ones.
#include "runtime/compile_flags.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "test_support.h"

namespace tilec::runtime {
namespace {

using Flags = std::vector<std::string>;

std::string error_of(const Flags& flags) {
  try {
    nvrtc_flags(flags);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(CompileFlags, NvrtcFlagsPassInNvrtcSpelling) {
  EXPECT_EQ(nvrtc_flags({"-DNDEBUG", "-D", "X=1", "--define-macro=Y", "-U__CUDA_NO_HALF_OPERATORS__",
                         "--undefine-macro", "Z", "-I/opt/inc"})
                .nvrtc_options,
            (Flags{"-DNDEBUG", "-DX=1", "-DY", "-U__CUDA_NO_HALF_OPERATORS__", "-UZ", "-I/opt/inc"}));
  EXPECT_EQ(nvrtc_flags({"-maxrregcount=128", "--ftz", "true", "--prec-div=false", "-fmad=false", "-std=c++20",
                         "-G", "-w", "--diag-suppress=177"})
                .nvrtc_options,
            (Flags{"--maxrregcount=128", "--ftz=true", "--prec-div=false", "--fmad=false", "--std=c++20",
                   "--device-debug", "--disable-warnings", "--diag-suppress=177"}));
}

TEST(CompileFlags, PtxasListsBecomeOneOptionAnItem) {
  EXPECT_EQ(nvrtc_flags({"--ptxas-options=-v,--register-usage-level=10"}).nvrtc_options,
            (Flags{"--ptxas-options=-v", "--ptxas-options=--register-usage-level=10"}));
  EXPECT_EQ(nvrtc_flags({"-Xptxas", "-O3"}).nvrtc_options, (Flags{"--ptxas-options=-O3"}));
}

TEST(CompileFlags, FastMathIsTheSwitch) {
  NvrtcFlags flags = nvrtc_flags({"--use_fast_math"});
  EXPECT_TRUE(flags.fast_math);
  EXPECT_TRUE(flags.nvrtc_options.empty());
  EXPECT_TRUE(nvrtc_flags({"-use_fast_math"}).fast_math);
  EXPECT_FALSE(nvrtc_flags({"-DNDEBUG"}).fast_math);
}

TEST(CompileFlags, NvccOnlyFlagsHaveNoEffectAndAreLogged) {
  NvrtcFlags flags;
  const std::string log = test_support::captured_debug_log([&] {
    flags = nvrtc_flags({"-O3", "-Wno-deprecated-declarations", "--expt-relaxed-constexpr", "--expt-extended-lambda",
                         "-Xcompiler", "-fPIC", "-lineinfo", "-v"});
  });
  EXPECT_TRUE(flags.nvrtc_options.empty());
  for (const char* line : {"compile flag '-O3' has no effect under NVRTC",
                           "compile flag '-Wno-deprecated-declarations' has no effect under NVRTC",
                           "compile flag '--expt-relaxed-constexpr' has no effect under NVRTC",
                           "compile flag '--expt-extended-lambda' has no effect under NVRTC",
                           "compile flag '-Xcompiler -fPIC' has no effect under NVRTC",
                           "compile flag '-lineinfo' is on already", "compile flag '-v' has no effect under NVRTC"})
    EXPECT_NE(log.find(line), std::string::npos) << line << "\n" << log;
}

TEST(CompileFlags, ArchFlagsUnknownFlagsAndMissingValuesAreErrors) {
  EXPECT_NE(error_of({"-arch=sm_80"}).find("compile flag '-arch=sm_80' is not accepted: tilec builds for the "
                                           "compile's arch"),
            std::string::npos);
  EXPECT_NE(error_of({"-gencode", "arch=compute_90a,code=sm_90a"}).find("'-gencode' is not accepted"),
            std::string::npos);
  EXPECT_NE(error_of({"--frobnicate"}).find("compile flag '--frobnicate' is not one tilec knows"), std::string::npos);
  EXPECT_NE(error_of({"-Xptxas"}).find("compile flag '-Xptxas' needs a value"), std::string::npos);
  EXPECT_NE(error_of({"-G=1"}).find("compile flag '-G=1' takes no value"), std::string::npos);
}

}  // namespace
}  // namespace tilec::runtime
