// T.copy (ir::Copy): dst = src elementwise over two regions of the same tile shape.
#pragma once

#include "op/op.h"

namespace tilec::op {

Regions regions(const ir::Copy& op);

// One site over the tile: a fragment's layout passes to the other operand, either way.
LayoutConstraints layout_constraints(const ir::Copy& op);

// That src and dst are tiles of one shape (extent-1 dims aside); the error is at the source
// operand, `src_loc`.
void check(const ir::Copy& op, const SourceLoc& src_loc);

// The op as element loops: dst[i] = src[i] over the tile; reads outside src give 0, writes outside dst are dropped.
ir::Stmt lower(const ir::Copy& op, const ir::Stmt& self, Lowering& l);

}  // namespace tilec::op
