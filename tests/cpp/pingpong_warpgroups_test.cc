// pingpong_warpgroups: IR after select_instructions and warp_specialize, in; the same with the
// consumer warpgroups' turns, out.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "frontend/elaborate.h"
#include "ir/printer.h"
#include "passes/cuda/pingpong_warpgroups.h"
#include "passes/cuda/warp_specialize.h"
#include "passes/gpu/select_instructions.h"
#include "passes/specialize_contiguous.h"
#include "tilec/tilec.h"

namespace tilec {
namespace {

// Attention's loop over 64-key blocks for 128 query rows (two warpgroups of 64 rows each):
// `between` is what stands between the two gemms besides V's copy, `wg_wait` their wg_wait.
std::string attention_loop(const std::string& between, int wg_wait, int threads = 256) {
  std::string wait = ", wg_wait=" + std::to_string(wg_wait);
  return "import tilec.language as T\n\n@T.prim_func\n"
         "def main(Q: T.Tensor((1024, 64), \"float16\"), K: T.Tensor((1024, 64), \"float16\"),\n"
         "         V: T.Tensor((1024, 64), \"float16\"), O: T.Tensor((1024, 64), \"float32\")):\n"
         "    with T.Kernel(8, threads=" + std::to_string(threads) + ") as bx:\n"
         "        Q_s = T.alloc_shared((128, 64), \"float16\")\n"
         "        K_s = T.alloc_shared((64, 64), \"float16\")\n"
         "        V_s = T.alloc_shared((64, 64), \"float16\")\n"
         "        S_f = T.alloc_fragment((128, 64), \"float32\")\n"
         "        P_f = T.alloc_fragment((128, 64), \"float16\")\n"
         "        O_f = T.alloc_fragment((128, 64), \"float32\")\n"
         "        T.copy(Q[bx * 128, 0], Q_s)\n"
         "        T.clear(O_f)\n"
         "        T.clear(P_f)\n"
         "        for k in T.Pipelined(8, num_stages=2):\n"
         "            T.copy(K[k * 64, 0], K_s)\n"
         "            T.clear(S_f)\n"
         "            T.gemm(Q_s, K_s, S_f, transpose_B=True, policy=T.GemmWarpPolicy.FullRow" + wait + ")\n" +
         between +
         "            T.copy(V[k * 64, 0], V_s)\n"
         "            T.gemm(P_f, V_s, O_f, policy=T.GemmWarpPolicy.FullRow" + wait + ")\n"
         "            T.wait_wgmma(0)\n"
         "            T.copy(S_f, P_f)\n"
         "        T.copy(O_f, O[bx * 128, 0])\n";
}

std::string turns(const std::string& source, std::map<std::string, std::string> configs = {},
                  const std::string& arch = "sm_90a") {
  ir::PrimFunc f = passes::specialize_contiguous(frontend::elaborate(load_function(source, "k.py", "main")));
  passes::PassContext ctx;
  ctx.target = parse_target("cuda", arch);
  ctx.contiguous_args = true;
  ctx.pass_configs = std::move(configs);
  ctx.pass_configs.emplace("tilec.persistent", "false");
  ctx.func = &f;
  f.body = passes::select_instructions(f.body, ctx);
  f.body = passes::warp_specialize(f.body, ctx);
  std::string before = ir::to_string(f);
  EXPECT_NE(before.find("# warp-specialized"), std::string::npos) << before;
  f.body = passes::pingpong_warpgroups(f.body, ctx);
  return ir::to_string(f);
}

TEST(PingpongWarpgroups, GemmsIssuedBackToBackShareOneTurn) {
  std::string ir = turns(attention_loop("", -1));
  // Warpgroup 1 hands warpgroup 0 the first turn before the loop; warpgroup 0 takes the last
  // turn handed to it after the loop.
  const size_t first = ir.find("if T.thread_in(128, 256):\n                T.evaluate(T.device.turn_pass(2))");
  const size_t loop = ir.find("for k_iter in", first);
  const size_t last = ir.find("if T.thread_in(0, 128):\n                T.evaluate(T.device.turn_wait(2))");
  ASSERT_NE(first, std::string::npos) << ir;
  ASSERT_NE(last, std::string::npos) << ir;
  EXPECT_LT(loop, last) << ir;
  // S = Q K^T takes the turn; O += P V, after the wait for V's stage, hands it on.
  const size_t s = ir.find("T.gemm(Q_s", loop), v_wait = ir.find("mbarrier_wait_parity", s), pv = ir.find("T.gemm(P_f", s);
  EXPECT_LT(v_wait, pv) << ir;
  EXPECT_NE(ir.find("2x1 warpgroups, takes the turn on barrier 2 + warpgroup\n", s), std::string::npos) << ir;
  EXPECT_NE(ir.find("2x1 warpgroups, passes it on barrier 3 - warpgroup\n", pv), std::string::npos) << ir;
  EXPECT_EQ(ir.find("passes it", s), ir.find("passes it", pv)) << ir;
}

TEST(PingpongWarpgroups, GemmsWithComputeBetweenThemTakeNoTurns) {
  // The synchronous attention step: the softmax between the gemms. A turn a gemm only adds
  // the barriers' latency.
  std::string source = attention_loop("            for i, j in T.Parallel(128, 64):\n"
                                      "                S_f[i, j] = S_f[i, j] * 2\n", 0);
  EXPECT_EQ(turns(source).find("turn"), std::string::npos);
}

TEST(PingpongWarpgroups, OnlyTwoConsumerWarpgroupsTakeTurns) {
  // 128 query rows over one consumer warpgroup (a 1x1 grid): nothing to alternate with.
  EXPECT_EQ(turns(attention_loop("", -1, 128)).find("turn"), std::string::npos);
}

TEST(PingpongWarpgroups, AGemmUnderAnIfKeepsTheLoopOutOfTurns) {
  std::string source = attention_loop("", -1);
  source.replace(source.find("            T.gemm(P_f"), 0, "            if k > 0:\n    ");
  EXPECT_EQ(turns(source).find("turn"), std::string::npos);
}

TEST(PingpongWarpgroups, ThePassConfigTurnsItOff) {
  EXPECT_EQ(turns(attention_loop("", -1), {{"tilec.pingpong", "false"}}).find("turn"), std::string::npos);
}

}  // namespace
}  // namespace tilec
