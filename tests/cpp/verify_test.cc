// verify: well-formed IR passes unchanged; each kind of breakage is reported.
// verify_source: what a kernel's source can break is a located error.
#include <gtest/gtest.h>

#include "kernel_text.h"
#include "passes/verify.h"

namespace {

using namespace tilec;

struct Fixture {
  ir::Buffer a = ir::make_buffer("A", DType::Float32, {ir::make_int(8)}, {ir::make_int(1, DType::Int64)},
                                 ir::MemoryScope::Global);
  ir::PrimFunc func;
  passes::PassContext ctx;
  Fixture() {
    func.name = "main";
    func.params.push_back({"A", a, ir::Expr(), {}});
    ctx.func = &func;
  }
  ir::Stmt kernel(ir::Expr bx, ir::Stmt body) {
    auto launch = std::make_shared<ir::KernelLaunch>();
    launch->grid = {ir::make_int(1)};
    launch->block_vars = {bx};
    launch->body = body;
    return ir::Stmt(launch);
  }
};

TEST(Verify, AcceptsWellFormedIR) {
  Fixture f;
  ir::Expr bx = ir::make_var("bx"), i = ir::make_var("i");
  ir::Stmt body = f.kernel(bx, ir::make_for(i, ir::make_int(0), ir::make_int(8), ir::ForKind::Serial,
                                            ir::make_store(f.a, {i}, ir::make_float(1))));
  EXPECT_TRUE(passes::verify(body, f.ctx).same_as(body));
}

TEST(Verify, RejectsAVariableUsedOutsideItsLoop) {
  Fixture f;
  ir::Expr bx = ir::make_var("bx"), i = ir::make_var("i");
  ir::Stmt body = f.kernel(bx, ir::make_store(f.a, {i}, ir::make_float(1)));
  try {
    passes::verify(body, f.ctx);
    FAIL();
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "'i' has no value here: it is not defined by any loop or block around this use, and "
                           "no tensor parameter's shape uses it (a symbolic dim gets its value from the shape "
                           "of a tensor argument)");
  }
}

TEST(Verify, RejectsWrongIndexCount) {
  Fixture f;
  ir::Expr bx = ir::make_var("bx");
  ir::Stmt body = f.kernel(bx, ir::make_store(f.a, {bx, bx}, ir::make_float(1)));
  EXPECT_THROW(passes::verify(body, f.ctx), std::logic_error);
}

TEST(Verify, RejectsAnOnChipBufferOutsideItsAllocation) {
  Fixture f;
  ir::Expr bx = ir::make_var("bx");
  ir::Buffer s = ir::make_buffer("s", DType::Float32, {ir::make_int(4)}, {}, ir::MemoryScope::Shared);
  ir::Stmt body = f.kernel(bx, ir::make_store(s, {ir::make_int(0)}, ir::make_float(1)));
  try {
    passes::verify(body, f.ctx);
    FAIL();
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "buffer 's' is used outside the block that allocates it");
  }
  EXPECT_NO_THROW(passes::verify(f.kernel(bx, ir::make_allocate(s, ir::make_store(s, {ir::make_int(0)},
                                                                                     ir::make_float(1)))),
                                 f.ctx));
}

TEST(Verify, RejectsAStoreOfTheWrongType) {
  Fixture f;
  ir::Expr bx = ir::make_var("bx");
  ir::Stmt body = f.kernel(bx, ir::make_store(f.a, {bx}, ir::make_int(1)));
  EXPECT_THROW(passes::verify(body, f.ctx), std::logic_error);
}

TEST(Verify, NamesTheLoopAVariableEscaped) {
  Fixture f;
  ir::Expr bx = ir::make_var("bx"), i = ir::make_var("i");
  ir::Stmt loop = ir::make_for(i, ir::make_int(0), ir::make_int(8), ir::ForKind::Serial,
                               ir::make_store(f.a, {i}, ir::make_float(1)));
  ir::Stmt body = f.kernel(bx, ir::make_seq({loop, ir::make_store(f.a, {i}, ir::make_float(2))}));
  try {
    passes::verify(body, f.ctx);
    FAIL();
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "'i' is used outside the loop or block that defines it");
  }
}

// verify_source reports at the innermost located node, with a note where the
// name is defined.
TEST(VerifySource, ReportsAtTheConstructWithANote) {
  Fixture f;
  auto file = std::make_shared<SourceFile>();
  file->name = "k.py";
  file->text = "S = T.alloc_shared((4,), 'float32')\nS[0] = 1.0\n";
  ir::Expr bx = ir::make_var("bx");
  ir::Buffer s = ir::make_buffer("S", DType::Float32, {ir::make_int(4)}, {}, ir::MemoryScope::Shared,
                                 SourceLoc{file, 1, 5});
  f.func.body = f.kernel(bx, ir::with_loc(ir::make_store(s, {ir::make_int(0)}, ir::make_float(1)),
                                          SourceLoc{file, 2, 1}));
  try {
    passes::verify_source(f.func);
    FAIL();
  } catch (const CompileError& e) {
    EXPECT_STREQ(e.what(),
                 "k.py:2:1: error: buffer 'S' is used outside the block that allocates it\n"
                 "    S[0] = 1.0\n"
                 "    ^\n"
                 "k.py:1:5: note: 'S' is allocated here\n"
                 "    S = T.alloc_shared((4,), 'float32')\n"
                 "        ^");
  }
}

