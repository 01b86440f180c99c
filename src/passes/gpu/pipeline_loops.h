// `T.Pipelined(n, num_stages=s)` as an s-stage cp.async software pipeline.
//
// The loop's global-to-shared copies (top-level statements of its body that
// read nothing the body computes) are the producers: T.copy's, and T.Parallel nests that store
// a value read from global memory alone into shared memory (a gather by index; lowering makes
// them cp.async where their accesses allow, and plain loads and stores otherwise). Each shared buffer they
// fill gets s stages ([s, ...]); the first s - 1 iterations' copies are issued
// before the loop, and iteration i waits for its own stage, then issues the
// copies of iteration i + s - 1 into the stage iteration i - 1 used:
//
//   for p in 0..s-2: if p < n: copies(p) -> stage p;  commit
//   for i in 0..n-1:
//     cp_async_wait<s-2>; sync_threads     # stage i landed; stage i-1 is free
//     the body's leading wgmma gemms with wg_wait -1, if any (reading stage i % s)
//     if i + s - 1 < n: copies(i + s - 1) -> stage (i + s - 1) % s
//     commit
//     the rest of the body, reading stage i % s
//   cp_async_wait_all
//
// The copies are marked async (lowering issues them without waiting); the
// barrier above is the only one the staged buffers need, so insert_barriers
// leaves them alone. A loop with one stage, or without such copies, or whose
// copied buffers are used outside it, runs as a plain serial loop.
#pragma once

#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt pipeline_loops(const ir::Stmt& body, const PassContext& ctx);

}  // namespace tilec::passes
