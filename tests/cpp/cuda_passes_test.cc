// The CUDA tile-level passes one at a time (after select_instructions, which they read):
// pipeline_loops, warp_specialize, plan_shared_memory and insert_barriers, IR in, IR out.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "frontend/elaborate.h"
#include "ir/printer.h"
#include "ir/visitor.h"
#include "passes/gpu/select_instructions.h"
#include "passes/cuda/warp_specialize.h"
#include "passes/gpu/insert_barriers.h"
#include "passes/gpu/pipeline_loops.h"
#include "passes/gpu/plan_shared_memory.h"
#include "passes/specialize_contiguous.h"
#include "tilec/tilec.h"
#include "text_count.h"

namespace tilec {
namespace {

ir::PrimFunc kernel(const std::string& body, const std::string& params) {
  std::string source = "import tilec.language as T\n\n@T.prim_func\ndef main(" + params +
                       "):\n    with T.Kernel(4, threads=128) as bx:\n" + body;
  return frontend::elaborate(load_function(source, "k.py", "main"));
}

std::string after(ir::PrimFunc f, ir::Stmt (*pass)(const ir::Stmt&, const passes::PassContext&),
                  const std::string& arch = "") {
  passes::PassContext ctx;
  ctx.target = parse_target("cuda", arch);
  ctx.func = &f;
  f.body = passes::select_instructions(f.body, ctx);
  f.body = pass(f.body, ctx);
  return ir::to_string(f);
}

using test_support::count;

constexpr const char* kTensors = "A: T.Tensor((256, 64), \"float16\"), C: T.Tensor((64, 64), \"float32\")";

constexpr const char* kPipelinedGemm =
    "        A_s = T.alloc_shared((64, 32), \"float16\")\n"
    "        C_f = T.alloc_fragment((64, 64), \"float32\")\n"
    "        for k in T.Pipelined(8, num_stages=3):\n"
    "            T.copy(A[k * 32, 0], A_s)\n"
    "            T.gemm(A_s, A_s, C_f, transpose_B=True)\n"
    "        T.copy(C_f, C)\n";

TEST(PipelineLoops, CopiesRunStagesAhead) {
  std::string ir = after(kernel(kPipelinedGemm, kTensors), passes::pipeline_loops);
  EXPECT_NE(ir.find("A_s = T.alloc_shared((3, 64, 32), \"float16\")"), std::string::npos) << ir;
  // Two iterations' copies before the loop, one an iteration inside; all async.
  EXPECT_EQ(count(ir, "# via cp.async"), 3u) << ir;
  EXPECT_EQ(count(ir, "T.device.cp_async_commit()"), 3u) << ir;
  EXPECT_NE(ir.find("T.device.cp_async_wait<1>()"), std::string::npos) << ir;
  EXPECT_NE(ir.find("T.device.cp_async_wait_all()"), std::string::npos) << ir;
  EXPECT_NE(ir.find("T.gemm(A_s[k_stage_iter % 3, 0:64, 0:32]"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("T.Pipelined"), std::string::npos) << ir;
}

TEST(PipelineLoops, OneStageIsASerialLoop) {
  std::string body = kPipelinedGemm;
  body.replace(body.find("num_stages=3"), 12, "num_stages=1");
  std::string ir = after(kernel(body, kTensors), passes::pipeline_loops);
  EXPECT_NE(ir.find("for k in T.serial(8):"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("async"), std::string::npos) << ir;
  EXPECT_NE(ir.find("A_s = T.alloc_shared((64, 32), \"float16\")"), std::string::npos) << ir;
}

TEST(PipelineLoops, BufferUsedAfterTheLoopIsNotStaged) {
  std::string body = kPipelinedGemm;
  body += "        T.copy(A_s, A[0, 0])\n";
  std::string ir = after(kernel(body, kTensors), passes::pipeline_loops);
  EXPECT_NE(ir.find("for k in T.serial(8):"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("async"), std::string::npos) << ir;
}

TEST(PipelineLoops, ALetOfTheLoopVarBeforeTheCopiesIsSeenThrough) {
  std::string body = kPipelinedGemm;
  body.replace(body.find("            T.copy(A[k * 32, 0], A_s)"), 37,
               "            rows = k * 32\n            T.copy(A[rows, 0], A_s)");
  std::string ir = after(kernel(body, kTensors), passes::pipeline_loops);
  EXPECT_NE(ir.find("A_s = T.alloc_shared((3, 64, 32), \"float16\")"), std::string::npos) << ir;
  EXPECT_EQ(count(ir, "# via cp.async"), 3u) << ir;
}

TEST(PipelineLoops, ALetReadingABufferIsNotSubstituted) {
  std::string body = kPipelinedGemm;
  body.replace(body.find("            T.copy(A[k * 32, 0], A_s)"), 37,
               "            rows = T.int32(C[k, 0])\n            T.copy(A[rows, 0], A_s)");
  std::string ir = after(kernel(body, kTensors), passes::pipeline_loops);
  EXPECT_NE(ir.find("for k in T.serial(8):"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("async"), std::string::npos) << ir;
}

TEST(PipelineLoops, ACopyIndexedByAScalarTheLoopLeavesAloneRunsAhead) {
  // TileLang's fp8_lighting_indexer starts its keys at a scalar computed before the loop.
  std::string body = kPipelinedGemm;
  body.replace(body.find("        for k in T.Pipelined"), 0, "        start = T.alloc_var(\"int32\", 16)\n");
  body.replace(body.find("A[k * 32, 0]"), 12, "A[start + k * 8, 0]");
  std::string ir = after(kernel(body, kTensors), passes::pipeline_loops);
  EXPECT_NE(ir.find("A_s = T.alloc_shared((3, 64, 32), \"float16\")"), std::string::npos) << ir;
  EXPECT_EQ(count(ir, "# via cp.async"), 3u) << ir;
  EXPECT_NE(ir.find("T.device.cp_async_wait<1>()"), std::string::npos) << ir;
}

TEST(PipelineLoops, ACopyIndexedByAScalarTheLoopWritesStaysInItsStep) {
  // Run ahead, the copy would read the scalar before the iterations between set it.
  std::string body = kPipelinedGemm;
  body.replace(body.find("        for k in T.Pipelined"), 0, "        start = T.alloc_var(\"int32\", 16)\n");
  body.replace(body.find("            T.copy(A[k * 32, 0], A_s)"), 37,
               "            T.copy(A[start, 0], A_s)\n            start = start + 8");
  std::string ir = after(kernel(body, kTensors), passes::pipeline_loops);
  EXPECT_NE(ir.find("for k in T.serial(8):"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("async"), std::string::npos) << ir;
}

constexpr const char* kGatherTensors =
    "X: T.Tensor((200, 64), \"bfloat16\"), Index: T.Tensor((128,), \"int32\"), Y: T.Tensor((32, 64), "
    "\"float32\")";

constexpr const char* kPipelinedGather =
    "        tile = T.alloc_shared((32, 64), \"bfloat16\")\n"
    "        acc = T.alloc_fragment((32, 64), \"float32\")\n"
    "        T.clear(acc)\n"
    "        for k in T.Pipelined(4, num_stages=2):\n"
    "            for i, j in T.Parallel(32, 64):\n"
    "                tile[i, j] = T.if_then_else(Index[k * 32 + i] >= 0, X[T.max(Index[k * 32 + i], 0), j], 0)\n"
    "            for i, j in T.Parallel(32, 64):\n"
    "                acc[i, j] += tile[i, j]\n"
    "        T.copy(acc, Y)\n";

TEST(BindRepeatedLoadsCuda, AStagedGatherReadsEachRowsIndexOnceACopy) {
  // The row's index is in each cp.async's source address, zero-fill predicate and bounds check:
  // the whole CUDA pass list reads it once before the copy.
  std::string source = "import tilec.language as T\n\n@T.prim_func\ndef main(" + std::string(kGatherTensors) +
                       "):\n    with T.Kernel(4, threads=128) as bx:\n" + kPipelinedGather;
  std::string ir = emit(load_function(source, "k.py", "main"), {.target = "cuda", .arch = "sm_90a"}, EmitStage::IR);
  size_t copies = test_support::count(ir, "cp_async_16(");
  ASSERT_GE(copies, 2u) << ir;  // before the loop and in it
  for (size_t at = ir.find("cp_async_16("); at != std::string::npos; at = ir.find("cp_async_16(", at + 1)) {
    std::string call = ir.substr(at, ir.find('\n', at) - at);
    EXPECT_EQ(test_support::count(call, "Index["), 0u) << call;
  }
  EXPECT_EQ(test_support::count(ir, "= Index["), copies) << ir;
}

TEST(PipelineLoops, AGatherFromGlobalMemoryRunsAStageAheadAndIsMarkedAsync) {
  ir::PrimFunc f = kernel(kPipelinedGather, kGatherTensors);
  EXPECT_NE(ir::to_string(f).find("for k in T.Pipelined(4, num_stages=2):"), std::string::npos);
  std::string ir = after(f, passes::pipeline_loops);
  EXPECT_NE(ir.find("tile = T.alloc_shared((2, 32, 64), \"bfloat16\")"), std::string::npos) << ir;
  // the first step's gather before the loop, the next one's in it; lowering issues them
  // without a wait of their own
  EXPECT_EQ(count(ir, "T.Parallel(32, async_fill=True)"), 2u) << ir;
  EXPECT_NE(ir.find("tile[(k_stage_iter + 1) % 2, i, j] = "), std::string::npos) << ir;
  EXPECT_NE(ir.find("T.cast(tile[k_stage_iter % 2, i_1, j_1]"), std::string::npos) << ir;
  EXPECT_NE(ir.find("T.device.cp_async_wait<0>()"), std::string::npos) << ir;
}

TEST(PipelineLoops, AGatherByAnIndexInSharedMemoryStaysInItsStepWhileTheIndexRunsAhead) {
  // The step first copies its indices into shared memory (itself a fill from global memory,
  // staged), then gathers by them: that gather reads what the step wrote, so it stays.
  std::string body = kPipelinedGather;
  body.replace(body.find("        acc = T.alloc_fragment"), 0, "        index = T.alloc_shared((32,), \"int32\")\n");
  body.replace(body.find("            for i, j in T.Parallel(32, 64):\n                tile"), 0,
               "            for i in T.Parallel(32):\n                index[i] = Index[k * 32 + i]\n");
  body.replace(body.find("Index[k * 32 + i] >= 0"), 22, "index[i] >= 0");
  body.replace(body.find("Index[k * 32 + i], 0)"), 17, "index[i]");
  std::string ir = after(kernel(body, kGatherTensors), passes::pipeline_loops);
  EXPECT_NE(ir.find("index = T.alloc_shared((2, 32), \"int32\")"), std::string::npos) << ir;
  EXPECT_NE(ir.find("tile = T.alloc_shared((32, 64), \"bfloat16\")"), std::string::npos) << ir;
  EXPECT_EQ(count(ir, "T.Parallel(32, async_fill=True)"), 2u) << ir;
  EXPECT_NE(ir.find("X[T.max(index[k_stage_iter % 2, i_1], 0), j]"), std::string::npos) << ir;
}

TEST(PipelineLoops, TheLeadingAsynchronousWgmmaGemmsAreIssuedBeforeTheNextStagesCopies) {
  // The attention backward's step opens with two gemms left in flight (wg_wait=-1): the
  // copies of the stage two iterations on are issued under them, not before them.
  std::string body = kPipelinedGemm;
  body.replace(body.find("transpose_B=True)"), 17, "transpose_B=True, wg_wait=-1)\n            T.wait_wgmma(0)");
  std::string ir = after(kernel(body, kTensors), passes::pipeline_loops, "sm_90a");
  const size_t loop = ir.find("for k_stage_iter in T.serial(8):");
  ASSERT_NE(loop, std::string::npos) << ir;
  const size_t barrier = ir.find("T.device.sync_threads()", loop);
  const size_t gemm = ir.find("T.gemm(A_s[k_stage_iter % 3, 0:64, 0:32]", loop);
  const size_t copy = ir.find("# via cp.async", loop);
  const size_t wait = ir.find("T.wait_wgmma(0)", loop);
  ASSERT_NE(wait, std::string::npos) << ir;
  EXPECT_LT(barrier, gemm) << ir;
  EXPECT_LT(gemm, copy) << ir;
  EXPECT_LT(copy, wait) << ir;
  EXPECT_EQ(count(ir, "# via cp.async"), 3u) << ir;

  // A gemm that waits for itself stays behind the copies, as on targets without wgmma.
  std::string waiting = after(kernel(kPipelinedGemm, kTensors), passes::pipeline_loops, "sm_90a");
  const size_t waiting_loop = waiting.find("for k_stage_iter in T.serial(8):");
  EXPECT_LT(waiting.find("# via cp.async", waiting_loop), waiting.find("T.gemm(A_s[k_stage_iter", waiting_loop))
      << waiting;
}

TEST(InsertBarriers, SharedHandedBetweenThreadsGetsOneBarrier) {
  std::string ir = after(kernel("        s = T.alloc_shared((128,), \"float32\")\n"
                                "        T.copy(X, s)\n"
                                "        for i in T.Parallel(128):\n"
                                "            Y[i] = s[127 - i]\n",
                                "X: T.Tensor((128,), \"float32\"), Y: T.Tensor((128,), \"float32\")"),
                         passes::insert_barriers);
  EXPECT_EQ(count(ir, "T.device.sync_threads()"), 1u) << ir;
  EXPECT_LT(ir.find("T.copy(X"), ir.find("T.device.sync_threads()")) << ir;
}

TEST(InsertBarriers, AGemvIntoSharedIsSeparatedFromItsReadersByItsRegions) {
  // y is the gemv's write (op/gemv.h): its readers wait at a barrier; a and x, only read,
  // need none before the plain read of x.
  std::string ir = after(kernel("        a = T.alloc_shared((128, 64), \"float32\")\n"
                                "        x = T.alloc_shared((64,), \"float32\")\n"
                                "        y = T.alloc_shared((128,), \"float32\")\n"
                                "        T.copy(W, a)\n"
                                "        T.copy(X, x)\n"
                                "        T.gemv(a, x, y)\n"
                                "        for i in T.Parallel(64):\n"
                                "            Y[i] = x[63 - i]\n"
                                "        for i in T.Parallel(128):\n"
                                "            Y[i] = y[127 - i]\n",
                                "W: T.Tensor((128, 64), \"float32\"), X: T.Tensor((64,), \"float32\"), "
                                "Y: T.Tensor((128,), \"float32\")"),
                         passes::insert_barriers);
  EXPECT_EQ(count(ir, "T.device.sync_threads()"), 2u) << ir;
  size_t gemv = ir.find("T.gemv(");
  size_t read_x = ir.find("x[63 - i]"), read_y = ir.find("y[127 - i]");
  ASSERT_NE(gemv, std::string::npos) << ir;
  // One barrier after the copies (the gemv reads what they wrote), one after the gemv.
  EXPECT_LT(ir.find("T.device.sync_threads()"), gemv) << ir;
  size_t second = ir.find("T.device.sync_threads()", gemv);
  EXPECT_LT(read_x, second) << ir;
  EXPECT_LT(second, read_y) << ir;
}

TEST(InsertBarriers, FragmentsAndGlobalsNeedNone) {
  std::string ir = after(kernel("        f = T.alloc_fragment((128,), \"float32\")\n"
                                "        T.copy(X, f)\n"
                                "        for i in T.Parallel(128):\n"
                                "            f[i] = f[i] * 2.0\n"
                                "        T.copy(f, Y)\n"
                                "        T.copy(Y, X)\n",
                                "X: T.Tensor((128,), \"float32\"), Y: T.Tensor((128,), \"float32\")"),
                         passes::insert_barriers);
  EXPECT_EQ(count(ir, "sync_threads"), 0u) << ir;
}

// Each of 4 iterations copies a slice of X into shared s, then adds s reversed into f.
constexpr const char* kSharedInALoop =
    "        s = T.alloc_shared((128,), \"float32\")\n"
    "        f = T.alloc_fragment((128,), \"float32\")\n"
    "        T.clear(f)\n"
    "        for k in T.serial(4):\n"
    "            T.copy(X[k * 128], s)\n"
    "            for i in T.Parallel(128):\n"
    "                f[i] = f[i] + s[127 - i]\n";
constexpr const char* kLoopTensors = "X: T.Tensor((512,), \"float32\"), Y: T.Tensor((128,), \"float32\")";

TEST(InsertBarriers, LoopIterationsAreSeparatedBothWays) {
  // Each iteration writes s, then reads it: a barrier after the write (read after write)
  // and one before the next iteration's write (write after read).
  std::string ir = after(kernel(std::string(kSharedInALoop) + "        T.copy(f, Y)\n", kLoopTensors),
                         passes::insert_barriers);
  size_t loop = ir.find("for k in T.serial(4):");
  ASSERT_NE(loop, std::string::npos) << ir;
  EXPECT_EQ(count(ir.substr(loop), "T.device.sync_threads()"), 2u) << ir;
}

TEST(InsertBarriers, PipelinedStagesAreLeftToThePipeline) {
  ir::PrimFunc f = kernel(kPipelinedGemm, kTensors);
  passes::PassContext ctx;
  ctx.target = parse_target("cuda", "");
  ctx.func = &f;
  f.body = passes::pipeline_loops(f.body, ctx);
  std::string ir = after(f, passes::insert_barriers);
  // Only the pipeline's own barrier, one an iteration.
  EXPECT_EQ(count(ir, "T.device.sync_threads()"), 1u) << ir;
}

// The shared buffers of a kernel by name, with their planned offsets.
std::map<std::string, int64_t> shared_offsets(const ir::PrimFunc& f) {
  struct Offsets : ir::IRVisitor {
    std::map<std::string, int64_t> found;
    void visit_Allocate(const ir::Allocate* op) override {
      if (op->buffer->scope == ir::MemoryScope::Shared) found[op->buffer->name] = op->buffer->shared_offset;
      IRVisitor::visit_Allocate(op);
    }
  } offsets;
  offsets.visit(f.body);
  return offsets.found;
}

TEST(PlanSharedMemory, ABufferUsedAfterALoopTakesTheBytesOfOneUsedOnlyInIt) {
  ir::PrimFunc f = kernel(std::string(kSharedInALoop) +
                              "        t = T.alloc_shared((128,), \"float32\")\n"
                              "        T.copy(f, t)\n"
                              "        T.copy(t, Y)\n",
                          kLoopTensors);
  passes::PassContext ctx;
  ctx.target = parse_target("cuda", "");
  ctx.func = &f;
  f.body = passes::plan_shared_memory(f.body, ctx);
  auto offsets = shared_offsets(f);
  EXPECT_EQ(offsets.at("s"), 0);
  EXPECT_EQ(offsets.at("t"), 0);
}

std::map<std::string, int64_t> planned_offsets(ir::PrimFunc f) {
  passes::PassContext ctx;
  ctx.target = parse_target("cuda", "sm_90a");
  ctx.func = &f;
  f.body = passes::plan_shared_memory(f.body, ctx);
  return shared_offsets(f);
}

TEST(PlanSharedMemory, BuffersOfThreadGroupsAreAliveTogether) {
  // In program order t's last use (group 0) comes before s's first (group 1), but the groups
  // run at once: group 1 may fill s while group 0 still reads t. (TileLang's
  // sparse_mla_fwd_pipelined: its producer's cp.async into KV_shared overwrote the mbarrier
  // the consumers were still waiting on, now and then an unspecified launch failure.)
  ir::PrimFunc f = kernel("        t = T.alloc_shared((64,), \"float32\")\n"
                          "        s = T.alloc_shared((64,), \"float32\")\n"
                          "        T.copy(X[0:64], t)\n"
                          "        tx = T.get_thread_binding()\n"
                          "        if tx < 64:\n"
                          "            T.copy(t, Y[0:64])\n"
                          "        else:\n"
                          "            T.copy(X[64:128], s)\n"
                          "            T.copy(s, Y[64:128])\n",
                          "X: T.Tensor((128,), \"float32\"), Y: T.Tensor((128,), \"float32\")");
  auto offsets = planned_offsets(f);
  EXPECT_NE(offsets.at("t"), offsets.at("s"));
  // The same statements without the thread groups, in program order: s reuses t's bytes.
  ir::PrimFunc serial = kernel("        t = T.alloc_shared((64,), \"float32\")\n"
                               "        s = T.alloc_shared((64,), \"float32\")\n"
                               "        T.copy(X[0:64], t)\n"
                               "        T.copy(t, Y[0:64])\n"
                               "        T.copy(X[64:128], s)\n"
                               "        T.copy(s, Y[64:128])\n",
                               "X: T.Tensor((128,), \"float32\"), Y: T.Tensor((128,), \"float32\")");
  offsets = planned_offsets(serial);
  EXPECT_EQ(offsets.at("t"), offsets.at("s"));
}

TEST(PlanSharedMemory, BuffersOfSeparateThreadGroupIfsAreAliveTogether) {
  // Two Ifs, one a group: group 1's threads pass group 0's If at once and fill s while group 0
  // still reads t. (tilec.ops.dsa's Hopper FP8 decode: its producer's slot list, allocated in
  // its own T.ws block after the consumers', took Q's bytes; wrong scores on the H200.)
  const std::string tensors = "X: T.Tensor((128,), \"float32\"), Y: T.Tensor((128,), \"float32\")";
  ir::PrimFunc f = kernel("        t = T.alloc_shared((64,), \"float32\")\n"
                          "        s = T.alloc_shared((64,), \"float32\")\n"
                          "        u = T.alloc_shared((64,), \"float32\")\n"
                          "        T.copy(X[0:64], t)\n"
                          "        tx = T.get_thread_binding()\n"
                          "        if tx < 64:\n"
                          "            T.copy(t, Y[0:64])\n"
                          "        if tx >= 64:\n"
                          "            T.copy(X[64:128], s)\n"
                          "            T.copy(s, Y[64:128])\n"
                          "        T.sync_threads()\n"
                          "        T.copy(X[0:64], u)\n"
                          "        T.copy(u, Y[0:64])\n",
                          tensors);
  auto offsets = planned_offsets(f);
  EXPECT_NE(offsets.at("t"), offsets.at("s"));
  // u, after the last group's If, may take either's bytes.
  EXPECT_TRUE(offsets.at("u") == offsets.at("t") || offsets.at("u") == offsets.at("s"));
}

TEST(PlanSharedMemory, AViewIsAtItsBuffersPlaceAndKeepsItAlive) {
  // t's last use is through its view v, after s's first: s can't take t's bytes. The same
  // statements without the view let it.
  const std::string tensors = "X: T.Tensor((128,), \"float32\"), Y: T.Tensor((128,), \"float32\")";
  ir::PrimFunc f = kernel("        t = T.alloc_shared((64,), \"float32\")\n"
                          "        v = T.reshape(t, (8, 8))\n"
                          "        s = T.alloc_shared((64,), \"float32\")\n"
                          "        T.copy(X[0:64], t)\n"
                          "        T.copy(X[64:128], s)\n"
                          "        for i, j in T.Parallel(8, 8):\n"
                          "            Y[i * 8 + j] = v[i, j] + s[i * 8 + j]\n",
                          tensors);
  auto offsets = planned_offsets(f);
  EXPECT_EQ(offsets.at("v"), offsets.at("t"));
  EXPECT_NE(offsets.at("s"), offsets.at("t"));
  ir::PrimFunc apart = kernel("        t = T.alloc_shared((64,), \"float32\")\n"
                              "        v = T.reshape(t, (8, 8))\n"
                              "        s = T.alloc_shared((64,), \"float32\")\n"
                              "        T.copy(X[0:64], t)\n"
                              "        for i, j in T.Parallel(8, 8):\n"
                              "            Y[i * 8 + j] = v[i, j]\n"
                              "        T.copy(X[64:128], s)\n"
                              "        T.copy(s, Y[64:128])\n",
                              tensors);
  offsets = planned_offsets(apart);
  EXPECT_EQ(offsets.at("v"), offsets.at("t"));
  EXPECT_EQ(offsets.at("s"), offsets.at("t"));
}

TEST(PlanSharedMemory, AnMbarrierKeepsItsBytesForTheWholeKernel) {
  ir::PrimFunc f = kernel("        bar = T.alloc_barrier(arrive_count=128)\n"
                          "        s = T.alloc_shared((64,), \"float32\")\n"
                          "        T.barrier_arrive(bar)\n"
                          "        T.barrier_wait(bar, 0)\n"
                          "        T.copy(X[0:64], s)\n"
                          "        T.copy(s, Y[0:64])\n",
                          "X: T.Tensor((128,), \"float32\"), Y: T.Tensor((128,), \"float32\")");
  auto offsets = planned_offsets(f);
  ASSERT_EQ(offsets.size(), 2u);
  EXPECT_NE(offsets.begin()->second, std::next(offsets.begin())->second);
}

TEST(PlanSharedMemory, OnPerThreadCodeItStacksTheBuffersLoweringMadeAboveThePlannedOnes) {
  auto shared = [](const std::string& name, int64_t floats, int64_t offset) {
    auto b = std::make_shared<ir::BufferNode>(*ir::make_buffer(name, DType::Float32, {ir::make_int(floats)}, {},
                                                               ir::MemoryScope::Shared));
    b->shared_offset = offset;
    return ir::Buffer(b);
  };
  ir::Buffer a = shared("a", 1000, 0), m = shared("m", 128, -1), s = shared("s", 128, -1), l = shared("l", 128, -1);
  auto store = [](const ir::Buffer& b) { return ir::make_store(b, {ir::make_int(0)}, ir::make_float(1)); };
  auto launch = std::make_shared<ir::KernelLaunch>();
  launch->grid = {ir::make_int(1)};
  launch->block_vars = {ir::make_var("bx")};
  launch->thread_var = ir::make_var("tx");
  launch->body = ir::make_allocate(
      a, ir::make_seq({ir::make_allocate(m, ir::make_allocate(s, ir::make_seq({store(m), store(s)}))),
                       ir::make_allocate(l, store(l))}));
  ir::PrimFunc f;
  f.body = ir::Stmt(launch);
  passes::PassContext ctx;
  ctx.target = parse_target("cuda", "");
  ctx.func = &f;
  f.body = passes::plan_shared_memory(f.body, ctx);
  auto offsets = shared_offsets(f);
  EXPECT_EQ(offsets.at("a"), 0);
  EXPECT_EQ(offsets.at("m"), 4096);  // 4000 bytes, rounded up to the next 128
  EXPECT_EQ(offsets.at("s"), 4096 + 512);
  EXPECT_EQ(offsets.at("l"), 4096);  // m's scope is over
  EXPECT_TRUE(passes::plan_shared_memory(f.body, ctx).same_as(f.body));  // all placed: unchanged
}

// A 2-D grid of 128 x 256 bf16 tiles, K in 64-wide steps, for sm_90a.
ir::PrimFunc hopper_gemm(int stages, const std::string& epilogue, const std::string& k_steps = "8") {
  std::string source =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(A: T.Tensor((1024, 512), \"bfloat16\"), B: T.Tensor((512, 1024), \"bfloat16\"),\n"
      "         C: T.Tensor((1024, 1024), \"bfloat16\")):\n"
      "    with T.Kernel(4, 8, threads=256) as (bx, by):\n"
      "        A_s = T.alloc_shared((128, 64), \"bfloat16\")\n"
      "        B_s = T.alloc_shared((64, 256), \"bfloat16\")\n"
      "        C_s = T.alloc_shared((128, 256), \"bfloat16\")\n"
      "        C_l = T.alloc_fragment((128, 256), \"float32\")\n"
      "        T.clear(C_l)\n"
      "        for k in T.Pipelined(" + k_steps + ", num_stages=" + std::to_string(stages) + "):\n"
      "            T.copy(A[by * 128, k * 64], A_s)\n"
      "            T.copy(B[k * 64, bx * 256], B_s)\n"
      "            T.gemm(A_s, B_s, C_l)\n" + epilogue;
  return passes::specialize_contiguous(frontend::elaborate(load_function(source, "k.py", "main")));
}

constexpr const char* kSharedEpilogue =
    "        T.copy(C_l, C_s)\n"
    "        T.copy(C_s, C[by * 128, bx * 256])\n";

std::string warp_specialized(ir::PrimFunc f, std::map<std::string, std::string> configs = {},
                             const std::string& arch = "sm_90a") {
  passes::PassContext ctx;
  ctx.target = parse_target("cuda", arch);
  ctx.contiguous_args = true;
  ctx.pass_configs = std::move(configs);
  ctx.func = &f;
  f.body = passes::select_instructions(f.body, ctx);
  f.body = passes::warp_specialize(f.body, ctx);
  return ir::to_string(f);
}

TEST(WarpSpecialize, PersistentBlocksLoopOverTheTilesInBothWarpgroups) {
  std::string ir = warp_specialized(hopper_gemm(3, kSharedEpilogue));
  EXPECT_NE(ir.find("# persistent"), std::string::npos) << ir;
  // The producer's and the consumers' tile loops, each binding its own block vars.
  EXPECT_EQ(count(ir, "for tile_iter in T.serial("), 2u) << ir;
  EXPECT_EQ(count(ir, "T.device.persistent_first()"), 2u * 3u) << ir;  // loop extent and two coordinates
  // The pipeline's rounds go on across tiles: stage and parity of tile_iter * 8 + k_iter.
  EXPECT_NE(ir.find("full_barriers[(tile_iter * 8 + k_iter) % 3]"), std::string::npos) << ir;
  // The epilogue runs once per tile, inside the consumers' tile loop.
  size_t consumers = ir.find("else:");
  ASSERT_NE(consumers, std::string::npos) << ir;
  EXPECT_LT(ir.find("for tile_iter", consumers), ir.find("T.copy(C_s", consumers)) << ir;
}

// Attention's loop: K read by the first gemm, V by the second, in 64 x 64 fp16 tiles. With
// `offset`, the tiles' first row is a let of that name at the top of the loop body.
// With `last_block`, a last V block is loaded before the loop and multiplied in after it, as
// the forward in FlashAttention-3's order does.
ir::PrimFunc two_gemm_loop(const std::string& offset = "", bool last_block = false) {
  const std::string rows = offset.empty() ? "k * 64" : offset;
  std::string source =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(Q: T.Tensor((512, 64), \"float16\"), K: T.Tensor((512, 64), \"float16\"),\n"
      "         V: T.Tensor((512, 64), \"float16\"), O: T.Tensor((512, 64), \"float32\")):\n"
      "    with T.Kernel(8, threads=128) as bx:\n"
      "        Q_s = T.alloc_shared((64, 64), \"float16\")\n"
      "        K_s = T.alloc_shared((64, 64), \"float16\")\n"
      "        V_s = T.alloc_shared((64, 64), \"float16\")\n"
      "        S_f = T.alloc_fragment((64, 64), \"float32\")\n"
      "        P_f = T.alloc_fragment((64, 64), \"float16\")\n"
      "        O_f = T.alloc_fragment((64, 64), \"float32\")\n"
      "        T.copy(Q[bx * 64, 0], Q_s)\n" +
      std::string(last_block ? "        V_l = T.alloc_shared((64, 64), \"float16\")\n        T.copy(V[448, 0], V_l)\n" : "") +
      "        T.clear(O_f)\n"
      "        for k in T.Pipelined(8, num_stages=2):\n" +
      (offset.empty() ? "" : "            " + offset + " = k * 64\n") +
      "            T.copy(K[" + rows + ", 0], K_s)\n"
      "            T.copy(V[" + rows + ", 0], V_s)\n"
      "            T.clear(S_f)\n"
      "            T.gemm(Q_s, K_s, S_f, transpose_B=True)\n"
      "            T.copy(S_f, P_f)\n"
      "            T.gemm(P_f, V_s, O_f)\n" +
      std::string(last_block ? "        T.gemm(P_f, V_l, O_f)\n" : "") +
      "        T.copy(O_f, O[bx * 64, 0])\n";
  return passes::specialize_contiguous(frontend::elaborate(load_function(source, "k.py", "main")));
}

TEST(WarpSpecialize, CopiesFirstReadByDifferentStatementsCompleteOnBarriersOfTheirOwn) {
  std::string ir = warp_specialized(two_gemm_loop(), {{"tilec.persistent", "false"}});
  // Two full barriers a stage: K's (group 0) waited for right before the first gemm, after the
  // T.clear, and V's (group 1) right before the second; each expects its own tile's 8192 bytes.
  EXPECT_NE(ir.find("full_barriers = T.alloc_shared((4,), \"uint64\")"), std::string::npos) << ir;
  EXPECT_NE(ir.find("mbarrier_arrive_expect_tx(T.address_of(full_barriers[k_iter % 2 * 2 + 0]), 8192)"), std::string::npos)
      << ir;
  EXPECT_NE(ir.find("mbarrier_arrive_expect_tx(T.address_of(full_barriers[k_iter % 2 * 2 + 1]), 8192)"),
            std::string::npos)
      << ir;
  const size_t clear = ir.find("T.fill(S_f"), first_wait = ir.find("mbarrier_wait_parity(T.address_of(full_barriers[k_iter % 2 * 2 + 0])"),
               first_gemm = ir.find("T.gemm(Q_s"), second_wait = ir.find("full_barriers[k_iter % 2 * 2 + 1]), (k_iter // 2 + 0) % 2)"),
               second_gemm = ir.find("T.gemm(P_f");
  ASSERT_NE(second_gemm, std::string::npos) << ir;
  EXPECT_LT(clear, first_wait) << ir;
  EXPECT_LT(first_wait, first_gemm) << ir;
  EXPECT_LT(first_gemm, second_wait) << ir;
  EXPECT_LT(second_wait, second_gemm) << ir;
}

TEST(WarpSpecialize, ALetOfTheLoopVarBeforeTheCopiesIsSeenThrough) {
  // attention's `keys = k * block_N`, indexing both copies.
  std::string ir = warp_specialized(two_gemm_loop("keys"), {{"tilec.persistent", "false"}});
  EXPECT_NE(ir.find("# warp-specialized"), std::string::npos) << ir;
  EXPECT_EQ(count(ir, "T.device.mbarrier_arrive_expect_tx("), 3u) << ir;  // K, V and the Q tile
  EXPECT_NE(ir.find("T.copy(K[(0 + k_iter) * 64"), std::string::npos) << ir;
}

TEST(WarpSpecialize, TheProducerLoadsATileCopyBeforeTheLoopOnceATile) {
  // Q's copy before the loop: the producer issues it ahead of the stages, the consumers wait
  // for it before its first reader (the loop).
  std::string ir = warp_specialized(two_gemm_loop(), {{"tilec.persistent", "false"}});
  size_t consumers = ir.find("else:");
  ASSERT_NE(consumers, std::string::npos) << ir;
  const std::string q_load = "T.copy(Q[bx * 64:bx * 64 + 64, 0:64], Q_s[0:64, 0:64])  # via tma load";
  EXPECT_LT(ir.find(q_load), ir.find("for k_iter")) << ir;
  EXPECT_LT(ir.find("mbarrier_arrive_expect_tx(T.address_of(tile_barriers[0]), 8192)"), ir.find(q_load)) << ir;
  EXPECT_EQ(ir.find("T.copy(Q", consumers), std::string::npos) << ir;
  EXPECT_LT(ir.find("mbarrier_wait_parity(T.address_of(tile_barriers[0]), 0 % 2)", consumers),
            ir.find("for k_iter", consumers)) << ir;
  // One tile a block: the consumers never free it.
  EXPECT_EQ(ir.find("mbarrier_arrive_per_warp(T.address_of(tile_barriers"), std::string::npos) << ir;

  // Persistent: the producer loads the next tile's Q once the consumers have freed it, after
  // the loop that last reads it, while they finish the tile.
  std::string persistent = warp_specialized(two_gemm_loop());
  ASSERT_NE(persistent.find("# persistent"), std::string::npos) << persistent;
  consumers = persistent.find("else:");
  EXPECT_LT(persistent.find("if tile_iter >= 1:\n"), persistent.find("tile_barriers[1]), (tile_iter - 1) % 2)"))
      << persistent;
  EXPECT_LT(persistent.find("tile_barriers[1]), (tile_iter - 1) % 2)"), persistent.find("T.copy(Q[")) << persistent;
  const size_t freed = persistent.find("mbarrier_arrive_per_warp(T.address_of(tile_barriers[1]))", consumers);
  EXPECT_LT(persistent.find("mbarrier_wait_parity(T.address_of(tile_barriers[0]), tile_iter % 2)", consumers),
            persistent.find("for k_iter", consumers)) << persistent;
  EXPECT_LT(persistent.find("empty_barriers[(tile_iter * 8 + k_iter) % 2]", consumers), freed) << persistent;
  EXPECT_LT(freed, persistent.find("T.copy(O_f", consumers)) << persistent;
}

TEST(WarpSpecialize, ALoopOfOneTripAndItsLetsAreSeenThrough) {
  // The backward pass's loop over the query heads of a K/V head, with one (MHA).
  std::string source =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(K: T.Tensor((512, 64), \"float16\"), O: T.Tensor((512, 64), \"float32\")):\n"
      "    with T.Kernel(8, threads=128) as bx:\n"
      "        K_s = T.alloc_shared((64, 64), \"float16\")\n"
      "        O_f = T.alloc_fragment((64, 64), \"float32\")\n"
      "        T.clear(O_f)\n"
      "        for g in T.serial(1):\n"
      "            first = bx + g\n"
      "            for k in T.Pipelined(7, num_stages=2):\n"
      "                T.copy(K[(first + k) * 64, 0], K_s)\n"
      "                T.gemm(K_s, K_s, O_f, transpose_B=True)\n"
      "        T.copy(O_f, O[bx * 64, 0])\n";
  ir::PrimFunc f = passes::specialize_contiguous(frontend::elaborate(load_function(source, "k.py", "main")));
  std::string ir = warp_specialized(f, {{"tilec.persistent", "false"}});
  EXPECT_NE(ir.find("# warp-specialized"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("for g in"), std::string::npos) << ir;
  EXPECT_NE(ir.find("first = bx + 0"), std::string::npos) << ir;
}

TEST(WarpSpecialize, CopiesReadByOneStatementShareOneBarrier) {
  std::string ir = warp_specialized(hopper_gemm(3, kSharedEpilogue));
  EXPECT_NE(ir.find("full_barriers = T.alloc_shared((3,), \"uint64\")"), std::string::npos) << ir;
  EXPECT_EQ(count(ir, "mbarrier_arrive_expect_tx"), 1u) << ir;
}

TEST(WarpSpecialize, OnlyATargetWithWgmmaAndTmaGetsIt) {
  EXPECT_NE(warp_specialized(hopper_gemm(3, kSharedEpilogue), {}, "sm_90a").find("warp-specialized"),
            std::string::npos);
  // sm_90 has TMA but no wgmma; the others neither; an unknown arch is not assumed to be sm_90a.
  for (const char* arch : {"sm_90", "sm_89", "sm_80", ""}) {
    std::string ir = warp_specialized(hopper_gemm(3, kSharedEpilogue), {}, arch);
    EXPECT_EQ(ir.find("warp-specialized"), std::string::npos) << arch << "\n" << ir;
    EXPECT_EQ(ir.find("full_barriers"), std::string::npos) << arch << "\n" << ir;
  }
}

TEST(WarpSpecialize, PersistenceIsOffWithItsConfigOrWithoutWarpSpecialization) {
  for (const auto& configs : std::vector<std::map<std::string, std::string>>{
           {{"tilec.persistent", "false"}}, {{"tilec.warp_specialize", "false"}}}) {
    std::string ir = warp_specialized(hopper_gemm(3, kSharedEpilogue), configs);
    EXPECT_EQ(ir.find("persistent"), std::string::npos) << ir;
    EXPECT_EQ(ir.find("tile_iter"), std::string::npos) << ir;
  }
}

TEST(WarpSpecialize, ATripCountOfTheBlockVarsIsCountedUpTileByTile) {
  // A causal attention's loop: n differs from tile to tile, so the rounds are not
  // tile_iter * n + i but rounds_done[0] + i, each branch adding each tile's n after its loop.
  std::string ir = warp_specialized(hopper_gemm(3, kSharedEpilogue, "by + 1"));
  EXPECT_NE(ir.find("# persistent"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("tile_iter * (by"), std::string::npos) << ir;
  size_t consumers = ir.find("else:");
  ASSERT_NE(consumers, std::string::npos) << ir;
  for (const auto& [from, by] : {std::pair<size_t, std::string>{0, "by_1"}, {consumers, "by_2"}}) {
    const size_t zero = ir.find("rounds_done[0] = 0", from), loop = ir.find("for tile_iter", from);
    const size_t k_loop = ir.find("for k_iter in T.serial(" + by + " + 1):", from);
    const size_t added = ir.find("rounds_done[0] = rounds_done[0] + T.max(" + by + " + 1, 0)", from);
    EXPECT_LT(zero, loop) << ir;
    EXPECT_LT(loop, k_loop) << ir;
    EXPECT_LT(k_loop, added) << ir;
    EXPECT_NE(added, std::string::npos) << ir;
  }
  EXPECT_NE(ir.find("T.gemm(A_s[(rounds_done[0] + k_iter) % 3", consumers), std::string::npos) << ir;
  EXPECT_NE(ir.find("empty_barriers[(rounds_done[0] + k_iter) % 3]), ((rounds_done[0] + k_iter) // 3 + 1) % 2"),
            std::string::npos)
      << ir;
}

TEST(WarpSpecialize, ATileCopyFirstReadAfterTheLoopIsLoadedAfterTheStagesOnlyInAPersistentBlock) {
  const std::string v_load = "T.copy(V[448:512, 0:64], V_l[0:64, 0:64])  # via tma load";
  // One tile a block: nothing waits for it to be freed, so it goes with Q, before the stages.
  std::string ir = warp_specialized(two_gemm_loop("", true), {{"tilec.persistent", "false"}});
  EXPECT_LT(ir.find(v_load), ir.find("for k_iter")) << ir;
  // Persistent: its load waits for the last tile's to be freed, after that tile's last gemm,
  // so the next tile's stages go first.
  std::string persistent = warp_specialized(two_gemm_loop("", true));
  ASSERT_NE(persistent.find("# persistent"), std::string::npos) << persistent;
  EXPECT_LT(persistent.find("for k_iter"), persistent.find(v_load)) << persistent;
  const size_t consumers = persistent.find("else:");
  const size_t wait = persistent.find("mbarrier_wait_parity(T.address_of(tile_barriers[2]), tile_iter % 2)", consumers);
  EXPECT_LT(persistent.find("for k_iter", consumers), wait) << persistent;
  EXPECT_LT(wait, persistent.find("T.gemm(P_f[0:64, 0:64], V_l", consumers)) << persistent;
  EXPECT_LT(persistent.find("T.gemm(P_f[0:64, 0:64], V_l", consumers),
            persistent.find("mbarrier_arrive_per_warp(T.address_of(tile_barriers[3]))", consumers))
      << persistent;
}

TEST(WarpSpecialize, LetsOfTheBlockVarsAreBoundAgainForEachTile) {
  // The tile's corner named once (rows, cols), as attention names its query rows: a persistent
  // block computes the lets in each tile loop, from that tile's block vars.
  std::string source =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(A: T.Tensor((1024, 512), \"bfloat16\"), B: T.Tensor((512, 1024), \"bfloat16\"),\n"
      "         C: T.Tensor((1024, 1024), \"bfloat16\")):\n"
      "    with T.Kernel(4, 8, threads=256) as (bx, by):\n"
      "        rows = by * 128\n"
      "        cols = bx * 256\n"
      "        A_s = T.alloc_shared((128, 64), \"bfloat16\")\n"
      "        B_s = T.alloc_shared((64, 256), \"bfloat16\")\n"
      "        C_l = T.alloc_fragment((128, 256), \"float32\")\n"
      "        T.clear(C_l)\n"
      "        for k in T.Pipelined(8, num_stages=3):\n"
      "            T.copy(A[rows, k * 64], A_s)\n"
      "            T.copy(B[k * 64, cols], B_s)\n"
      "            T.gemm(A_s, B_s, C_l)\n"
      "        T.copy(C_l, C[rows, cols])\n";
  std::string ir = warp_specialized(passes::specialize_contiguous(frontend::elaborate(load_function(source, "k.py", "main"))));
  EXPECT_NE(ir.find("# persistent"), std::string::npos) << ir;
  size_t consumers = ir.find("else:");
  ASSERT_NE(consumers, std::string::npos) << ir;
  // Each tile loop binds its block vars, then the lets from them; nothing else computes them.
  EXPECT_EQ(count(ir, "rows = by"), 2u) << ir;
  EXPECT_LT(ir.find("for tile_iter"), ir.find("rows = by_1 * 128")) << ir;
  EXPECT_LT(ir.find("for tile_iter", consumers), ir.find("rows = by_2 * 128", consumers)) << ir;
  EXPECT_NE(ir.find("T.copy(A[rows:rows + 128"), std::string::npos) << ir;
  EXPECT_NE(ir.find("C[rows:rows + 128, cols:cols + 256]", consumers), std::string::npos) << ir;
}

TEST(WarpSpecialize, BuffersThatFitOnlyByReusingTheStagesStayNonPersistent) {
  // 4 stages of 48 KiB and a 64 KiB C tile: 256 KiB side by side, more than sm_90a's 227.
  std::string ir = warp_specialized(hopper_gemm(4, kSharedEpilogue));
  EXPECT_NE(ir.find("warp-specialized"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("persistent"), std::string::npos) << ir;
}

// One tile of `threads / 128` warpgroups along M (64 rows each) by 128 columns, on sm_90a;
// `before` and `trip_count` are placed as written (8 space indent), `in_loop` at the top of the
// loop's body (12).
ir::PrimFunc warpgroup_gemm(int threads, const std::string& trip_count = "8", const std::string& before = "",
                            const std::string& in_loop = "") {
  const std::string rows = std::to_string(64 * (threads / 128));
  std::string source =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(A: T.Tensor((512, 512), \"bfloat16\"), B: T.Tensor((512, 512), \"bfloat16\"),\n"
      "         C: T.Tensor((512, 512), \"float32\"), N: T.Tensor((4,), \"int32\")):\n"
      "    with T.Kernel(4, threads=" + std::to_string(threads) + ") as bx:\n"
      "        A_s = T.alloc_shared((" + rows + ", 64), \"bfloat16\")\n"
      "        B_s = T.alloc_shared((64, 128), \"bfloat16\")\n"
      "        C_l = T.alloc_fragment((" + rows + ", 128), \"float32\")\n"
      "        T.clear(C_l)\n" + before +
      "        for k in T.Pipelined(" + trip_count + ", num_stages=2):\n" + in_loop +
      "            T.copy(A[0, k * 64], A_s)\n"
      "            T.copy(B[k * 64, bx * 128], B_s)\n"
      "            T.gemm(A_s, B_s, C_l)\n"
      "        T.copy(C_l, C[0, bx * 128])\n";
  return passes::specialize_contiguous(frontend::elaborate(load_function(source, "k.py", "main")));
}

TEST(WarpSpecialize, ConsumersGrowOnlyIntoTheRegistersTheProducerFrees) {
  // setmaxnreg.inc waits for registers the block's pool doesn't have forever: 128 producer
  // threads dropping to 24 free enough for 256 consumers to go 168 -> 240 and 384 to go
  // 128 -> 160; 128 consumers start with 248 and gain nothing.
  std::string one = warp_specialized(warpgroup_gemm(128));
  EXPECT_NE(one.find("warp-specialized"), std::string::npos) << one;
  EXPECT_EQ(one.find("setmaxnreg"), std::string::npos) << one;
  std::string two = warp_specialized(warpgroup_gemm(256));
  EXPECT_NE(two.find("T.device.setmaxnreg_dec<24>()"), std::string::npos) << two;
  EXPECT_NE(two.find("T.device.setmaxnreg_inc<240>()"), std::string::npos) << two;
  std::string three = warp_specialized(warpgroup_gemm(384));
  EXPECT_NE(three.find("T.device.setmaxnreg_inc<160>()"), std::string::npos) << three;
}

TEST(WarpSpecialize, TheProducerSetsTheScalarsItsTripCountReads) {
  // The producer runs none of the statements before the loop but these: without them it would
  // read n[0] uninitialized and fill stages the consumers never take.
  std::string ir = warp_specialized(warpgroup_gemm(
      128, "n[0]", "        n = T.alloc_local((1,), \"int32\")\n        n[0] = T.min(N[bx], 8)\n"));
  EXPECT_NE(ir.find("warp-specialized"), std::string::npos) << ir;
  size_t consumers = ir.find("else:");
  ASSERT_NE(consumers, std::string::npos) << ir;
  // (Each branch's tile loop binds bx again: bx_1 in the producer's, bx_2 in the consumers'.)
  size_t set = ir.find("n[0] = T.min(N[bx_1], 8)");
  EXPECT_LT(set, ir.find("for k_iter in T.serial(n[0])")) << ir;
  EXPECT_LT(set, consumers) << ir;
  EXPECT_NE(ir.find("n[0] = T.min(N[bx_2], 8)", consumers), std::string::npos) << ir;
  // A count that depends on the block is counted up tile by tile, after each tile's loop,
  // from the scalar the statements before it set.
  EXPECT_NE(ir.find("# persistent"), std::string::npos) << ir;
  EXPECT_NE(ir.find("rounds_done[0] = rounds_done[0] + T.max(n[0], 0)", consumers), std::string::npos) << ir;
  // One the loop itself changes would count what the loop left in it: one tile a block.
  std::string changed = warp_specialized(warpgroup_gemm(
      128, "n[0]", "        n = T.alloc_local((1,), \"int32\")\n        n[0] = T.min(N[bx], 8)\n",
      "            n[0] = n[0] + 0\n"));
  EXPECT_EQ(changed.find("persistent"), std::string::npos) << changed;
  std::string same = warp_specialized(warpgroup_gemm(
      128, "n[0]", "        n = T.alloc_local((1,), \"int32\")\n        n[0] = T.min(N[0], 8)\n"));
  EXPECT_NE(same.find("# persistent"), std::string::npos) << same;
  EXPECT_LT(same.find("for tile_iter"), same.find("n[0] = T.min(N[0], 8)")) << same;
}

TEST(WarpSpecialize, ATripCountTheProducerCannotKnowKeepsTheCopiesInThread0) {
  // A count in shared memory, or a scalar set under a runtime condition: thread 0, which runs
  // the statements before the loop, issues the copies.
  for (const char* before : {"        n = T.alloc_shared((1,), \"int32\")\n        n[0] = N[bx]\n",
                             "        n = T.alloc_local((1,), \"int32\")\n        n[0] = 2\n"
                             "        if N[bx] > 0:\n            n[0] = 8\n"}) {
    std::string ir = warp_specialized(warpgroup_gemm(128, "n[0]", before));
    EXPECT_EQ(ir.find("warp-specialized"), std::string::npos) << ir;
    EXPECT_NE(ir.find("full_barriers"), std::string::npos) << ir;
    EXPECT_EQ(ir.find("empty_barriers"), std::string::npos) << ir;
  }
}

TEST(WarpSpecialize, AGemvSettingTheTripCountKeepsTheCopiesInThread0) {
  // The gemv rewrites n after the store the producer would replay: a producer that ran only
  // that store would fill stages for min(N[bx], 8) iterations while the consumers run more.
  std::string ir = warp_specialized(warpgroup_gemm(
      128, "n[0]",
      "        n = T.alloc_local((1,), \"int32\")\n"
      "        W = T.alloc_local((1, 4), \"int32\")\n"
      "        v = T.alloc_local((4,), \"int32\")\n"
      "        T.fill(W, 1)\n"
      "        T.fill(v, 1)\n"
      "        n[0] = T.min(N[bx], 4)\n"
      "        T.gemv(W, v, n, accumulate=True)\n"));
  EXPECT_EQ(ir.find("warp-specialized"), std::string::npos) << ir;
  EXPECT_NE(ir.find("full_barriers"), std::string::npos) << ir;
}

TEST(WarpSpecialize, AGemvWritingAStagedTileKeepsTheLoopUnspecialized) {
  // TMA fills B_s's stages through the async proxy; a consumer writing it with generic stores
  // (here a gemv into its first row) would race with the refill of its stage.
  std::string source =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(A: T.Tensor((512, 512), \"bfloat16\"), B: T.Tensor((512, 512), \"bfloat16\"),\n"
      "         C: T.Tensor((512, 512), \"float32\")):\n"
      "    with T.Kernel(4, threads=128) as bx:\n"
      "        A_s = T.alloc_shared((64, 64), \"bfloat16\")\n"
      "        B_s = T.alloc_shared((64, 128), \"bfloat16\")\n"
      "        W_s = T.alloc_shared((128, 64), \"bfloat16\")\n"
      "        x_s = T.alloc_shared((64,), \"bfloat16\")\n"
      "        C_l = T.alloc_fragment((64, 128), \"float32\")\n"
      "        T.clear(C_l)\n"
      "        for k in T.Pipelined(8, num_stages=2):\n"
      "            T.copy(A[0, k * 64], A_s)\n"
      "            T.copy(B[k * 64, bx * 128], B_s)\n"
      "            T.gemm(A_s, B_s, C_l)\n"
      "            T.gemv(W_s, x_s, B_s[0, 0:128])\n"
      "        T.copy(C_l, C[0, bx * 128])\n";
  std::string ir = warp_specialized(
      passes::specialize_contiguous(frontend::elaborate(load_function(source, "k.py", "main"))));
  EXPECT_EQ(ir.find("full_barriers"), std::string::npos) << ir;
  EXPECT_NE(ir.find("for k in T.Pipelined(8, num_stages=2):"), std::string::npos) << ir;
}

TEST(WarpSpecialize, ATensorTheStatementsBeforeTheLoopOnlyReadIsKnownToTheProducer) {
  // The copy before the loop reads N and writes a fragment; N is unchanged, so the producer
  // can compute the trip count from it.
  std::string ir = warp_specialized(warpgroup_gemm(
      128, "n[0]",
      "        n_f = T.alloc_fragment((4,), \"int32\")\n"
      "        T.copy(N, n_f)\n"
      "        n = T.alloc_local((1,), \"int32\")\n"
      "        n[0] = T.min(N[bx], 8)\n"));
  EXPECT_NE(ir.find("warp-specialized"), std::string::npos) << ir;
}

TEST(WarpSpecialize, ThreadsThatAreNotWholeWarpgroupsHaveNoProducerWarpgroup) {
  // A copy pipeline (no gemm) may have any thread count; 96 threads and a producer from thread
  // 96 would share a warp between the two roles.
  std::string source =
      "import tilec.language as T\n\n@T.prim_func\n"
      "def main(A: T.Tensor((512, 64), \"float16\"), B: T.Tensor((512, 64), \"float16\")):\n"
      "    with T.Kernel(4, threads=96) as bx:\n"
      "        A_s = T.alloc_shared((64, 64), \"float16\")\n"
      "        for k in T.Pipelined(2, num_stages=2):\n"
      "            T.copy(A[bx * 128 + k * 64, 0], A_s)\n"
      "            T.copy(A_s, B[bx * 128 + k * 64, 0])\n";
  std::string ir = warp_specialized(
      passes::specialize_contiguous(frontend::elaborate(load_function(source, "k.py", "main"))));
  EXPECT_EQ(ir.find("warp-specialized"), std::string::npos) << ir;
  EXPECT_NE(ir.find("full_barriers"), std::string::npos) << ir;
}

}  // namespace
}  // namespace tilec
