// Layout inference: its choice of tensor-core instruction follows the Target's features, and
// the layouts it gives fragments meet what each op needs of them (IR before and after).
#include <gtest/gtest.h>

#include <string>

#include "base/diagnostics.h"
#include "frontend/elaborate.h"
#include "ir/printer.h"
#include "passes/gpu/select_instructions.h"
#include "passes/gpu/infer_layout.h"
#include "tilec/tilec.h"

namespace tilec {
namespace {

constexpr const char* kFp8Gemm =
    "import tilec.language as T\n\n@T.prim_func\n"
    "def main(A: T.Tensor((64, 64), \"float8_e4m3\"), B: T.Tensor((64, 64), \"float8_e4m3\"),\n"
    "         C: T.Tensor((64, 64), \"float32\")):\n"
    "    with T.Kernel(1, threads=128) as bx:\n"
    "        A_s = T.alloc_shared((64, 64), \"float8_e4m3\")\n"
    "        B_s = T.alloc_shared((64, 64), \"float8_e4m3\")\n"
    "        C_l = T.alloc_fragment((64, 64), \"float32\")\n"
    "        T.clear(C_l)\n"
    "        T.copy(A, A_s)\n"
    "        T.copy(B, B_s)\n"
    "        T.gemm(A_s, B_s, C_l, transpose_B=True)\n"
    "        T.copy(C_l, C)\n";

std::string lowered_for(const std::string& arch) {
  return emit(load_function(kFp8Gemm, "k.py", "main"), {.target = "cuda", .arch = arch}, EmitStage::IR);
}

TEST(InferLayout, Fp8GemmRunsOnMmaWhereTheTargetHasFp8Mma) {
  for (const char* arch : {"sm_89", "sm_90", ""}) {
    std::string ir = lowered_for(arch);
    EXPECT_NE(ir.find("T.device.gemm_ss<"), std::string::npos) << arch << "\n" << ir;
  }
  for (const char* arch : {"sm_80", "sm_86"}) {
    std::string ir = lowered_for(arch);
    EXPECT_EQ(ir.find("T.device.gemm_ss<"), std::string::npos) << arch << "\n" << ir;
  }
}

// A kernel of 128 threads over A and B (float32, 64 x 32) with `body` (8 space indent).
ir::PrimFunc kernel(const std::string& body) {
  std::string source =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(A: T.Tensor((64, 32), \"float32\"), B: T.Tensor((64, 32), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n" + body;
  return frontend::elaborate(load_function(source, "k.py", "main"));
}

std::string inferred(ir::PrimFunc f) {
  passes::PassContext ctx;
  ctx.target = parse_target("cuda", "sm_80");
  ctx.func = &f;
  f.body = passes::select_instructions(f.body, ctx);
  f.body = passes::infer_layout(f.body, ctx);
  return ir::to_string(f);
}

// The layout comment of fragment `name` in inferred IR.
std::string layout_comment(const std::string& ir, const std::string& name) {
  const size_t at = ir.find("        " + name + " = T.alloc_fragment");
  EXPECT_NE(at, std::string::npos) << ir;
  const size_t comment = ir.find("  # ", at);
  return ir.substr(comment, ir.find('\n', comment) - comment);
}

constexpr const char* kScanBefore =
    "@T.prim_func\n"
    "def main(A: T.Tensor((64, 32), \"float32\"), B: T.Tensor((64, 32), \"float32\")):\n"
    "    with T.Kernel(1, threads=128) as bx:\n";

TEST(InferLayout, AScanKeepsEachLineOfItsFragmentsOnOneThread) {
  // Left alone, the copies would spread S's rows over threads too (thread-major layout); the
  // scan along dim 1 wants each row whole on a thread, and the copies follow it.
  ir::PrimFunc f = kernel("        S = T.alloc_fragment((64, 32), \"float32\")\n"
                          "        D = T.alloc_fragment((64, 32), \"float32\")\n"
                          "        T.copy(A, S)\n"
                          "        T.cumsum(S, D, dim=1)\n"
                          "        T.copy(D, B)\n");
  const std::string ops =
      "        T.copy(A[0:64, 0:32], S[0:64, 0:32])\n"
      "        T.cumsum(S[0:64, 0:32], D[0:64, 0:32], dim=1)\n"
      "        T.copy(D[0:64, 0:32], B[0:64, 0:32])\n";
  EXPECT_EQ(ir::to_string(f), std::string(kScanBefore) +
                                  "        S = T.alloc_fragment((64, 32), \"float32\")\n"
                                  "        D = T.alloc_fragment((64, 32), \"float32\")\n" + ops);
  const std::string rows = "  # [64, 32] over 64 threads x 32 slots: s1=i1/1%32 t1=i0/1%64\n";
  EXPECT_EQ(inferred(f), std::string(kScanBefore) + "        S = T.alloc_fragment((64, 32), \"float32\")" + rows +
                             "        D = T.alloc_fragment((64, 32), \"float32\")" + rows + ops);
}

TEST(InferLayout, ACopyBetweenFragmentsPassesALayoutBackAndAReductionProjectsIt) {
  // The scan lays D out by rows; the copy before it passes that back to S, and the reduction
  // after it gives r D's layout without the reduced dim (one element a thread).
  ir::PrimFunc f = kernel("        S = T.alloc_fragment((64, 32), \"float32\")\n"
                          "        D = T.alloc_fragment((64, 32), \"float32\")\n"
                          "        r = T.alloc_fragment((64,), \"float32\")\n"
                          "        T.copy(A, S)\n"
                          "        T.copy(S, D)\n"
                          "        T.cumsum(D, dim=1)\n"
                          "        T.reduce_max(D, r, dim=1)\n"
                          "        T.copy(D, B)\n");
  const std::string ops =
      "        T.copy(A[0:64, 0:32], S[0:64, 0:32])\n"
      "        T.copy(S[0:64, 0:32], D[0:64, 0:32])\n"
      "        T.cumsum(D[0:64, 0:32], D[0:64, 0:32], dim=1)\n"
      "        T.reduce_max(D[0:64, 0:32], r[0:64], dim=1)\n"
      "        T.copy(D[0:64, 0:32], B[0:64, 0:32])\n";
  const std::string allocs_before =
      "        S = T.alloc_fragment((64, 32), \"float32\")\n"
      "        D = T.alloc_fragment((64, 32), \"float32\")\n"
      "        r = T.alloc_fragment((64,), \"float32\")\n";
  EXPECT_EQ(ir::to_string(f), std::string(kScanBefore) + allocs_before + ops);
  const std::string rows = "  # [64, 32] over 64 threads x 32 slots: s1=i1/1%32 t1=i0/1%64\n";
  EXPECT_EQ(inferred(f), std::string(kScanBefore) + "        S = T.alloc_fragment((64, 32), \"float32\")" + rows +
                             "        D = T.alloc_fragment((64, 32), \"float32\")" + rows +
                             "        r = T.alloc_fragment((64,), \"float32\")  # [64] over 64 threads x 1 slots: t1=i0/1%64\n" + ops);
}

TEST(InferLayout, AScanAlongDim0KeepsColumnsWhole) {
  std::string ir = inferred(kernel("        S = T.alloc_fragment((64, 32), \"float32\")\n"
                                   "        T.copy(A, S)\n"
                                   "        T.cumsum(S, dim=0, reverse=True)\n"
                                   "        T.copy(S, B)\n"));
  EXPECT_NE(ir.find("S = T.alloc_fragment((64, 32), \"float32\")  # [64, 32] over 32 threads x 64 slots: "
                    "s1=i0/1%64 t1=i1/1%32\n"),
            std::string::npos)
      << ir;
}

TEST(InferLayout, AFragmentCopiedIntoAGemmOperandIsLaidOutForTheGemm) {
  // TileLang's w4a8 GEMM: a loop dequantizes H (read at j // 2, so each thread holds whole
  // rows of it) into Q, Q is copied into the gemm's A, P, and the gemm runs on CUDA cores
  // (float32 in registers), reading P's rows whole. The gemm is seeded first: Q and P take the
  // rows it needs; seeded from the loop, P took Q's layout and the gemm could not read it.
  ir::PrimFunc f = kernel("        H = T.alloc_fragment((32, 16), \"float32\")\n"
                          "        Q = T.alloc_fragment((32, 32), \"float32\")\n"
                          "        P = T.alloc_fragment((32, 32), \"float32\")\n"
                          "        S = T.alloc_shared((32, 32), \"float32\")\n"
                          "        C = T.alloc_fragment((32, 32), \"float32\")\n"
                          "        T.copy(A[0:32, 0:16], H)\n"
                          "        T.copy(A[32:64, 0:32], S)\n"
                          "        for i, j in T.Parallel(32, 32):\n"
                          "            Q[i, j] = H[i, j // 2]\n"
                          "        T.copy(Q, P)\n"
                          "        T.clear(C)\n"
                          "        T.gemm(P, S, C)\n"
                          "        T.copy(C, B[0:32, 0:32])\n");
  const std::string after = inferred(f);
  EXPECT_EQ(layout_comment(after, "Q"), layout_comment(after, "P")) << after;
  EXPECT_NE(layout_comment(after, "P").find("s2=i1/1%32"), std::string::npos) << after;  // each thread holds whole rows
}

TEST(InferLayout, AScanOfAWholeOneDimFragmentGivesEveryThreadAllOfIt) {
  std::string ir = inferred(kernel("        S = T.alloc_fragment((32,), \"float32\")\n"
                                   "        T.copy(A[0, 0:32], S)\n"
                                   "        T.cumsum(S)\n"
                                   "        T.copy(S, B[1, 0:32])\n"));
  EXPECT_NE(ir.find("S = T.alloc_fragment((32,), \"float32\")  # [32] over 1 threads x 32 slots: s1=i0/1%32\n"),
            std::string::npos)
      << ir;
}

TEST(InferLayout, AScanOfAFragmentSpreadAlongItsLinesIsAConflictAtTheScan) {
  // The gemm lays C out as its mma.sync accumulator, a row's columns over 4 threads; the scan
  // along those columns can't use it.
  ir::PrimFunc f = kernel("        A_s = T.alloc_shared((64, 32), \"float32\")\n"
                          "        B_s = T.alloc_shared((32, 32), \"float32\")\n"
                          "        C = T.alloc_fragment((64, 32), \"float32\")\n"
                          "        D = T.alloc_fragment((64, 32), \"float32\")\n"
                          "        T.copy(A, A_s)\n"
                          "        T.copy(A[0:32, 0:32], B_s)\n"
                          "        T.gemm(A_s, B_s, C, clear_accum=True)\n"
                          "        T.cumsum(C, D, dim=1)\n"
                          "        T.copy(D, B)\n");
  try {
    inferred(f);
    FAIL() << "no error";
  } catch (const CompileError& e) {
    std::string text = e.what();
    EXPECT_NE(text.find("k.py:13:9: error: layout conflict for fragment 'C'"), std::string::npos) << text;
    EXPECT_NE(text.find("T.cumsum(C, D, dim=1)"), std::string::npos) << text;
  }
}

TEST(InferLayout, AFragmentEveryThreadHoldsLeavesTheLoopsThatReadItSpread) {
  // TileLang's online softmax: m, one element, is laid out first (every thread holds it);
  // the loop reading m[i] took m's layout extended over j, all 32 elements in the slots of
  // every thread, and so did x: each thread ran the whole row (BLOCK_N = 8192: 8192
  // registers a thread, an NVRTC compile of minutes). The loop is spread over the threads
  // now, and m, the reduction's result, is held alike by each thread x is spread over.
  ir::PrimFunc f = kernel("        x = T.alloc_fragment((1, 32), \"float32\")\n"
                          "        m = T.alloc_fragment((1,), \"float32\")\n"
                          "        T.fill(m, 2.0)\n"
                          "        for i, j in T.Parallel(1, 32):\n"
                          "            x[i, j] = A[i, j] * m[i]\n"
                          "        T.reduce_max(x, m, dim=1)\n"
                          "        for i, j in T.Parallel(1, 32):\n"
                          "            B[i, j] = x[i, j] - m[i]\n");
  std::string ir = inferred(f);
  EXPECT_NE(ir.find("x = T.alloc_fragment((1, 32), \"float32\")  # [1, 32] over 32 threads x 1 slots: "
                    "t1=i1/1%32\n"),
            std::string::npos)
      << ir;
  EXPECT_NE(ir.find("m = T.alloc_fragment((1,), \"float32\")  # [1] over 32 threads x 1 slots: t1=replica%32\n"),
            std::string::npos)
      << ir;
}

TEST(InferLayout, ARowCopiedWholeIntoAFragmentIsLaidOutInVectors) {
  // TileLang's rms_norm copies one row, A[bx:bx + 1, :], into a (1, N) fragment. The copy's
  // extent-1 row dim is not one a thread must hold whole (a scan's line), so the fragment
  // takes the default layout: 4 consecutive float32 a thread at a time, one 16-byte load.
  std::string source =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(A: T.Tensor((4, 1024), \"float32\"), B: T.Tensor((4, 1024), \"float32\")):\n"
      "    with T.Kernel(4, threads=128) as bx:\n"
      "        x = T.alloc_fragment((1, 1024), \"float32\")\n"
      "        T.copy(A[bx:bx + 1, :], x)\n"
      "        T.copy(x, B[bx:bx + 1, :])\n";
  std::string ir = inferred(frontend::elaborate(load_function(source, "k.py", "main")));
  EXPECT_NE(ir.find("x = T.alloc_fragment((1, 1024), \"float32\")  # [1, 1024] over 128 threads x 8 slots: "
                    "s1=i1/1%4 s4=i1/512%2 t1=i1/4%128\n"),
            std::string::npos)
      << ir;
}

TEST(InferLayout, AViewReadsTheRegistersOfTheFragmentItViewsInItsShape) {
  // T.reshape of a fragment: the view is laid out as its fragment, each digit of the columns
  // in the view's dim it falls in (Fragment::reshaped); the reduction over the view's last dim
  // projects that.
  std::string ir = inferred(kernel("        S = T.alloc_fragment((64, 32), \"float32\")\n"
                                   "        V = T.reshape(S, (64, 4, 8))\n"
                                   "        r = T.alloc_fragment((64, 4), \"float32\")\n"
                                   "        T.copy(A, S)\n"
                                   "        T.reduce_sum(V, r, dim=2)\n"
                                   "        T.copy(r, B[0:64, 0:4])\n"));
  EXPECT_NE(ir.find("S = T.alloc_fragment((64, 32), \"float32\")  # [64, 32] over 128 threads x 16 slots: "
                    "s1=i1/1%4 s4=i0/16%4 t1=i1/4%8 t8=i0/1%16\n"),
            std::string::npos)
      << ir;
  EXPECT_NE(ir.find("V = T.reshape(S, (64, 4, 8))  # [64, 4, 8] over 128 threads x 16 slots: "
                    "s1=i2/1%4 s4=i0/16%4 t1=i2/4%2 t2=i1/1%4 t8=i0/1%16\n"),
            std::string::npos)
      << ir;
}

TEST(InferLayout, AFragmentAndItsViewTakeALayoutBothShapesRead) {
  // 384 elements over 128 threads, 4 a thread at a time, would round the threads' rows up to
  // 512: no reading as (3, 128). One a thread at a time reads in both.
  std::string source =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(A: T.Tensor((384,), \"float32\"), B: T.Tensor((3,), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        x = T.alloc_fragment((384,), \"float32\")\n"
      "        groups = T.reshape(x, (3, 128))\n"
      "        m = T.alloc_fragment((3,), \"float32\")\n"
      "        T.copy(A, x)\n"
      "        T.reduce_max(groups, m, dim=1)\n"
      "        T.copy(m, B)\n";
  std::string ir = inferred(frontend::elaborate(load_function(source, "k.py", "main")));
  EXPECT_NE(ir.find("x = T.alloc_fragment((384,), \"float32\")  # [384] over 128 threads x 3 slots: "
                    "s1=i0/128%3 t1=i0/1%128\n"),
            std::string::npos)
      << ir;
  EXPECT_NE(ir.find("groups = T.reshape(x, (3, 128))  # [3, 128] over 128 threads x 3 slots: s1=i0/1%3 t1=i1/1%128\n"),
            std::string::npos)
      << ir;
}

TEST(InferLayout, AViewOfAFragmentNoLayoutOfItReadsIsAnErrorAtTheView) {
  // C's default layout takes 4 columns a thread over 8 threads, rounding its 48 columns up to
  // 64; the view's threes don't divide 4 or 64 either: no layout reads in both shapes.
  std::string source =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(A: T.Tensor((64, 48), \"float16\"), B: T.Tensor((64, 16), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        A_s = T.alloc_shared((64, 48), \"float16\")\n"
      "        C = T.alloc_fragment((64, 48), \"float32\")\n"
      "        by_three = T.reshape(C, (64, 16, 3))\n"
      "        r = T.alloc_fragment((64, 16), \"float32\")\n"
      "        T.copy(A, A_s)\n"
      "        T.gemm(A_s, A_s[0:48, 0:48], C, clear_accum=True)\n"
      "        T.reduce_sum(by_three, r, dim=2)\n"
      "        T.copy(r, B)\n";
  try {
    inferred(frontend::elaborate(load_function(source, "k.py", "main")));
    FAIL() << "no error";
  } catch (const CompileError& e) {
    std::string text = e.what();
    EXPECT_NE(text.find("k.py:8:20: error: 'by_three' reads the registers of fragment 'C' in another shape"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("'C' got its layout here"), std::string::npos) << text;
  }
}

TEST(InferLayout, AViewAndItsFragmentLaidOutApartIsAConflictAtTheView) {
  // Two gemms lay out S (64 x 64) and its view V (32 x 128) as their own mma.sync accumulators:
  // V's rows are not S's rows read row-major, so one of the two must give way.
  std::string source =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(A: T.Tensor((64, 32), \"float16\"), B: T.Tensor((32, 128), \"float16\"),\n"
      "         C: T.Tensor((64, 64), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        A_s = T.alloc_shared((64, 32), \"float16\")\n"
      "        B_s = T.alloc_shared((32, 64), \"float16\")\n"
      "        A2_s = T.alloc_shared((32, 32), \"float16\")\n"
      "        B2_s = T.alloc_shared((32, 128), \"float16\")\n"
      "        S = T.alloc_fragment((64, 64), \"float32\")\n"
      "        V = T.reshape(S, (32, 128))\n"
      "        T.copy(A, A_s)\n"
      "        T.copy(B[0:32, 0:64], B_s)\n"
      "        T.copy(A[0:32, 0:32], A2_s)\n"
      "        T.copy(B, B2_s)\n"
      "        T.gemm(A_s, B_s, S, clear_accum=True)\n"
      "        T.gemm(A2_s, B2_s, V)\n"
      "        T.copy(S, C)\n";
  try {
    inferred(frontend::elaborate(load_function(source, "k.py", "main")));
    FAIL() << "no error";
  } catch (const CompileError& e) {
    std::string text = e.what();
    EXPECT_NE(text.find("k.py:12:13: error: layout conflict for fragment 'V'"), std::string::npos) << text;
    EXPECT_NE(text.find("V = T.reshape(S, (32, 128))"), std::string::npos) << text;
  }
}


TEST(InferLayout, ALoopThatReadsAFragmentOffItsThreadsWithNoFragmentToFollowIsAConflict) {
  // C is the gemm's accumulator, a row's columns over 4 threads. The loop reads C[i, 2 * j]:
  // no access says which thread runs which element, so the loop took its default layout (row i
  // on thread i) and read another thread's registers. Found writing the DSA indexer.
  ir::PrimFunc f = kernel("        A_s = T.alloc_shared((64, 32), \"float32\")\n"
                          "        B_s = T.alloc_shared((32, 32), \"float32\")\n"
                          "        C = T.alloc_fragment((64, 32), \"float32\")\n"
                          "        T.copy(A, A_s)\n"
                          "        T.copy(A[0:32, 0:32], B_s)\n"
                          "        T.gemm(A_s, B_s, C, clear_accum=True)\n"
                          "        for i, j in T.Parallel(64, 16):\n"
                          "            B[i, j] = C[i, 2 * j] + C[i, 2 * j + 1]\n");
  try {
    inferred(f);
    FAIL() << "no error";
  } catch (const CompileError& e) {
    std::string text = e.what();
    EXPECT_NE(text.find("k.py:12:9: error: layout conflict for fragment 'C': here it is indexed by the loop's "
                        "dims (0, -)"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("'C' got its layout here"), std::string::npos) << text;
  }
}

TEST(InferLayout, ALoopThatReadsAFragmentAlongDimsItsThreadsHoldWhole) {
  // Each thread of S's layout holds whole rows (the scan), so S[i, 2 * j] is on the thread
  // that runs row i, whichever layout the loop takes.
  std::string ir = inferred(kernel("        S = T.alloc_fragment((64, 32), \"float32\")\n"
                                   "        T.copy(A, S)\n"
                                   "        T.cumsum(S, dim=1)\n"
                                   "        for i, j in T.Parallel(64, 16):\n"
                                   "            B[i, j] = S[i, 2 * j]\n"));
  EXPECT_NE(ir.find("s1=i1/1%32 t1=i0/1%64"), std::string::npos) << ir;
  EXPECT_NE(ir.find("B[i, j] = S[i, 2 * j]"), std::string::npos) << ir;
}


TEST(InferLayout, ARowSumOnlyStoredTakesEachRowOnOneThreadOfItsQuad) {
  // C's rows are spread over the 4 lanes of a quad (mma.sync accumulator, 4 x 1 warps, 4 slots
  // of rows a thread); R, stored and nothing else, holds each row on one of them
  // (ir::Fragment::scattered) rather than on all four.
  std::string source =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(A: T.Tensor((128, 32), \"float16\"), B: T.Tensor((32, 8), \"float16\"),\n"
      "         R_out: T.Tensor((128,), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        A_s = T.alloc_shared((128, 32), \"float16\")\n"
      "        B_s = T.alloc_shared((32, 8), \"float16\")\n"
      "        C = T.alloc_fragment((128, 8), \"float32\")\n"
      "        R = T.alloc_fragment((128,), \"float32\")\n"
      "        T.copy(A, A_s)\n"
      "        T.copy(B, B_s)\n"
      "        T.gemm(A_s, B_s, C, clear_accum=True)\n"
      "        T.reduce_sum(C, R, dim=1)\n"
      "        for i in T.Parallel(128):\n"
      "            R_out[i] = R[i] * 2\n";
  std::string ir = inferred(frontend::elaborate(load_function(source, "k.py", "main")));
  EXPECT_NE(layout_comment(ir, "C").find("t1=i1/2%4"), std::string::npos) << ir;  // columns over the quad
  EXPECT_NE(layout_comment(ir, "R").find("[128] over 128 threads x 1 slots"), std::string::npos) << ir;
  EXPECT_EQ(layout_comment(ir, "R").find("replica"), std::string::npos) << ir;
}

TEST(InferLayout, ARowSumUsedBesideItsSourceStaysOnEveryThreadOfTheQuad) {
  // The softmax's row max: read beside C itself, so every thread holding a row's elements needs it.
  std::string ir = inferred(kernel("        A_s = T.alloc_shared((64, 32), \"float32\")\n"
                                   "        B_s = T.alloc_shared((32, 32), \"float32\")\n"
                                   "        C = T.alloc_fragment((64, 32), \"float32\")\n"
                                   "        M = T.alloc_fragment((64,), \"float32\")\n"
                                   "        T.copy(A, A_s)\n"
                                   "        T.copy(A[0:32, 0:32], B_s)\n"
                                   "        T.gemm(A_s, B_s, C, clear_accum=True)\n"
                                   "        T.reduce_max(C, M, dim=1)\n"
                                   "        for i, j in T.Parallel(64, 32):\n"
                                   "            C[i, j] = C[i, j] - M[i]\n"
                                   "        T.copy(C, B)\n"));
  EXPECT_EQ(layout_comment(ir, "M").find("x 1 slots"), std::string::npos) << ir;
}
}  // namespace
}  // namespace tilec
