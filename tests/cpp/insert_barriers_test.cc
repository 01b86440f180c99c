// insert_barriers puts a proxy fence (fence_proxy_async) before a barrier only when writes it
// separates are read after it through the async proxy (by wgmma, a TMA store), whatever
// statement it was placed for and whatever the layout of the tiles: a gemm on hip, which has no
// async proxy, reading a tile in make_swizzled_layout's panels gets the barrier alone.
#include "passes/gpu/insert_barriers.h"

#include <gtest/gtest.h>

#include <string>

#include "frontend/elaborate.h"
#include "ir/mutator.h"
#include "ir/printer.h"
#include "passes/gpu/select_instructions.h"
#include "passes/specialize_contiguous.h"
#include "base/diagnostics.h"
#include "tilec/tilec.h"

namespace tilec {
namespace {

// A gemm reading A_s, in 128-byte panels, after the copy that writes it.
constexpr const char* kGemmOfAPanelTile =
    "import tilec.language as T\n\n@T.prim_func\n"
    "def main(A: T.Tensor((64, 64), \"float32\"), B: T.Tensor((64, 64), \"float32\"),\n"
    "         C: T.Tensor((64, 64), \"float32\")):\n"
    "    with T.Kernel(1, threads=128) as bx:\n"
    "        A_s = T.alloc_shared((64, 64), \"float32\")\n"
    "        B_s = T.alloc_shared((64, 64), \"float32\")\n"
    "        C_f = T.alloc_fragment((64, 64), \"float32\")\n"
    "        T.annotate_layout({A_s: T.make_swizzled_layout(A_s)})\n"
    "        T.clear(C_f)\n"
    "        T.copy(A, A_s)\n"
    "        T.copy(B, B_s)\n"
    "        T.gemm(A_s, B_s, C_f)\n"
    "        T.copy(C_f, C)\n";

// Gives every T.gemm `kind`.
struct SetGemmKind : ir::IRMutator {
  ir::GemmInstructionKind kind;
  ir::Stmt mutate_Gemm(const ir::Gemm* op, const ir::Stmt&) override {
    auto n = std::make_shared<ir::Gemm>(*op);
    n->instruction.kind = kind;
    return ir::Stmt(n);
  }
};

// The kernel after select_instructions for `target` `arch` (every gemm then given `kind`, when
// set) and insert_barriers.
std::string barriers_of(const std::string& target, const std::string& arch,
                        ir::GemmInstructionKind kind = ir::GemmInstructionKind::Unselected) {
  ir::PrimFunc f = frontend::elaborate(load_function(kGemmOfAPanelTile, "k.py", "main"));
  passes::PassContext ctx;
  ctx.target = parse_target(target, arch);
  ctx.func = &f;
  f.body = passes::select_instructions(f.body, ctx);
  if (kind != ir::GemmInstructionKind::Unselected) {
    SetGemmKind set;
    set.kind = kind;
    f.body = set.mutate(f.body);
  }
  f.body = passes::insert_barriers(f.body, ctx);
  return ir::to_string(f);
}

TEST(InsertBarriers, AGemmOffTheAsyncProxyTakesTheBarrierAloneThoughItsTileIsInPanels) {
  std::string ir = barriers_of("hip", "gfx906");
  EXPECT_NE(ir.find("A_s = T.alloc_shared((64, 64), \"float32\")  # 128-byte panels"), std::string::npos) << ir;
  EXPECT_NE(ir.find("# via fma"), std::string::npos) << ir;
  EXPECT_NE(ir.find("T.evaluate(T.device.sync_threads())\n        T.gemm("), std::string::npos) << ir;
  EXPECT_EQ(ir.find("fence_proxy_async"), std::string::npos) << ir;
}

TEST(InsertBarriers, AWgmmaGemmTakesTheProxyFenceBeforeItsBarrier) {
  std::string ir = barriers_of("cuda", "sm_90a", ir::GemmInstructionKind::Wgmma);
  EXPECT_NE(ir.find("T.evaluate(T.device.fence_proxy_async())\n        T.evaluate(T.device.sync_threads())\n"
                    "        T.gemm("), std::string::npos)
      << ir;
}

// Kernel source `text` after select_instructions and insert_barriers for sm_90a (its tensors
// contiguous, as the kernel's contiguous variant has them).
std::string barriers_of_source(const std::string& text) {
  ir::PrimFunc f = passes::specialize_contiguous(frontend::elaborate(load_function(text, "k.py", "main")));
  passes::PassContext ctx;
  ctx.target = parse_target("cuda", "sm_90a");
  ctx.contiguous_args = true;
  ctx.func = &f;
  f.body = passes::select_instructions(f.body, ctx);
  f.body = passes::insert_barriers(f.body, ctx);
  return ir::to_string(f);
}

// A wgmma gemm reading tiles whose writes a barrier placed for another statement (a nest that
// reads A_s) already separated: the fence goes before that barrier, or the gemm could read what
// the generic proxy wrote without seeing it. Before: a barrier alone (the gemm needed none).
constexpr const char* kGemmAfterAnotherReader =
    "import tilec.language as T\n\n@T.prim_func\n"
    "def main(A: T.Tensor((64, 64), \"bfloat16\"), B: T.Tensor((64, 64), \"bfloat16\"),\n"
    "         C: T.Tensor((64, 64), \"float32\"), D: T.Tensor((64, 64), \"bfloat16\")):\n"
    "    with T.Kernel(1, threads=128) as bx:\n"
    "        A_s = T.alloc_shared((64, 64), \"bfloat16\")\n"
    "        B_s = T.alloc_shared((64, 64), \"bfloat16\")\n"
    "        C_f = T.alloc_fragment((64, 64), \"float32\")\n"
    "        T.copy(A, A_s)\n"
    "        T.copy(B, B_s)\n"
    "        for i, j in T.Parallel(64, 64):\n"
    "            D[i, j] = A_s[j, i]\n"
    "        T.gemm(A_s, B_s, C_f, clear_accum=True)\n"
    "        T.copy(C_f, C)\n";

TEST(InsertBarriers, AWgmmaGemmAfterABarrierPlacedForAnotherReaderTakesItsFenceThere) {
  std::string ir = barriers_of_source(kGemmAfterAnotherReader);
  EXPECT_NE(ir.find("T.evaluate(T.device.fence_proxy_async())\n        T.evaluate(T.device.sync_threads())\n"
                    "        for i in T.Parallel(64):"),
            std::string::npos)
      << ir;
  EXPECT_EQ(ir.find("sync_threads", ir.find("T.Parallel(64)")), std::string::npos) << ir;  // no second barrier
}

// A kernel written thread by thread: a branch on the thread index is one unit, its barrier
// before it (not every thread would reach one inside), and a hand-off inside it is an error.
std::string barriers_of_threads(const std::string& branch_body) {
  std::string text =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(X: T.Tensor((128,), \"int32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        tx = T.get_thread_binding()\n"
      "        s = T.alloc_shared((128,), \"int32\")\n"
      "        s[tx] = X[tx]\n"
      "        if tx < 64:\n" +
      branch_body;
  return barriers_of_source(text);
}

TEST(InsertBarriers, ABranchOnTheThreadIndexTakesItsBarrierBeforeIt) {
  std::string ir = barriers_of_threads("            X[tx] = s[127 - tx]\n");
  EXPECT_NE(ir.find("T.evaluate(T.device.sync_threads())\n        if tx < 64:\n            X[tx] = s[127 - tx]"),
            std::string::npos)
      << ir;
}

TEST(InsertBarriers, AHandOffInsideABranchOnTheThreadIndexIsAnError) {
  try {
    barriers_of_threads("            s[tx] = 1\n            X[tx] = s[127 - tx]\n");
    FAIL() << "no error";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("k.py:11:13"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("every thread of the block must reach it"), std::string::npos) << e.what();
  }
}

// A histogram written thread by thread (a top-k's radix round): each thread adds its elements'
// bins into shared memory, in a loop over the row, then reads the counts (`after`).
std::string barriers_of_histogram(const std::string& after) {
  std::string text =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(X: T.Tensor((4096,), \"int32\"), n: T.int32, Y: T.Tensor((256,), \"int32\")):\n"
      "    with T.Kernel(1, threads=256) as bx:\n"
      "        tx = T.get_thread_binding()\n"
      "        hist = T.alloc_shared((256,), \"int32\")\n"
      "        hist[tx] = 0\n"
      "        for i in T.serial(T.ceildiv(n, 256)):\n"
      "            if i * 256 + tx < n:\n"
      "                T.atomic_add(hist[X[i * 256 + tx] & 255], 1)\n" +
      after;
  return barriers_of_source(text);
}

TEST(InsertBarriers, AtomicAddsIntoSharedNeedNoBarrierBetweenThemOnlyFromTheOtherAccesses) {
  std::string ir = barriers_of_histogram("        Y[tx] = hist[255 - tx]\n");
  // one barrier after the zeroing, none between the adds, one before the counts are read
  EXPECT_NE(ir.find("        hist[tx] = 0\n"
                    "        T.evaluate(T.device.sync_threads())\n"
                    "        for i in T.serial((n + 255) // 256):\n"
                    "            if i * 256 + tx < n:\n"
                    "                T.atomic_add(hist[X[i * 256 + tx] & 255], 1)\n"
                    "        T.evaluate(T.device.sync_threads())\n"
                    "        Y[tx] = hist[255 - tx]\n"),
            std::string::npos)
      << ir;
  // a plain write of a bin inside the loop meets the other threads' adds: a barrier every time
  // round, here inside the branch on the thread index, which is an error
  try {
    barriers_of_source(
        "import tilec.language as T\n\n@T.prim_func\n"
        "def main(X: T.Tensor((4096,), \"int32\"), n: T.int32):\n"
        "    with T.Kernel(1, threads=256) as bx:\n"
        "        tx = T.get_thread_binding()\n"
        "        hist = T.alloc_shared((256,), \"int32\")\n"
        "        for i in T.serial(T.ceildiv(n, 256)):\n"
        "            if i * 256 + tx < n:\n"
        "                T.atomic_add(hist[X[i * 256 + tx] & 255], 1)\n"
        "                hist[tx] = 0\n");
    FAIL() << "no error";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("every thread of the block must reach it"), std::string::npos) << e.what();
  }
}

// A stream compaction written thread by thread (a top-k keeping its candidates): each thread
// claims slots of `kept` from a shared counter and stores there (`store`), in a loop over the
// row, then the kept values are read.
std::string barriers_of_compaction(const std::string& store) {
  std::string text =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(X: T.Tensor((4096,), \"float32\"), Y: T.Tensor((4096,), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        tx = T.get_thread_binding()\n"
      "        kept = T.alloc_shared((4096,), \"float32\")\n"
      "        count = T.alloc_shared((2,), \"int32\")\n"
      "        if tx < 2:\n"
      "            count[tx] = 0\n"
      "        T.sync_threads()\n"
      "        for part in T.serial(32):\n"
      "            v = X[part * 128 + tx]\n"
      "            if v > 0:\n" +
      store +
      "        for part in T.serial(32):\n"
      "            Y[part * 128 + tx] = kept[part * 128 + tx]\n";
  return barriers_of_source(text);
}

TEST(InsertBarriers, StoresAtSlotsClaimedFromOneCounterNeedNoBarrierBetweenThem) {
  std::string ir = barriers_of_compaction(
      "                at = T.atomic_add(count[0], 1, return_prev=True)\n"
      "                kept[at] = v\n");
  // none in the loop (each claimed slot is one thread's), one before the kept values are read
  EXPECT_EQ(ir.find("sync_threads", ir.find("for part in")), ir.rfind("sync_threads")) << ir;
  EXPECT_LT(ir.find("kept[at] = v"), ir.rfind("sync_threads")) << ir;
  EXPECT_LT(ir.rfind("sync_threads"), ir.find("Y[part")) << ir;
}

TEST(InsertBarriers, SlotsFromTwoCountersMayMeet) {
  // the second store meets the first, a hand-off in a branch on the thread's value: an error
  try {
    barriers_of_compaction(
        "                at = T.atomic_add(count[0], 1, return_prev=True)\n"
        "                kept[at] = v\n"
        "                other = T.atomic_add(count[1], 1, return_prev=True)\n"
        "                kept[other] = v\n");
    FAIL() << "no error";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("every thread of the block must reach it"), std::string::npos) << e.what();
  }
}

TEST(InsertBarriers, AnAddOfNoConstantClaimsNoSlot) {
  // adds of `part` (0 in the first round) may return one value twice, and so may adds of 1 into
  // a counter that another add takes back: a barrier every round
  for (const char* store : {"                at = T.atomic_add(count[0], part, return_prev=True)\n"
                            "                kept[at] = v\n",
                            "                at = T.atomic_add(count[0], 1, return_prev=True)\n"
                            "                kept[at] = v\n"
                            "                T.atomic_add(count[0], -1)\n"}) {
    std::string ir = barriers_of_compaction(store);
    EXPECT_NE(ir.find("sync_threads())\n            if v > 0"), std::string::npos) << ir;
  }
}

// Two halves of one shared buffer, `r` the block's (TileLang's top-k selector reads one round's
// candidates and writes the next round's so, in a branch on the thread index).
std::string barriers_of_halves(const std::string& branch_body) {
  std::string text =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(X: T.Tensor((128,), \"int32\")):\n"
      "    with T.Kernel(4, threads=128) as bx:\n"
      "        tx = T.get_thread_binding()\n"
      "        s = T.alloc_shared((2, 128), \"int32\")\n"
      "        r = bx % 2\n"
      "        s[r, tx] = X[tx]\n"
      "        T.sync_threads()\n"
      "        if X[tx] > 0:\n" +
      branch_body;
  return barriers_of_source(text);
}

TEST(InsertBarriers, ElementsEveryThreadIndexesApartNeedNoBarrier) {
  // s[r, ...] and s[r ^ 1, ...]: r is alike on every thread, so no thread's write meets another's read.
  std::string ir = barriers_of_halves("            v = s[r, 127 - tx]\n            s[r ^ 1, tx] = v + 1\n");
  EXPECT_EQ(ir.find("sync_threads()\n            s[r ^ 1"), std::string::npos) << ir;
  std::string constant = barriers_of_halves("            v = s[0, 127 - tx]\n            s[1, tx] = v + 1\n");
  EXPECT_EQ(constant.find("sync_threads()\n            s[1"), std::string::npos) << constant;
}

TEST(InsertBarriers, ElementsThatDifferByThreadStillMeet) {
  // s[r, tx + 1] of one thread is s[r, tx] of the next: a hand-off inside the branch, an error.
  for (const char* body : {"            v = s[r, tx + 1]\n            s[r, tx] = v + 1\n",
                           "            v = s[r ^ 1, tx]\n            s[r ^ 1, 127 - tx] = v\n"}) {
    try {
      barriers_of_halves(body);
      FAIL() << "no error for\n" << body;
    } catch (const CompileError& e) {
      EXPECT_NE(std::string(e.what()).find("every thread of the block must reach it"), std::string::npos) << e.what();
    }
  }
}

// Attention's shape: Q_s filled before the k loop, read by every iteration's gemm (wgmma, so
// through the async proxy); K_s written and read in each iteration.
std::string barriers_of_loop(const std::string& loop_body) {
  std::string text =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(Q: T.Tensor((64, 64), \"float16\"), K: T.Tensor((512, 64), \"float16\"),\n"
      "         C: T.Tensor((64, 64), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        Q_s = T.alloc_shared((64, 64), \"float16\")\n"
      "        K_s = T.alloc_shared((64, 64), \"float16\")\n"
      "        C_f = T.alloc_fragment((64, 64), \"float32\")\n"
      "        T.clear(C_f)\n"
      "        T.copy(Q, Q_s)\n"
      "        for k in T.serial(8):\n" +
      loop_body + "        T.copy(C_f, C)\n";
  return barriers_of_source(text);
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(InsertBarriers, ALoopReadingWhatCameBeforeItTakesOneBarrierBeforeIt) {
  // Placed lazily, the barrier handing Q_s over would sit before the gemm in the loop and run
  // every iteration; before the loop it runs once (with the proxy fence its wgmma needs).
  std::string ir = barriers_of_loop("            T.gemm(Q_s, Q_s, C_f, transpose_B=True)\n");
  EXPECT_NE(ir.find("T.evaluate(T.device.fence_proxy_async())\n        T.evaluate(T.device.sync_threads())\n"
                    "        for k in T.serial(8):\n            T.gemm("),
            std::string::npos)
      << ir;
  EXPECT_EQ(occurrences(ir, "sync_threads()"), 1u) << ir;
}

TEST(InsertBarriers, ALoopThatNeedsBarriersOfItsOwnKeepsThemInside) {
  // K_s is written and read every iteration: its barriers stay in the loop, and Q_s's hand-off
  // shares the first of them rather than adding one before the loop.
  std::string ir = barriers_of_loop("            T.copy(K[k * 64, 0], K_s)\n"
                                    "            T.gemm(Q_s, K_s, C_f, transpose_B=True)\n");
  EXPECT_EQ(ir.find("sync_threads())\n        for k"), std::string::npos) << ir;
  EXPECT_EQ(occurrences(ir, "sync_threads()"), 2u) << ir;
}

// A float32 tile added to C by a TMA reduce-add each iteration (thread 0 issues it; the tile is
// read while the threads go on), then written again in the next one after `between`.
std::string barriers_of_reduce_adds(const std::string& between) {
  std::string text =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(A: T.Tensor((512, 64), \"float32\"), C: T.Tensor((512, 64), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        A_s = T.alloc_shared((64, 64), \"float32\")\n"
      "        X_s = T.alloc_shared((64, 64), \"float32\")\n"
      "        X_f = T.alloc_fragment((64, 64), \"float32\")\n"
      "        for k in T.serial(8):\n"
      "            rows = k * 64\n" +
      between +
      "            T.copy(X_f, X_s)\n"
      "            T.atomic_add(C[rows:rows + 64, 0:64], X_s)\n";
  return barriers_of_source(text);
}

constexpr const char* kWaitForTheRead =
    "if T.thread_in(0, 1):\n                T.evaluate(T.device.tma_store_wait_read())\n"
    "            T.evaluate(T.device.sync_threads())\n";

TEST(InsertBarriers, ATmaStoreIsWaitedForAtTheLastBarrierBeforeItsTileIsWrittenAgain) {
  // A_s's hand-off needs a barrier before X_s is written again: thread 0 waits for the read
  // there, and the read runs on under the copy of A.
  std::string ir = barriers_of_reduce_adds("            T.copy(A[k * 64, 0], A_s)\n"
                                           "            T.copy(A_s, X_f)\n");
  EXPECT_NE(ir.find(std::string(kWaitForTheRead) + "            T.copy(A_s[0:64, 0:64], X_f"), std::string::npos)
      << ir;
  EXPECT_EQ(occurrences(ir, "tma_store_wait_read()"), 2u) << ir;  // and once after the loop, at the end
  EXPECT_NE(ir.find("X_s[0:64, 0:64])  # via tma reduce-add, 128-byte swizzle\n"
                    "        if T.thread_in(0, 1):\n            T.evaluate(T.device.tma_store_wait_read())"),
            std::string::npos)
      << ir;
}

TEST(InsertBarriers, ATmaStoreWithNoBarrierBeforeTheNextWriteIsWaitedForRightThere) {
  std::string ir = barriers_of_reduce_adds("            T.copy(A[k * 64, 0], X_f)\n");
  EXPECT_NE(ir.find(std::string(kWaitForTheRead) + "            T.copy(X_f[0:64, 0:64], X_s"), std::string::npos)
      << ir;
  EXPECT_EQ(occurrences(ir, "tma_store_wait_read()"), 2u) << ir;
}

// A kernel written thread by thread that fills s with per-thread loops (`fill`), then reads it
// through a T.Parallel (another thread's elements).
std::string barriers_of_fill(const std::string& fill) {
  std::string text =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(A: T.Tensor((128, 64), \"float32\"), B: T.Tensor((128, 64), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        tx = T.get_thread_binding()\n"
      "        s = T.alloc_shared((128, 64), \"float32\")\n" +
      fill +
      "        for i, j in T.Parallel(128, 64):\n"
      "            B[i, j] = s[127 - i, j]\n";
  return barriers_of_source(text);
}

TEST(InsertBarriers, PerThreadLoopsWhoseIterationsWriteElementsOfTheirOwnNeedNoBarrierInside) {
  // Each iteration of c has columns 16 c .. 16 c + 15 (a window of its own), each iteration of e
  // the columns = e mod 16 (a residue of its own); a let's value stands in for its name.
  std::string ir = barriers_of_fill(
      "        for c in T.unroll(4):\n"
      "            for e in T.vectorized(16):\n"
      "                column = c * 16 + e\n"
      "                s[tx, column] = A[tx, column]\n");
  EXPECT_EQ(occurrences(ir, "sync_threads()"), 1u) << ir;
  EXPECT_NE(ir.find("T.evaluate(T.device.sync_threads())\n        for i in T.Parallel(128)"), std::string::npos) << ir;
}

TEST(InsertBarriers, PerThreadLoopsWhoseIterationsMayWriteOneElementKeepTheirBarrier) {
  // Thread t in iteration c writes row t + c, as thread t + 1 does in iteration c - 1.
  std::string ir = barriers_of_fill(
      "        for c in T.serial(4):\n"
      "            for j in T.vectorized(64):\n"
      "                s[(tx + c) % 128, j] = A[tx, j]\n");
  EXPECT_NE(ir.find("for c in T.serial(4):\n            T.evaluate(T.device.sync_threads())"), std::string::npos) << ir;
}

TEST(InsertBarriers, AccessesWhoseIndicesRangeApartNeedNoBarrierBetweenThem) {
  // Columns 0..31 written, then columns 32..63 read, by other threads.
  std::string ir = barriers_of_fill(
      "        for j in T.vectorized(32):\n"
      "            s[tx, j] = A[tx, j]\n"
      "        for j in T.vectorized(32):\n"
      "            A[tx, j] = s[127 - tx, 32 + j]\n");
  EXPECT_EQ(occurrences(ir, "sync_threads()"), 1u) << ir;
}

TEST(InsertBarriers, ALetThatReadsAnotherThreadsWriteTakesItsBarrier) {
  std::string ir = barriers_of_fill(
      "        s[tx, 0] = A[tx, 0]\n"
      "        v = s[127 - tx, 0]\n"
      "        A[tx, 1] = v\n");
  EXPECT_NE(ir.find("T.evaluate(T.device.sync_threads())\n        v = s[127 - tx, 0]"), std::string::npos) << ir;
}

// A_s filled by T.copy, read transposed (other threads' elements), then refilled by a TMA load
// that thread 0 issues and every thread waits for on `bar`, and read again (`after`).
std::string barriers_of_tma_refill(const std::string& after) {
  std::string text =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(A: T.Tensor((64, 64), \"float32\"), A2: T.Tensor((64, 64), \"float32\"),\n"
      "         B: T.Tensor((64, 64), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        A_s = T.alloc_shared((64, 64), \"float32\")\n"
      "        bar = T.alloc_barrier(128)\n"
      "        T.copy(A, A_s)\n"
      "        for i, j in T.Parallel(64, 64):\n"
      "            B[i, j] = A_s[j, i]\n"
      "        T.tma_copy(A2, A_s, barrier=bar)\n"
      "        T.barrier_arrive(bar)\n"
      "        T.barrier_wait(bar, 0)\n" +
      after;
  return barriers_of_source(text);
}

TEST(InsertBarriers, ABufferATmaLoadFillsKeepsTheBarriersOfItsOtherAccesses) {
  // Before: A_s, filled by a TMA load somewhere, was left out of the analysis: no barrier
  // between the copy's writes and the transposed reads, nor between those and the TMA overwrite.
  std::string ir = barriers_of_tma_refill("        for i, j in T.Parallel(64, 64):\n"
                                          "            B[i, j] = B[i, j] + A_s[j, i]\n");
  const size_t copy = ir.find("T.copy(A[0:64, 0:64], A_s"), read = ir.find("B[i, j] = A_s[j, i]"),
               load = ir.find("via tma load"), second = ir.find("] + A_s[");
  ASSERT_NE(copy, std::string::npos) << ir;
  ASSERT_NE(load, std::string::npos) << ir;
  ASSERT_NE(second, std::string::npos) << ir;
  EXPECT_NE(ir.substr(copy, read - copy).find("sync_threads()"), std::string::npos) << ir;
  EXPECT_NE(ir.substr(read, load - read).find("sync_threads()"), std::string::npos) << ir;
  // the mbarrier wait, not a block barrier, orders the load before the reads after it
  EXPECT_EQ(ir.substr(load, second - load).find("sync_threads()"), std::string::npos) << ir;
}

// A wgmma gemm of A_s and B_s after `fills` (copies into them, with or without proxy fences of
// the program's own).
std::string barriers_of_fenced(const std::string& fills) {
  std::string text =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(A: T.Tensor((64, 64), \"bfloat16\"), B: T.Tensor((64, 64), \"bfloat16\"),\n"
      "         C: T.Tensor((64, 64), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        tx = T.get_thread_binding()\n"
      "        A_s = T.alloc_shared((64, 64), \"bfloat16\")\n"
      "        B_s = T.alloc_shared((64, 64), \"bfloat16\")\n"
      "        C_f = T.alloc_fragment((64, 64), \"float32\")\n" +
      fills +
      "        T.gemm(A_s, B_s, C_f, clear_accum=True)\n"
      "        T.copy(C_f, C)\n";
  return barriers_of_source(text);
}

TEST(InsertBarriers, WritesTheThreadsFencedThemselvesNeedNoSecondFence) {
  // The program's fence after both copies: the barrier before the gemm comes alone.
  std::string fenced = barriers_of_fenced("        T.copy(A, A_s)\n        T.copy(B, B_s)\n"
                                          "        T.fence_proxy_async()\n");
  EXPECT_EQ(occurrences(fenced, "fence_proxy_async()"), 1u) << fenced;
  EXPECT_NE(fenced.find("T.evaluate(T.device.fence_proxy_async())\n        T.evaluate(T.device.sync_threads())\n"
                        "        T.gemm("),
            std::string::npos)
      << fenced;
  // B_s written after the fence, or a fence only thread 0 runs: the barrier takes its own.
  for (const char* fills : {"        T.copy(A, A_s)\n        T.fence_proxy_async()\n        T.copy(B, B_s)\n",
                            "        T.copy(A, A_s)\n        T.copy(B, B_s)\n        if tx == 0:\n"
                            "            T.fence_proxy_async()\n"}) {
    std::string ir = barriers_of_fenced(fills);
    EXPECT_EQ(occurrences(ir, "fence_proxy_async()"), 2u) << ir;
    EXPECT_NE(ir.find("T.evaluate(T.device.fence_proxy_async())\n        T.evaluate(T.device.sync_threads())\n"
                      "        T.gemm("),
              std::string::npos)
        << ir;
  }
}

// Warpgroup 0 writes A_s and B_s, fences and arrives; warpgroup 1 waits, then runs two wgmma
// gemms of them, with `between` between the two.
std::string barriers_of_handed_over(const std::string& between) {
  std::string text =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(A: T.Tensor((64, 64), \"bfloat16\"), B: T.Tensor((64, 64), \"bfloat16\"),\n"
      "         C: T.Tensor((64, 64), \"float32\")):\n"
      "    with T.Kernel(1, threads=256) as bx:\n"
      "        A_s = T.alloc_shared((64, 64), \"bfloat16\")\n"
      "        B_s = T.alloc_shared((64, 64), \"bfloat16\")\n"
      "        C_f = T.alloc_fragment((64, 64), \"float32\")\n"
      "        bars = T.alloc_barrier([128, 128])\n"
      "        with T.ws(0):\n"
      "            T.copy(A, A_s)\n"
      "            T.copy(B, B_s)\n"
      "            T.fence_proxy_async()\n"
      "            T.barrier_arrive(bars[0])\n"
      "            T.barrier_arrive(bars[1])\n"
      "        with T.ws(1):\n"
      "            T.barrier_wait(bars[0], 0)\n"
      "            T.gemm(A_s, B_s, C_f, clear_accum=True)\n" +
      between +
      "            T.gemm(A_s, B_s, C_f)\n"
      "            T.copy(C_f, C)\n";
  return barriers_of_source(text);
}

TEST(InsertBarriers, AGroupFencesWhatItAcquiredOnceAWaitBeforeItsWgmmaReadsIt) {
  // The reader's fence after its wait lets the async proxy see warpgroup 0's writes; the
  // second gemm, with no wait since, needs none (before: one before every gemm).
  std::string once = barriers_of_handed_over("");
  EXPECT_EQ(occurrences(once, "fence_proxy_async()"), 2u) << once;  // warpgroup 0's and the reader's
  EXPECT_NE(once.find("mbarrier_wait_parity(T.address_of(bars[0]), 0))\n"
                      "            T.evaluate(T.device.fence_proxy_async())\n            T.gemm("),
            std::string::npos)
      << once;
  // A wait between them acquires again.
  std::string twice = barriers_of_handed_over("            T.barrier_wait(bars[1], 0)\n");
  EXPECT_EQ(occurrences(twice, "fence_proxy_async()"), 3u) << twice;
}

}  // namespace
}  // namespace tilec
