// wgmma_waits: IR after select_instructions and infer_layout (which give the fragments their
// registers), in; T.gemm's wg_wait and T.wait_wgmma made the target's, out.
#include <gtest/gtest.h>

#include <string>

#include "frontend/elaborate.h"
#include "ir/printer.h"
#include "passes/gpu/infer_layout.h"
#include "passes/gpu/select_instructions.h"
#include "passes/wgmma_waits.h"
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

TEST(WgmmaWaits, AWaitFencesEveryFragmentAnAsynchronousGemmUses) {
  std::string ir = waits(source(-1, "        T.wait_wgmma(1)\n        T.wait_wgmma(0)\n"));
  // Each thread holds 32 of a 128 x 64 accumulator's elements (and of P, the register operand).
  const std::string fences =
      "T.evaluate(T.device.fence_fragment<32>(T.address_of(S_f[0, 0])))\n"
      "        T.evaluate(T.device.fence_fragment<32>(T.address_of(P_f[0, 0])))\n"
      "        T.evaluate(T.device.fence_fragment<32>(T.address_of(O_f[0, 0])))\n";
  const size_t one = ir.find("T.evaluate(T.device.wgmma_wait<1>())\n        " + fences);
  const size_t zero = ir.find("T.evaluate(T.device.wgmma_wait<0>())\n        " + fences);
  ASSERT_NE(one, std::string::npos) << ir;
  EXPECT_LT(one, zero) << ir;
  EXPECT_EQ(ir.find("wait_wgmma"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("T.gemm(A_s[0:128, 0:64], B_s[0:64, 0:64], S_f[0:128, 0:64], clear_accum=True, "
                    "policy=T.GemmWarpPolicy.FullRow, wg_wait=-1)"),
            ir.rfind("T.gemm(A_s"))
      << ir;
}

TEST(WgmmaWaits, AWgWaitOfNIsTheGemmThenAWaitForN) {
  std::string ir = waits(source(1, ""));
  const size_t gemm = ir.find("T.gemm(P_f[0:128, 0:64], B_s[0:64, 0:64], O_f[0:128, 0:64], clear_accum=True, "
                              "policy=T.GemmWarpPolicy.FullRow, wg_wait=-1)");
  ASSERT_NE(gemm, std::string::npos) << ir;
  EXPECT_NE(ir.find("T.evaluate(T.device.wgmma_wait<1>())", gemm), std::string::npos) << ir;
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

}  // namespace
}  // namespace tilec
