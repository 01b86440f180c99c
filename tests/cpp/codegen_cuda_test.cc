// The CUDA target's source (codegen/cuda/codegen_cuda.h): what it asks of the device headers
// from the kernel's launch. NVRTC building the library kernels' sources is checked by
// tests/python (build_for_cuda).
#include <gtest/gtest.h>

#include <string>

#include "tilec/tilec.h"

namespace tilec {
namespace {

// A 64 x 256 float32 accumulator of one warpgroup's wgmma in a block of `threads` threads,
// min_blocks of them an SM (T.annotate_min_blocks_per_sm) where it is not 0.
std::string wide_gemm(int threads, int min_blocks = 0) {
  return "import tilec.language as T\n\n@T.prim_func\n"
         "def main(A: T.Tensor((64, 64), \"bfloat16\"), B: T.Tensor((256, 64), \"bfloat16\"),\n"
         "         C: T.Tensor((64, 256), \"float32\")):\n"
         "    with T.Kernel(1, threads=" + std::to_string(threads) + ") as bx:\n" +
         (min_blocks ? "        T.annotate_min_blocks_per_sm(" + std::to_string(min_blocks) + ")\n" : std::string()) +
         "        A_s = T.alloc_shared((64, 64), \"bfloat16\")\n"
         "        B_s = T.alloc_shared((256, 64), \"bfloat16\")\n"
         "        with T.ws(0):\n"
         "            C_f = T.alloc_fragment((64, 256), \"float32\")\n"
         "            T.copy(A, A_s)\n"
         "            T.copy(B, B_s)\n"
         "            T.gemm(A_s, B_s, C_f, transpose_B=True, clear_accum=True)\n"
         "            T.copy(C_f, C)\n";
}

std::string source_of(int threads, int min_blocks = 0) {
  return emit(load_function(wide_gemm(threads, min_blocks), "k.py", "main"), {.target = "cuda", .arch = "sm_90a"},
              EmitStage::Source);
}

constexpr const char* kNarrowWgmmas = "#define TILEC_WGMMA_MAX_N 128";

TEST(CudaSource, ABlockThatLaunchesWithTooFewRegistersForAnM64n256WgmmaAsksForM64n128s) {
  // 512 threads launch with 128 registers a thread; ptxas takes an m64n256 wgmma with a float32
  // accumulator from 158 on (C7602), even in a warpgroup that setmaxnreg grows
  const std::string source = source_of(512);
  EXPECT_NE(source.find(kNarrowWgmmas), std::string::npos) << source;
  EXPECT_LT(source.find(kNarrowWgmmas), source.find("#include \"cuda/wgmma.h\"")) << source;
}

TEST(CudaSource, BlocksAskedToShareAnSmShareItsRegistersAndAskForM64n128s) {
  // two blocks of 256 threads an SM: 128 registers a thread
  EXPECT_NE(source_of(256, 2).find(kNarrowWgmmas), std::string::npos);
}

TEST(CudaSource, ABlockOf384ThreadsKeepsTheWideWgmma) {
  EXPECT_EQ(source_of(384).find(kNarrowWgmmas), std::string::npos);  // 168 registers a thread
  EXPECT_EQ(source_of(128).find(kNarrowWgmmas), std::string::npos);
}

}  // namespace
}  // namespace tilec
