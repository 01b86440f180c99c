// Instruction selection (passes/gpu/select_instructions.h): the instruction each T.gemm and
// T.copy runs on, written on the op and shown by the IR printer; the passes after it lower
// by that choice.
#include "passes/gpu/select_instructions.h"

#include <gtest/gtest.h>

#include <string>

#include "frontend/elaborate.h"
#include "ir/mutator.h"
#include "ir/printer.h"
#include "ir/visitor.h"
#include "passes/gpu/infer_layout.h"
#include "passes/gpu/lower_to_threads.h"
#include "passes/specialize_contiguous.h"
#include "test_support.h"
#include "tilec/tilec.h"

namespace tilec {
namespace {

struct GemmTile {
  const char* dtype = "bfloat16";
  int m = 128, n = 128, k = 32;
  bool transpose_b = false;
  int threads = 128;
};

// One block's C tile of A @ B (B stored N x K with transpose_b, else K x N).
std::string gemm_kernel(const GemmTile& t) {
  const std::string d = std::string("\"") + t.dtype + "\"", m = std::to_string(t.m), n = std::to_string(t.n),
                    k = std::to_string(t.k);
  const std::string b_shape = t.transpose_b ? "(" + n + ", " + k + ")" : "(" + k + ", " + n + ")";
  return "import tilec.language as T\n\n@T.prim_func\n"
         "def main(A: T.Tensor((" + m + ", " + k + "), " + d + "), B: T.Tensor(" + b_shape + ", " + d + "),\n"
         "         C: T.Tensor((" + m + ", " + n + "), \"float32\")):\n"
         "    with T.Kernel(1, threads=" + std::to_string(t.threads) + ") as bx:\n"
         "        A_s = T.alloc_shared((" + m + ", " + k + "), " + d + ")\n"
         "        B_s = T.alloc_shared(" + b_shape + ", " + d + ")\n"
         "        C_f = T.alloc_fragment((" + m + ", " + n + "), \"float32\")\n"
         "        T.clear(C_f)\n"
         "        T.copy(A, A_s)\n"
         "        T.copy(B, B_s)\n"
         "        T.gemm(A_s, B_s, C_f" + (t.transpose_b ? ", transpose_B=True" : "") + ")\n"
         "        T.copy(C_f, C)\n";
}

ir::PrimFunc elaborated(const std::string& source) {
  return passes::specialize_contiguous(frontend::elaborate(load_function(source, "k.py", "main")));
}

passes::PassContext context(const std::string& target, const std::string& arch) {
  passes::PassContext ctx;
  ctx.target = parse_target(target, arch);
  ctx.contiguous_args = true;
  return ctx;
}

// The function's IR before and after the passes of instruction selection (with layout
// inference between them when `fragment_copies`, which select_fragment_copies needs).
struct BeforeAfter {
  std::string before, after;
};
BeforeAfter selected(ir::PrimFunc f, const std::string& target, const std::string& arch, bool fragment_copies = false) {
  passes::PassContext ctx = context(target, arch);
  ctx.func = &f;
  BeforeAfter out{ir::to_string(f), ""};
  f.body = passes::select_instructions(f.body, ctx);
  if (fragment_copies) {
    f.body = passes::infer_layout(f.body, ctx);
    f.body = passes::select_fragment_copies(f.body, ctx);
  }
  out.after = ir::to_string(f);
  return out;
}

// The line of `ir` holding `what`, or "".
std::string line_with(const std::string& ir, const std::string& what) {
  size_t at = ir.find(what);
  if (at == std::string::npos) return "";
  size_t begin = ir.rfind('\n', at) + 1, end = ir.find('\n', at);
  std::string line = ir.substr(begin, end - begin);
  return line.substr(line.find_first_not_of(' '));
}

std::string gemm_line(const GemmTile& t, const std::string& target, const std::string& arch,
                      std::string* before = nullptr) {
  BeforeAfter ir = selected(elaborated(gemm_kernel(t)), target, arch);
  if (before) *before = line_with(ir.before, "T.gemm(");
  return line_with(ir.after, "T.gemm(");
}

TEST(SelectInstructions, Bf16TilesWithBlockK32RunOnWgmmaIn64BytePanels) {
  std::string before;
  EXPECT_EQ(gemm_line({}, "cuda", "sm_90a", &before),
            "T.gemm(A_s[0:128, 0:32], B_s[0:32, 0:128], C_f[0:128, 0:128])  # via wgmma m64n128k16, A in 64-byte "
            "panels, B in 128-byte panels, 1x1 warpgroups");
  EXPECT_EQ(before, "T.gemm(A_s[0:128, 0:32], B_s[0:32, 0:128], C_f[0:128, 0:128])");
  EXPECT_EQ(gemm_line({.transpose_b = true}, "cuda", "sm_90a"),
            "T.gemm(A_s[0:128, 0:32], B_s[0:128, 0:32], C_f[0:128, 0:128], transpose_B=True)  # via wgmma "
            "m64n128k16, A in 64-byte panels, B in 64-byte panels, 1x1 warpgroups");
  EXPECT_EQ(gemm_line({.m = 64, .n = 64}, "cuda", "sm_90a"),
            "T.gemm(A_s[0:64, 0:32], B_s[0:32, 0:64], C_f[0:64, 0:64])  # via wgmma m64n64k16, A in 64-byte "
            "panels, B in 128-byte panels, 1x1 warpgroups");
  EXPECT_EQ(gemm_line({.k = 16, .transpose_b = true}, "cuda", "sm_90a"),
            "T.gemm(A_s[0:128, 0:16], B_s[0:128, 0:16], C_f[0:128, 0:128], transpose_B=True)  # via wgmma "
            "m64n128k16, A in 32-byte panels, B in 32-byte panels, 1x1 warpgroups");
}

TEST(SelectInstructions, Tf32RunsOnWgmmaK8) {
  EXPECT_EQ(gemm_line({.dtype = "float32", .m = 64, .n = 64, .k = 8, .transpose_b = true}, "cuda", "sm_90a"),
            "T.gemm(A_s[0:64, 0:8], B_s[0:64, 0:8], C_f[0:64, 0:64], transpose_B=True)  # via wgmma m64n64k8, A in "
            "32-byte panels, B in 32-byte panels, 1x1 warpgroups");
  EXPECT_EQ(gemm_line({.dtype = "float32", .m = 64, .n = 64, .transpose_b = true}, "cuda", "sm_90a"),
            "T.gemm(A_s[0:64, 0:32], B_s[0:64, 0:32], C_f[0:64, 0:64], transpose_B=True)  # via wgmma m64n64k8, A "
            "in 128-byte panels, B in 128-byte panels, 1x1 warpgroups");
}

TEST(SelectInstructions, TwoWarpgroupsSplitM) {
  EXPECT_EQ(gemm_line({.n = 256, .threads = 256}, "cuda", "sm_90a"),
            "T.gemm(A_s[0:128, 0:32], B_s[0:32, 0:256], C_f[0:128, 0:256])  # via wgmma m64n256k16, A in 64-byte "
            "panels, B in 128-byte panels, 2x1 warpgroups");
}

TEST(SelectInstructions, Fp8RunsOnWgmmaK32) {
  EXPECT_EQ(gemm_line({.dtype = "float8_e4m3", .k = 64, .transpose_b = true}, "cuda", "sm_90a"),
            "T.gemm(A_s[0:128, 0:64], B_s[0:128, 0:64], C_f[0:128, 0:128], transpose_B=True)  # via wgmma "
            "m64n128k32, A in 64-byte panels, B in 64-byte panels, 1x1 warpgroups");
}

TEST(SelectInstructions, Sm80RunsTheSameTilesOnMmaSync) {
  EXPECT_EQ(gemm_line({}, "cuda", "sm_80"),
            "T.gemm(A_s[0:128, 0:32], B_s[0:32, 0:128], C_f[0:128, 0:128])  # via mma.sync m16n8k16, A swizzled, B "
            "swizzled, 2x2 warps");
  EXPECT_EQ(gemm_line({.m = 64, .n = 64}, "cuda", "sm_80"),
            "T.gemm(A_s[0:64, 0:32], B_s[0:32, 0:64], C_f[0:64, 0:64])  # via mma.sync m16n8k16, A swizzled, B "
            "swizzled, 2x2 warps");
  EXPECT_EQ(gemm_line({.dtype = "float32", .m = 64, .n = 64, .transpose_b = true}, "cuda", "sm_80"),
            "T.gemm(A_s[0:64, 0:32], B_s[0:64, 0:32], C_f[0:64, 0:64], transpose_B=True)  # via mma.sync m16n8k8, A "
            "swizzled, B swizzled, 2x2 warps");
  // sm_80 has no fp8 mma.sync: the gemm runs on the CUDA cores.
  EXPECT_EQ(gemm_line({.dtype = "float8_e4m3", .k = 64, .transpose_b = true}, "cuda", "sm_80"),
            "T.gemm(A_s[0:128, 0:64], B_s[0:128, 0:64], C_f[0:128, 0:128], transpose_B=True)  # via fma loops");
}

TEST(SelectInstructions, AFallbackToMmaSyncSaysWhyAtTheGemmsLine) {
  std::string log = test_support::captured_debug_log(
      [] { gemm_line({.dtype = "float32", .m = 64, .n = 64}, "cuda", "sm_90a"); });
  EXPECT_NE(log.find("k.py:13:9: T.gemm runs on mma.sync, not wgmma: tf32 wgmma reads K-major operands only"),
            std::string::npos)
      << log;
}

TEST(SelectInstructions, ARegisterOperandRunsOnWgmmaRs) {
  BeforeAfter ir = selected(elaborated(test_support::kGemmWithAInRegisters), "cuda", "sm_90a", true);
  EXPECT_EQ(line_with(ir.after, "T.gemm("),
            "T.gemm(A_f[0:128, 0:32], B_s[0:32, 0:128], C_f[0:128, 0:128])  # via wgmma m64n128k16, A in registers, "
            "B in 128-byte panels, 1x1 warpgroups");
  // A_f is laid out as a wgmma accumulator, which ldmatrix does not fill.
  EXPECT_EQ(line_with(ir.after, "T.copy(A_s"), "T.copy(A_s[0:128, 0:32], A_f[0:128, 0:32])  # via loops");
}

TEST(SelectInstructions, ACopyIntoAnMmaOperandFragmentRunsOnLdmatrix) {
  BeforeAfter ir = selected(elaborated(test_support::kGemmWithAInRegisters), "cuda", "sm_80", true);
  EXPECT_EQ(line_with(ir.after, "T.gemm("),
            "T.gemm(A_f[0:128, 0:32], B_s[0:32, 0:128], C_f[0:128, 0:128])  # via mma.sync m16n8k16, A in registers, "
            "B swizzled, 4x1 warps");
  EXPECT_EQ(line_with(ir.before, "T.copy(A_s"), "T.copy(A_s[0:128, 0:32], A_f[0:128, 0:32])");
  EXPECT_EQ(line_with(ir.after, "T.copy(A_s"), "T.copy(A_s[0:128, 0:32], A_f[0:128, 0:32])  # via ldmatrix, 4x1 warps");
  // Copies between global and shared memory and of a fragment to global memory are loops.
  EXPECT_EQ(line_with(ir.after, "T.copy(A["), "T.copy(A[0:128, 0:32], A_s[0:128, 0:32])  # via loops");
  EXPECT_EQ(line_with(ir.after, "T.copy(C_f"), "T.copy(C_f[0:128, 0:128], C[0:128, 0:128])  # via loops");
}

constexpr const char* kTmaStoreEpilogue =
    "import tilec.language as T\n\n@T.prim_func\n"
    "def main(A: T.Tensor((128, 64), \"bfloat16\"), B: T.Tensor((64, 128), \"bfloat16\"),\n"
    "         C: T.Tensor((128, 128), \"bfloat16\")):\n"
    "    with T.Kernel(1, threads=128) as bx:\n"
    "        A_s = T.alloc_shared((128, 64), \"bfloat16\")\n"
    "        B_s = T.alloc_shared((64, 128), \"bfloat16\")\n"
    "        C_f = T.alloc_fragment((128, 128), \"float32\")\n"
    "        C_s = T.alloc_shared((128, 128), \"bfloat16\")\n"
    "        T.clear(C_f)\n"
    "        T.copy(A, A_s)\n"
    "        T.copy(B, B_s)\n"
    "        T.gemm(A_s, B_s, C_f)\n"
    "        T.copy(C_f, C_s)\n"
    "        T.copy(C_s, C)\n";

TEST(SelectInstructions, AnEpilogueThroughSharedRunsOnStmatrixAndATmaStore) {
  BeforeAfter ir = selected(elaborated(kTmaStoreEpilogue), "cuda", "sm_90a", true);
  EXPECT_EQ(line_with(ir.before, "T.copy(C_s"), "T.copy(C_s[0:128, 0:128], C[0:128, 0:128])");
  EXPECT_EQ(line_with(ir.after, "T.copy(C_s"),
            "T.copy(C_s[0:128, 0:128], C[0:128, 0:128])  # via tma store, 128-byte swizzle");
  EXPECT_EQ(line_with(ir.after, "T.copy(C_f"),
            "T.copy(C_f[0:128, 0:128], C_s[0:128, 0:128])  # via stmatrix, 1x1 warpgroups, 128-byte panels");
  // Without the TMA store the tile is not in panels, and stmatrix does not write it.
  passes::PassContext ctx = context("cuda", "sm_90a");
  ctx.pass_configs["tilec.tma_store"] = "false";
  ir::PrimFunc f = elaborated(kTmaStoreEpilogue);
  ctx.func = &f;
  f.body = passes::select_fragment_copies(passes::infer_layout(passes::select_instructions(f.body, ctx), ctx), ctx);
  std::string off = ir::to_string(f);
  EXPECT_EQ(line_with(off, "T.copy(C_s"), "T.copy(C_s[0:128, 0:128], C[0:128, 0:128])  # via loops");
  EXPECT_EQ(line_with(off, "T.copy(C_f"), "T.copy(C_f[0:128, 0:128], C_s[0:128, 0:128])  # via loops");
}

constexpr const char* kScoresOverAStagesLastPanel =
    "import tilec.language as T\n\n@T.prim_func\n"
    "def main(K: T.Tensor((2, 64, 128), \"bfloat16\")):\n"
    "    with T.Kernel(1, threads=128) as bx:\n"
    "        S = T.alloc_shared((2, 64, 128), \"bfloat16\")\n"
    "        P_f = T.alloc_fragment((64, 64), \"float32\")\n"
    "        T.copy(K, S)\n"
    "        T.gemm(S[0, :, 0:64], S[1, :, 0:64], P_f, transpose_B=True)\n"
    "        T.copy(P_f, S[0, :, 64:128])\n"
    "        T.copy(P_f, S[1, 0:64, 32:96])\n";

TEST(SelectInstructions, AnAccumulatorIntoWholePanelsOfATileRunsOnStmatrix) {
  // A stage's last panel (the sparse MLA seesaw's P over the RoPE columns) is laid out as a
  // 64 x 64 panel tile of its own; columns across two panels are not.
  BeforeAfter ir = selected(elaborated(kScoresOverAStagesLastPanel), "cuda", "sm_90a", true);
  EXPECT_EQ(line_with(ir.after, "T.copy(P_f[0:64, 0:64], S[0"),
            "T.copy(P_f[0:64, 0:64], S[0, 0:64 - 0, 64:64 + (128 - 64)])  # via stmatrix, 1x1 warpgroups, 128-byte "
            "panels");
  EXPECT_EQ(line_with(ir.after, "T.copy(P_f[0:64, 0:64], S[1"),
            "T.copy(P_f[0:64, 0:64], S[1, 0:64 - 0, 32:32 + (96 - 32)])  # via loops");
}

constexpr const char* kAtomicAddOfTiles =
    "import tilec.language as T\n\n@T.prim_func\n"
    "def main(X: T.Tensor((64, 128), \"float32\"), C: T.Tensor((64, 128), \"float32\"),\n"
    "         D: T.Tensor((64, 128), \"float32\"), N: T.Tensor((64, 128), \"int32\"),\n"
    "         H: T.Tensor((64, 128), \"bfloat16\")):\n"
    "    with T.Kernel(1, threads=128) as bx:\n"
    "        X_f = T.alloc_fragment((64, 128), \"float32\")\n"
    "        X_s = T.alloc_shared((64, 128), \"float32\")\n"
    "        N_s = T.alloc_shared((64, 128), \"int32\")\n"
    "        T.copy(X, X_f)\n"
    "        T.copy(X_f, X_s)\n"
    "        T.copy(N, N_s)\n"
    "        T.atomic_add(C, X_s)\n"
    "        T.atomic_add(D, X_f)\n"
    "        T.atomic_add(N, N_s)\n"
    "        H_s = T.alloc_shared((64, 128), \"bfloat16\")\n"
    "        T.copy(X_f, H_s)\n"
    "        T.atomic_add(H, H_s)\n";

TEST(SelectInstructions, AnAtomicAddOfAFloatSharedTileIsATmaReduceAdd) {
  BeforeAfter ir = selected(elaborated(kAtomicAddOfTiles), "cuda", "sm_90a");
  EXPECT_EQ(line_with(ir.before, "T.atomic_add(C"), "T.atomic_add(C[0:64, 0:128], X_s[0:64, 0:128])");
  EXPECT_EQ(line_with(ir.after, "T.atomic_add(C"),
            "T.atomic_add(C[0:64, 0:128], X_s[0:64, 0:128])  # via tma reduce-add, 128-byte swizzle");
  // From registers, or of int32 or a 16-bit type (TMA adds float32 here), element by element.
  EXPECT_EQ(line_with(ir.after, "T.atomic_add(D"), "T.atomic_add(D[0:64, 0:128], X_f[0:64, 0:128])");
  EXPECT_EQ(line_with(ir.after, "T.atomic_add(N"), "T.atomic_add(N[0:64, 0:128], N_s[0:64, 0:128])  # via loops");
  EXPECT_EQ(line_with(ir.after, "T.atomic_add(H"), "T.atomic_add(H[0:64, 0:128], H_s[0:64, 0:128])  # via loops");
  // Without TMA (sm_80, or "tilec.tma" off): loops.
  EXPECT_EQ(line_with(selected(elaborated(kAtomicAddOfTiles), "cuda", "sm_80").after, "T.atomic_add(C"),
            "T.atomic_add(C[0:64, 0:128], X_s[0:64, 0:128])  # via loops");
}

TEST(SelectInstructions, HipPicksMfmaWhereTheArchHasIt) {
  const GemmTile fp16{.dtype = "float16", .threads = 256};
  EXPECT_EQ(gemm_line(fp16, "hip", "gfx90a"),
            "T.gemm(A_s[0:128, 0:32], B_s[0:32, 0:128], C_f[0:128, 0:128])  # via mfma 16x16x16, 2x2 waves");
  EXPECT_EQ(gemm_line({.dtype = "float32", .threads = 256}, "hip", "gfx90a"),
            "T.gemm(A_s[0:128, 0:32], B_s[0:32, 0:128], C_f[0:128, 0:128])  # via mfma 16x16x4, 2x2 waves");
  EXPECT_EQ(gemm_line(fp16, "hip", "gfx906"),
            "T.gemm(A_s[0:128, 0:32], B_s[0:32, 0:128], C_f[0:128, 0:128])  # via fma loops");
}

TEST(SelectInstructions, HipSaysWhyAGemmRunsOffMfmaAtItsLine) {
  // gfx90a has MFMA, but not for an M of 8.
  std::string log = test_support::captured_debug_log(
      [] { gemm_line({.dtype = "float16", .m = 8, .n = 64, .threads = 64}, "hip", "gfx90a"); });
  EXPECT_NE(log.find("k.py:13:9: T.gemm runs on element loops, not MFMA: MFMA takes"), std::string::npos) << log;
}

// The first T.gemm of `source` and the body of its kernel.
struct KernelGemm {
  ir::Stmt body;
  const ir::Gemm* gemm = nullptr;
};
KernelGemm first_gemm(const ir::PrimFunc& f) {
  struct Find : ir::IRVisitor {
    KernelGemm found;
    void visit_KernelLaunch(const ir::KernelLaunch* op) override {
      if (!found.body) found.body = op->body;
      IRVisitor::visit_KernelLaunch(op);
    }
    void visit_Gemm(const ir::Gemm* op) override {
      if (!found.gemm) found.gemm = op;
    }
  } find;
  find.visit(f.body);
  return find.found;
}

TEST(InstructionHooks, EachGpuTargetChoosesWithItsOwn) {
  const ir::PrimFunc f = elaborated(gemm_kernel({.dtype = "float16", .threads = 256}));
  const KernelGemm k = first_gemm(f);
  ASSERT_TRUE(k.gemm);
  auto choice_on = [&](const std::string& target, const std::string& arch) {
    passes::PassContext ctx = context(target, arch);
    ctx.func = &f;
    return passes::instruction_hooks(ctx.target).kernel(k.body, 256, ctx)->gemm(*k.gemm).kind;
  };
  EXPECT_EQ(choice_on("cuda", "sm_90a"), ir::GemmInstructionKind::Wgmma);
  EXPECT_EQ(choice_on("cuda", "sm_80"), ir::GemmInstructionKind::MmaSync);
  EXPECT_EQ(choice_on("hip", "gfx90a"), ir::GemmInstructionKind::Mfma);
  EXPECT_EQ(choice_on("hip", "gfx906"), ir::GemmInstructionKind::Fma);
  // The CPU runs no selection: asking for its hooks is a compiler bug, said as one.
  EXPECT_THROW(passes::instruction_hooks(parse_target("cpu", "")), std::logic_error);
}

// Gives every T.gemm `instruction`.
struct SetGemmInstruction : ir::IRMutator {
  ir::GemmInstruction instruction;
  ir::Stmt mutate_Gemm(const ir::Gemm* op, const ir::Stmt&) override {
    auto n = std::make_shared<ir::Gemm>(*op);
    n->instruction = instruction;
    return ir::Stmt(n);
  }
};

// The passes from selection to lowering to threads, after `instruction` was given to every gemm.
std::string lowered_with(const ir::GemmInstruction& instruction, const std::string& arch) {
  ir::PrimFunc f = elaborated(gemm_kernel({}));
  passes::PassContext ctx = context("cuda", arch);
  ctx.func = &f;
  SetGemmInstruction set;
  set.instruction = instruction;
  f.body = set.mutate(f.body);
  f.body = passes::select_instructions(f.body, ctx);
  f.body = passes::infer_layout(f.body, ctx);
  f.body = passes::select_fragment_copies(f.body, ctx);
  f.body = passes::lower_tile_ops_for_threads(f.body, ctx);
  f.body = passes::lower_to_threads(f.body, ctx);
  return ir::to_string(f);
}

TEST(SelectInstructions, LaterPassesLowerByTheRecordedChoice) {
  // On sm_90a the pass would pick wgmma; a gemm that already has mma.sync over 4x1 warps keeps it.
  const ir::GemmInstruction mma{.kind = ir::GemmInstructionKind::MmaSync, .grid_m = 4, .grid_n = 1, .inst_m = 16,
                                .inst_n = 8, .inst_k = 16, .a_swizzled = true, .b_swizzled = true};
  std::string ir = lowered_with(mma, "sm_90a");
  EXPECT_NE(ir.find("T.device.gemm_ss<128, 128, 32, 4, 1, false, false, true, true>("), std::string::npos) << ir;
  EXPECT_EQ(ir.find("wgmma"), std::string::npos) << ir;
  // And one given the CUDA cores runs there on sm_80, where the pass would pick mma.sync.
  ir = lowered_with({.kind = ir::GemmInstructionKind::Fma}, "sm_80");
  EXPECT_EQ(ir.find("gemm_ss"), std::string::npos) << ir;
  EXPECT_NE(ir.find("C_f[s"), std::string::npos) << ir;
}

}  // namespace
}  // namespace tilec
