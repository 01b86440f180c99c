// Replaces tile ops (Copy, Gemm, Gemv, Fill, Reduce, tile-form AtomicAdd)
// with loops of element accesses. Reads outside a buffer give 0 and writes
// outside are dropped; the bounds checks that do this are emitted only where
// in-bounds can't be proven from the loop and block ranges.
//
// For the CPU the loops are serial (innermost vectorized); for GPU targets the
// loops over each op's elements are T.Parallel loops, which lower_to_threads
// then spreads over the block's threads; it also lowers what needs more than
// one thread's view and so is left here: copies between global and shared
// memory, gemms on tensor cores (swizzled operands) and reductions of
// fragments.
#pragma once

#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt lower_tile_ops(const ir::Stmt& body, const PassContext& ctx);

}  // namespace tilec::passes
