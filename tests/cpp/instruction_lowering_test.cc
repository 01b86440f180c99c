// The seam between target-neutral lower_to_threads and a target's instructions
// (passes/gpu/instruction_lowering.h): a hook turns a tile op on the target's instruction into
// device calls, and one whose instruction the target's hooks do not know is an internal error,
// never a fallback.
#include "passes/gpu/instruction_lowering.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "frontend/elaborate.h"
#include "ir/device_calls.h"
#include "ir/printer.h"
#include "passes/cuda/lower_instructions.h"
#include "passes/gpu/infer_layout.h"
#include "passes/gpu/lower_to_threads.h"
#include "passes/gpu/select_instructions.h"
#include "passes/hip/lower_instructions.h"
#include "test_support.h"
#include "tilec/tilec.h"

namespace tilec {
namespace {

// A 64 x 64 x 32 float16 gemm: on mma.sync over 2x2 warps on sm_80, on MFMA on gfx90a.
constexpr const char* kGemm =
    "import tilec.language as T\n\n@T.prim_func\n"
    "def main(A: T.Tensor((64, 32), \"float16\"), B: T.Tensor((64, 32), \"float16\"),\n"
    "         C: T.Tensor((64, 64), \"float32\")):\n"
    "    with T.Kernel(1, threads=128) as bx:\n"
    "        A_s = T.alloc_shared((64, 32), \"float16\")\n"
    "        B_s = T.alloc_shared((64, 32), \"float16\")\n"
    "        C_l = T.alloc_fragment((64, 64), \"float32\")\n"
    "        T.copy(A, A_s)\n"
    "        T.copy(B, B_s)\n"
    "        T.gemm(A_s, B_s, C_l, transpose_B=True, clear_accum=True)\n"
    "        T.copy(C_l, C)\n";

// `source` with its instructions chosen and its layouts inferred for `target` `arch`, then
// lowered to threads as target `lower_on` with `lowering`: the IR, or the internal error.
std::string lowered(const char* source, const std::string& target, const std::string& arch,
                    const std::string& lower_on, passes::InstructionLowering lowering) {
  ir::PrimFunc f = frontend::elaborate(load_function(source, "k.py", "main"));
  passes::PassContext ctx;
  ctx.target = parse_target(target, arch);
  ctx.func = &f;
  f.body = passes::select_instructions(f.body, ctx);
  f.body = passes::infer_layout(f.body, ctx);
  f.body = passes::select_fragment_copies(f.body, ctx);
  f.body = passes::lower_tile_ops_for_threads(f.body, ctx);
  ctx.target = parse_target(lower_on, lower_on == "hip" ? "gfx90a" : "sm_80");
  try {
    f.body = passes::lower_to_threads(f.body, ctx, lowering);
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return ir::to_string(f);
}

// A target's gemm hook of its own: one call of test_gemm with C's registers and A's tile.
int test_gemm_calls = 0;
std::optional<ir::Stmt> test_gemm(const ir::Gemm& op, passes::InstructionLoweringContext& ctx) {
  ++test_gemm_calls;
  return ir::device_call("test_gemm", {ctx.registers(op.c.buffer), ctx.tile_address(op.a)}, op.loc);
}

TEST(InstructionLowering, ATargetsHookSaysWhatTheGemmBecomes) {
  test_gemm_calls = 0;
  std::string ir = lowered(kGemm, "cuda", "sm_80", "cuda", {test_gemm, passes::cuda_lower_copy});
  EXPECT_EQ(test_gemm_calls, 1);
  EXPECT_NE(ir.find("T.evaluate(T.device.test_gemm(T.address_of(C_l[0]), T.address_of(A_s[0, 0])))"),
            std::string::npos)
      << ir;
  EXPECT_EQ(ir.find("gemm_ss"), std::string::npos) << ir;
}

TEST(InstructionLowering, EachTargetsHookCallsItsMatrixCores) {
  passes::InstructionLowering cuda = passes::instruction_lowering(parse_target("cuda", "sm_80"));
  std::string mma = lowered(kGemm, "cuda", "sm_80", "cuda", cuda);
  EXPECT_NE(mma.find("T.device.gemm_ss<64, 64, 32, 2, 2, false, true, true, true>(T.address_of(A_s[0, 0]), "
                     "T.address_of(B_s[0, 0]), T.address_of(C_l[0]), tx)"),
            std::string::npos)
      << mma;
  passes::InstructionLowering hip = passes::instruction_lowering(parse_target("hip", "gfx90a"));
  std::string mfma = lowered(kGemm, "hip", "gfx90a", "hip", hip);
  EXPECT_NE(mfma.find("T.device.mfma_gemm_ss<64, 64, 32, "), std::string::npos) << mfma;
  std::string ldmatrix = lowered(test_support::kGemmWithAInRegisters, "cuda", "sm_80", "cuda", cuda);
  EXPECT_NE(ldmatrix.find("T.device.ldmatrix_accumulator<128, 32, 4, 1, false>(T.address_of(A_f[0]), "
                          "T.address_of(A_s[0, 0]), tx)"),
            std::string::npos)
      << ldmatrix;
}

TEST(InstructionLowering, EachGpuTargetHasItsHooks) {
  passes::InstructionLowering cuda = passes::instruction_lowering(parse_target("cuda", "sm_90a"));
  EXPECT_EQ(cuda.gemm, &passes::cuda_lower_gemm);
  EXPECT_EQ(cuda.copy, &passes::cuda_lower_copy);
  passes::InstructionLowering hip = passes::instruction_lowering(parse_target("hip", "gfx906"));
  EXPECT_EQ(hip.gemm, &passes::hip_lower_gemm);
  EXPECT_EQ(hip.copy, nullptr);  // every copy on hip runs in loops
  EXPECT_THROW(passes::instruction_lowering(parse_target("cpu", "")), std::logic_error);
}

TEST(InstructionLowering, ATileOpOnAnInstructionTheTargetsHooksDoNotKnowIsAnInternalError) {
  // An mma.sync gemm reaching hip's lowering: MFMA's hook does not lower it, and nothing
  // stands in.
  passes::InstructionLowering hip = passes::instruction_lowering(parse_target("hip", "gfx90a"));
  EXPECT_EQ(lowered(kGemm, "cuda", "sm_80", "hip", hip),
            "lower_to_threads: target hip cannot lower a gemm via mma.sync m16n8k16, A swizzled, B swizzled, "
            "2x2 warps (its hook in passes/gpu/instruction_lowering.h knows no such instruction)");
  // An MFMA gemm reaching CUDA's.
  passes::InstructionLowering cuda = passes::instruction_lowering(parse_target("cuda", "sm_80"));
  std::string mfma_on_cuda = lowered(kGemm, "hip", "gfx90a", "cuda", cuda);
  EXPECT_NE(mfma_on_cuda.find("lower_to_threads: target cuda cannot lower a gemm via mfma"), std::string::npos)
      << mfma_on_cuda;
  // An ldmatrix copy reaching hip, which has no copy hook.
  EXPECT_EQ(lowered(test_support::kGemmWithAInRegisters, "cuda", "sm_80", "hip", hip),
            "lower_to_threads: target hip cannot lower a copy via ldmatrix, 4x1 warps (its hook in "
            "passes/gpu/instruction_lowering.h knows no such instruction)");
}

}  // namespace
}  // namespace tilec
