// guard_global_accesses: the IR of a kernel before and after the pass.
#include <gtest/gtest.h>

#include "frontend/elaborate.h"
#include "ir/printer.h"
#include "passes/guard_global_accesses.h"
#include "tilec/tilec.h"

namespace {

using namespace tilec;

// The IR of `body` (the T.Kernel block's statements, indented 8) in a kernel over
// A: (64, 16) float32, I: (8,) int32, n symbolic.
ir::PrimFunc elaborated(const std::string& body) {
  std::string source =
      "import tilec.language as T\n\n@T.prim_func\ndef main(A: T.Tensor((64, 16), \"float32\"), "
      "I: T.Tensor((8,), \"int32\"), B: T.Tensor((T.symbolic(\"n\"),), \"float32\")):\n"
      "    with T.Kernel(4, threads=32) as bx:\n" +
      body;
  return frontend::elaborate(load_function(source, "k.py", "main"));
}

std::string guarded(const ir::PrimFunc& f, std::map<std::string, std::string> configs = {}) {
  passes::PassContext ctx;
  ctx.target = parse_target("cpu", "");
  ctx.pass_configs = std::move(configs);
  ir::PrimFunc after = f;
  after.body = passes::guard_global_accesses(f.body, ctx);
  return ir::to_string(after.body);
}

TEST(GuardGlobalAccesses, ALoadByALoadedIndexReadsZeroOutside) {
  ir::PrimFunc f = elaborated("        for i in T.serial(8):\n            A[bx * 16 + i, 0] = A[I[i], 1]\n");
  std::string before = ir::to_string(f.body), after = guarded(f);
  EXPECT_NE(before.find("A[bx * 16 + i, 0] = A[I[i], 1]"), std::string::npos) << before;
  EXPECT_NE(after.find("A[bx * 16 + i, 0] = T.if_then_else(T.cast(I[i], \"int64\") >= T.int64(0) and "
                       "T.cast(I[i], \"int64\") < T.int64(64), A[I[i], 1], 0.0)"),
            std::string::npos)
      << after;
}

TEST(GuardGlobalAccesses, AStoreThatMayFallOutsideIsSkippedThere) {
  ir::PrimFunc f = elaborated("        for i in T.serial(8):\n            B[bx * 8 + i] = 1.0\n");
  std::string after = guarded(f);
  EXPECT_NE(after.find("if T.cast(bx * 8 + i, \"int64\") < T.cast(n, \"int64\"):\n            B[bx * 8 + i] = 1.0"),
            std::string::npos)
      << after;
}

TEST(GuardGlobalAccesses, AnEnclosingIfOrTheIntervalsProveTheIndexInside) {
  ir::PrimFunc f = elaborated(
      "        for i in T.serial(8):\n"
      "            if bx * 8 + i < T.symbolic(\"n\"):\n"
      "                B[bx * 8 + i] = A[bx * 16 + i, 15]\n");
  EXPECT_EQ(guarded(f), ir::to_string(f.body));
}

TEST(GuardGlobalAccesses, AProgramsTokenOfASymbolicGridIsBelowTheTokens) {
  // T.Kernel(n * 2): program // 2 (by name or not) and program >> 1 are below n, program is not
  std::string source =
      "import tilec.language as T\n\n@T.prim_func\ndef main(B: T.Tensor((T.symbolic(\"n\"), 2), \"float32\")):\n"
      "    with T.Kernel(T.symbolic(\"n\") * 2, threads=32) as program:\n"
      "        t = program // 2\n"
      "        B[t, program % 2] = 1.0\n"
      "        B[program // 2, 0] = B[program >> 1, 1]\n"
      "        B[program, 0] = 2.0\n";
  ir::PrimFunc f = frontend::elaborate(load_function(source, "k.py", "main"));
  std::string before = ir::to_string(f.body), after = guarded(f);
  EXPECT_EQ(after.find("if T.cast(t"), std::string::npos) << after;
  EXPECT_EQ(after.find("if_then_else"), std::string::npos) << after;
  EXPECT_NE(after.find("if T.cast(program, \"int64\") < T.cast(n, \"int64\"):\n"), std::string::npos) << after;
  EXPECT_EQ(after.find("if "), after.rfind("if ")) << after;  // that store's alone
}

TEST(GuardGlobalAccesses, AMinOfSomethingInsideIsInside) {
  // min(i, n - 1) < n; min(i, n - 1) >= 0 is still tested (n may be 0)
  ir::PrimFunc f = elaborated("        for i in T.serial(8):\n            B[T.min(i, T.symbolic(\"n\") - 1)] = 1.0\n");
  std::string after = guarded(f);
  EXPECT_EQ(after.find("< T.cast(n"), std::string::npos) << after;
  EXPECT_NE(after.find("if T.cast(T.min(i, n - 1), \"int64\") >= T.int64(0):\n"), std::string::npos) << after;
}

TEST(GuardGlobalAccesses, ALetOfASymbolicGridsProgramIsNotNegative) {
  // t = program * 2 wraps by the intervals (program < n * 2 has no bound), but is >= 0 as the
  // pass takes products of non-negative parts: only t < n is tested.
  std::string source =
      "import tilec.language as T\n\n@T.prim_func\ndef main(B: T.Tensor((T.symbolic(\"n\"),), \"float32\")):\n"
      "    with T.Kernel(T.symbolic(\"n\") * 2, threads=32) as program:\n"
      "        t = program * 2\n"
      "        B[t] = 1.0\n";
  std::string after = guarded(frontend::elaborate(load_function(source, "k.py", "main")));
  EXPECT_NE(after.find("if T.cast(t, \"int64\") < T.cast(n, \"int64\"):\n"), std::string::npos) << after;
  EXPECT_EQ(after.find(">= T.int64(0)"), std::string::npos) << after;
}

TEST(GuardGlobalAccesses, AnEnclosingIfsTestOfZeroProvesTheIndexNotNegative) {
  ir::PrimFunc f = elaborated(
      "        for i in T.serial(8):\n"
      "            if I[i] >= 0:\n"
      "                B[I[i]] = 1.0\n");
  std::string after = guarded(f);
  EXPECT_EQ(after.find("\"int64\") >= T.int64(0)"), std::string::npos) << after;
  EXPECT_NE(after.find("if T.cast(I[i], \"int64\") < T.cast(n, \"int64\"):\n"), std::string::npos) << after;
}

TEST(GuardGlobalAccesses, AMinTheSimplifierRebuildsIsProvenInsideToo) {
  // i + 0 * bx simplifies to i: the min is a new node, which the proof held on to (it read a
  // freed node before, and a DSA kernel's compile ran out of stack in a cycle it made)
  ir::PrimFunc f =
      elaborated("        for i in T.serial(8):\n            B[T.min(i + 0 * bx, T.symbolic(\"n\") - 1)] = 1.0\n");
  std::string after = guarded(f);
  EXPECT_EQ(after.find("< T.cast(n"), std::string::npos) << after;
}

TEST(GuardGlobalAccesses, ThePassConfigAndTheBoundsCheckTurnItOff) {
  ir::PrimFunc f = elaborated("        for i in T.serial(8):\n            A[0, 0] = A[I[i], 1]\n");
  EXPECT_EQ(guarded(f, {{"tilec.safe_global_access", "false"}}), ir::to_string(f.body));
  EXPECT_EQ(guarded(f, {{"tilec.bounds_check", "true"}}), ir::to_string(f.body));
  EXPECT_NE(guarded(f), ir::to_string(f.body));
}

}  // namespace
