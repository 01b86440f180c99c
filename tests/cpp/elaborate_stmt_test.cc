// Statements at compile time: loops that run while elaborating are counted
// against a budget, loop bounds and kernel launch sizes are checked before they
// reach the IR, calls are limited, and a T.Kernel block's names end with it.
#include <gtest/gtest.h>

#include <string>

#include "kernel_text.h"

namespace tilec {
namespace {

using test_support::compile_text;
using test_support::Compiled;
using test_support::expect_error;
using test_support::kernel_text;

// `text` with its first `from` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  return text.replace(text.find(from), from.size(), to);
}

std::string ir_of(const std::string& text) {
  test_support::Compiled c = compile_text(text);
  EXPECT_TRUE(c.error.empty()) << c.error;
  return c.text;
}

TEST(ElaborateStmt, ATensorParameterTakesItsLayoutAndCompactStridesInTheWholeFunction) {
  const std::string text =
      "import tilec.language as T\n"
      "\n"
      "@T.prim_func\n"
      "def main(Q: T.Tensor((4, 8), \"float32\")):\n"
      "    with T.Kernel(1) as bx:\n"
      "        Q[0, 1] = 1.0\n"
      "        T.annotate_layout({Q: T.Layout(Q.shape, lambda i, j: [j, i])})\n";
  const std::string ir = ir_of(text);
  EXPECT_NE(ir.find("layout (i, j) -> j * 4 + i"), std::string::npos) << ir;
  // The store before the annotation goes through the layout too: (0, 1) is at 4.
  const Compiled cpu = compile_text(text, EmitStage::Source);
  ASSERT_TRUE(cpu.error.empty()) << cpu.error;
  EXPECT_NE(cpu.text.find("Q[4] = "), std::string::npos) << cpu.text;
  EXPECT_EQ(cpu.text.find("Q_stride"), std::string::npos) << cpu.text;
}

TEST(ElaborateStmt, BuffersAHelperMakesTakeTheNamesTheyAreUnpackedInto) {
  // A helper's buffers have no name where it makes them; the caller's names are theirs, in the
  // IR, the generated code and messages. A name given where the buffer is made stays.
  const std::string text = kernel_text(
      "        s, f, v = tiles()\n"
      "        T.copy(A, s)\n"
      "        T.copy(s, f)\n"
      "        T.copy(f, A)\n",
      "float32",
      "    def tiles():\n"
      "        kept = T.alloc_shared((8,), \"float32\")\n"
      "        return kept, T.alloc_fragment((8,), \"float32\"), T.reshape(kept, (2, 4))\n");
  const std::string ir = ir_of(text);
  EXPECT_NE(ir.find("kept = T.alloc_shared((8,), \"float32\")"), std::string::npos) << ir;
  EXPECT_NE(ir.find("f = T.alloc_fragment((8,), \"float32\")"), std::string::npos) << ir;
  EXPECT_NE(ir.find("v = T.reshape(kept, (2, 4))"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("_buf"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("_view"), std::string::npos) << ir;
}

TEST(ElaborateStmt, CompileTimeLoopsRunWithinABudget) {
  // Was a hang: a trillion iterations before the kernel.
  expect_error(kernel_text("        A[0] = x\n", "int64",
                           "    x = 0\n"
                           "    for i in range(10**12):\n"
                           "        x = i\n"),
               "6:14: error: this compile-time loop would run 1000000000000 times, past the 100000 that "
               "compile-time loops may run in one kernel; a loop this long belongs inside T.Kernel");
  // The budget is for the whole kernel: the outer loop takes 1000, each inner one 1000 more.
  expect_error(kernel_text("        A[0] = x\n", "int64",
                           "    x = 0\n"
                           "    for i in range(1000):\n"
                           "        for j in range(1000):\n"
                           "            x = j\n"),
               "7:18: error: this compile-time loop would run 1000 times after 100000 iterations of others, "
               "past the 100000");
  // Loops over tuples count too.
  expect_error(kernel_text("        for v in (1,) * 60000:\n"
                           "            for w in (1,) * 60000:\n"
                           "                A[0] = v\n"),
               "7:22: error: this compile-time loop would run 60000 times after 60000 iterations of others");
  EXPECT_NE(ir_of(kernel_text("        A[0] = x\n", "int64",
                              "    x = 0\n"
                              "    for i in range(99999):\n"
                              "        x = x + i\n"))
                .find("A[0] = T.int64(4999850001)"),
            std::string::npos);
}

TEST(ElaborateStmt, ARangeWhoseStepPassesInt64StopsAtItsEnd) {
  // `i += step` wrapped past the stop and looped for ever.
  EXPECT_NE(ir_of(kernel_text("        A[0] = x\n", "int64",
                              "    x = 0\n"
                              "    for i in range(1, 9223372036854775807, 9223372036854775807):\n"
                              "        x = x + i\n"))
                .find("A[0] = T.int64(1)"),
            std::string::npos);
  EXPECT_NE(ir_of(kernel_text("        A[0] = x\n", "int64",
                              "    x = 0\n"
                              "    for i in range(9223372036854775807, -9223372036854775807, -9223372036854775807):\n"
                              "        x = x + 1\n"))
                .find("A[0] = T.int64(2)"),
            std::string::npos);
}

TEST(ElaborateStmt, KernelLoopTripCountsAreCountedExactly) {
  // stop - start folded in the loop's type wrapped.
  std::string ir = ir_of(kernel_text("        for i in T.serial(-9223372036854775807, 9223372036854775807, 4611686018427387904):\n"
                                     "            A[0] = i\n"));
  EXPECT_NE(ir.find("T.serial(T.int64(4))"), std::string::npos) << ir;
  expect_error(kernel_text("        for i in T.serial(-9223372036854775807 - 1, 9223372036854775807):\n"
                           "            A[0] = i\n"),
               "6:18: error: this T.serial loop runs more than 2**63 - 1 times");
  expect_error(kernel_text("        for i in range(0, 100, 2**40):\n"
                           "            A[0] = i\n"),
               "6:32: error: the integer 1099511627776 does not fit in int32 (range step)");
}

TEST(ElaborateStmt, GridIsSerialLoopsNestedInOrder) {
  const std::string ir = ir_of(kernel_text("        for i, j in T.grid(2, bx + 3):\n"
                                           "            A[i * 3 + j] = i\n"));
  const size_t outer = ir.find("for i in T.serial(2)"), inner = ir.find("for j in T.serial(bx + 3)");
  ASSERT_NE(outer, std::string::npos) << ir;
  EXPECT_GT(inner, outer) << ir;
  expect_error(kernel_text("        for i in T.grid():\n            A[0] = 1\n"),
               "6:18: error: T.grid needs at least one extent");
  expect_error(kernel_text("        for i in T.grid(4, step=2):\n            A[0] = i\n"),
               "6:18: error: T.grid() got an unexpected keyword argument 'step'");
  expect_error(kernel_text("        for i in T.grid(4, 2):\n            A[0] = i\n"),
               "6:13: error: T.grid gives 2 loop variables but 1 is named");
  expect_error(kernel_text("        for i, j in T.grid(4, 2.5):\n            A[0] = i\n"),
               "6:31: error: T.grid extent must be an integer");
}

TEST(ElaborateStmt, ThreadBindingIsTheThreadIndexAlongItsDim) {
  auto kernel = [](const std::string& call) {
    return replaced(kernel_text("        ni = " + call + "\n        A[ni] = 1\n"), "T.Kernel(1)",
                    "T.Kernel(1, threads=(4, 2))");
  };
  EXPECT_EQ(ir_of(kernel("T.thread_binding(0, 2, thread=\"threadIdx.y\")")),
            ir_of(kernel("T.get_thread_binding(1)")));
  EXPECT_EQ(ir_of(kernel("T.thread_binding(0, 4, \"threadIdx.x\")")), ir_of(kernel("T.get_thread_binding(0)")));
  expect_error(kernel("T.thread_binding(0, 8, thread=\"threadIdx.x\")"),
               "6:14: error: T.thread_binding(0, 8, threadIdx.x) must span the kernel's 4 threads along threadIdx.x: "
               "T.thread_binding(0, 4, ...)");
  expect_error(kernel("T.thread_binding(1, 4, thread=\"threadIdx.x\")"),
               "6:14: error: T.thread_binding(1, 4, threadIdx.x) must span the kernel's 4 threads along threadIdx.x: "
               "T.thread_binding(0, 4, ...)");
  expect_error(kernel("T.thread_binding(0, 4, thread=\"blockIdx.x\")"),
               "6:37: error: T.thread_binding's thread is \"threadIdx.x\", \"threadIdx.y\" or \"threadIdx.z\", not \"blockIdx.x\"");
}

TEST(ElaborateStmt, PipelineStagesAreLimited) {
  std::string loop = "        S = T.alloc_shared((8,), \"int64\")\n"
                     "        for k in T.Pipelined(4, num_stages=STAGES):\n"
                     "            T.copy(A, S)\n";
  // A million stages hung the CUDA pipeline; 2**40 was cut to an int (0 stages) without a word.
  for (const char* stages : {"1000000", "2**40"})
    expect_error(replaced(kernel_text(loop), "STAGES", stages),
                 std::string("7:33: error: num_stages is ") + (stages[0] == '2' ? "1099511627776" : stages) +
                     "; the most is 32 (each stage holds its own copy of the loop's shared tiles)");
  test_support::Compiled c = compile_text(replaced(kernel_text(loop), "STAGES", "32"), EmitStage::Source, "cuda");
  EXPECT_TRUE(c.error.empty()) << c.error;
}

TEST(ElaborateStmt, LaunchSizesAreCheckedBeforeTheyReachTheIR) {
  // Was a grid of 0 blocks (2**40 wrapped to int32).
  expect_error(replaced(kernel_text("        A[0] = 1\n"), "T.Kernel(1)", "T.Kernel(2**40)"),
               "5:19: error: the integer 1099511627776 does not fit in int32 (grid extent)");
  // Was accepted as 4 threads (the product wrapped).
  expect_error(replaced(kernel_text("        A[0] = 1\n"), "T.Kernel(1)", "T.Kernel(1, threads=(2**62 + 1, 4))"),
               "5:30: error: threads must be between 1 and 1024, not 4611686018427387905");
  expect_error(replaced(kernel_text("        A[0] = 1\n"), "T.Kernel(1)", "T.Kernel(1, threads=(64, 32))"),
               "5:30: error: threads must be between 1 and 1024, not 2048");
  expect_error(replaced(kernel_text("        A[0] = 1\n"), "T.Kernel(1)", "T.Kernel(1, threads=(1024,) * 7)"),
               "5:30: error: threads must be between 1 and 1024, not 1048576");
}

TEST(ElaborateStmt, ClusterDimsAreCheckedBeforeTheyReachTheIR) {
  const std::string body = kernel_text("        A[0] = 1\n");
  auto with_kernel = [&](const std::string& kernel) { return replaced(body, "T.Kernel(1)", kernel); };
  expect_error(with_kernel("T.Kernel(2, cluster_dims=0)"), "5:35: error: cluster_dims extents are at least 1, not 0");
  expect_error(with_kernel("T.Kernel(16, cluster_dims=(2, 2, 4))"),
               "5:36: error: cluster_dims makes clusters of 16 blocks; CUDA's portable limit is 8");
  // An extent past the limit is refused before the product, which could overflow.
  expect_error(with_kernel("T.Kernel(2, cluster_dims=(2**40, 2**40))"),
               "5:35: error: cluster_dims has an extent of 1099511627776; CUDA's portable limit is 8 blocks a cluster");
  expect_error(with_kernel("T.Kernel(2, cluster_dims=(1, 1, 1, 1))"),
               "5:35: error: cluster_dims takes 1 to 3 extents, not 4");
  expect_error(with_kernel("T.Kernel(7, cluster_dims=2)"),
               "5:35: error: the grid's extent along x (7) is not a multiple of the cluster's (2)");
  expect_error(with_kernel("T.Kernel(4, cluster_dims=(1, 2))"),
               "5:35: error: cluster_dims has 2 blocks along y, but the grid has 1 dim");
  expect_error(with_kernel("T.ClusterKernel(4)"),
               "5:10: error: T.ClusterKernel() missing required keyword argument 'cluster_dims'");
  // What waits for a cluster needs one, and no barrier of another scope inside it.
  expect_error(kernel_text("        T.cluster_sync()\n"),
               "6:9: error: T.cluster_sync waits for the blocks of a thread block cluster; this T.Kernel has no "
               "cluster_dims");
  expect_error(replaced(kernel_text("        for i in T.Parallel(8):\n            T.cluster_sync()\n"), "T.Kernel(1)",
                        "T.Kernel(2, cluster_dims=2)"),
               "7:13: error: T.cluster_sync waits for every thread of the cluster; it goes outside T.Parallel loops");
}

TEST(ElaborateStmt, AClusterKernelCarriesItsExtentsIntoTheIR) {
  const std::string text = replaced(
      kernel_text("        A[bx] = T.block_rank_in_cluster()\n        T.cluster_sync()\n"), "T.Kernel(1)",
      "T.ClusterKernel(4, 2, cluster_dims=(2, 2), threads=128)");
  const std::string text_2d = replaced(text, "as bx", "as (bx, by)");
  Compiled c = compile_text(text_2d, EmitStage::IR, "cuda");
  ASSERT_TRUE(c.error.empty()) << c.error;
  EXPECT_NE(c.text.find("# clusters of 2 x 2 x 1 blocks"), std::string::npos) << c.text;
  EXPECT_NE(c.text.find("block_rank_in_cluster()"), std::string::npos) << c.text;
  EXPECT_NE(c.text.find("cluster_sync()"), std::string::npos) << c.text;
  // Without clusters a block's rank is 0, as CUDA's is.
  const std::string plain = ir_of(kernel_text("        A[0] = T.block_rank_in_cluster()\n"));
  EXPECT_EQ(plain.find("block_rank_in_cluster"), std::string::npos) << plain;
  // The CPU runs a cluster's blocks as fibers of one thread (device/cpu/clusters.h), the grid
  // loop going over clusters.
  Compiled cpu = compile_text(text_2d, EmitStage::Source, "cpu");
  ASSERT_TRUE(cpu.error.empty()) << cpu.error;
  EXPECT_NE(cpu.text.find("#include \"cpu/clusters.h\""), std::string::npos) << cpu.text;
  EXPECT_NE(cpu.text.find("tilec_rt::Cluster cluster(4, "), std::string::npos) << cpu.text;
  EXPECT_NE(cpu.text.find("const int32_t bx = static_cast<int32_t>(cluster_0 * 2 + block_rank / 1 % 2);"),
            std::string::npos) << cpu.text;
  EXPECT_NE(cpu.text.find("const int32_t by = static_cast<int32_t>(cluster_1 * 2 + block_rank / 2 % 2);"),
            std::string::npos) << cpu.text;
}

TEST(ElaborateStmt, ARuntimeLoopOrBranchChangesOnlyRuntimeValues) {
  // The body is elaborated once: a tuple or string it reassigned kept one
  // elaboration's value (len(t) was 2 after 4 iterations, s was "b" whatever A[1] held).
  expect_error(kernel_text("        t = (1,)\n"
                           "        for k in T.serial(4):\n"
                           "            t = t + (2,)\n"
                           "        A[0] = len(t)\n"),
               "8:13: error: 't' holds a tuple, a value known only at compile time, and cannot be assigned "
               "again inside a runtime loop or branch");
  expect_error(kernel_text("        s = 'a'\n"
                           "        if A[1] > 0:\n"
                           "            s = 'b'\n"
                           "        A[2] = len(s)\n"),
               "8:13: error: 's' holds a str 'a', a value known only at compile time");
  // A new name, or one bound inside, is fine.
  EXPECT_TRUE(compile_text(kernel_text("        for k in T.serial(4):\n"
                                       "            t = (k, k + 1)\n"
                                       "            t = (t[1], t[0])\n"
                                       "            A[t[0]] = t[1]\n"))
                  .error.empty());
  // A parameter is bound before the loop: the running sum is a runtime variable
  // (each iteration read the parameter's value).
  std::string ir = ir_of(kernel_text("        m(T.int64(0))\n", "int64",
                                     "    def m(x):\n"
                                     "        for k in T.serial(4):\n"
                                     "            x = x + A[k]\n"
                                     "            A[k] = x\n"));
  EXPECT_NE(ir.find("x = T.alloc_local((1,), \"int64\")"), std::string::npos) << ir;
  EXPECT_NE(ir.find("x[0] = x[0] + A[k]"), std::string::npos) << ir;
}

TEST(ElaborateStmt, ALoopOverATupleBindsItsItemsAsTheyAreInsideARuntimeLoop) {
  // Unrolled while compiling, inside a runtime loop, after another such loop of the same name:
  // each iteration's q is a number (as TileLang's trace of a Python loop gives), so A[q + 2]
  // is A[2] and A[3], not a runtime variable's element.
  std::string ir = ir_of(kernel_text("        for q in (0, 1):\n"
                                     "            A[q] = q\n"
                                     "        for k in T.serial(2):\n"
                                     "            for q in (0, 1):\n"
                                     "                A[q + 2] = A[q + 2] + k\n"));
  EXPECT_EQ(ir.find("T.alloc_local"), std::string::npos) << ir;
  EXPECT_NE(ir.find("A[2] = A[2] + T.cast(k, \"int64\")"), std::string::npos) << ir;
  EXPECT_NE(ir.find("A[3] = A[3] + T.cast(k, \"int64\")"), std::string::npos) << ir;
}

TEST(ElaborateStmt, CallsAreLimited) {
  std::string deep_recursion = kernel_text("        A[0] = f(100)\n", "int64",
                                           "    def f(n):\n"
                                           "        return 0 if n == 0 else f(n - 1)\n");
  expect_error(deep_recursion, "6:33: error: calls nest more than 64 deep (recursion is not supported in kernels)");
  // Two calls a level, 20 levels: a million calls.
  expect_error(kernel_text("        A[0] = f(20)\n", "int64",
                           "    def f(n):\n"
                           "        return 0 if n == 0 else f(n - 1) + f(n - 1)\n"),
               "6:44: error: more than 100000 calls of kernel functions in one kernel");
}

TEST(ElaborateStmt, EvaluationDepthIsLimitedAcrossCalls) {
  // Each call nests 30 levels, and calls nest 64 deep: past what one expression may.
  std::string body = "return ";
  for (int i = 0; i < 30; ++i) body += "-(";
  body += "f(x, n - 1)";
  for (int i = 0; i < 30; ++i) body += ")";
  // On a thread with Linux's default 8 MiB (scaled for sanitizer builds), so the depth limit
  // ends it, not the stack guard.
  test_support::on_thread_with_stack((size_t{8} << 20) * test_support::kStackScale, [&] {
    expect_error(kernel_text("        A[0] = f(A[1], 64)\n", "int64",
                             "    def f(x, n):\n"
                             "        if n == 0:\n"
                             "            return x\n"
                             "        " + body + "\n"),
                 "8:40: error: evaluation nested too deeply (more than 2000 levels of expressions, statements "
                 "and calls inside one another)");
  });
}

TEST(ElaborateStmt, AKernelBlocksNamesEndWithIt) {
  // Were internal compiler errors in pass verify, with an IR dump and no location.
  std::string two_kernels = "import tilec.language as T\n"
                            "\n"
                            "@T.prim_func\n"
                            "def main(A: T.Tensor((8,), \"float32\")):\n"
                            "    with T.Kernel(1) as bx:\n"
                            "        S = T.alloc_shared((8,), \"float32\")\n"
                            "        T.copy(A, S)\n"
                            "    with T.Kernel(1) as by:\n"
                            "        USE\n";
  auto with_use = [&](const std::string& use) { return replaced(two_kernels, "USE", use); };
  expect_error(with_use("T.copy(S, A)"),
               "9:16: error: 'S' belongs to the T.Kernel block at line 5 and is not visible after it; each "
               "T.Kernel block allocates its own buffers and has its own block indices");
  expect_error(with_use("A[bx] = 1.0"), "9:11: error: 'bx' belongs to the T.Kernel block at line 5");
  // A new allocation under the same name is a new buffer.
  EXPECT_TRUE(compile_text(with_use("S = T.alloc_shared((8,), \"float32\")\n        T.copy(S, A)")).error.empty());
}

TEST(ElaborateStmt, AVariableFirstAssignedInATParallelBodyIsEachElementsOwn) {
  // `t` is assigned in two loops, so it is a runtime variable; it was one of the kernel's,
  // which each loop then wrote: on GPUs both loops ran whole on every thread, each writing
  // the elements of fragment `a` that other threads hold into its own registers
  // (TileLang's layernorm backward, dx wrong). Each loop's body has its own now.
  std::string two_loops = "import tilec.language as T\n"
                          "\n"
                          "@T.prim_func\n"
                          "def main(A: T.Tensor((256,), \"float32\"), B: T.Tensor((256,), \"float32\")):\n"
                          "    with T.Kernel(1, threads=128) as bx:\n"
                          "        a = T.alloc_fragment((256,), \"float32\")\n"
                          "        for i in T.Parallel(256):\n"
                          "            t = A[i] * 2.0\n"
                          "            a[i] = t\n"
                          "        for i in T.Parallel(256):\n"
                          "            t = a[i] + 1.0\n"
                          "            if t > 2.0:\n"
                          "                t = 2.0\n"
                          "            B[i] = t\n"
                          "AFTER";
  test_support::Compiled c = compile_text(replaced(two_loops, "AFTER", ""), EmitStage::TileIR);
  ASSERT_TRUE(c.error.empty()) << c.error;
  EXPECT_NE(c.text.find("        a = T.alloc_fragment((256,), \"float32\")\n"
                        "        for i in T.Parallel(256):\n"
                        "            t = T.alloc_local((1,), \"float32\")\n"
                        "            t[0] = A[i] * 2.0\n"
                        "            a[i] = t[0]\n"
                        "        for i_1 in T.Parallel(256):\n"
                        "            t_1 = T.alloc_local((1,), \"float32\")\n"
                        "            t_1[0] = a[i_1] + 1.0\n"),
            std::string::npos)
      << c.text;
  // Like a let-bound name, it ends with the body (its last element's value means nothing).
  expect_error(replaced(two_loops, "AFTER", "        B[0] = t\n"),
               "15:16: error: 't' is assigned inside a block at line 11 and is not visible here");
}

}  // namespace
}  // namespace tilec
