// Replaces tile ops (Copy, Gemm, Gemv, Fill, Reduce, tile-form AtomicAdd)
// with loops of element accesses, each by its unit's lowering (op/op.h: lower).
// Reads outside a buffer give 0 and writes outside are dropped; the bounds
// checks that do this are emitted only where in-bounds can't be proven from the
// loop and block ranges.
//
// lower_tile_ops (the CPU's) makes the loops serial, the innermost vectorized.
// lower_tile_ops_threaded (GPU targets) makes the loops over each op's elements
// T.Parallel loops, which the target then spreads over the block's threads, and
// leaves the ops `kept` says the target lowers itself (those that need more than
// one thread's view: tensor-core gemms, reductions across threads, ...).
#pragma once

#include <functional>

#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt lower_tile_ops(const ir::Stmt& body, const PassContext& ctx);

// Whether the target lowers tile op `op` (in a block of `threads` threads) itself.
using KeepTileOp = std::function<bool(const ir::StmtNode& op, int threads)>;
ir::Stmt lower_tile_ops_threaded(const ir::Stmt& body, const KeepTileOp& kept);

}  // namespace tilec::passes
