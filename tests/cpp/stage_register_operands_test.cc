// stage_register_operands (passes/hip): IR in, the pass, IR out. A gemm off MFMA reads its
// register operand from a shared copy and is selected again (on MFMA where its operands in
// LDS allow); a gemm on MFMA keeps reading registers.
#include <gtest/gtest.h>

#include <string>

#include "frontend/elaborate.h"
#include "ir/printer.h"
#include "passes/gpu/select_instructions.h"
#include "passes/hip/stage_register_operands.h"
#include "passes/pipeline.h"
#include "tilec/tilec.h"

namespace tilec {
namespace {

ir::PrimFunc kernel(const std::string& body) {
  std::string source = "import tilec.language as T\n\n@T.prim_func\ndef main("
                       "V: T.Tensor((64, 64), \"float16\"), O: T.Tensor((64, 64), \"float32\")):\n"
                       "    with T.Kernel(1, threads=128) as bx:\n" + body;
  return frontend::elaborate(load_function(source, "k.py", "main"));
}

enum class Stage { Selected, Staged, Reselected };

// The IR after select_instructions (which the pass reads), after the pass, or after the pass
// and select_instructions again (as the hip pass list runs them).
std::string after(ir::PrimFunc f, const std::string& arch, Stage stage = Stage::Reselected) {
  passes::PassContext ctx;
  ctx.target = parse_target("hip", arch);
  ctx.func = &f;
  f.body = passes::select_instructions(f.body, ctx);
  if (stage != Stage::Selected) f.body = passes::stage_register_operands(f.body, ctx);
  if (stage == Stage::Reselected) f.body = passes::select_instructions(f.body, ctx);
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
                    "        T.gemm(P_shared[0:64, 0:64], V_s[0:64, 0:64], acc[0:64, 0:64], clear_accum=True)"
                    "  # via fma loops\n"),
            std::string::npos) << ir;
}

TEST(StageRegisterOperands, OnMfmaTheRegisterOperandStays) {
  ir::PrimFunc f = kernel(kRegisterA);
  for (const char* arch : {"gfx90a", "gfx940"}) {
    const std::string selected = after(f, arch, Stage::Selected);
    EXPECT_NE(selected.find("T.gemm(P[0:64, 0:64], V_s[0:64, 0:64], acc[0:64, 0:64], clear_accum=True)  # via mfma "
                            "16x16x16, A in registers, 2x1 waves\n"),
              std::string::npos) << selected;
    EXPECT_EQ(after(f, arch), selected);
  }
}

// B (copied in from V) is gemm's B.
constexpr const char* kRegisterB =
    "        V_s = T.alloc_shared((64, 64), \"float16\")\n"
    "        Q = T.alloc_fragment((64, 64), \"float16\")\n"
    "        acc = T.alloc_fragment((64, 64), \"float32\")\n"
    "        T.copy(V, V_s)\n"
    "        T.copy(V, Q)\n"
    "        T.gemm(V_s, Q, acc, clear_accum=True)\n"
    "        T.copy(acc, O)\n";

TEST(StageRegisterOperands, AStagedGemmIsSelectedAgainOnMfma) {
  // mfma_gemm_rs reads B from LDS, so a B in registers is staged on gfx90a too; the gemm's
  // choice (fma loops, made for a B in registers) is cleared, and selected again it runs on
  // MFMA.
  const std::string staged = after(kernel(kRegisterB), "gfx90a", Stage::Staged);
  EXPECT_NE(staged.find("        T.copy(Q[0:64, 0:64], Q_shared[0:64, 0:64])\n"
                        "        T.gemm(V_s[0:64, 0:64], Q_shared[0:64, 0:64], acc[0:64, 0:64], clear_accum=True)\n"),
            std::string::npos) << staged;
  const std::string ir = after(kernel(kRegisterB), "gfx90a");
  EXPECT_NE(ir.find("        T.gemm(V_s[0:64, 0:64], Q_shared[0:64, 0:64], acc[0:64, 0:64], clear_accum=True)"
                    "  # via mfma 16x16x16, 2x1 waves\n"),
            std::string::npos) << ir;
}

TEST(StageRegisterOperands, TheHipPassListRunsAStagedGemmOnMfma) {
  ir::PrimFunc f = kernel(kRegisterB);
  passes::PassContext ctx;
  ctx.target = parse_target("hip", "gfx90a");
  const std::string lowered = ir::to_string(passes::run_pipeline(f, ctx));
  EXPECT_NE(lowered.find("mfma_gemm_ss<64, 64, 64, "), std::string::npos) << lowered;
}

TEST(StageRegisterOperands, BothRegisterOperandsAreStaged) {
  // A B in registers never runs on MFMA (mfma_gemm_rs reads B from LDS): both are staged,
  // each to a buffer of its own, and the gemms of shared operands run on MFMA.
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
                    "        T.gemm(P_shared[0:64, 0:64], Q_shared[0:64, 0:64], acc[0:64, 0:64], clear_accum=True)"
                    "  # via mfma 16x16x16, 2x1 waves\n"),
            std::string::npos) << ir;
  // One shared copy a fragment, however many gemms read it.
  EXPECT_EQ(ir.find("P_shared = T.alloc_shared"), ir.rfind("P_shared = T.alloc_shared")) << ir;
  EXPECT_NE(ir.find("Q_shared = T.alloc_shared((64, 64), \"float16\")"), std::string::npos) << ir;
}

}  // namespace
}  // namespace tilec
