// stage_register_operands (passes/hip): IR in, the pass, IR out. A gemm off MFMA reads its
// register operand from a shared copy; a gemm on MFMA keeps reading registers.
#include <gtest/gtest.h>

#include <string>

#include "frontend/elaborate.h"
#include "ir/printer.h"
#include "passes/hip/stage_register_operands.h"
#include "tilec/tilec.h"

namespace tilec {
namespace {

ir::PrimFunc kernel(const std::string& body) {
  std::string source = "import tilec.language as T\n\n@T.prim_func\ndef main("
                       "V: T.Tensor((64, 64), \"float16\"), O: T.Tensor((64, 64), \"float32\")):\n"
                       "    with T.Kernel(1, threads=128) as bx:\n" + body;
  return frontend::elaborate(load_function(source, "k.py", "main"));
}

std::string after(ir::PrimFunc f, const std::string& arch) {
  passes::PassContext ctx;
  ctx.target = parse_target("hip", arch);
  ctx.func = &f;
  f.body = passes::stage_register_operands(f.body, ctx);
  return ir::to_string(f);
}

// P (written by a T.Parallel loop) is gemm's A.
constexpr const char* kRegisterA =
    "        V_s = T.alloc_shared((64, 64), \"float16\")\n"
    "        P = T.alloc_fragment((64, 64), \"float16\")\n"
    "        acc = T.alloc_fragment((64, 64), \"float32\")\n"
    "        T.copy(V, V_s)\n"
    "        for i, j in T.Parallel(64, 64):\n"
    "            P[i, j] = V_s[j, i]\n"
    "        T.gemm(P, V_s, acc, clear_accum=True)\n"
    "        T.copy(acc, O)\n";

TEST(StageRegisterOperands, OffMfmaTheRegisterOperandGoesThroughShared) {
  const std::string before = ir::to_string(kernel(kRegisterA));
  EXPECT_NE(before.find("        T.gemm(P[0:64, 0:64], V_s[0:64, 0:64], acc[0:64, 0:64], clear_accum=True)\n"),
            std::string::npos) << before;
  const std::string ir = after(kernel(kRegisterA), "gfx906");
  // Allocated where P is, copied from P just before the gemm, which reads it.
  EXPECT_NE(ir.find("        P = T.alloc_fragment((64, 64), \"float16\")\n"
                    "        P_shared = T.alloc_shared((64, 64), \"float16\")\n"),
            std::string::npos) << ir;
  EXPECT_NE(ir.find("        T.copy(P[0:64, 0:64], P_shared[0:64, 0:64])\n"
                    "        T.gemm(P_shared[0:64, 0:64], V_s[0:64, 0:64], acc[0:64, 0:64], clear_accum=True)\n"),
            std::string::npos) << ir;
}

TEST(StageRegisterOperands, OnMfmaTheRegisterOperandStays) {
  ir::PrimFunc f = kernel(kRegisterA);
  EXPECT_EQ(after(f, "gfx90a"), ir::to_string(f));
  EXPECT_EQ(after(f, "gfx940"), ir::to_string(f));
}

TEST(StageRegisterOperands, BothRegisterOperandsAreStaged) {
  // A B in registers never runs on MFMA (mfma_gemm_rs reads B from LDS): both are staged,
  // each to a buffer of its own; a gemm of shared operands is left alone.
  const std::string ir = after(kernel("        P = T.alloc_fragment((64, 64), \"float16\")\n"
                                      "        Q = T.alloc_fragment((64, 64), \"float16\")\n"
                                      "        acc = T.alloc_fragment((64, 64), \"float32\")\n"
                                      "        T.copy(V, P)\n"
                                      "        T.copy(V, Q)\n"
                                      "        T.gemm(P, Q, acc, clear_accum=True)\n"
                                      "        T.gemm(P, Q, acc)\n"
                                      "        T.copy(acc, O)\n"),
                               "gfx90a");
  EXPECT_NE(ir.find("        T.copy(P[0:64, 0:64], P_shared[0:64, 0:64])\n"
                    "        T.copy(Q[0:64, 0:64], Q_shared[0:64, 0:64])\n"
                    "        T.gemm(P_shared[0:64, 0:64], Q_shared[0:64, 0:64], acc[0:64, 0:64], clear_accum=True)\n"),
            std::string::npos) << ir;
  // One shared copy a fragment, however many gemms read it.
  EXPECT_EQ(ir.find("P_shared = T.alloc_shared"), ir.rfind("P_shared = T.alloc_shared")) << ir;
  EXPECT_NE(ir.find("Q_shared = T.alloc_shared((64, 64), \"float16\")"), std::string::npos) << ir;
}

}  // namespace
}  // namespace tilec
