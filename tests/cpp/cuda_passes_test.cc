// The CUDA tile-level passes one at a time: pipeline_loops and insert_barriers, IR in, IR out.
#include <gtest/gtest.h>

#include <string>

#include "frontend/elaborate.h"
#include "ir/printer.h"
#include "passes/cuda/insert_barriers.h"
#include "passes/cuda/pipeline_loops.h"
#include "tilec/tilec.h"

namespace tilec {
namespace {

ir::PrimFunc kernel(const std::string& body, const std::string& params) {
  std::string source = "import tilec.language as T\n\n@T.prim_func\ndef main(" + params +
                       "):\n    with T.Kernel(4, threads=128) as bx:\n" + body;
  return frontend::elaborate(load_function(source, "k.py", "main"));
}

std::string after(ir::PrimFunc f, ir::Stmt (*pass)(const ir::Stmt&, const passes::PassContext&)) {
  passes::PassContext ctx;
  ctx.target = "cuda";
  ctx.func = &f;
  f.body = pass(f.body, ctx);
  return ir::to_string(f);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

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
  EXPECT_EQ(count(ir, "# async"), 3u) << ir;
  EXPECT_EQ(count(ir, "T.cuda.cp_async_commit()"), 3u) << ir;
  EXPECT_NE(ir.find("T.cuda.cp_async_wait<1>()"), std::string::npos) << ir;
  EXPECT_NE(ir.find("T.cuda.cp_async_wait_all()"), std::string::npos) << ir;
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

TEST(InsertBarriers, SharedHandedBetweenThreadsGetsOneBarrier) {
  std::string ir = after(kernel("        s = T.alloc_shared((128,), \"float32\")\n"
                                "        T.copy(X, s)\n"
                                "        for i in T.Parallel(128):\n"
                                "            Y[i] = s[127 - i]\n",
                                "X: T.Tensor((128,), \"float32\"), Y: T.Tensor((128,), \"float32\")"),
                         passes::insert_barriers);
  EXPECT_EQ(count(ir, "T.cuda.sync_threads()"), 1u) << ir;
  EXPECT_LT(ir.find("T.copy(X"), ir.find("T.cuda.sync_threads()")) << ir;
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

TEST(InsertBarriers, LoopIterationsAreSeparatedBothWays) {
  // Each iteration writes s, then reads it: a barrier after the write (read after write)
  // and one before the next iteration's write (write after read).
  std::string ir = after(kernel("        s = T.alloc_shared((128,), \"float32\")\n"
                                "        f = T.alloc_fragment((128,), \"float32\")\n"
                                "        T.clear(f)\n"
                                "        for k in T.serial(4):\n"
                                "            T.copy(X[k * 128], s)\n"
                                "            for i in T.Parallel(128):\n"
                                "                f[i] = f[i] + s[127 - i]\n"
                                "        T.copy(f, Y)\n",
                                "X: T.Tensor((512,), \"float32\"), Y: T.Tensor((128,), \"float32\")"),
                         passes::insert_barriers);
  size_t loop = ir.find("for k in T.serial(4):");
  ASSERT_NE(loop, std::string::npos) << ir;
  EXPECT_EQ(count(ir.substr(loop), "T.cuda.sync_threads()"), 2u) << ir;
}

TEST(InsertBarriers, PipelinedStagesAreLeftToThePipeline) {
  ir::PrimFunc f = kernel(kPipelinedGemm, kTensors);
  passes::PassContext ctx;
  ctx.target = "cuda";
  ctx.func = &f;
  f.body = passes::pipeline_loops(f.body, ctx);
  std::string ir = after(f, passes::insert_barriers);
  // Only the pipeline's own barrier, one an iteration.
  EXPECT_EQ(count(ir, "T.cuda.sync_threads()"), 1u) << ir;
}

}  // namespace
}  // namespace tilec
