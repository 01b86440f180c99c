// Replaces tile ops (Copy, Gemm, Gemv, Fill, Reduce, tile-form AtomicAdd)
// with loops of element accesses. Reads outside a buffer give 0 and writes
// outside are dropped; the bounds checks that do this are emitted only where
// in-bounds can't be proven from the loop and block ranges.
#pragma once

#include "passes/pass.h"

namespace tilec::passes {

ir::Stmt lower_tile_ops(const ir::Stmt& body, const PassContext& ctx);

}  // namespace tilec::passes
