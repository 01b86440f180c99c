// merge_cp_async_waits, through the CUDA pass list (sm_80: tiles copied by cp.async and waited
// for at once): the IR it ends with.
#include <gtest/gtest.h>

#include <string>

#include "tilec/tilec.h"
#include "text_count.h"

namespace tilec {
namespace {

// Two tiles copied into shared memory, `between` them and `after` them, then a gemm reading
// both.
std::string ir_with(const std::string& between, const std::string& after = "") {
  std::string source =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(A: T.Tensor((64, 64), \"float16\"), B: T.Tensor((64, 64), \"float16\"),\n"
      "         C: T.Tensor((64, 64), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        A_s = T.alloc_shared((64, 64), \"float16\")\n"
      "        B_s = T.alloc_shared((64, 64), \"float16\")\n"
      "        D_s = T.alloc_shared((64, 64), \"float16\")\n"
      "        C_f = T.alloc_fragment((64, 64), \"float32\")\n"
      "        T.copy(A, A_s)\n" +
      between +
      "        T.copy(B, B_s)\n" +
      after +
      "        T.gemm(A_s, B_s, C_f)\n"
      "        T.copy(C_f, C)\n";
  return emit(load_function(source, "k.py", "main"), {.target = "cuda", .arch = "sm_80"}, EmitStage::IR);
}

using test_support::count;

TEST(MergeCpAsyncWaits, TilesWithOnlyRegistersBetweenThemAreWaitedForTogether) {
  std::string ir = ir_with("        T.clear(C_f)\n");
  EXPECT_EQ(count(ir, "cp_async_commit()"), 2u) << ir;
  EXPECT_EQ(count(ir, "cp_async_wait_all()"), 1u) << ir;
  // The one wait comes after both tiles' copies, before the gemm reads them.
  EXPECT_LT(ir.rfind("cp_async_16(T.address_of(B_s"), ir.find("cp_async_wait_all()")) << ir;
  EXPECT_LT(ir.find("cp_async_wait_all()"), ir.find("gemm_ss<")) << ir;
}

TEST(MergeCpAsyncWaits, AReadOfSharedMemoryBetweenThemKeepsTheFirstWait) {
  std::string ir = ir_with("        T.copy(A_s, D_s)\n");
  EXPECT_EQ(count(ir, "cp_async_wait_all()"), 2u) << ir;
  EXPECT_LT(ir.find("cp_async_wait_all()"), ir.find("D_s[")) << ir;
}

TEST(MergeCpAsyncWaits, AWaitMovesPastRegisterWorkToTheTilesFirstReader) {
  // The copy of B lands under the math on C_f, which calls exp2 but touches no shared memory.
  std::string ir = ir_with("", "        for i, j in T.Parallel(64, 64):\n            C_f[i, j] = T.exp2(C_f[i, j])\n");
  EXPECT_EQ(count(ir, "cp_async_wait_all()"), 1u) << ir;
  EXPECT_LT(ir.find("exp2("), ir.find("cp_async_wait_all()")) << ir;
  EXPECT_LT(ir.find("cp_async_wait_all()"), ir.find("gemm_ss<")) << ir;
}

}  // namespace
}  // namespace tilec
