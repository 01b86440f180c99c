// lower_to_threads takes the warp size from the Target: blocks are whole warps, and a
// reduction's shuffles cover one warp.
#include "passes/gpu/lower_to_threads.h"

#include <gtest/gtest.h>

#include <string>

#include "frontend/elaborate.h"
#include "ir/printer.h"
#include "passes/gpu/select_instructions.h"
#include "passes/gpu/infer_layout.h"
#include "tilec/tilec.h"
#include "text_count.h"

namespace tilec {
namespace {

ir::PrimFunc kernel(int threads, const std::string& body) {
  std::string source =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(X: T.Tensor((4, 512), \"float32\"), Y: T.Tensor((4,), \"float32\")):\n"
      "    with T.Kernel(1, threads=" + std::to_string(threads) + ") as bx:\n" + body;
  return frontend::elaborate(load_function(source, "k.py", "main"));
}

std::string lowered(ir::PrimFunc f, const Target& target) {
  passes::PassContext ctx;
  ctx.target = target;
  ctx.func = &f;
  f.body = passes::select_instructions(f.body, ctx);
  f.body = passes::infer_layout(f.body, ctx);
  f.body = passes::select_fragment_copies(f.body, ctx);
  f.body = passes::lower_to_threads(f.body, ctx);
  return ir::to_string(f);
}

using test_support::count;

constexpr const char* kStore = "        Y[0] = 1.0\n";

TEST(LowerToThreads, BlocksAreWholeWarpsOfTheTarget) {
  EXPECT_NO_THROW(lowered(kernel(96, kStore), parse_target("cuda", "sm_90a")));
  try {
    lowered(kernel(96, kStore), parse_target("hip", "gfx90a"));
    FAIL() << "expected a CompileError";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("on hip a block is whole 64-lane waves or one wave's first 1, 2, 4, .. 32 lanes"),
              std::string::npos)
        << e.what();
  }
}

TEST(LowerToThreads, ReductionShufflesCoverOneWarp) {
  const std::string body =
      "        x = T.alloc_fragment((4, 512), \"float32\")\n"
      "        s = T.alloc_fragment((4,), \"float32\")\n"
      "        T.copy(X, x)\n"
      "        T.reduce_sum(x, s, dim=1)\n"
      "        T.copy(s, Y)\n";
  // Rows of 512 over all 128 threads: 32-wide warps shuffle 5 times, 64-wide waves 6 times, then
  // exchange the rest through shared memory.
  EXPECT_EQ(count(lowered(kernel(128, body), parse_target("cuda", "sm_90a")), "shfl_xor"), 5u);
  EXPECT_EQ(count(lowered(kernel(128, body), parse_target("hip", "gfx90a")), "shfl_xor"), 6u);
}

TEST(LowerToThreads, AcrossWarpsTheRowsPartialsGoThroughSharedMemoryInRoundsOfSeveral) {
  // 4 rows of 512 over 256 threads: a thread holds parts of 2 rows, 4 warps share a row. A
  // round's 2 KiB takes both rows' partials: one round of (barrier, write, barrier, read), then
  // the last barrier (a round a row took 5).
  const std::string body =
      "        x = T.alloc_fragment((4, 512), \"float32\")\n"
      "        s = T.alloc_fragment((4,), \"float32\")\n"
      "        T.copy(X, x)\n"
      "        T.reduce_max(x, s, dim=1)\n"
      "        T.copy(s, Y)\n";
  const std::string ir = lowered(kernel(256, body), parse_target("cuda", "sm_90a"));
  EXPECT_NE(ir.find("s_exchange = T.alloc_shared((512,)"), std::string::npos) << ir;
  EXPECT_NE(ir.find("for r in T.unroll(1):"), std::string::npos) << ir;
  EXPECT_EQ(count(ir, "sync_threads()"), 3u) << ir;
}

std::string reduction_of(const std::string& src) {
  return "        x = T.alloc_fragment((4, 512), \"float32\")\n"
         "        s = T.alloc_fragment((4,), \"float32\")\n"
         "        T.copy(X, x)\n"
         "        T.reduce_sum(" + src + ", s, dim=1)\n"
         "        T.copy(s, Y)\n";
}

// A gemm accumulator's sums over a range of its columns.
std::string column_range_sums(const std::string& columns) {
  std::string source =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(A: T.Tensor((64, 32), \"float16\"), B: T.Tensor((128, 32), \"float16\"),\n"
      "         Y: T.Tensor((64,), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        A_s = T.alloc_shared((64, 32), \"float16\")\n"
      "        B_s = T.alloc_shared((128, 32), \"float16\")\n"
      "        acc = T.alloc_fragment((64, 128), \"float32\")\n"
      "        s = T.alloc_fragment((64,), \"float32\")\n"
      "        T.copy(A, A_s)\n"
      "        T.copy(B, B_s)\n"
      "        T.gemm(A_s, B_s, acc, transpose_B=True)\n"
      "        T.reduce_sum(acc[:, " + columns + "], s, dim=1)\n"
      "        T.copy(s, Y)\n";
  return lowered(frontend::elaborate(load_function(source, "k.py", "main")), parse_target("cuda", "sm_90a"));
}

std::string line_at(const std::string& text, const std::string& start) {
  size_t at = text.find(start);
  return at == std::string::npos ? "" : text.substr(at, text.find('\n', at) - at);
}

// A range of the reduced dim: each thread adds only its elements in the range. A wgmma
// accumulator holds 8-column groups in its slots: a range of whole groups is a condition on
// the slot alone (no thread index), which the unrolled loop over the slots folds away.
TEST(LowerToThreads, AReductionOfAColumnRangeAddsThatRangeAlone) {
  EXPECT_EQ(count(column_range_sums("0:128"), "<="), 0u);
  std::string groups = line_at(column_range_sums("64:128"), "if 64 <= ");
  EXPECT_NE(groups.find("< 128"), std::string::npos) << groups;
  EXPECT_EQ(groups.find("tx"), std::string::npos) << groups;
  // ends that cut through a group: the element's whole column, its thread's part included
  std::string cut = line_at(column_range_sums("5:50"), "if 5 <= ");
  EXPECT_NE(cut.find("tx"), std::string::npos) << cut;
  EXPECT_NE(cut.find("< 50"), std::string::npos) << cut;
}

TEST(LowerToThreads, AReductionOfSomeRowsIsAnErrorAtItsLine) {
  try {
    lowered(kernel(128, reduction_of("x[0:4, 0:256]") + "        T.reduce_sum(x[1:3, :], s[0:2], dim=1)\n"),
            parse_target("cuda", "sm_90a"));
    FAIL() << "expected a CompileError";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("k.py:11:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("a reduction of a fragment takes whole lines of 'x': dim 0 is sliced"),
              std::string::npos)
        << e.what();
  }
}

// A T.Parallel over a gemm accumulator's rows and columns whose body is `if test: then` (by
// default, the row scaled by its max).
std::string rows_scaled_where(const std::string& test, const std::string& then = "acc[i, j] *= m[i]") {
  std::string source =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(A: T.Tensor((64, 32), \"float16\"), B: T.Tensor((128, 32), \"float16\"),\n"
      "         Y: T.Tensor((64, 128), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        A_s = T.alloc_shared((64, 32), \"float16\")\n"
      "        B_s = T.alloc_shared((128, 32), \"float16\")\n"
      "        acc = T.alloc_fragment((64, 128), \"float32\")\n"
      "        m = T.alloc_fragment((64,), \"float32\")\n"
      "        T.copy(A, A_s)\n"
      "        T.copy(B, B_s)\n"
      "        T.gemm(A_s, B_s, acc, transpose_B=True)\n"
      "        T.reduce_max(acc, m, dim=1)\n"
      "        for i, j in T.Parallel(64, 128):\n"
      "            if " + test + ":\n"
      "                " + then + "\n"
      "        T.copy(acc, Y)\n";
  return lowered(frontend::elaborate(load_function(source, "k.py", "main")), parse_target("cuda", "sm_90a"));
}

// A test of the row alone is made once a row the thread holds (2 of a wgmma accumulator's 64),
// then the row's 32 columns in this thread's slots go without it: a branch around them, where a
// test an element makes 64 selects.
TEST(LowerToThreads, ATestOfTheRowAloneIsMadeOnceARowAroundItsElements) {
  std::string ir = rows_scaled_where("m[i] != 1");
  size_t test = ir.find("if m[");
  ASSERT_NE(test, std::string::npos) << ir;
  EXPECT_EQ(count(ir, "if m["), 1u) << ir;
  EXPECT_NE(ir.find("for s_3 in T.unroll(2):\n            if m["), std::string::npos) << ir;
  size_t scaled = ir.find("acc[", test);
  EXPECT_NE(ir.substr(test, scaled - test).find("for s_4 in T.unroll(2):\n                    for s_5 in T.unroll(16):"),
            std::string::npos)
      << ir;
}

// Not moved out: a test of the element, and a test of the row that reads what the body writes.
TEST(LowerToThreads, ATestOfTheElementOrOfWhatTheBodyWritesStaysInside) {
  for (const auto& [test, then] : std::vector<std::pair<std::string, std::string>>{
           {"acc[i, j] > 0", "acc[i, j] *= m[i]"},
           {"m[i] * j != 1", "acc[i, j] *= m[i]"},
           {"Y[i, 0] > 0", "Y[i, j] = acc[i, j]"}}) {
    std::string ir = rows_scaled_where(test, then);
    size_t test_at = ir.find("            if ");
    ASSERT_NE(test_at, std::string::npos) << ir;
    EXPECT_NE(ir.rfind("for s_3 in T.unroll(64):", test_at), std::string::npos) << test << "\n" << ir;
  }
}

// A histogram of a reduced fragment (a row's sum is held by every thread that reduced it): the
// atomic add of `add` must be made once an element.
std::string histogram_of_sums(const std::string& add) {
  return "        x = T.alloc_fragment((4, 512), \"float32\")\n"
         "        s = T.alloc_fragment((4,), \"float32\")\n"
         "        counts = T.alloc_shared((16,), \"int32\")\n"
         "        T.fill(counts, 0)\n"
         "        T.copy(X, x)\n"
         "        T.reduce_sum(x, s, dim=1)\n"
         "        for i in T.Parallel(4):\n" +
         add +
         "        for i in T.Parallel(4):\n"
         "            Y[i] = T.Cast(\"float32\", counts[i])\n";
}

TEST(LowerToThreads, ReplicasSitOutABodyThatNamesAValueBeforeItsAtomicAdd) {
  const Target target = parse_target("cuda", "sm_90a");
  std::string direct = lowered(kernel(128, histogram_of_sums(
                                   "            T.atomic_add(counts[T.Cast(\"int32\", s[i]) & 15], 1)\n")),
                               target);
  std::string named = lowered(kernel(128, histogram_of_sums(
                                  "            bucket = T.Cast(\"int32\", s[i]) & 15\n"
                                  "            T.atomic_add(counts[bucket], 1)\n")),
                              target);
  // the guard that keeps the replicas out, right before the add (or the let before it)
  auto guard_of = [](const std::string& ir, const std::string& first) {
    size_t at = ir.find(first);
    size_t line = ir.rfind("if ", at);
    return ir.substr(line, ir.find('\n', line) - line);
  };
  std::string direct_guard = guard_of(direct, "T.atomic_add(counts");
  EXPECT_NE(direct_guard.find("tx"), std::string::npos) << direct;
  EXPECT_EQ(guard_of(named, "bucket = "), direct_guard) << named;
}

}  // namespace
}  // namespace tilec
