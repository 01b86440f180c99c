// thread_loops (the CPU's threads of a block): the statements that read a thread's own values
// become loops over the threads, the locals they write get a row per thread, a loop the
// threads take together is split at its statements when it touches shared memory, and
// T.sync_threads goes (the loops are its barrier); a thread group's statements loop over its own
// threads.
#include "passes/thread_loops.h"

#include <gtest/gtest.h>

#include <string>

#include "base/diagnostics.h"
#include "frontend/elaborate.h"
#include "ir/printer.h"
#include "passes/lower_tile_ops.h"
#include "tilec/tilec.h"

namespace tilec {
namespace {

std::string kernel(const std::string& body, int threads) {
  return "import tilec.language as T\n\n@T.prim_func\n"
         "def main(X: T.Tensor((64,), \"float32\"), Y: T.Tensor((64,), \"float32\")):\n"
         "    with T.Kernel(1, threads=" + std::to_string(threads) + ") as bx:\n" +
         body;
}

// The kernel's IR before thread_loops (after lower_tile_ops) and after it.
std::pair<std::string, std::string> before_and_after(const std::string& body, int threads = 64) {
  ir::PrimFunc f = frontend::elaborate(load_function(kernel(body, threads), "k.py", "main"));
  passes::PassContext ctx;
  ctx.target = parse_target("cpu", "");
  ctx.func = &f;
  f.body = passes::lower_tile_ops(f.body, ctx);
  std::string before = ir::to_string(f);
  f.body = passes::thread_loops(f.body, ctx);
  return {before, ir::to_string(f)};
}

TEST(ThreadLoops, StatementsThatReadTheThreadIndexLoopOverTheThreadsAndLocalsGetARowEach) {
  auto [before, after] = before_and_after(
      "        tx = T.get_thread_binding()\n"
      "        acc = T.alloc_local((1,), \"float32\")\n"
      "        acc[0] = X[tx]\n"
      "        acc[0] = acc[0] * 2\n"
      "        Y[0] = 1\n"
      "        Y[tx] = acc[0]\n");
  EXPECT_NE(before.find("# reads the thread index tx"), std::string::npos) << before;
  EXPECT_NE(before.find("acc = T.alloc_local((1,), \"float32\")"), std::string::npos) << before;
  EXPECT_EQ(after,
            "@T.prim_func\n"
            "def main(X: T.Tensor((64,), \"float32\"), Y: T.Tensor((64,), \"float32\")):\n"
            "    with T.Kernel(1, threads=64) as bx:\n"
            "        acc = T.alloc_local((64, 1), \"float32\")\n"
            "        for tx in T.serial(64):\n"
            "            acc[tx, 0] = X[tx]\n"
            "        for tx_1 in T.serial(64):\n"
            "            acc[tx_1, 0] = acc[tx_1, 0] * 2.0\n"
            "        Y[0] = 1.0\n"
            "        for tx_2 in T.serial(64):\n"
            "            Y[tx_2] = acc[tx_2, 0]\n");
}

// A GPU replicates a fragment used outside tile ops in every thread: each thread's is its own.
TEST(ThreadLoops, AFragmentThreadByThreadCodeWritesGetsARowEach) {
  auto [before, after] = before_and_after(
      "        tx = T.get_thread_binding()\n"
      "        f = T.alloc_fragment((2,), \"float32\")\n"
      "        f[1] = X[tx]\n"
      "        Y[tx] = f[1]\n");
  EXPECT_NE(after.find("        f = T.alloc_fragment((64, 2), \"float32\")\n"
                       "        for tx in T.serial(64):\n"
                       "            f[tx, 1] = X[tx]\n"
                       "        for tx_1 in T.serial(64):\n"
                       "            Y[tx_1] = f[tx_1, 1]\n"),
            std::string::npos)
      << after;
}

TEST(ThreadLoops, ALoopEveryThreadTakesIsSplitWhereItTouchesSharedMemoryAndTheBarrierGoes) {
  auto [before, after] = before_and_after(
      "        tx = T.get_thread_binding()\n"
      "        s = T.alloc_shared((64,), \"float32\")\n"
      "        for k in T.serial(4):\n"
      "            s[tx] = X[tx] + k\n"
      "            T.sync_threads()\n"
      "            Y[tx] = s[63 - tx]\n");
  EXPECT_NE(before.find("T.evaluate(T.device.sync_threads())"), std::string::npos) << before;
  EXPECT_EQ(after.find("sync_threads"), std::string::npos) << after;
  EXPECT_NE(after.find("        for k in T.serial(4):\n"
                       "            for tx in T.serial(64):\n"
                       "                s[tx] = X[tx] + T.cast(k, \"float32\")\n"
                       "            for tx_1 in T.serial(64):\n"
                       "                Y[tx_1] = s[63 - tx_1]\n"),
            std::string::npos)
      << after;
}

TEST(ThreadLoops, ALoopWithoutSharedMemoryRunsWholeOnEachThread) {
  auto [before, after] = before_and_after(
      "        tx = T.get_thread_binding()\n"
      "        for k in T.serial(4):\n"
      "            Y[tx] = X[tx] + k\n");
  EXPECT_NE(after.find("        for tx in T.serial(64):\n"
                       "            for k in T.serial(4):\n"),
            std::string::npos)
      << after;
}

TEST(ThreadLoops, AKernelThatReadsNoThreadIndexIsUnchangedButForItsBarriers) {
  auto [before, after] = before_and_after(
      "        s = T.alloc_shared((64,), \"float32\")\n"
      "        for i in T.Parallel(64):\n"
      "            s[i] = X[i]\n"
      "        T.sync_threads()\n"
      "        for i in T.Parallel(64):\n"
      "            Y[i] = s[63 - i]\n");
  EXPECT_NE(before.find("sync_threads"), std::string::npos) << before;
  EXPECT_EQ(after.find("sync_threads"), std::string::npos) << after;
  EXPECT_EQ(after.find("T.serial(64)"), std::string::npos) << after;
}

TEST(ThreadLoops, ABarrierUnderAConditionOnTheThreadIsAnError) {
  try {
    before_and_after(
        "        tx = T.get_thread_binding()\n"
        "        if tx < 16:\n"
        "            Y[tx] = 1\n"
        "            T.sync_threads()\n");
    FAIL() << "no error";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("k.py:9:13"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("every thread of the block must reach it"), std::string::npos) << e.what();
  }
}

TEST(ThreadLoops, AThreadGroupsStatementsLoopOverItsThreadsAndEachOfThemArrives) {
  auto [before, after] = before_and_after(
      "        bars = T.alloc_barrier([128, 1])\n"
      "        s = T.alloc_shared((64,), \"float32\")\n"
      "        with T.ws(1):\n"
      "            tx = T.get_thread_binding()\n"
      "            if tx < 192:\n"
      "                s[tx - 128] = X[tx - 128]\n"
      "            T.barrier_arrive(bars[0])\n"
      "        with T.ws(0):\n"
      "            T.barrier_wait(bars[0], 0)\n"
      "            for i in T.Parallel(64):\n"
      "                Y[i] = s[i]\n",
      256);
  EXPECT_NE(before.find("if T.thread_in(0, 1):"), std::string::npos) << before;
  EXPECT_NE(after.find("        T.evaluate(T.device.mbarrier_init(T.address_of(bars[0]), 128))\n"
                       "        T.evaluate(T.device.mbarrier_init(T.address_of(bars[1]), 1))\n"),
            std::string::npos)
      << after;
  EXPECT_EQ(after.find("thread_in"), std::string::npos) << after;
  // group 1's threads are 128..255: each stores if it is below 192, and arrives
  EXPECT_NE(after.find("        if T.thread_group(128, 256):\n"
                       "            for tx in T.serial(128, 256):\n"
                       "                if tx < 192:\n"
                       "                    s[tx - 128] = X[tx - 128]\n"
                       "            for tx_1 in T.serial(128, 256):\n"
                       "                T.evaluate(T.device.mbarrier_arrive(T.address_of(bars[0])))\n"),
            std::string::npos)
      << after;
  // group 0 waits once, its tile code runs once
  EXPECT_NE(after.find("        if T.thread_group(0, 128):\n"
                       "            T.evaluate(T.device.mbarrier_wait_parity(T.address_of(bars[0]), 0))\n"
                       "            for i in T.Parallel(64):\n"),
            std::string::npos)
      << after;
}

}  // namespace
}  // namespace tilec
