// Layout inference's choice of tensor-core instruction follows the Target's features.
#include <gtest/gtest.h>

#include <string>

#include "tilec/tilec.h"

namespace tilec {
namespace {

constexpr const char* kFp8Gemm =
    "import tilec.language as T\n\n@T.prim_func\n"
    "def main(A: T.Tensor((64, 64), \"float8_e4m3\"), B: T.Tensor((64, 64), \"float8_e4m3\"),\n"
    "         C: T.Tensor((64, 64), \"float32\")):\n"
    "    with T.Kernel(1, threads=128) as bx:\n"
    "        A_s = T.alloc_shared((64, 64), \"float8_e4m3\")\n"
    "        B_s = T.alloc_shared((64, 64), \"float8_e4m3\")\n"
    "        C_l = T.alloc_fragment((64, 64), \"float32\")\n"
    "        T.clear(C_l)\n"
    "        T.copy(A, A_s)\n"
    "        T.copy(B, B_s)\n"
    "        T.gemm(A_s, B_s, C_l, transpose_B=True)\n"
    "        T.copy(C_l, C)\n";

std::string lowered_for(const std::string& arch) {
  return emit(load_function(kFp8Gemm, "k.py", "main"), {.target = "cuda", .arch = arch}, EmitStage::IR);
}

TEST(InferLayout, Fp8GemmRunsOnMmaWhereTheTargetHasFp8Mma) {
  for (const char* arch : {"sm_89", "sm_90", ""}) {
    std::string ir = lowered_for(arch);
    EXPECT_NE(ir.find("T.cuda.gemm_ss<"), std::string::npos) << arch << "\n" << ir;
  }
  for (const char* arch : {"sm_80", "sm_86"}) {
    std::string ir = lowered_for(arch);
    EXPECT_EQ(ir.find("T.cuda.gemm_ss<"), std::string::npos) << arch << "\n" << ir;
  }
}

}  // namespace
}  // namespace tilec
