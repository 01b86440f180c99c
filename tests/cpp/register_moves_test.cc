// check_register_moves: T.set_max_nreg's counts against what the block launched with.
#include <gtest/gtest.h>

#include <string>

#include "base/diagnostics.h"
#include "frontend/elaborate.h"
#include "passes/cuda/register_moves.h"
#include "tilec/tilec.h"

namespace tilec {
namespace {

// Three warpgroups (384 threads: 168 registers a thread at launch, 64512 in all) setting
// `consumers` on the first two and `producer` on the third; with min_blocks, the kernel asks for
// that many blocks an SM (T.annotate_min_blocks_per_sm).
ir::PrimFunc three_warpgroups(int consumers, int producer, int min_blocks = 0) {
  const std::string grow = "            T.set_max_nreg(" + std::to_string(consumers) + ", 1)\n";
  const std::string source =
      "import tilec.language as T\n\n@T.prim_func\ndef main(A: T.Tensor((64,), \"float32\")):\n"
      "    with T.Kernel(1, threads=384) as bx:\n"
      "        s = T.alloc_shared((64,), \"float32\")\n" +
      (min_blocks ? "        T.annotate_min_blocks_per_sm(" + std::to_string(min_blocks) + ")\n" : std::string()) +
      "        with T.ws(0):\n" + grow +
      "            T.copy(A, s)\n"
      "        with T.ws(1):\n" + grow +
      "            T.copy(A, s)\n"
      "        with T.ws(2):\n"
      "            T.set_max_nreg(" + std::to_string(producer) + ", 0)\n";
  return frontend::elaborate(load_function(source, "k.py", "main"));
}

void check(const ir::PrimFunc& f) {
  passes::PassContext ctx;
  ctx.target = parse_target("cuda", "sm_90a");
  passes::check_register_moves(f.body, ctx);
}

TEST(RegisterMoves, RegistersAtLaunchAreTheFileOverTheBlockInStepsOfEight) {
  EXPECT_EQ(passes::registers_at_launch(384), 168);
  EXPECT_EQ(passes::registers_at_launch(256), 248);  // 256 capped at 255, then down to a step of 8
  EXPECT_EQ(passes::registers_at_launch(512), 128);
  EXPECT_EQ(passes::registers_at_launch(640), 96);   // 102.4
}

TEST(RegisterMoves, BlocksAskedForAnSmShareItsRegisterFile) {
  EXPECT_EQ(passes::registers_at_launch(128, 3), 168);  // 170.7
  EXPECT_EQ(passes::registers_at_launch(384, 2), 80);   // 85.3
  EXPECT_EQ(passes::registers_at_launch(384, 1), passes::registers_at_launch(384));
}

TEST(RegisterMoves, CountsThatFitOneBlockButNotTheBlocksAskedForAreAnError) {
  // TileLang's warp-specialized gemm hung at launch with T.annotate_min_blocks_per_sm(2)
  // (tile-ai/tilelang#2559): its counts were those of one block an SM.
  EXPECT_NO_THROW(check(three_warpgroups(240, 24)));
  EXPECT_NO_THROW(check(three_warpgroups(104, 24, 2)));  // 232 x 128 = 29696 of 80 x 384 = 30720
  try {
    check(three_warpgroups(240, 24, 2));
    FAIL() << "no error";
  } catch (const CompileError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("k.py:9:13: error: T.set_max_nreg"), std::string::npos) << message;
    EXPECT_NE(message.find("a block of 384 threads, 2 blocks an SM (T.annotate_min_blocks_per_sm), launches with 80 "
                           "a thread (30720)"),
              std::string::npos)
        << message;
  }
}

TEST(RegisterMoves, CountsWithinTheLaunchPoolPass) {
  EXPECT_NO_THROW(check(three_warpgroups(216, 72)));   // 504 x 128 = 64512, the whole pool
  EXPECT_NO_THROW(check(three_warpgroups(240, 24)));   // FlashAttention-3's 240 + 240 + 24
}

TEST(RegisterMoves, CountsPastTheLaunchPoolAreAnErrorAtTheGrowingLine) {
  try {
    check(three_warpgroups(224, 64));  // 512 x 128 = 65536: the seesaw prefill that hung
    FAIL() << "no error";
  } catch (const CompileError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("k.py:8:13: error: T.set_max_nreg"), std::string::npos) << message;
    EXPECT_NE(message.find("65536 registers, but a block of 384 threads launches with 168 a thread (64512)"),
              std::string::npos)
        << message;
  }
}

TEST(RegisterMoves, OnceCompiledAGrowBelowWhatAThreadHoldsOrADropAboveItIsAnError) {
  // ptxas gave a 384-thread sparse MLA prefill 168 registers, and a warpgroup growing to 160 (a
  // setmaxnreg.inc asking for fewer) stopped it with an illegal instruction on an H100
  try {
    passes::check_compiled_register_moves(three_warpgroups(160, 80).body, 168);
    FAIL() << "no error";
  } catch (const CompileError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("k.py:8:13: error: T.set_max_nreg(160, 1) grows thread 0's registers to 160, but it holds "
                           "168 (what it launched with: ptxas gave the kernel 168): setmaxnreg.inc asks for more"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("use T.set_max_nreg(160, 0)"), std::string::npos) << message;
  }
  // given 152, the same counts grow and fit: 400 x 128 of 152 x 384
  EXPECT_NO_THROW(passes::check_compiled_register_moves(three_warpgroups(160, 80).body, 152));
  try {
    passes::check_compiled_register_moves(three_warpgroups(168, 200).body, 168);
    FAIL() << "no error";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("T.set_max_nreg(200, 0) drops thread 256's registers to 200, but it holds 168"),
              std::string::npos)
        << e.what();
  }
}

TEST(RegisterMoves, OnceCompiledThePoolStaysWhatTheBoundsAllow) {
  // On an H100 a 384-thread kernel ptxas gave 58 registers grew two warpgroups to 240: the block's
  // pool is what its bounds allow, whatever ptxas gave
  EXPECT_NO_THROW(passes::check_compiled_register_moves(three_warpgroups(240, 24).body, 58));
}

TEST(RegisterMoves, OnlyDropsNeverWait) {
  EXPECT_NO_THROW(check(three_warpgroups(168, 24)));  // "growing" to what it has: within the pool
  passes::PassContext ctx;
  ctx.target = parse_target("cuda", "sm_90a");
  const std::string source =
      "import tilec.language as T\n\n@T.prim_func\ndef main(A: T.Tensor((64,), \"float32\")):\n"
      "    with T.Kernel(1, threads=256) as bx:\n"
      "        with T.ws(1):\n"
      "            T.set_max_nreg(24, 0)\n";
  EXPECT_NO_THROW(passes::check_register_moves(frontend::elaborate(load_function(source, "k.py", "main")).body, ctx));
}

}  // namespace
}  // namespace tilec
