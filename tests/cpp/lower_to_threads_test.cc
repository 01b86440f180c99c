// lower_to_threads takes the warp size from the Target: blocks are whole warps, and a
// reduction's shuffles cover one warp.
#include "passes/gpu/lower_to_threads.h"

#include <gtest/gtest.h>

#include <string>

#include "frontend/elaborate.h"
#include "ir/printer.h"
#include "passes/gpu/select_instructions.h"
#include "passes/gpu/infer_layout.h"
#include "tilec/tilec.h"
#include "text_count.h"

namespace tilec {
namespace {

ir::PrimFunc kernel(int threads, const std::string& body) {
  std::string source =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(X: T.Tensor((4, 512), \"float32\"), Y: T.Tensor((4,), \"float32\")):\n"
      "    with T.Kernel(1, threads=" + std::to_string(threads) + ") as bx:\n" + body;
  return frontend::elaborate(load_function(source, "k.py", "main"));
}

std::string lowered(ir::PrimFunc f, const Target& target) {
  passes::PassContext ctx;
  ctx.target = target;
  ctx.func = &f;
  f.body = passes::select_instructions(f.body, ctx);
  f.body = passes::infer_layout(f.body, ctx);
  f.body = passes::select_fragment_copies(f.body, ctx);
  f.body = passes::lower_to_threads(f.body, ctx);
  return ir::to_string(f);
}

using test_support::count;

constexpr const char* kStore = "        Y[0] = 1.0\n";

TEST(LowerToThreads, BlocksAreWholeWarpsOfTheTarget) {
  EXPECT_NO_THROW(lowered(kernel(96, kStore), parse_target("cuda", "sm_90a")));
  try {
    lowered(kernel(96, kStore), parse_target("hip", "gfx90a"));
    FAIL() << "expected a CompileError";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("on hip a block is whole 64-lane waves or one wave's first 1, 2, 4, .. 32 lanes"),
              std::string::npos)
        << e.what();
  }
}

TEST(LowerToThreads, ReductionShufflesCoverOneWarp) {
  const std::string body =
      "        x = T.alloc_fragment((4, 512), \"float32\")\n"
      "        s = T.alloc_fragment((4,), \"float32\")\n"
      "        T.copy(X, x)\n"
      "        T.reduce_sum(x, s, dim=1)\n"
      "        T.copy(s, Y)\n";
  // Rows of 512 over all 128 threads: 32-wide warps shuffle 5 times, 64-wide waves 6 times, then
  // exchange the rest through shared memory.
  EXPECT_EQ(count(lowered(kernel(128, body), parse_target("cuda", "sm_90a")), "shfl_xor"), 5u);
  EXPECT_EQ(count(lowered(kernel(128, body), parse_target("hip", "gfx90a")), "shfl_xor"), 6u);
}

}  // namespace
}  // namespace tilec
