// The seam between target-neutral layout inference and a target's matrix-core gemms
// (passes/gpu/gemm_layouts.h): a hook says what a gemm demands, the worklist carries it on,
// and a gemm whose instruction the target's hook does not know is an internal error.
#include "passes/gpu/gemm_layouts.h"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>

#include "frontend/elaborate.h"
#include "ir/printer.h"
#include "ir/visitor.h"
#include "passes/cuda/gemm_layouts.h"
#include "passes/gpu/select_instructions.h"
#include "passes/gpu/infer_layout.h"
#include "passes/hip/gemm_layouts.h"
#include "tilec/tilec.h"

namespace tilec {
namespace {

// A 64 x 64 x 32 float16 gemm (on mma.sync on sm_80, both operands swizzled), whose
// accumulator a T.Parallel nest scales into D.
constexpr const char* kGemmThenNest =
    "import tilec.language as T\n\n@T.prim_func\n"
    "def main(A: T.Tensor((64, 32), \"float16\"), B: T.Tensor((64, 32), \"float16\"),\n"
    "         C: T.Tensor((64, 64), \"float32\")):\n"
    "    with T.Kernel(1, threads=128) as bx:\n"
    "        A_s = T.alloc_shared((64, 32), \"float16\")\n"
    "        B_s = T.alloc_shared((64, 32), \"float16\")\n"
    "        C_l = T.alloc_fragment((64, 64), \"float32\")\n"
    "        D_l = T.alloc_fragment((64, 64), \"float32\")\n"
    "        T.copy(A, A_s)\n"
    "        T.copy(B, B_s)\n"
    "        T.gemm(A_s, B_s, C_l, transpose_B=True, clear_accum=True)\n"
    "        for i, j in T.Parallel(64, 64):\n"
    "            D_l[i, j] = C_l[i, j] * 2.0\n"
    "        T.copy(D_l, C)\n";

struct Selected {
  ir::PrimFunc f;
  passes::PassContext ctx;
};

// kGemmThenNest after select_instructions for cuda sm_80.
Selected selected_on_sm80() {
  Selected s{frontend::elaborate(load_function(kGemmThenNest, "k.py", "main")), {}};
  s.ctx.target = parse_target("cuda", "sm_80");
  s.ctx.func = &s.f;
  s.f.body = passes::select_instructions(s.f.body, s.ctx);
  return s;
}

// The kernel's on-chip buffers by name.
std::map<std::string, ir::Buffer> buffers(const ir::Stmt& body) {
  struct Buffers : ir::IRVisitor {
    std::map<std::string, ir::Buffer> found;
    void visit_Allocate(const ir::Allocate* op) override {
      found[op->buffer->name] = op->buffer;
      IRVisitor::visit_Allocate(op);
    }
  } b;
  b.visit(body);
  return b.found;
}

// A target's hook of its own: every gemm's C in rows of 16 consecutive elements a thread (no
// instruction's layout), A in the mma swizzle and B row-major whatever the instruction says.
int test_hook_calls = 0;
const ir::Fragment kTestAccumulator = ir::default_fragment({64, 64}, 128, 16);
std::optional<passes::GemmLayoutDemands> test_hook(const ir::Gemm& gemm) {
  ++test_hook_calls;
  passes::GemmLayoutDemands demands;
  demands.fragments.push_back({gemm.c.buffer, kTestAccumulator});
  demands.shared.push_back({gemm.a.buffer, ir::mma_swizzle_of(*gemm.a.buffer)});
  demands.shared.push_back({gemm.b.buffer, nullptr});
  return demands;
}

TEST(GemmLayouts, ATargetsHookSaysWhatTheGemmDemandsAndTheWorklistCarriesItOn) {
  Selected s = selected_on_sm80();
  ASSERT_EQ(buffers(s.f.body).at("C_l")->fragment, nullptr);
  test_hook_calls = 0;
  ir::Stmt body = passes::infer_layout(s.f.body, s.ctx, test_hook);
  EXPECT_EQ(test_hook_calls, 1);
  auto after = buffers(body);
  ASSERT_NE(after.at("C_l")->fragment, nullptr);
  EXPECT_EQ(*after.at("C_l")->fragment, kTestAccumulator);
  // The nest runs by C_l's layout, so D_l takes it too (and the copy to C follows D_l).
  ASSERT_NE(after.at("D_l")->fragment, nullptr);
  EXPECT_EQ(*after.at("D_l")->fragment, kTestAccumulator);
  EXPECT_TRUE(ir::mma_swizzled(*after.at("A_s")));
  EXPECT_EQ(after.at("B_s")->layout, nullptr);  // mma.sync would swizzle it; this hook does not
}

TEST(GemmLayouts, CudasHookGivesMmaSyncsAccumulatorAndSwizzle) {
  Selected s = selected_on_sm80();
  ir::Stmt body = passes::infer_layout(s.f.body, s.ctx);
  auto after = buffers(body);
  struct FirstGemm : ir::IRVisitor {
    const ir::Gemm* gemm = nullptr;
    void visit_Gemm(const ir::Gemm* op) override {
      if (!gemm) gemm = op;
    }
  } first;
  first.visit(s.f.body);
  const ir::Gemm* gemm = first.gemm;
  ASSERT_NE(gemm, nullptr);
  ASSERT_EQ(gemm->instruction.kind, ir::GemmInstructionKind::MmaSync) << ir::to_string(s.f);
  auto demands = passes::cuda_gemm_layouts(*gemm);
  ASSERT_TRUE(demands);
  ASSERT_EQ(demands->fragments.size(), 1u);
  EXPECT_EQ(*after.at("C_l")->fragment, demands->fragments[0].layout);
  EXPECT_EQ(*after.at("D_l")->fragment, demands->fragments[0].layout);
  EXPECT_TRUE(ir::mma_swizzled(*after.at("A_s")));
  EXPECT_TRUE(ir::mma_swizzled(*after.at("B_s")));
  // MFMA is not CUDA's: its hook knows no such gemm.
  ir::Gemm on_mfma = *gemm;
  on_mfma.instruction.kind = ir::GemmInstructionKind::Mfma;
  EXPECT_FALSE(passes::cuda_gemm_layouts(on_mfma));
  EXPECT_FALSE(passes::hip_gemm_layouts(*gemm));
  EXPECT_TRUE(passes::hip_gemm_layouts(on_mfma));
}

TEST(GemmLayouts, EachGpuTargetHasItsHookAndTheCpuNone) {
  EXPECT_EQ(passes::gemm_layout_hook(parse_target("cuda", "sm_90a")), &passes::cuda_gemm_layouts);
  EXPECT_EQ(passes::gemm_layout_hook(parse_target("cuda", "")), &passes::cuda_gemm_layouts);
  EXPECT_EQ(passes::gemm_layout_hook(parse_target("hip", "gfx90a")), &passes::hip_gemm_layouts);
  EXPECT_EQ(passes::gemm_layout_hook(parse_target("hip", "gfx906")), &passes::hip_gemm_layouts);
  EXPECT_EQ(passes::gemm_layout_hook(parse_target("cpu", "")), nullptr);
}

// What infer_layout throws on `s`'s kernel under `ctx`, with `hook`.
std::string internal_error(const Selected& s, const passes::PassContext& ctx, passes::GemmLayoutHook hook) {
  try {
    passes::infer_layout(s.f.body, ctx, hook);
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(GemmLayouts, AGemmOnAnInstructionTheHookDoesNotKnowIsAnInternalError) {
  Selected s = selected_on_sm80();
  // An mma.sync gemm reaching the hip target's inference: MFMA's hook has no layouts for it,
  // and no default stands in.
  passes::PassContext hip = s.ctx;
  hip.target = parse_target("hip", "gfx90a");
  EXPECT_EQ(internal_error(s, hip, passes::gemm_layout_hook(hip.target)),
            "infer_layout: target hip has no layouts for a gemm via mma.sync m16n8k16, A swizzled, B swizzled, "
            "2x2 warps (its hook in passes/gpu/gemm_layouts.h knows no such instruction)");
  // So does one on a target without a hook.
  EXPECT_NE(internal_error(s, s.ctx, nullptr).find("infer_layout: target cuda has no layouts for a gemm via mma.sync"),
            std::string::npos);
}

}  // namespace
}  // namespace tilec