// The ways source reached "internal compiler error in pass verify".
TEST(VerifySource, ABuffersValueCarriedIntoTheNextKernel) {
  test_support::expect_error("import tilec.language as T\n"
                             "\n"
                             "@T.prim_func\n"
                             "def main(A: T.Tensor((8,), \"float32\")):\n"
                             "    with T.Kernel(1) as bx:\n"
                             "        S = T.alloc_shared((8,), \"float32\")\n"
                             "        T.copy(A, S)\n"
                             "        kept = (S, bx)\n"
                             "    with T.Kernel(1) as by:\n"
                             "        T.copy(kept[0], A)\n"
                             "        A[kept[1]] = 1.0\n",
                             "10:9: error: buffer 'S' is used outside the block that allocates it");
  test_support::expect_error("import tilec.language as T\n"
                             "\n"
                             "@T.prim_func\n"
                             "def main(A: T.Tensor((8,), \"float32\")):\n"
                             "    with T.Kernel(1) as bx:\n"
                             "        kept = (bx,)\n"
                             "    with T.Kernel(1) as by:\n"
                             "        A[kept[0]] = 1.0\n",
                             "8:9: error: 'bx' is used outside the loop or block that defines it");
}

TEST(VerifySource, ASymbolicDimNoTensorShapeUses) {
  test_support::expect_error(test_support::kernel_text("        A[0] = n + 1\n", "int64", "    n = T.symbolic(\"n\")\n"),
                             "7:16: error: 'n' has no value here: it is not defined by any loop or block around "
                             "this use, and no tensor parameter's shape uses it");
  // A tensor whose shape uses it gives it a value.
  std::string used = "import tilec\n"
                     "import tilec.language as T\n"
                     "\n"
                     "@tilec.jit\n"
                     "def main():\n"
                     "    n = T.symbolic(\"n\")\n"
                     "    @T.prim_func\n"
                     "    def kernel(A: T.Tensor((8,), \"int64\"), B: T.Tensor((n,), \"int64\")):\n"
                     "        with T.Kernel(1) as bx:\n"
                     "            A[0] = n + 1\n"
                     "    return kernel\n";
  EXPECT_TRUE(test_support::compile_text(used).error.empty()) << test_support::compile_text(used).error;
}

// On a GPU each T.Kernel block of a function is a launch of its own (passes/split_launches.h);
// code outside the blocks runs on no thread.
TEST(SplitLaunches, EachBlockIsALaunchAndCodeOutsideIsALocatedErrorOnGpuTargets) {
  const std::string two_blocks = "import tilec.language as T\n"
                                 "\n"
                                 "@T.prim_func\n"
                                 "def main(A: T.Tensor((8,), \"float32\")):\n"
                                 "    with T.Kernel(1) as bx:\n"
                                 "        A[0] = 1.0\n"
                                 "    with T.Kernel(4) as by:\n"
                                 "        A[by] = 2.0\n";
  const std::string outside = "import tilec.language as T\n"
                              "\n"
                              "@T.prim_func\n"
                              "def main(A: T.Tensor((8,), \"float32\")):\n"
                              "    A[0] = 1.0\n"
                              "    with T.Kernel(1) as bx:\n"
                              "        A[1] = 2.0\n";
  const std::string none = "import tilec.language as T\n"
                           "\n"
                           "@T.prim_func\n"
                           "def main(A: T.Tensor((8,), \"float32\")):\n"
                           "    32\n";
  for (const std::string target : {"cuda", "hip"}) {
    test_support::Compiled c = test_support::compile_text(two_blocks, EmitStage::IR, target);
    EXPECT_EQ(c.error, "");
    const size_t first = c.text.find("# launch 1 of 2\n"), second = c.text.find("# launch 2 of 2\n");
    ASSERT_NE(first, std::string::npos) << c.text;
    ASSERT_NE(second, std::string::npos) << c.text;
    EXPECT_NE(c.text.substr(first, second - first).find("T.Kernel(1"), std::string::npos) << c.text;
    EXPECT_NE(c.text.substr(second).find("T.Kernel(4"), std::string::npos) << c.text;
    c = test_support::compile_text(outside, EmitStage::IR, target);
    EXPECT_EQ(c.error.rfind("k.py:5:5: error: code outside `with T.Kernel(...)` runs on no GPU thread (target " +
                                target + "): move this statement into the kernel block\n        A[0] = 1.0\n        ^",
                            0),
              0u)
        << c.error;
    c = test_support::compile_text(none, EmitStage::IR, target);
    EXPECT_EQ(c.error.rfind("k.py:4:1: error: function 'main' has no `with T.Kernel(...)` block", 0), 0u) << c.error;
  }
  // The CPU backend runs the blocks one after the other, and scalar code around them.
  EXPECT_EQ(test_support::compile_text(two_blocks).error, "");
  EXPECT_EQ(test_support::compile_text(outside).error, "");
}

}  // namespace
