// lower_tile_ops: IR in, one pass, IR out.
#include <gtest/gtest.h>

#include "ir/printer.h"
#include "passes/lower_tile_ops.h"
#include "tilec/tilec.h"

namespace {

using namespace tilec;

std::string lower_text(const std::string& kernel_body, const std::string& params) {
  std::string source = "import tilec.language as T\n\n@T.prim_func\ndef main(" + params +
                       "):\n    with T.Kernel(4) as bx:\n" + kernel_body;
  FunctionSource f = load_function(source, "k.py", "main");
  return emit(f, {}, EmitStage::IR);
}

TEST(LowerTileOps, CopyWithinProvableBoundsHasNoChecks) {
  std::string ir = lower_text(
      "        s = T.alloc_shared((32,), \"float32\")\n"
      "        T.copy(A[bx * 32], s)\n",
      "A: T.Tensor((128,), \"float32\")");
  EXPECT_EQ(ir.find("if "), std::string::npos) << ir;
  EXPECT_NE(ir.find("for i0 in T.vectorized(32):"), std::string::npos) << ir;
  EXPECT_NE(ir.find("s[i0] = A[bx * 32 + i0]"), std::string::npos) << ir;
}

TEST(LowerTileOps, CopyPastTheEndReadsZeroAndDropsWrites) {
  std::string ir = lower_text(
      "        s = T.alloc_shared((32,), \"float32\")\n"
      "        T.copy(A[bx * 32], s)\n"
      "        T.copy(s, B[bx * 32])\n",
      "A: T.Tensor((100,), \"float32\"), B: T.Tensor((100,), \"float32\")");
  EXPECT_NE(ir.find("if bx * 32 + i0 < 100:"), std::string::npos) << ir;
  EXPECT_NE(ir.find("s[i0] = 0.0"), std::string::npos) << ir;
  EXPECT_NE(ir.find("if bx * 32 + i0_1 < 100:\n"), std::string::npos) << ir;
  // Guarded loops are not force-vectorized.
  EXPECT_EQ(ir.find("T.vectorized"), std::string::npos) << ir;
}

TEST(LowerTileOps, GemmIsAnIKJLoopNestIntoTheAccumulator) {
  std::string ir = lower_text(
      "        a = T.alloc_shared((16, 8), \"float16\")\n"
      "        b = T.alloc_shared((16, 8), \"float16\")\n"
      "        c = T.alloc_fragment((16, 16), \"float32\")\n"
      "        T.gemm(a, b, c, transpose_B=True, clear_accum=True)\n",
      "A: T.Tensor((8,), \"float32\")");
  EXPECT_NE(ir.find("c[i, j] = 0.0"), std::string::npos) << ir;
  EXPECT_NE(ir.find("for k in T.serial(8):"), std::string::npos) << ir;
  EXPECT_NE(ir.find("c[i_1, j_1] = c[i_1, j_1] + T.cast(a[i_1, k], \"float32\") * T.cast(b[j_1, k], \"float32\")"),
            std::string::npos)
      << ir;
}

TEST(LowerTileOps, ReduceWithoutClearCombinesWithTheOldValue) {
  std::string ir = lower_text(
      "        f = T.alloc_fragment((4, 8), \"float32\")\n"
      "        r = T.alloc_fragment((4,), \"float32\")\n"
      "        T.reduce_max(f, r, dim=1, clear=False)\n",
      "A: T.Tensor((8,), \"float32\")");
  EXPECT_NE(ir.find("acc[0] = -T.infinity(\"float32\")"), std::string::npos) << ir;
  EXPECT_NE(ir.find("r[i0] = T.max(r[i0], acc[0])"), std::string::npos) << ir;
}

TEST(LowerTileOps, TileAtomicAddBecomesElementAtomics) {
  std::string ir = lower_text(
      "        f = T.alloc_fragment((8,), \"float32\")\n"
      "        T.atomic_add(C[0], f)\n",
      "C: T.Tensor((8,), \"float32\")");
  EXPECT_NE(ir.find("T.atomic_add(C[i0], f[i0])"), std::string::npos) << ir;
}

TEST(LowerTileOps, LeavesOtherStatementsAlone) {
  std::string source =
      "import tilec.language as T\n\n@T.prim_func\ndef main(A: T.Tensor((8,), \"float32\")):\n"
      "    with T.Kernel(1) as bx:\n        for i in T.Parallel(8):\n            A[i] = A[i] * 2.0\n";
  FunctionSource f = load_function(source, "k.py", "main");
  EXPECT_EQ(emit(f, {}, EmitStage::TileIR), emit(f, {}, EmitStage::IR));
}

}  // namespace
