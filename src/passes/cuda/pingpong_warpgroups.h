// Ping-pong (sm_90a, pass config "tilec.pingpong", on by default): in a warp-specialized kernel
// (warp_specialize.h) whose consumers are two warpgroups, a loop that issues wgmma gemms back
// to back (FlashAttention-3's order: S = Q K^T for this key block and O += P V for the last,
// both asynchronous, then the softmax of S) has the warpgroups take turns issuing them. One
// warpgroup's gemms then run on the tensor cores while the other computes its softmax, where
// otherwise both would share the tensor cores at once and then both leave them idle.
//
//   else:                                   # the consumers, threads 0..255
//     ...
//     if thread_in(128, 256): turn_pass(2)  # warpgroup 0 takes the first turn
//     for i in 0..n-1:
//       ...
//       T.gemm(...)   # warpgroup g waits on barrier 2 + g for its turn, issues
//       (wait for the stage of the next gemm's operand)
//       T.gemm(...)   # issues, hands the turn on with barrier 3 - g, waits for its results
//       ...           #   unless asynchronous (device/cuda/wgmma.h)
//     if thread_in(0, 128): turn_wait(2)    # the turn warpgroup 1 handed on last
//
// Gemms with only mbarrier waits between them share a turn; a gemm with other statements on
// both sides takes one of its own. A loop takes turns when at least two of its gemms share one:
// a turn for each gemm of a synchronous loop (the plain attention step, with the softmax between
// its gemms) only adds the barriers' latency (H200, 2026-12-02: d = 64 lost 7%, d = 128 gained
// at most 3%).
//
// The turns alternate strictly, warpgroup 0 first, so both warpgroups must reach the same gemms
// the same number of times. A loop qualifies when the path to it from the consumers' branch
// passes through no If and only loops whose trip count is the same on every thread, its own
// trip count is too, and its gemms are statements of its body (pipeline_stages.h
// loop_body_statements: after its leading lets of pure arithmetic; not under an If or an inner
// loop), each a wgmma over both warpgroups. Barriers 2 and 3 are free:
// 0 is __syncthreads, 1 the consumers' barrier, and a kernel with T.ws groups (which number
// theirs from 2) is not warp-specialized.
#pragma once

#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt pingpong_warpgroups(const ir::Stmt& body, const PassContext& ctx);

}  // namespace tilec::passes
