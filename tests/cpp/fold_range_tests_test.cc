// fold_range_tests: the IR of a kernel before and after the pass.
#include <gtest/gtest.h>

#include "frontend/elaborate.h"
#include "ir/printer.h"
#include "passes/fold_range_tests.h"
#include "tilec/tilec.h"

namespace {

using namespace tilec;

// The IR of `body` (the T.Kernel block's statements, indented 8) in a kernel over
// A: (64,) float32, B: (n,) float32 with n symbolic, and a scalar m.
ir::PrimFunc elaborated(const std::string& body) {
  std::string source =
      "import tilec.language as T\n\n@T.prim_func\ndef main(A: T.Tensor((64,), \"float32\"), "
      "B: T.Tensor((T.symbolic(\"n\"),), \"float32\"), I: T.Tensor((8,), \"int32\"), m: T.int32):\n"
      "    with T.Kernel(1, threads=32) as bx:\n" +
      body;
  return frontend::elaborate(load_function(source, "k.py", "main"));
}

std::string folded(const ir::PrimFunc& f) {
  passes::PassContext ctx;
  ctx.target = parse_target("cuda", "sm_90a");
  ctx.func = &f;
  return ir::to_string(passes::fold_range_tests(f.body, ctx));
}

TEST(FoldRangeTests, ATestAgainstATensorsSymbolicExtentBecomesOneUnsignedCompare) {
  ir::PrimFunc f = elaborated(
      "        for i in T.serial(8):\n"
      "            if I[i] >= 0 and I[i] < T.symbolic(\"n\"):\n"
      "                B[I[i]] = 1.0\n");
  std::string before = ir::to_string(f.body), after = folded(f);
  EXPECT_NE(before.find("if I[i] >= 0 and I[i] < n:"), std::string::npos) << before;
  EXPECT_NE(after.find("if T.cast(I[i], \"uint32\") < T.cast(n, \"uint32\"):"), std::string::npos) << after;
}

TEST(FoldRangeTests, EitherOrderAndOtherTestsBetweenFoldAtTheFirstsPlace) {
  ir::PrimFunc f = elaborated(
      "        for i in T.serial(8):\n"
      "            if I[i] < T.symbolic(\"n\") and i < 4 and I[i] >= 0:\n"
      "                B[I[i]] = 1.0\n");
  std::string after = folded(f);
  EXPECT_NE(after.find("if T.cast(I[i], \"uint32\") < T.cast(n, \"uint32\") and i < 4:"), std::string::npos) << after;
}

TEST(FoldRangeTests, AScalarArgumentOrAConstantExtentIsLeftAlone) {
  // m may be negative (then no x is in [0, m), but (unsigned) x < (unsigned) m holds for many);
  // against a constant nvcc folds the pair itself
  ir::PrimFunc f = elaborated(
      "        for i in T.serial(8):\n"
      "            if I[i] >= 0 and I[i] < m:\n"
      "                A[i] = 1.0\n"
      "            if I[i] >= 0 and I[i] < 64:\n"
      "                A[I[i]] = 2.0\n");
  EXPECT_EQ(folded(f), ir::to_string(f.body));
}

TEST(FoldRangeTests, DifferentValuesOrALowerBoundOtherThanZeroAreLeftAlone) {
  ir::PrimFunc f = elaborated(
      "        for i in T.serial(8):\n"
      "            if I[i] >= 0 and I[i + 1] < T.symbolic(\"n\"):\n"
      "                A[i] = 1.0\n"
      "            if I[i] >= 1 and I[i] < T.symbolic(\"n\"):\n"
      "                A[i] = 2.0\n");
  EXPECT_EQ(folded(f), ir::to_string(f.body));
}

}  // namespace
