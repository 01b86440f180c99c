// wgmma_waits: IR after select_instructions and infer_layout (which give the fragments their
// registers), in; T.gemm's wg_wait and T.wait_wgmma made the target's, out.
#include <gtest/gtest.h>

#include <string>

#include "frontend/elaborate.h"
#include "ir/printer.h"
#include "passes/gpu/infer_layout.h"
#include "passes/gpu/select_instructions.h"
#include "passes/wgmma_waits.h"
#include "base/diagnostics.h"
#include "tilec/tilec.h"

namespace tilec {
namespace {

// Two gemms of 128 rows over two warpgroups, the second reading the first's operand tile,
// with `wg_wait`, then `after`.
std::string source(int wg_wait, const std::string& after) {
  std::string wait = ", wg_wait=" + std::to_string(wg_wait);
  return "import tilec.language as T\n\n@T.prim_func\n"
         "def main(A: T.Tensor((128, 64), \"float16\"), B: T.Tensor((64, 64), \"float16\"),\n"
         "         C: T.Tensor((128, 64), \"float32\")):\n"
         "    with T.Kernel(1, threads=256) as bx:\n"
         "        A_s = T.alloc_shared((128, 64), \"float16\")\n"
         "        B_s = T.alloc_shared((64, 64), \"float16\")\n"
         "        S_f = T.alloc_fragment((128, 64), \"float32\")\n"
         "        P_f = T.alloc_fragment((128, 64), \"float16\")\n"
         "        O_f = T.alloc_fragment((128, 64), \"float32\")\n"
         "        T.copy(A, A_s)\n"
         "        T.copy(B, B_s)\n"
         "        T.clear(P_f)\n"
         "        T.gemm(A_s, B_s, S_f, clear_accum=True, policy=T.GemmWarpPolicy.FullRow" + wait + ")\n"
         "        T.gemm(P_f, B_s, O_f, clear_accum=True, policy=T.GemmWarpPolicy.FullRow" + wait + ")\n" +
         after +
         "        T.copy(O_f, C)\n";
}

std::string waits(const std::string& text, const std::string& target = "cuda", const std::string& arch = "sm_90a") {
  ir::PrimFunc f = frontend::elaborate(load_function(text, "k.py", "main"));
  passes::PassContext ctx;
  ctx.target = parse_target(target, arch);
  ctx.func = &f;
  if (!ctx.target.is_cpu()) {
    f.body = passes::select_instructions(f.body, ctx);
    f.body = passes::infer_layout(f.body, ctx);
  }
  f.body = passes::wgmma_waits(f.body, ctx);
  return ir::to_string(f);
}

TEST(WgmmaWaits, AWaitFencesTheFragmentsOfTheGemmsItWaitedFor) {
  std::string ir = waits(source(-1, "        T.wait_wgmma(1)\n        T.wait_wgmma(0)\n"));
  // Each thread holds 32 of a 128 x 64 accumulator's elements (and of P, the register operand).
  const std::string s_fence = "T.evaluate(T.device.fence_fragment<32>(T.address_of(S_f[0, 0])))\n";
  const std::string all_fences = s_fence +
                                 "        T.evaluate(T.device.fence_fragment<32>(T.address_of(P_f[0, 0])))\n"
                                 "        T.evaluate(T.device.fence_fragment<32>(T.address_of(O_f[0, 0])))\n";
  // wait<1> leaves the last gemm (P V into O) in flight: a fence of O or P would read registers
  // the wgmma still writes, and ptxas would serialize every wgmma (C7514). S is done.
  const size_t one = ir.find("T.evaluate(T.device.wgmma_wait<1>())\n        " + s_fence + "        T.evaluate(T.device.wgmma_wait<0>())");
  const size_t zero = ir.find("T.evaluate(T.device.wgmma_wait<0>())\n        " + all_fences);
  ASSERT_NE(one, std::string::npos) << ir;
  EXPECT_LT(one, zero) << ir;
  EXPECT_EQ(ir.find("wait_wgmma"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("T.gemm(A_s[0:128, 0:64], B_s[0:64, 0:64], S_f[0:128, 0:64], clear_accum=True, "
                    "policy=T.GemmWarpPolicy.FullRow, wg_wait=-1)"),
            ir.rfind("T.gemm(A_s"))
      << ir;
}

TEST(WgmmaWaits, AWgWaitOfNIsTheGemmThenAWaitForN) {
  std::string ir = waits(source(1, "        T.wait_wgmma(0)\n"));
  const size_t gemm = ir.find("T.gemm(P_f[0:128, 0:64], B_s[0:64, 0:64], O_f[0:128, 0:64], clear_accum=True, "
                              "policy=T.GemmWarpPolicy.FullRow, wg_wait=-1)");
  ASSERT_NE(gemm, std::string::npos) << ir;
  // its own fragments stay in flight; the first gemm's are done
  EXPECT_NE(ir.find("T.evaluate(T.device.wgmma_wait<1>())\n"
                    "        T.evaluate(T.device.fence_fragment<32>(T.address_of(S_f[0, 0])))\n"
                    "        T.evaluate(T.device.wgmma_wait<0>())",
                    gemm),
            std::string::npos)
      << ir;
}

TEST(WgmmaWaits, WhereTheLastGemmsCannotBeKnownAWaitFencesEverything) {
  // wait<1> first in a loop's body: the gemm last issued is O's before the loop in the first
  // iteration, S's of the last iteration after it; both are fenced.
  std::string text =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(A: T.Tensor((64, 64), \"float16\"), C: T.Tensor((64, 64), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        A_s = T.alloc_shared((64, 64), \"float16\")\n"
      "        S_f = T.alloc_fragment((64, 64), \"float32\")\n"
      "        O_f = T.alloc_fragment((64, 64), \"float32\")\n"
      "        T.copy(A, A_s)\n"
      "        T.gemm(A_s, A_s, O_f, clear_accum=True, wg_wait=-1)\n"
      "        for k in T.serial(2):\n"
      "            T.wait_wgmma(1)\n"
      "            T.gemm(A_s, A_s, S_f, clear_accum=True, wg_wait=-1)\n"
      "        T.wait_wgmma(0)\n"
      "        T.copy(O_f, C)\n";
  std::string ir = waits(text);
  EXPECT_NE(ir.find("T.evaluate(T.device.wgmma_wait<1>())\n"
                    "            T.evaluate(T.device.fence_fragment<32>(T.address_of(O_f[0, 0])))\n"
                    "            T.evaluate(T.device.fence_fragment<32>(T.address_of(S_f[0, 0])))\n"),
            std::string::npos)
      << ir;
}

TEST(WgmmaWaits, AThreadGroupsWaitFencesItsOwnFragments) {
  // Another group's fragments may sit in the same physical registers as this group's in flight.
  std::string text =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(A: T.Tensor((64, 64), \"float16\"), C: T.Tensor((128, 64), \"float32\")):\n"
      "    with T.Kernel(1, threads=256) as bx:\n"
      "        A_s = T.alloc_shared((64, 64), \"float16\")\n"
      "        X_f = T.alloc_fragment((64, 64), \"float32\")\n"
      "        Y_f = T.alloc_fragment((64, 64), \"float32\")\n"
      "        T.copy(A, A_s)\n"
      "        with T.ws(0):\n"
      "            T.gemm(A_s, A_s, X_f, clear_accum=True, wg_wait=-1)\n"
      "            T.wait_wgmma(0)\n"
      "            T.copy(X_f, C[0:64, :])\n"
      "        with T.ws(1):\n"
      "            T.gemm(A_s, A_s, Y_f, clear_accum=True, wg_wait=-1)\n"
      "            T.wait_wgmma(0)\n"
      "            T.copy(Y_f, C[64:128, :])\n";
  std::string ir = waits(text);
  EXPECT_NE(ir.find("T.evaluate(T.device.wgmma_wait<0>())\n"
                    "            T.evaluate(T.device.fence_fragment<32>(T.address_of(X_f[0, 0])))\n"
                    "            T.copy"),
            std::string::npos)
      << ir;
  EXPECT_NE(ir.find("T.evaluate(T.device.wgmma_wait<0>())\n"
                    "            T.evaluate(T.device.fence_fragment<32>(T.address_of(Y_f[0, 0])))\n"
                    "            T.copy"),
            std::string::npos)
      << ir;
}

TEST(WgmmaWaits, OffWgmmaEveryGemmWaitsForItselfAndTheWaitsVanish) {
  // sm_80's mma.sync and the CPU's loops finish before the next statement.
  for (auto [target, arch] : {std::pair<std::string, std::string>{"cuda", "sm_80"}, {"cpu", ""}}) {
    std::string ir = waits(source(-1, "        T.wait_wgmma(0)\n"), target, arch);
    EXPECT_EQ(ir.find("wg_wait"), std::string::npos) << target << "\n" << ir;
    EXPECT_EQ(ir.find("wait"), std::string::npos) << target << "\n" << ir;
  }
}

TEST(WgmmaWaits, WithNothingInFlightAWaitVanishes) {
  std::string ir = waits(source(0, "        T.wait_wgmma(0)\n"));
  EXPECT_EQ(ir.find("wait"), std::string::npos) << ir;
}

std::string error_of(const std::string& text) {
  try {
    waits(text, "cpu", "");
  } catch (const CompileError& e) {
    return e.what();
  }
  return "";
}

TEST(WgmmaWaits, UsingAFragmentInFlightIsAnErrorOnEveryTarget) {
  // The accumulator read before the wait: refused at the read, with the gemm as the note.
  std::string message = error_of(source(-1, "        for i, j in T.Parallel(128, 64):\n"
                                            "            O_f[i, j] = O_f[i, j] * 2\n"
                                            "        T.wait_wgmma(0)\n"));
  EXPECT_NE(message.find("k.py:17:9: error: O_f is still in use by an asynchronous wgmma here: a T.wait_wgmma "
                         "before this statement waits for it"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("k.py:16:9: note: the gemm (wg_wait=-1) whose wgmma uses O_f"), std::string::npos) << message;
  // A register operand in flight is the gemm's too.
  message = error_of(source(-1, "        T.fill(P_f, 1)\n        T.wait_wgmma(0)\n"));
  EXPECT_NE(message.find("P_f is still in use by an asynchronous wgmma"), std::string::npos) << message;
}

TEST(WgmmaWaits, AGemmClearingAnAccumulatorInFlightIsAnError) {
  // Adding into it is the hardware's to order; clearing it would drop the first gemm's result
  // (and on wgmma take registers it still writes).
  std::string adds = error_of(source(-1, "        T.gemm(A_s, B_s, S_f, policy=T.GemmWarpPolicy.FullRow, wg_wait=-1)\n"
                                         "        T.wait_wgmma(0)\n"));
  EXPECT_EQ(adds, "");
  std::string clears = error_of(source(-1, "        T.gemm(A_s, B_s, S_f, clear_accum=True, policy=T.GemmWarpPolicy.FullRow, "
                                           "wg_wait=-1)\n        T.wait_wgmma(0)\n"));
  EXPECT_NE(clears.find("k.py:17:9: error: S_f is still in use by an asynchronous wgmma here"), std::string::npos)
      << clears;
  EXPECT_NE(clears.find("k.py:15:9: note: the gemm (wg_wait=-1) whose wgmma uses S_f"), std::string::npos) << clears;
}

TEST(WgmmaWaits, AnAsynchronousGemmNoWaitWaitsForIsAnError) {
  std::string message = error_of(source(-1, ""));
  EXPECT_NE(message.find("k.py:15:9: error: this gemm (wg_wait=-1) leaves its wgmma in flight, and no "
                         "T.wait_wgmma of the kernel waits for it"),
            std::string::npos)
      << message;
  // wg_wait=1 waits for the gemms before it, not for its own.
  message = error_of(source(1, ""));
  EXPECT_NE(message.find("k.py:15:9: error: this gemm (wg_wait=1) leaves its wgmma in flight"), std::string::npos)
      << message;
}

TEST(WgmmaWaits, APipelinedIterationMayNotEndWithAGemmInFlight) {
  // The stage of A_s is refilled when the iteration ends: the wait after the loop is too late.
  std::string text =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(A: T.Tensor((128, 256), \"float16\"), B: T.Tensor((256, 64), \"float16\"),\n"
      "         C: T.Tensor((128, 64), \"float32\")):\n"
      "    with T.Kernel(1, threads=256) as bx:\n"
      "        A_s = T.alloc_shared((128, 64), \"float16\")\n"
      "        B_s = T.alloc_shared((64, 64), \"float16\")\n"
      "        C_f = T.alloc_fragment((128, 64), \"float32\")\n"
      "        T.clear(C_f)\n"
      "        for k in T.Pipelined(4, num_stages=2):\n"
      "            T.copy(A[0, k * 64], A_s)\n"
      "            T.copy(B[k * 64, 0], B_s)\n"
      "            T.gemm(A_s, B_s, C_f, wg_wait=-1)\n"
      "        T.wait_wgmma(0)\n"
      "        T.copy(C_f, C)\n";
  std::string message = error_of(text);
  EXPECT_NE(message.find("k.py:14:13: error: this gemm's wgmma (wg_wait=-1) is still in flight when the T.Pipelined "
                         "loop's iteration ends"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("k.py:11:9: note: the loop"), std::string::npos) << message;
  // Waited for inside the iteration, it is the program's to overlap.
  size_t wait = text.find("        T.wait_wgmma(0)\n");
  text.replace(wait, 0, "            T.wait_wgmma(0)\n");
  EXPECT_EQ(error_of(text), "");
}

TEST(WgmmaWaits, AGemmThatReadsNoStageMayRunIntoTheNextIteration) {
  // X_s is no stage (no global copy fills it): its gemm runs on while the next iteration loads
  // A_s, and is waited for there, or after the loop.
  std::string text =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(A: T.Tensor((128, 256), \"float16\"), B: T.Tensor((64, 64), \"float16\"),\n"
      "         C: T.Tensor((128, 64), \"float32\")):\n"
      "    with T.Kernel(1, threads=256) as bx:\n"
      "        A_s = T.alloc_shared((128, 64), \"float16\")\n"
      "        X_s = T.alloc_shared((128, 64), \"float16\")\n"
      "        B_s = T.alloc_shared((64, 64), \"float16\")\n"
      "        C_f = T.alloc_fragment((128, 64), \"float32\")\n"
      "        T.clear(C_f)\n"
      "        T.copy(B, B_s)\n"
      "        for k in T.Pipelined(4, num_stages=2):\n"
      "            T.copy(A[0, k * 64], A_s)\n"
      "            T.wait_wgmma(0)\n"
      "            T.copy(A_s, X_s)\n"
      "            T.gemm(X_s, B_s, C_f, wg_wait=-1)\n"
      "        T.wait_wgmma(0)\n"
      "        T.copy(C_f, C)\n";
  EXPECT_EQ(error_of(text), "");
  // Its accumulator touched at the top of the next iteration, before the wait.
  std::string top = text;
  top.replace(top.find("            T.wait_wgmma(0)\n"), 0,
              "            for i, j in T.Parallel(128, 64):\n                C_f[i, j] = C_f[i, j] * 2\n");
  std::string message = error_of(top);
  EXPECT_NE(message.find("k.py:15:13: error: C_f is still in use by an asynchronous wgmma here"), std::string::npos)
      << message;
  EXPECT_NE(message.find("k.py:19:13: note: the gemm (wg_wait=-1) whose wgmma uses C_f"), std::string::npos)
      << message;
  // Or after the loop, before the wait.
  std::string after = text;
  after.erase(after.find("        T.wait_wgmma(0)\n        T.copy(C_f, C)"), std::string("        T.wait_wgmma(0)\n").size());
  message = error_of(after);
  EXPECT_NE(message.find("k.py:18:9: error: C_f is still in use by an asynchronous wgmma here"), std::string::npos)
      << message;
}

TEST(WgmmaWaits, WritingASharedTileAGemmInFlightReadsIsAnError) {
  // A_s refilled before the wait: the wgmma may still be reading it.
  std::string message = error_of(source(-1, "        T.copy(A, A_s)\n        T.wait_wgmma(0)\n"));
  EXPECT_NE(message.find("k.py:17:9: error: this writes A_s where an asynchronous wgmma may still read it: a "
                         "T.wait_wgmma before this statement waits for it"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("k.py:15:9: note: the gemm (wg_wait=-1) whose wgmma reads A_s"), std::string::npos)
      << message;
  // B_s is both gemms' operand; a store of a T.Parallel nest into its last row is caught too.
  message = error_of(source(-1, "        for j in T.Parallel(64):\n            B_s[63, j] = 0\n"
                                "        T.wait_wgmma(0)\n"));
  EXPECT_NE(message.find("k.py:17:9: error: this writes B_s where an asynchronous wgmma may still read it"),
            std::string::npos)
      << message;
  // Reading the operands is no error, nor is writing them after the wait.
  EXPECT_EQ(error_of(source(-1, "        T.copy(A_s, C)\n        T.wait_wgmma(0)\n        T.copy(A, A_s)\n")), "");
}

TEST(WgmmaWaits, AWriteToAnotherPartOfTheTileIsNoError) {
  // Stage 0 in flight while stage 1 is filled; stage k % 2 against (k + 1) % 2 can't be told
  // apart from the same stage, so it is let be; the same stage is refused.
  const std::string text =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(A: T.Tensor((128, 64), \"float16\"), B: T.Tensor((64, 64), \"float16\"),\n"
      "         C: T.Tensor((128, 64), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        A_s = T.alloc_shared((128, 64), \"float16\")\n"
      "        K_s = T.alloc_shared((2, 64, 64), \"float16\")\n"
      "        S_f = T.alloc_fragment((128, 64), \"float32\")\n"
      "        T.copy(A, A_s)\n"
      "        T.copy(B, K_s[0, :, :])\n"
      "        T.clear(S_f)\n"
      "        for k in T.serial(4):\n"
      "            T.gemm(A_s, K_s[k % 2, :, :], S_f, wg_wait=-1)\n"
      "            T.copy(B, K_s[(k + 1) % 2, :, :])\n"
      "            T.wait_wgmma(0)\n"
      "        T.gemm(A_s, K_s[0, :, :], S_f, wg_wait=-1)\n"
      "        T.copy(B, K_s[1, :, :])\n"
      "        T.wait_wgmma(0)\n"
      "        T.copy(S_f, C)\n";
  EXPECT_EQ(error_of(text), "");
  std::string same = text;
  same.replace(same.find("K_s[(k + 1) % 2"), std::string("K_s[(k + 1) % 2").size(), "K_s[k % 2");
  std::string message = error_of(same);
  EXPECT_NE(message.find("k.py:15:13: error: this writes K_s where an asynchronous wgmma may still read it"),
            std::string::npos)
      << message;
  std::string stage0 = text;
  stage0.replace(stage0.find("T.copy(B, K_s[1, :, :])"), std::string("T.copy(B, K_s[1").size(), "T.copy(B, K_s[0");
  message = error_of(stage0);
  EXPECT_NE(message.find("k.py:18:9: error: this writes K_s where an asynchronous wgmma may still read it"),
            std::string::npos)
      << message;
}

TEST(WgmmaWaits, APipelinedLoopsProducersFillALaterStage) {
  // The copy into A_s after the gemm fills the stage of an iteration ahead, not the one read.
  std::string text =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(A: T.Tensor((128, 256), \"float16\"), B: T.Tensor((64, 64), \"float16\"),\n"
      "         C: T.Tensor((128, 64), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        A_s = T.alloc_shared((128, 64), \"float16\")\n"
      "        B_s = T.alloc_shared((64, 64), \"float16\")\n"
      "        C_f = T.alloc_fragment((128, 64), \"float32\")\n"
      "        T.clear(C_f)\n"
      "        T.copy(B, B_s)\n"
      "        for k in T.Pipelined(4, num_stages=2):\n"
      "            T.gemm(A_s, B_s, C_f, wg_wait=-1)\n"
      "            T.copy(A[0, k * 64], A_s)\n"
      "            T.wait_wgmma(0)\n"
      "        T.copy(C_f, C)\n";
  EXPECT_EQ(error_of(text), "");
  // B_s, no stage, written in the loop while the gemm reads it: refused.
  text.replace(text.find("            T.wait_wgmma(0)\n"), 0, "            T.fill(B_s, 0)\n");
  std::string message = error_of(text);
  EXPECT_NE(message.find("k.py:15:13: error: this writes B_s where an asynchronous wgmma may still read it"),
            std::string::npos)
      << message;
}

TEST(WgmmaWaits, AChainOfGemmsClearingOnItsFirstStepMayRunAsynchronously) {
  // TileLang's FlashMLA example: clear_accum=(j == 0) is `if j == 0:` a fill, then the gemm; the
  // fill runs before any gemm of the chain is in flight, not in the steps after. (R_f's gemm is
  // in flight on entering the loop, so that the loop is looked into.)
  const std::string text =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(A: T.Tensor((64, 256), \"float16\"), B: T.Tensor((64, 256), \"float16\"),\n"
      "         C: T.Tensor((64, 64), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        A_s = T.alloc_shared((64, 256), \"float16\")\n"
      "        B_s = T.alloc_shared((64, 256), \"float16\")\n"
      "        S_f = T.alloc_fragment((64, 64), \"float32\")\n"
      "        R_f = T.alloc_fragment((64, 64), \"float32\")\n"
      "        T.copy(A, A_s)\n"
      "        T.copy(B, B_s)\n"
      "        T.wgmma_gemm(A_s[:, 0:64], B_s[:, 0:64], R_f, transpose_B=True, clear_accum=True)\n"
      "        for j in T.unroll(4):\n"
      "            T.wgmma_gemm(A_s[:, j * 64:(j + 1) * 64], B_s[:, j * 64:(j + 1) * 64], S_f, transpose_B=True,\n"
      "                         clear_accum=(j == 0))\n"
      "        T.wait_wgmma(0)\n"
      "        T.copy(S_f, C)\n"
      "        T.copy(R_f, C)\n";
  EXPECT_EQ(error_of(text), "");
  // Cleared on its second step, the first step's gemm is still in flight there.
  std::string second = text;
  second.replace(second.find("clear_accum=(j == 0)"), std::string("clear_accum=(j == 0)").size(),
                 "clear_accum=(j == 1)");
  std::string message = error_of(second);
  EXPECT_NE(message.find("k.py:15:13: error: S_f is still in use by an asynchronous wgmma here"), std::string::npos)
      << message;
}

// A serial loop entered with a gemm in flight: each step issues the next step's gemm into the
// other accumulator, waits for the one before (wait<1>) and reads it.
TEST(WgmmaWaits, ALoopMayIssueTheNextGemmThenWaitForTheLastOne) {
  const std::string text =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(A: T.Tensor((128, 64), \"float16\"), B: T.Tensor((64, 64), \"float16\"),\n"
      "         C: T.Tensor((128, 64), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        A_s = T.alloc_shared((128, 64), \"float16\")\n"
      "        B_s = T.alloc_shared((64, 64), \"float16\")\n"
      "        S_f = T.alloc_fragment((128, 64), \"float32\")\n"
      "        R_f = T.alloc_fragment((128, 64), \"float32\")\n"
      "        T.copy(A, A_s)\n"
      "        T.copy(B, B_s)\n"
      "        T.gemm(A_s, B_s, S_f, clear_accum=True, wg_wait=-1)\n"
      "        for r in T.serial(3):\n"
      "            T.gemm(A_s, B_s, R_f, clear_accum=True, wg_wait=-1)\n"
      "            T.wait_wgmma(1)\n"
      "            T.copy(S_f, C)\n"
      "            T.gemm(A_s, B_s, S_f, clear_accum=True, wg_wait=-1)\n"
      "            T.wait_wgmma(1)\n"
      "            T.copy(R_f, C)\n"
      "        T.wait_wgmma(0)\n"
      "        T.copy(S_f, C)\n";
  EXPECT_EQ(error_of(text), "");
  // Reading the gemm in flight from the loop before (S_f) before the wait: refused in the loop.
  std::string early = text;
  early.replace(early.find("            T.gemm(A_s, B_s, R_f"), 0, "            T.copy(S_f, C)\n");
  std::string message = error_of(early);
  EXPECT_NE(message.find("k.py:15:13: error: S_f is still in use by an asynchronous wgmma here"), std::string::npos)
      << message;
  // A branch on the accumulator in flight, entered before the wait: refused at the branch.
  std::string condition = text;
  condition.replace(condition.find("        for r in T.serial(3):\n"), 0,
                    "        if S_f[0, 0] > 0:\n            T.wait_wgmma(0)\n");
  message = error_of(condition);
  EXPECT_NE(message.find("k.py:14:9: error: S_f is still in use by an asynchronous wgmma here"), std::string::npos)
      << message;
  // After the loop the last step's S_f is still in flight: read before the wait, refused.
  std::string late = text;
  late.replace(late.find("        T.wait_wgmma(0)\n"), 0, "        T.copy(S_f, C)\n");
  message = error_of(late);
  EXPECT_NE(message.find("k.py:21:9: error: S_f is still in use by an asynchronous wgmma here"), std::string::npos)
      << message;
}

}  // namespace
}  // namespace tilec
